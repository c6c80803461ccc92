"""Inventory of Dorfman, Vargaftik, Ben-Itzhak & Levy, "DoCoFL: Downlink Compression for Cross-Device Federated Learning" (ICML 2023).

Every numbered statement, algorithm and experiment of the paper, main text and appendices (see
:mod:`fedtheory.papers.inventory` for the fields). Labels are as the paper prints them.
"""
from __future__ import annotations

from .inventory import Paper, Statement

__all__ = ["PAPER"]

#: Options of the runs that the convergence statements (Theorems 1 and 3.4, Lemma C.2) exclude.
_NAIVE = "outside: naive=True is App. A's baseline (SGD on naively compressed weights), not DoCoFL"
_UNIFORM = ("outside: the analysis is of f = (1/N) sum_i f_i with clients sampled uniformly (eq. (1), Algorithm 3); "
            "unequal client weights are not its setting")
_SMALL_STEP = ("outside: the statement assumes eta <= 1/(30 gamma beta theta) (Theorem 1's eta, Lemma C.9); the "
               "class default 1/L_f is larger, since gamma, theta >= 1")
_CONVERGENCE_PATHS = {"docofl:naive=True": _NAIVE, "docofl:weights=unequal": _UNIFORM, "docofl:step=default": _SMALL_STEP}


def _not_the_corollarys_fedavg(what: str) -> str:
    return (f"outside: Corollary 3.5 names FedAvg with one local SGD step at DoCoFL's step, the server averaging "
            f"the participants' weighted updates with step 1, clients sampled as DoCoFL samples them; {what} is "
            f"another algorithm")


_COROLLARY_3_5_PATHS = {
    "docofl:naive=True": _NAIVE,
    "fedavg:local_steps=other": _not_the_corollarys_fedavg("more than one local step"),
    "fedavg:local_tol=other": _not_the_corollarys_fedavg("a local solve to a tolerance"),
    "fedavg:normalize='all'": _not_the_corollarys_fedavg("normalising by all clients instead of the participants"),
    "fedavg:participation=Bernoulli": _not_the_corollarys_fedavg("Bernoulli participation"),
    "fedavg:server_step=other": _not_the_corollarys_fedavg("a server step other than 1"),
    "fedavg:threshold=other": _not_the_corollarys_fedavg("a thresholded update"),
    "fedavg:weighting='uniform'": _not_the_corollarys_fedavg("ignoring the clients' weights"),
}

NN = ("{}: a neural-network experiment; the data set and the model's training are not available offline "
      "(this repository has no data sets and no GPU training)")
PAPER = Paper(
    key="docofl",
    citation='Dorfman, Vargaftik, Ben-Itzhak & Levy, "DoCoFL: Downlink Compression for Cross-Device Federated Learning" (ICML 2023)',
    statements=(
    Statement("Table 1", "§2.3",
              "averaging and error decay: uplink has both; cross-silo downlink has error decay only; cross-device "
              "downlink has neither"),
    Statement("Assumption 3.1", "§3", "unbiased stochastic gradients E g^i(w) = grad f_i(w) with "
              "E||g^i(w) - grad f_i(w)||^2 <= sigma^2 (eq. (2))",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Assumption 3.2", "§3", "bounded dissimilarity (1/N) sum_i ||grad f_i(w)||^2 <= G^2 + B^2 "
              "||grad f(w)||^2 (eq. (3))",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Figure 1", "§3.1", "timeline of DoCoFL's training procedure between the PS and one client "
              "(anchor download after notification, correction at participation)",
              not_checkable="an illustration (a timeline diagram of the protocol) with no quantitative content; the "
                            "protocol it draws is Algorithms 1-2, checked by docofl.appendix.algorithm2"),
    Statement("Algorithm 1", "§3.1", "DoCoFL parameter server: every K rounds enqueue C_w(w_t) in a queue of "
              "capacity V; aggregate the clients' compressed gradients; w_{t+1} = w_t - eta g_hat_t"),
    Statement("Algorithm 2", "§3.1", "DoCoFL client: at notification s take y = Q.top(); at round t get "
              "Delta = C_c(w_t - y), w_hat = y + Delta, send C_g(g^i(w_hat))"),
    Statement("Assumption 3.3", "§3.3", "correction compressor with bounded NMSE: E||C_c(w) - w||^2 <= "
              "omega^2 ||w||^2 (eq. (4))"),
    Statement("Theorem 3.4", "§3.3", "with C_w = C_g = id and a suitable eta: E[(1/T) sum_t ||grad f(w_t)||^2] "
              "= O(sqrt(M beta s~^2/(TS)) + (M^2 beta^2 omega^2 KV s~^2)^(1/3)/(T^(2/3) S^(1/3)) + gamma M beta "
              "(omega KV + 1)/T)",
              depends_on=("Theorem 1",), paths=_CONVERGENCE_PATHS),
    Statement("Corollary 3.5", "§3.3", "omega = 0 (C_c = id): DoCoFL is FedAvg (SGD with sampling) and the "
              "rate is O(sqrt(s~^2/(TS)) + 1/T)",
              depends_on=("Theorem 3.4",), paths=_COROLLARY_3_5_PATHS),
    Statement("Corollary 3.6", "§3.3", "omega K V = Theta(1): rate O(sqrt(s~^2/(TS)) + (omega s~^2)^(1/3)/"
              "(T^(2/3) S^(1/3)) + 1/T)",
              depends_on=("Theorem 3.4",)),
    Statement("Corollary 3.7", "§3.3", "omega = Theta(1) and K V = O(sqrt(s~^2 T/S)): the slow term dominates, "
              "rate O(sqrt(s~^2/(TS))) with a speed-up in S",
              depends_on=("Theorem 3.4",)),
    Statement("Figure 2", "§4", "ECUQ vs Hadamard+SQ, Kashin+SQ, QSGD, EDEN: NMSE and encoding time on CNN / "
              "LSTM weights and LogNormal(0,1) vectors; ECUQ has the lowest NMSE"),
    Statement("Table 2", "§5", "task configuration: CIFAR-100 ResNet-9 (200 clients, S = 10), EMNIST LeNet "
              "(1000, 20), Amazon LSTM (500, 10), Shakespeare LSTM (1129, 20)",
              not_checkable="a description of the neural-network tasks (CIFAR-100, EMNIST, Amazon Reviews, "
                            "Shakespeare data sets; ResNet-9, LeNet, LSTM models): nothing is computed, and the data "
                            "sets and models are not available offline"),
    Statement("Table 3", "§5", "best validation accuracy of FedAvg and two DoCoFL (b_w, b_c, b_g) "
              "configurations per task, K = 10, V = 3",
              stand_in=("the EMNIST / LeNet task transposed to data that ships: MNIST-1D over 50 clients (10% "
                        "i.i.d. + 90% two-class samples each), S = 10, K = 10, V = 3, MLP 40-100-100-10, 1,000 "
                        "rounds, FedAvg against DoCoFL (4, 4, 3) and (2, 2, 3) with stochastic uniform quantizers "
                        "instead of EDEN, best test accuracy, 2 development + 5 held-out seeds "
                        "(fedtheory/experiments/docofl.py); CIFAR-100, Amazon Reviews and Shakespeare are not run; "
                        "the bandwidth reductions are the text's arithmetic (docofl.bandwidth)")),
    Statement("Figure 3", "§5", "final train accuracy on CIFAR-100 for K in {10, 50, 100, 500}, V in "
              "{3, 5, 10}, two bandwidth configurations; degrades when K V is too large"),
    Statement("Figure 4", "App. B", "rho_t = sum_i e_hat_{t,i}^2 / sum_i e_{t,i}^2 (estimation error with / "
              "without anchor compression) is stable and decreases to ~1 as the anchor budget grows"),
    Statement("Algorithm 3", "App. C", "meta-algorithm: clients use any anchor y = w_{t - tau}, tau <= T~, "
              "w_hat = y + C_c(w_t - y), SGD step on the average of S clients' gradients"),
    Statement("Theorem 1", "App. C.1", "Algorithm 3 with eta = min{1/(30 gamma beta theta), sqrt(2MS/(beta s~^2 "
              "T)), (MS/(12 beta^2 omega^2 T~ s~^2 T))^(1/3)}: E[(1/T) sum ||grad f(w_t)||^2] <= 4 sqrt(2 M beta "
              "s~^2/(TS)) + 8 (12 M^2 beta^2 omega^2 T~ s~^2)^(1/3)/(T^(2/3) S^(1/3)) + 120 gamma M beta theta/T",
              depends_on=("Lemma C.5", "Lemma C.1", "Lemma C.2", "Lemma C.7", "Lemma C.8", "Lemma C.9",
                          "Lemma C.10"), paths=_CONVERGENCE_PATHS),
    Statement("Lemma C.1", "App. C.2", "E||g_hat_t||^2 <= s~^2/S + 4 gamma E||grad_t||^2 + 2 beta^2 (1/N) "
              "sum_i E||w_hat_t^i - w_t||^2 (eq. (19))",
              depends_on=("Lemma C.5", "Lemma C.3")),
    Statement("Lemma C.2", "App. C.2", "(1/N) sum_i E||w_hat_t^i - w_t||^2 <= alpha (1 + sum_{k<=t} k (rho T~)^k) "
              "s~^2/S + 2 gamma/(beta^2 T~) sum_{k<=t} (rho T~)^k sum_{l=t-kT~}^{t-k} E||grad_l||^2, alpha = 4 "
              "omega^2 eta^2 T~, rho = 20 beta^2 omega^2 eta^2 T~",
              depends_on=("Lemma C.5", "Lemma C.4", "Lemma C.1", "Lemma C.6"), paths=_CONVERGENCE_PATHS),
    Statement("Lemma C.3", "App. C.2", "independent X_i with means mu_i and variances <= sigma_i^2: "
              "E||sum X_i||^2 <= 2 ||sum mu_i||^2 + 2 sum sigma_i^2 (Karimireddy et al. 2020, Lemma 4)"),
    Statement("Lemma C.4", "App. C.2", "zero-mean pairwise orthogonal X_i: E||sum X_i||^2 = sum E||X_i||^2"),
    Statement("Lemma C.5", "App. C.2", "||sum_{i=1}^N u_i||^2 <= N sum_i ||u_i||^2"),
    Statement("Lemma C.6", "App. C.2", "t >= tau + 1, x >= 0: sum_{k=0}^{t-tau} sum_{l<k} x_l <= t sum_{k<t-tau} "
              "x_k"),
    Statement("Lemma C.7", "App. C.2", "a < 1: sum_{k>=1} k a^k = a/(1-a)^2 (false as printed for a <= -1; "
              "holds for |a| < 1)"),
    Statement("Lemma C.8", "App. C.2", "a in (0,1), x >= 0: sum_{t=1}^T sum_{k<t} a^ceil((t-k)/T~) x_k <= "
              "T~ a/(1-a) sum_{k<T} x_k"),
    Statement("Lemma C.9", "App. C.2", "gamma, theta >= 1, eta <= 1/(30 gamma beta theta): -eta/2 + 2 gamma beta "
              "eta^2 + 160 gamma beta^2 theta^2 eta^3 <= -eta/4"),
    Statement("Lemma C.10", "App. C.2", "eta = min(eta1, eta2, eta3): A/eta + B eta + C eta^2 <= A (1/eta1 + "
              "1/eta2 + 1/eta3) + B eta2 + C eta3^2"),
    Statement("Algorithm 4", "App. D", "ECUQ: 2^b uniform levels on [x_min, x_max], double binary search for "
              "the most levels whose empirical entropy is in [b - eps, b], then Huffman coding"),
    Statement("Figure 5", "App. D", "illustration of ECUQ's encoder",
              not_checkable="an illustration (a diagram of the encoder's steps) with no quantitative content; the "
                            "encoder (Algorithm 4) is checked by docofl.ecuq.invariants"),
    Statement("Figure 6", "App. D", "ECUQ vs ECQ vs ECK-Means: NMSE and encoding time on LogNormal(0,1), "
              "N(0,1), N(1,0.1) vectors, against d (b = 2) and against b (d = 2^12)"),
    Statement("Figure 7", "App. E", "ECUQ vs Rand-K, Top-K, Count-Sketch: NMSE and encoding time against the "
              "budget, synthetic vectors with d = 2^20; ECUQ has the lowest NMSE"),
    Statement("Table 4", "App. F", "hyperparameters: batch size, client optimizer and learning rate, server "
              "learning rate per task",
              not_checkable="the training hyperparameters of the neural-network experiments (EMNIST, CIFAR-100, "
                            "Amazon Reviews, Shakespeare): a configuration with nothing to compute; the experiments "
                            "themselves need data sets and models not available offline"),
    Statement("Figure 8", "App. G.1", "validation accuracy against rounds for the four tasks",
              not_checkable=NN.format("validation-accuracy curves on EMNIST, CIFAR-100, Amazon Reviews and Shakespeare")),
    Statement("Figure 9", "App. G.1", "train accuracy against rounds for the four tasks",
              not_checkable=NN.format("train-accuracy curves on EMNIST, CIFAR-100, Amazon Reviews and Shakespeare")),
    Statement("Figure 10", "App. G.2", "CIFAR-100, K = 10, V = 3: train / validation accuracy for anchor "
              "budgets b_w in {32, 3, 2, 1.5} (b_c = 2) against rounds and downlink bits"),
    Statement("Figure 11", "App. G.2", "CIFAR-100: train / validation accuracy for correction budgets b_c in "
              "{32, 4, 2, 1, 0.5} (b_w = 2) against rounds and downlink bits"),
    Statement("Figure 12", "App. G.3", "CIFAR-100: with vs without the correction, train / validation accuracy "
              "and the clients' average estimation error"),
    Statement("Algorithm 5", "App. G.4", "a citation, not an algorithm of this paper: 'Algorithm 5 of "
              "Fatkhullin et al. (2021)' (EF21-BC), which the authors could not extend to partial participation",
              not_checkable="not printed in this paper: App. G.4 names Algorithm 5 of Fatkhullin et al. (2021) "
                            "(EF21-BC) and reports, without numbers, that its partial-participation extension did not "
                            "converge; there is no statement to check (the paper's own algorithms are 1-4)"),
    Statement("Figure 13", "App. G.4", "EMNIST (N = 200, S = 10): EF21-PP with exact downlink, with EDEN-"
              "compressed models, and with DoCoFL; accuracy against rounds, total and online downlink bits",
              not_checkable=NN.format("EMNIST with LeNet, EF21-PP extensions")),
    Statement("Figure 14", "App. G.4", "Figure 13's experiment on CIFAR-100 (N = 25, S = 5)",
              not_checkable=NN.format("CIFAR-100 with ResNet-9, EF21-PP extensions")),
    ),
)
