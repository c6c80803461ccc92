"""Inventory of Jiang, Rodomanov & Stich, "Federated Optimization with Doubly Regularized Drift Correction" (ICML 2024).

Every numbered statement, algorithm and experiment of the paper, main text and appendices (see
:mod:`fedtheory.papers.inventory` for the fields). Labels are as the paper prints them.

The text of the paper fedtheory works from lost every formula (docs/fedred.md). The summaries below give the
statements in the form fedtheory reconstructs (the hypotheses survive in words; constants that are
fedtheory's reconstruction are said to be so). Main-text results restate appendix theorems (Theorem 1 is
Theorem 29, Corollary 2 is Corollary 30, Theorem 3 is Theorem 23, Theorem 4 is Theorem 24, Corollary 5 is
Corollary 25, Theorem 6 is Theorem 34, Theorem 8 is Theorem 37, Theorem 9 is Theorem 36): their proof chain is
the appendix theorem's.
"""
from __future__ import annotations

from .fedred_paths import PATHS
from .inventory import Paper, Statement

__all__ = ["PAPER"]

_LOST = "the statement's formula is lost in the available text of the paper"
#: The statements whose printed formula is lost (docs/fedred.md): the claims check the form fedtheory
#: reconstructs from the surviving words and the proof, which the summary gives.
_RECONSTRUCTED = ("the printed formula is lost in the available text of the paper; the claims check fedtheory's "
                  "reconstruction from the surviving words and the proof, as summarised here")

PAPER = Paper(
    key="fedred",
    citation='Jiang, Rodomanov & Stich, "Federated Optimization with Doubly Regularized Drift Correction" (ICML 2024)',
    statements=(
    Statement("Table 1", "§1",
              "communication rounds and local steps per round of GD, Scaffold, FedDyn, Scaffnew, MimeMVR, SONATA, "
              "CE-LGD, SVRP, DANE, DANE+-GD, FedRed-GD for strongly convex, convex and non-convex f: DANE/DANE+/FedRed "
              "need O((delta_A/mu) log(1/eps)), O(delta_A D^2/eps), O(delta_B F_0/eps) rounds; FedRed-GD's local work "
              "matches GD's"),
    Statement("Algorithm 1", "§3",
              "DANE+: each client approximately minimises F_{i,r}(x) = f_i(x) + <h_{i,r}, x> + lam/2||x - x^r||^2 "
              "(any local solver), the server averages (standard or randomized) the local models",
              paths=PATHS["Algorithm 1"]),
    Statement("Definition 1", "§3",
              "delta_B-BHD: ||grad h_i(x) - grad h_i(y)|| <= delta_B ||x - y|| for every i, x, y, h_i = f - f_i",
              not_checkable="a definition: it fixes a term or a class, and asserts nothing to compare"),
    Statement("Definition 2", "§3",
              "delta_A-AHD: (1/n) sum_i ||grad h_i(x) - grad h_i(y)||^2 <= delta_A^2 ||x - y||^2 for every x, y",
              not_checkable="a definition: it fixes a term or a class, and asserts nothing to compare"),
    Statement("Theorem 1", "§3.1",
              "DANE+ with CV (1), any selected local model, delta_B-BHD, local outputs with F_{i,r}(x_{i,r+1}) <= "
              "F_{i,r}(x^r) and ||grad F_{i,r}||^2 <= e_r, lam of order delta_B: min_r ||grad f(x^r)||^2 <= "
              "O(delta_B F_0/R) + average e_r (constants reconstructed by fedtheory)",
              depends_on=("Theorem 29",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 1"]),
    Statement("Corollary 2", "§3.1",
              "DANE+-GD (K local GD steps from x^r, min-gradient iterate) on L-smooth f_i with delta_B-BHD: "
              "O(delta_B F_0/eps) rounds, O(L R/delta_B) local steps per round",
              depends_on=("Corollary 30",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Corollary 2"]),
    Statement("Theorem 3", "§3.1",
              "DANE+ with CV (1), standard averaging, mu-convex f_i with delta_A-AHD, absolute local accuracy: "
              "f(xbar_R) - f* <= mu/(2[(1+mu/lam)^R - 1]) (D + error terms)^2, lam = 2 delta_A",
              depends_on=("Theorem 23",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 3"]),
    Statement("Theorem 4", "§3.1",
              "as Theorem 3 with the relative accuracy ||grad F_{i,r}(x_{i,r+1})|| <= e_r ||x_{i,r+1} - x^r||, e_r "
              "of order lam/(r+1): the exact-solver rate mu D^2/(2[(1+mu/lam)^R - 1]) up to a constant",
              depends_on=("Theorem 24",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 4"]),
    Statement("Corollary 5", "§3.1",
              "DANE+-GD / DANE+-FGD under Theorem 4's rule: O((L+delta_A)/(mu+delta_A) log) resp. O(sqrt((L+delta_A)/"
              "(mu+delta_A)) log) local steps at round r; total work of DANE+-GD ~ GD's up to a log factor",
              depends_on=("Corollary 25",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Corollary 5"]),
    Statement("Theorem 6", "§4.1",
              "FedRed (Alg. 2, CV (4), exact local stationary points, randomized selection) with delta_B-BHD: "
              "O(delta_B F_0/eps) communications in expectation, as DANE+",
              depends_on=("Theorem 34",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 6"]),
    Statement("Algorithm 3", "§4.3",
              "FedRed-GD/SGD: x_{i,k+1} = (x_{i,k} + lam eta x~_k - eta(g_{i,k} + h_{i,k}))/(1 + lam eta); with "
              "probability p communicate: x~_{k+1} = average (or a selected model), control variates (4) recomputed",
              paths=PATHS["Algorithm 3"]),
    Statement("Assumption 1", "§4.3",
              "unbiased stochastic gradients with E||g_i(x; xi) - grad f_i(x)||^2 <= sigma^2",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Theorem 8", "§4.3",
              "FedRed-(S)GD, non-convex, delta_B-BHD, randomized selection: GD's total gradient computations "
              "O(L F_0/eps) with O(delta_B F_0/eps) communications in expectation",
              depends_on=("Theorem 37",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 8"]),
    Statement("Theorem 9", "§4.3",
              "FedRed-(S)GD, mu-convex L-smooth f_i with delta_A-AHD and Assumption 1: total iterations of GD's order "
              "with a fraction p ~ delta_A/L of them communicating (O(delta_A D^2/eps) or O((delta_A/mu) log) "
              "communications)",
              depends_on=("Theorem 36",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 9"]),
    Statement("Figure 1", "§5",
              "synthetic quadratics: DANE+-GD and FedRed-GD need about L/delta times fewer rounds than GD; FedRed-GD's "
              "gradient computations are on GD's scale"),
    Statement("Figure 2", "§5",
              "logistic regression on four LIBSVM data sets (Dirichlet split): DANE+-GD and FedRed-GD converge fast "
              "against Scaffold, Scaffnew, FedProx and GD",
              stand_in=("scikit-learn's breast cancer, digits and wine as binary l2-logistic regression (mu = 1e-3, "
                        "unit-norm rows), 10 clients by Dirichlet(1.0), six grid points per method chosen on 2 "
                        "development splits: communications to a 1e-4 relative gap on 5 held-out splits "
                        "(fedtheory/experiments/fedred.py); the LIBSVM sets and the paper's tuned values are not "
                        "available offline")),
    Statement("Figure C.1", "App. C",
              "ResNet-18 on CIFAR-10 and CIFAR-100 (Dirichlet split): FedProx outperforms DANE+-SGD, FedRed-SGD, "
              "Scaffold and Scaffnew and converges more stably; drift correction for deep networks needs study",
              not_checkable=("an observation about deep networks (ResNet-18 on CIFAR-10/100, whose data are not "
                             "available offline), explained by the known ineffectiveness of variance reduction for "
                             "deep networks (Defazio & Bottou 2019): a small stand-in model does not have the "
                             "property the explanation is about, so its outcome would neither confirm nor refute "
                             "the figure; the numbers of clients, the Dirichlet concentration and the tuned values "
                             "are lost")),
    Statement("Definition 3", "App. A.1",
              "mu-convexity: f(y) >= f(x) + <grad f(x), y - x> + mu/2 ||y - x||^2",
              not_checkable="a definition: it fixes a term or a class, and asserts nothing to compare"),
    Statement("Definition 4", "App. A.1",
              "L-smoothness: ||grad f(x) - grad f(y)|| <= L ||x - y||",
              not_checkable="a definition: it fixes a term or a class, and asserts nothing to compare"),
    Statement("Lemma 10", "App. A.2",
              "Young: 2<a, b> <= alpha||a||^2 + ||b||^2/alpha and ||a + b||^2 <= (1+alpha)||a||^2 + (1+1/alpha)||b||^2 "
              "(form reconstructed by fedtheory)",
              reconstruction=_RECONSTRUCTED),
    Statement("Lemma 11", "App. A.2",
              "first-order optimality of a proximal-linear step: psi(x) = psi(x+) + (lam + 1/eta)/2 ||x - x+||^2 for "
              "psi = <g, x> + lam/2||x - u||^2 + 1/(2eta)||x - v||^2 (form reconstructed by fedtheory)",
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Lemma 11"]),
    Statement("Lemma 12", "App. A.2",
              "a_{r+1}^2 <= a_r^2 + c_r a_{r+1} with a_r, c_r >= 0 implies a_R <= a_0 + sum_{r<R} c_r, squared: a_R^2 <= "
              "(a_0 + sum c_r)^2 (form reconstructed by fedtheory)",
              reconstruction=_RECONSTRUCTED),
    Statement("Lemma 13", "App. A.2",
              "q >= 1, q a_{k+1} + b_k <= a_k + c implies (q^K a_K + sum_{k<K} q^k b_k)/S_K <= a_0/S_K + c, S_K = "
              "sum_{k<K} q^k (form reconstructed by fedtheory)",
              reconstruction=_RECONSTRUCTED),
    Statement("Lemma 14", "App. A.2",
              "(1/n) sum_i ||x_i - x||^2 = ||xbar - x||^2 + (1/n) sum_i ||x_i - xbar||^2"),
    Statement("Lemma 15", "App. A.2",
              "descent lemma (Nesterov 2018, Lemma 1.2.3): f(y) <= f(x) + <grad f(x), y - x> + L/2||y - x||^2"),
    Statement("Lemma 16", "App. A.2",
              "Nesterov 2018, Thm 2.1.12: <grad f(x) - grad f(y), x - y> >= mu L/(mu+L)||x-y||^2 + "
              "1/(mu+L)||grad f(x) - grad f(y)||^2"),
    Statement("Lemma 17", "App. A.2",
              "C^2 f_i with (1/n) sum_i ||grad^2 f_i(x) - grad^2 f(x)||^2 <= delta^2 for every x have delta-AHD"),
    Statement("Remark 18", "App. A.2",
              "the converse of Lemma 17 fails: an example has delta_A-AHD with a smaller constant than the pointwise "
              "Hessian bound",
              depends_on=("Lemma 17",)),
    Statement("Lemma 19", "App. B.1",
              "Alg. 1, mu-convex f_i: F_{i,r}(x) >= F_{i,r}(x_{i,r+1}) + <grad F_{i,r}(x_{i,r+1}), x - x_{i,r+1}> + "
              "(mu+lam)/2 ||x - x_{i,r+1}||^2 for every x",
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Lemma 19"]),
    Statement("Lemma 20", "App. B.1",
              "one round of DANE+ (CV (1), standard averaging, lam >= 2 delta_A): f(x^{r+1}) - f(x) + (lam+mu)/2 "
              "mean_i||x_{i,r+1} - x||^2 + lam/4 mean_i||x_{i,r+1} - x^r||^2 <= lam/2||x^r - x||^2 + mean_i <grad "
              "F_{i,r}(x_{i,r+1}), x_{i,r+1} - x> (form reconstructed by fedtheory)",
              depends_on=("Lemma 19", "Lemma 14"),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Lemma 20"]),
    Statement("Corollary 21", "App. B.1",
              "exact DANE, lam = 2 delta_A: f(x^{r+1}) - f* + (lam+mu)/2||x^{r+1} - x*||^2 <= lam/2||x^r - x*||^2, "
              "f monotone, f(x^R) - f* <= mu D^2/(2[(1+mu/lam)^R - 1]) <= lam D^2/(2R)",
              depends_on=("Lemma 20",),
              reconstruction=_RECONSTRUCTED),
    Statement("Lemma 22", "App. B.1",
              "inexact DANE+: Lemma 20 at x* with Cauchy-Schwarz, and ||x^R - x*|| <= D + (2/lam) sum_{r<R} eps_r, "
              "eps_r = sqrt(mean_i ||grad F_{i,r}(x_{i,r+1})||^2) (form reconstructed by fedtheory)",
              depends_on=("Lemma 20", "Lemma 12"),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Lemma 22"]),
    Statement("Theorem 23", "App. B.1",
              "DANE+ with absolute local errors eps_r, lam = 2 delta_A: f(xbar_R) - f* <= mu/(2[(1+mu/lam)^R - 1]) "
              "[D^2 + (2/lam)(D + (2/lam) sum eps_r) sum (1+mu/lam)^r eps_r] (form reconstructed by fedtheory)",
              depends_on=("Lemma 22",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 23"]),
    Statement("Theorem 24", "App. B.1",
              "DANE+ with the relative rule ||grad F_{i,r}|| <= e_r ||x_{i,r+1} - x^r||: f(xbar_R) - f* <= lam D^2/"
              "(2 sum_{r<R} prod_{k<r} q_k), q_k = 1 + mu/lam - 2e_k^2/lam^2 (form reconstructed by fedtheory)",
              depends_on=("Lemma 22",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 24"]),
    Statement("Corollary 25", "App. B.1",
              "local GD (FGD) from x^r meets Theorem 24's rule within about (L+lam)/(mu+lam) (sqrt of it) times "
              "log((L+lam)(r+1)/lam) steps",
              depends_on=("Theorem 24",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Corollary 25"]),
    Statement("Lemma 26", "App. B.2",
              "grad f(x) = grad F_{i,r}(x) + grad h_i(x) - grad h_i(x^r) - lam(x - x^r), so ||grad f(x)|| <= "
              "||grad F_{i,r}(x)|| + (lam + delta_B)||x - x^r|| (form reconstructed by fedtheory)",
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Lemma 26"]),
    Statement("Lemma 27", "App. B.2",
              "F_{i,r}(x) - F_{i,r}(x^r) >= f(x) - f(x^r) + (lam - delta_B)/2||x - x^r||^2 under delta_B-BHD "
              "(and <= with lam + delta_B; form reconstructed by fedtheory)",
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Lemma 27"]),
    Statement("Lemma 28", "App. B.2",
              "DANE+ with F_{i,r}(x_{i,r+1}) <= F_{i,r}(x^r): f(x_{i,r+1}) + (lam - delta_B)/2||x_{i,r+1} - x^r||^2 <= "
              "f(x^r) for every client, so f(x^r) is non-increasing under any selection",
              depends_on=("Lemma 27",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Lemma 28"]),
    Statement("Theorem 29", "App. B.2",
              "non-convex DANE+ (any selected model, delta_B-BHD): f(x^{r+1}) + a||grad f(x^{r+1})||^2 <= f(x^r) + "
              "2a e_r, a = 1/(36 delta_B) at lam = 2 delta_B; (1/R) sum ||grad f||^2 <= 36 delta_B F_0/R + 2 mean e_r "
              "(constants reconstructed by fedtheory)",
              depends_on=("Lemma 28", "Lemma 26"),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 29"]),
    Statement("Corollary 30", "App. B.2",
              "DANE+-GD run until ||grad F_{i,r}||^2 <= e: O(delta_B F_0/eps) rounds, at most 2(L+lam)F_0/e local "
              "steps per round",
              depends_on=("Theorem 29", "Lemma 27", "Lemma 28"),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Corollary 30"]),
    Statement("Lemma 31", "App. B.3",
              "one-round recurrence of DANE+ with the Scaffnew-type control variate (B.84) under strong convexity",
              not_checkable=_LOST + ": the inequality (B.85) and its coefficients cannot be recovered from the "
                            "proof's surviving words (B.86)-(B.108); Corollary 32's consequence, linear "
                            "convergence with control variate (B.84), is checked by fedred.daneplus.cv_b84"),
    Statement("Corollary 32", "App. B.3",
              "DANE+ with control variate (B.84) converges linearly; the best lam equalises the two components of "
              "the contraction factor",
              depends_on=("Lemma 31",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Corollary 32"]),
    Statement("Algorithm 2", "§4",
              "FedRed: local subproblem F_{i,k}(x) = f_i(x) + <h_{i,k}, x> + lam/2||x - x~_k||^2 + 1/(2eta)||x - "
              "x_{i,k}||^2; communicate with probability p, resetting x~ and the control variates (4)",
              paths=PATHS["Algorithm 2"]),
    Statement("Theorem 33", "App. B.4",
              "FedRed (Alg. 2, exact solves), mu-convex f_i with delta_A-AHD: linear (mu > 0) or O(1/K) (mu = 0) "
              "convergence of a Lyapunov function of the local and reference points, no L needed",
              depends_on=("Lemma 13",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 33"]),
    Statement("Theorem 34", "App. B.5",
              "FedRed (Alg. 2, CV (4), local stationary points, randomized selection), delta_B-BHD: average squared "
              "gradient norm O(delta_B F_0/eps) communications in expectation (bound (B.135) lost)",
              depends_on=("Lemma 27",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 34"]),
    Statement("Lemma 35", "App. B.6",
              "FedRed-(S)GD one-step recurrence: E Phi_{k+1} <= (1 - min{mu eta, p mu/(lam+mu)}) Phi_k (+ sigma^2 "
              "term), Phi = mean_i||x_{i,k} - x*||^2/(2eta) + (lam+mu)/(2p)||x~_k - x*||^2 (form reconstructed by "
              "fedtheory)",
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Lemma 35"]),
    Statement("Theorem 36", "App. B.6",
              "FedRed-(S)GD convex: E[f(xbar_K) - f*] bound (B.180) for lam ~ delta_A, p ~ lam eta, eta ~ 1/L, and "
              "the iteration count (B.181) to reach eps",
              depends_on=("Lemma 35", "Lemma 13"),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 36"]),
    Statement("Theorem 37", "App. B.7",
              "FedRed-(S)GD non-convex, delta_B-BHD, randomized selection: average E||grad f||^2 bound (B.188) with "
              "lam ~ delta_B, p ~ lam eta, eta optimised over (0, c/L] (bound lost; checked in a pathwise form "
              "derived by fedtheory: per epoch sum_t ||grad f(x_{j,t})||^2 <= C(m) (f(x~_e) - f(x~_{e+1})))",
              depends_on=("Lemma 27",),
              reconstruction=_RECONSTRUCTED,
              paths=PATHS["Theorem 37"]),
    ),
)
