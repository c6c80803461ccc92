"""Inventory of Kwon, Park & Hong, "Tighter Regret Analysis and Optimization of Online Federated Learning" (IEEE TPAMI 2023).

Every numbered statement, algorithm and experiment of the paper, main text and appendices (see
:mod:`fedtheory.papers.inventory` for the fields). Labels are as the paper prints them.
"""
from __future__ import annotations

from .inventory import Paper, Statement

__all__ = ["PAPER"]

#: The option no claim of the paper runs and no statement admits: the paper's clients are equally weighted.
_EQUAL_WEIGHTS = ("outside: the paper's clients are equally weighted: the server averages with 1/K (eqs. (5), (9)) "
                  "and the regret (eq. (3)) sums every client's loss; fedtheory's online streams carry weights 1/K")


def _equal_weights(*algorithms: str) -> dict[str, str]:
    return {f"{a}:weights=unequal": _EQUAL_WEIGHTS for a in algorithms}

PAPER = Paper(
    key="ofediq",
    citation='Kwon, Park & Hong, "Tighter Regret Analysis and Optimization of Online Federated Learning" (IEEE TPAMI 2023)',
    statements=(
    Statement("Figure 1", "§3.2",
              "diagram of OFedIQ's uplink between client k and the server (local OGD, periodic transmission, "
              "quantization, client subsampling)",
              not_checkable="an illustration of the protocol (a diagram): it asserts nothing to compare; the "
                            "protocol itself is checked as Algorithm 2"),
    Statement("Algorithm 3", "§4.2.2",
              "parameter optimisation: s = argmin_s log2(s+1)/16 + 4 (gamma/s)^(2/3) (eq. 20), b = floor((gamma/s)"
              "^(2/3) D), p = 32 gamma/(1 + 32 (gamma/s)^(2/3) + log2(s+1))"),
    Statement("Algorithm 1", "§3.1",
              "FedOGD: every client k takes one OGD step w_{k,t+1} = w_t - eta grad L(f(x_{k,t}; w_t), y_{k,t}) "
              "(eq. 4) and the server averages, w_{t+1} = (1/K) sum_k w_{k,t+1} (eq. 5); 32 K D bits per step",
              paths=_equal_weights("fedogd", "ofedavg", "ofediq")),
    Statement("Algorithm 2", "§3.2",
              "OFedIQ: local OGD from g_{k,t} (eqs. 6-7); every L steps each client, with probability p_k, sends "
              "m_{k,t} = Q(-(theta_{k,t+1} - g_{k,t-L+1})/(eta p_k)) (eq. 8) and the server sets w_{t+1} = "
              "w_{t-L+1} - (eta/K) sum_{S_t} m_{k,t} (eq. 9)",
              paths=_equal_weights("fedogd", "ofedavg", "ofediq")),
    Statement("Definition 1", "§4",
              "sigma_diff^2 = (1/K) sum_k (1/T) sum_t ||grad L(f(x_{k,t}; w*), y_{k,t})||^2 (variance at the "
              "optimum)",
              not_checkable="a definition: it fixes a term or a class, and asserts nothing to compare"),
    Statement("Assumption 1", "§4.1", "every per-sample loss is convex and differentiable in w",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Assumption 2", "§4.1", "every per-sample loss is beta-smooth in w",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Theorem 1", "§4.1 (proof §4.3.1)",
              "OFedAvg (L = 1, no quantization), eta < p_min/(2 beta): regret_T <= K ||w*||^2/(2 eta) + eta K T "
              "sigma_diff^2/p_min (FedOGD: p_min = 1)",
              depends_on=("Lemma 2",),
              paths={**_equal_weights("fedogd", "ofedavg", "ofediq"),
                     "ofediq:period=other": "outside: Theorem 1 is about L = 1 (FedOGD and OFedAvg); a period L > 1 "
                                            "is Theorem 2's setting (ofediq.thm2.L_gt_1)",
                     "ofediq:s=other": "outside: Theorem 1 is without quantization; the (s, b) quantizer is Theorem "
                                       "2's setting (ofediq.thm2.L1)",
                     "ofediq:b=other": "outside: Theorem 1 is without quantization; the (s, b) quantizer is Theorem "
                                       "2's setting (ofediq.thm2.L1)"}),
    Statement("Assumption 3", "§4.1",
              "Q_q is unbiased with E||Q(u) - u||^2 <= sigma_q^2 ||u||^2",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Theorem 2", "§4.1 (proof §4.3.2)",
              "OFedIQ, eta < p_min/(4 beta (1 + sigma_q^2 (p_sum - p_min + 1)/K)): regret_T <= K ||w*||^2/(2 eta) + "
              "(2 eta L K T sigma_diff^2/p_min)[1 + sigma_q^2 (p_sum - p_min + 1)/K] + 3 beta eta^2 L (L-1) K T "
              "sigma_diff^2",
              depends_on=("Lemma 2", "Lemma 3"),
              paths=_equal_weights("ofediq")),
    Statement("Definition 2", "§4.2, eqs. (12)-(13)",
              "the (s, b)-stochastic quantizer: per block, Q(u)_i = ||u_I|| sign(u_i) xi_i with xi_i the unbiased "
              "two-point rounding of |u_i|/||u_I|| to the grid 1/s; q = 32 b + D (1 + log2(s+1)) bits; sigma_q^2 = "
              "min(ceil(D/b)/s^2, sqrt(ceil(D/b))/s)"),
    Statement("Corollary 1", "§4.2",
              "p_k = p: with the optimised eta, regret_T <= sqrt(alpha ||w*||^2 K^2 sigma_diff^2 T), alpha = 2/p "
              "(OFedAvg) and 4L/p (3p^2(L-1)/8 + 1 + sqrt(D/(b s^2))(p + 1/K)) (OFedIQ)",
              depends_on=("Theorem 1", "Theorem 2"),
              paths={**_equal_weights("fedogd", "ofediq"),
                     "fedogd:eta=default": "outside: Corollary 1 is about its optimised step eta_T, not the class "
                                           "default (half the step bound), which Theorem 1's claims run",
                     "ofediq:eta=default": "outside: Corollary 1 is about its optimised step eta_T, not the class "
                                           "default (half the step bound), which Theorem 2's claims run"}),
    Statement("Table 1", "§4.1",
              "regret constants alpha (FedOGD 2, OFedAvg 2/p, OFedIQ 4(3p^2(L-1)/8 + 1 + sqrt(D/(s^2 b))(p + "
              "1/K))/(p/L)) and uplink bits per step (32KD, 32pKD, (p/L) K (32 b + D(1 + log(s+1))))",
              depends_on=("Theorem 1", "Theorem 2", "Corollary 1")),
    Statement("Lemma 1", "§4.3",
              "||v_i + v_j||^2 <= (1 + a) ||v_i||^2 + (1 + 1/a) ||v_j||^2 for every a > 0"),
    Statement("Lemma 2", "§4.3, eqs. (22)-(23)",
              "(1/K) sum_k ||grad_{k,t}(w_t)||^2 <= (4 beta/K) sum_k [L_{k,t}(w*) - L_{k,t}(w_t)] + (4 beta/K) "
              "sum_k grad_{k,t}(w_t)^T (w_t - w*) + (2/K) sum_k ||grad_{k,t}(w*)||^2"),
    Statement("Lemma 3", "§4.3.2, eq. (45)",
              "local drift over a period: sum_k sum_l ||w_{t-L+1} - g_{k,t-L+l}||^2 <= (3 beta eta^2 L (L-1)/2) "
              "sum_k sum_l ||grad_{k,t-L+l}||^2 (used for L > 1)",
              depends_on=("Lemma 1", "Lemma 4")),
    Statement("Lemma 4", "§4.3.2, eq. (47)",
              "for l >= 2: A ||w_t - g_{k,t+l-2}||^2 + B ||grad_{k,t+l-2}||^2 <= sum_{tau=0}^{l-2} B "
              "||grad_{k,t+l-2-tau}||^2 A^tau, A = 1 + 1/(L-1), B = L eta^2"),
    Statement("eq. (15)", "§4.2.2, eqs. (14)-(15)",
              "at the same uplink cost, OFedIQ(L = 1, p' = 32p/(1.32 + log2(1 + s)), s = ceil(40p), b = D/100) of eq. "
              "(14) has a regret constant below 1.3570/p < OFedAvg(p)'s 2/p, for every p < 1 (step (c)): "
              "quantization is necessary"),
    Statement("Figure 2", "§5",
              "MNIST, K = 1000, CCR 99%: at fixed p/L, L = 1 is best; the loss of L > 1 is visible early "
              "(t = 200) and grows with L, negligible for large t",
              stand_in=("MNIST-1D streamed to K = 200 clients, an MLP 40-32-10 trained online by OFedIQ with "
                        "eta = 0.01, no quantization, p/L = 0.01 (CCR 99%), L in {1, 2, 4}, T = 1000, 2 development "
                        "and 5 held-out seeds: the time-averaged loss at t = 200 and t = 1000 "
                        "(fedtheory/experiments/ofediq.py); MNIST and the paper's CNN are not available offline")),
    Statement("Figure 3", "§5",
              "MNIST, CCR 99%: the optimised OFedIQ(1, 0.086, 3, 777) beats OFedIQ(1, 0.086, 7, 1) and "
              "OFedAvg(0.01) at the same cost"),
    Statement("Figure 4", "§5",
              "MNIST, Air Quality, Room Occupancy, Appliances Energy (K = 1000, CCR 90%/99%): the optimised OFedIQ "
              "nearly matches FedOGD and beats OFedAvg and FedOMD"),
    ),
)
