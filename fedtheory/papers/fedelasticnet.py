"""Inventory of Kim, Woo, Seo & Kim, "Communication-Efficient and Drift-Robust Federated Learning via Elastic Net" (FedElasticNet).

Every numbered statement, algorithm and experiment of the paper, main text and appendices (see
:mod:`fedtheory.papers.inventory` for the fields). Labels are as the paper prints them.
"""
from __future__ import annotations

from .inventory import Paper, Statement

__all__ = ["PAPER"]


def _outside(algorithm: str, options: tuple[str, ...], why: str) -> dict[str, str]:
    return {f"{algorithm}:{option}": f"outside: {why}" for option in options}


# The paths of Statement.paths (see fedtheory/papers/inventory.py) that the hypotheses of Appendix B exclude. Every
# statement of the analysis of Algorithm 3 (Lemmas B.2-B.5, Theorems B.6, B.1, 3.1) shares them, each true of each.
_EXACT_SOLVE = _outside(
    "feddyn", ("solver='gd'", "l1_mode='subgradient'", "local_step=other", "local_steps=other", "stochastic=True"),
    "Appendix B analyses Algorithm 3 with theta~_k^t the exact minimiser of eq. (10) (its first-order condition is "
    "eq. (11)); K local (stochastic) gradient steps, and the options only they read (local_steps, local_step, "
    "l1_mode), are another algorithm (run where the statement admits any local solver: Lemma B.2)")
_NO_THRESHOLD = _outside(
    "feddyn", ("threshold=other",),
    "Appendix B analyses Algorithm 3 without the epsilon-threshold: theta_k^t is the exact solution of eq. (10) "
    "and the stored g_k^t = grad L_k(theta_k^t) (eq. (22)), which T_eps breaks; Lemma B.2, which needs only lines "
    "6, 12 and 13, is run with epsilon > 0")
_DELTA_UPLOAD = _outside(
    "feddyn", ("upload='model'",),
    "Algorithm 3 uploads Delta_k (line 8); upload='model' is the original FedDyn's uplink, which changes only what "
    "a round logs as sent (run under Lemma B.2)")
_UNIFORM_WEIGHTS = _outside(
    "feddyn", ("weights=unequal",),
    "Algorithm 3 weights every client 1/m (lines 12-13: h^t = h^{t-1} - (lambda2/m) sum_{P_t} Delta_k - ..., "
    "theta^t the mean over P_t); unequal client weights are fedtheory's generalisation, not the paper's algorithm")
_UNIFORM_SAMPLING = _outside(
    "feddyn", ("participation=Bernoulli",),
    "the analysis samples P of the m clients uniformly without replacement (the expectations of Lemma B.3 and "
    "step (25) use |P_t| = P); independent Bernoulli participation (a random, possibly empty P_t) is another "
    "sampling")
_SUBGRADIENT_READING = _outside(
    "feddyn", ("sign_at_zero='printed'",),
    "checked as its proof gives it, which needs the sub-gradient reading of sign(theta~_k^t - theta^{t-1}) (the "
    "l1 sub-gradient s of eq. (11)); under the printed sign(0) = 0 Lemmas B.3 and B.4 of the proof are recorded "
    "false (fedelasticnet.lemmaB3.printed_sign, fedelasticnet.lemmaB4.printed_sign)")
_APPENDIX_B = {**_EXACT_SOLVE, **_NO_THRESHOLD, **_DELTA_UPLOAD, **_UNIFORM_WEIGHTS}
_PRINTED_FORMS_FULL = {"feddyn:participation=UniformSubset": (
    "unrun: Theorem 3.1's own claims record its printed forms false (no condition on lambda2; C0 unsquared) with "
    "counterexamples under full participation; its bound under uniform subsets (P < m) is Theorem B.1's, checked "
    "with the expectation over every sample path at horizons T <= 6 (fedelasticnet.thm3_1.corrected) and every "
    "round through Theorem B.6 (fedelasticnet.thmB6.per_round)")}


def _comparator(algorithm: str, options: tuple[str, ...], statement: str, own: str) -> dict[str, str]:
    """A baseline or another FedElasticNet algorithm that a claim citing ``statement`` also runs."""
    return _outside(algorithm, options, f"{algorithm} is not {statement}'s algorithm: a claim citing {statement} "
                                        f"also runs it (as another FedElasticNet algorithm or a baseline); its own "
                                        f"paths are run under {own}")


_FEDDYN_BESIDE = ("alpha=default", "l1=default", "l1_mode='subgradient'", "local_step=other", "local_steps=other",
                  "participation=Bernoulli", "solver='gd'", "stochastic=True", "threshold=other", "upload='model'",
                  "weights=unequal")
_FEDPROX_BESIDE = ("l1_mode='subgradient'", "local_step=other", "local_tol=other", "normalize='all'",
                   "participation=Bernoulli", "prox=default", "server_step=other", "stochastic=True",
                   "weighting='uniform'")
_SCAFFOLD_BESIDE = ("l1_mode='proximal'", "local_step=other", "local_steps=other", "option='I'",
                    "participation=Bernoulli", "participation=Full", "prox=other", "server_step=other",
                    "stochastic=True", "weights=equal")

PAPER = Paper(
    key="fedelasticnet",
    citation='Kim, Woo, Seo & Kim, "Communication-Efficient and Drift-Robust Federated Learning via Elastic Net" (FedElasticNet)',
    statements=(
    Statement("Table 1", "§1, p. 2",
              "qualitative comparison: communication efficiency (FedAvg, FedProx, FedDyn triangle; SCAFFOLD cross; "
              "FedElasticNet circle) and robustness to heterogeneous data (FedAvg cross; FedProx triangle; "
              "SCAFFOLD, FedDyn, FedElasticNet circle)"),
    Statement("Algorithm 1", "§3.1",
              "FedElasticNet for FedAvg/FedProx: theta_k^t = argmin L_k + lambda2/2 ||theta - theta^{t-1}||^2 + "
              "lambda1 ||theta - theta^{t-1}||_1, send Delta_k, theta^t = theta^{t-1} + sum_{P_t} (n_k/n) Delta_k",
              paths={**_comparator("feddyn", _FEDDYN_BESIDE, "Algorithm 1", "Algorithm 3"),
                     "fedprox:l1=default": "outside: lambda1 = 0 is FedProx, the baseline Algorithm 1 adds the "
                                           "elastic net to (run beside it as a baseline)"}),
    Statement("Algorithm 2", "§3.2",
              "FedElasticNet for SCAFFOLD: B local steps of eq. (7) (SCAFFOLD's corrected gradient + lambda2 "
              "(theta - theta^{t-1}) + lambda1 sign(theta - theta^{t-1})), option-II control variates, "
              "theta^t = theta^{t-1} + eta_g/|P_t| sum Delta_k, c^t = c^{t-1} + (1/m) sum Delta c_k",
              paths={"scaffold:l1=default": "outside: lambda1 = 0 is SCAFFOLD, the baseline Algorithm 2 adds the "
                                            "elastic net to (run beside it as a baseline)"}),
    Statement("Algorithm 3", "§3.3",
              "FedElasticNet for FedDyn: local argmin of eq. (10), g_k^t = g_k^{t-1} - lambda2 Delta_k - lambda1 "
              "sign(Delta_k), h^t = h^{t-1} - (lambda2/m) sum Delta_k - (lambda1/m) sum sign(Delta_k), theta^t = "
              "mean_{P_t} theta_k^t - h^t/lambda2",
              paths={**_comparator("fedprox", _FEDPROX_BESIDE, "Algorithm 3", "Algorithm 1"),
                     **_comparator("scaffold", _SCAFFOLD_BESIDE, "Algorithm 3", "Algorithm 2")}),
    Statement("Theorem 3.1", "§3.3, eq. (13)",
              "Alg. 3, convex beta-smooth clients: E[R(mean_t gamma^t) - R*] <= (||gamma^0 - theta*||^2 + kappa "
              "C_0)/(T kappa0) + (kappa'/kappa0) lambda1^2 d - (2 lambda1/(T lambda2)) sum_t <gamma^{t-1} - "
              "theta*, mean_k E sign(theta~_k^t - theta^{t-1})>",
              depends_on=("Theorem B.1",),
              paths={**_APPENDIX_B, **_UNIFORM_SAMPLING, **_PRINTED_FORMS_FULL}),
    Statement("Table 2", "§4",
              "cumulative non-zeros sent (10% participation, MNIST/EMNIST-L/CIFAR-10/100/Shakespeare): Algs. 1-3 "
              "below their baselines, SCAFFOLD twice FedProx, Alg. 3 the fewest"),
    Statement("Table 3", "§4",
              "cumulative entropy of the transmitted values (bin 0.01), 10% participation: Algs. 1-3 below "
              "their baselines, Alg. 3 the smallest; FedDyn sending Delta_k instead of theta_k lowers it",
              stand_in=("MNIST-1D over 20 Dirichlet(0.3) clients, MLP 40-100-100-10, local SGD, 10% participation, "
                        "60 rounds, Table 5's CIFAR-10 hyperparameters, 2 development + 5 held-out seeds "
                        "(fedtheory/experiments/fedelasticnet.py); narrower: synthetic(1,1) logistic regression, "
                        "10 clients, d = 20, 30 rounds")),
    Statement("Table 4", "§4",
              "cumulative entropy of the transmitted values (bin 0.01), 100% participation: same shape as Table 3",
              stand_in=("Table 3's neural setting at 100% participation (10 clients, 20 rounds); narrower: Table 3's "
                        "convex stand-in at 100% participation")),
    Statement("Figure 1", "§4",
              "test accuracy against rounds on MNIST, EMNIST-L, CIFAR-10, CIFAR-100 (10%, Dirichlet(0.3)): "
              "FedElasticNet keeps the accuracy of its baselines",
              not_checkable="experiment on MNIST, EMNIST-L, CIFAR-10 and CIFAR-100 with the paper's neural "
                            "networks: the data sets are not available offline (the project never downloads data)"),
    Statement("Figure 2", "§4",
              "distribution of the transmitted Delta_k^t on CIFAR-10 for FedDyn, Alg. 2, Alg. 3: Alg. 3's is "
              "sparser and Laplace-like, FedDyn's Gaussian-like",
              stand_in=("the values FedDyn, Alg. 2 and Alg. 3 send in Table 3's neural setting (MNIST-1D, MLP): "
                        "exact zeros and excess kurtosis per round; narrower: the same on Table 3's convex stand-in "
                        "(synthetic(1,1) logistic regression), pooled")),
    Statement("Table 5", "App. A.1",
              "the hyperparameters (lambda1, lambda2, epsilon) used per data set and algorithm",
              not_checkable="a table of the experiments' hyperparameters: it asserts nothing to compare (the "
                            "synthetic reproductions of Tables 3-4 and Figs. 2-5 use its CIFAR-10 row)"),
    Statement("Figure 3", "App. A.2",
              "Alg. 1 on CIFAR-10: accuracy and cumulative non-zeros against lambda1 in {1e-2, 1e-4, 1e-6, 1e-8}",
              stand_in=("MNIST-1D over 20 Dirichlet(0.3) clients, MLP, 10% participation, 40 rounds, lambda1 in "
                        "{1e-8, 1e-6, 1e-4, 1e-2}: cumulative non-zeros and test accuracy, 2 + 5 seeds; narrower: "
                        "synthetic(1,1) logistic regression, 10 clients, 10% participation, 20 rounds, lambda1 in "
                        "{1e-8, 1e-6, 1e-4, 1e-2}: cumulative non-zeros and training accuracy")),
    Statement("Figure 4", "App. A.2",
              "Alg. 2 on CIFAR-10: accuracy and cumulative non-zeros against lambda1",
              stand_in="Figure 3's sweep for Alg. 2"),
    Statement("Figure 5", "App. A.2",
              "Alg. 3 on CIFAR-10: accuracy and cumulative non-zeros against lambda1",
              stand_in="Figure 3's sweep for Alg. 3"),
    Statement("Figure 6", "App. A.3",
              "test accuracy against rounds on MNIST, EMNIST-L, CIFAR-10, CIFAR-100, 10% participation, IID and "
              "Dirichlet(0.3/0.6)",
              not_checkable="experiment on MNIST, EMNIST-L, CIFAR-10 and CIFAR-100 with the paper's neural "
                            "networks: the data sets are not available offline (the project never downloads data)"),
    Statement("Figure 7", "App. A.3",
              "test accuracy against rounds on IID and non-IID Shakespeare (stacked LSTM), 10% and 100% "
              "participation",
              not_checkable="experiment on Shakespeare with a stacked LSTM: the data set is not available offline "
                            "(the project never downloads data)"),
    Statement("Figure 8", "App. A.3",
              "test accuracy against rounds on MNIST and EMNIST-L, 100% participation",
              not_checkable="experiment on MNIST and EMNIST-L with the paper's fully connected networks: the data "
                            "sets are not available offline (the project never downloads data)"),
    Statement("Figure 9", "App. A.3",
              "test accuracy against rounds on CIFAR-10 and CIFAR-100, 100% participation",
              not_checkable="experiment on CIFAR-10 and CIFAR-100 with the paper's CNN: the data sets are not "
                            "available offline (the project never downloads data)"),
    Statement("Definition B.0.1", "App. B.1, eqs. (14)-(17)",
              "beta-smoothness ||grad L_k(x) - grad L_k(y)|| <= beta ||x - y||, with the consequences (15)-(16) and "
              "the relaxed triangle inequality (17)",
              not_checkable="a definition: it fixes a term or a class, and asserts nothing to compare"),
    Statement("Theorem B.1", "App. B.2, eq. (18)",
              "full statement of Theorem 3.1: the same bound under lambda2 > 27 beta, with kappa, kappa0, kappa' "
              "and C_0 as printed",
              depends_on=("Lemma B.2", "Lemma B.3", "Lemma B.4", "Lemma B.5", "Theorem B.6"),
              paths={**_APPENDIX_B, **_UNIFORM_SAMPLING, **_SUBGRADIENT_READING}),
    Statement("Lemma B.2", "App. B.2, eq. (22)",
              "Alg. 3 keeps h^t = (1/m) sum_k grad L_k(theta_k^t)",
              paths=_UNIFORM_WEIGHTS),
    Statement("Lemma B.3", "App. B.2",
              "E[gamma^t - gamma^{t-1}] = -(1/(lambda2 m)) sum_k E grad L_k(theta~_k^t) - (lambda1/(lambda2 m)) "
              "sum_k E sign(theta~_k^t - theta^{t-1})",
              depends_on=("Lemma B.2",),
              paths={**_APPENDIX_B, **_UNIFORM_SAMPLING}),
    Statement("Lemma B.4", "App. B.2, eqs. (30)-(31)",
              "E||gamma^t - theta*||^2 <= E||gamma^{t-1} - theta*||^2 - (2/lambda2) E[R(gamma^{t-1}) - R*] + "
              "(beta/lambda2) eps_t + E||gamma^t - gamma^{t-1}||^2 - (2 lambda1/(lambda2 m)) <gamma^{t-1} - "
              "theta*, sum_k E sign(theta~_k^t - theta^{t-1})>",
              depends_on=("Lemma B.3",),
              paths={**_APPENDIX_B, **_UNIFORM_SAMPLING}),
    Statement("Lemma B.5", "App. B.2",
              "(1 - 5 beta^2/lambda2^2) eps_t <= 10 C_{t-1}/lambda2^2 + 10 beta E[R(gamma^{t-1}) - R*]/lambda2^2 + "
              "5 lambda1^2 d/lambda2^2",
              paths=_APPENDIX_B),
    Statement("Theorem B.6", "App. B.2",
              "per round: kappa0 E[R(gamma^{t-1}) - R*] <= (E||gamma^{t-1} - theta*||^2 + kappa C_{t-1}) - "
              "(E||gamma^t - theta*||^2 + kappa C_t) + kappa P/(2m) lambda1^2 - (2 lambda1/lambda2) <gamma^{t-1} - "
              "theta*, mean_k E sign(theta~_k^t - theta^{t-1})>",
              depends_on=("Lemma B.4", "Lemma B.5"),
              paths={**_APPENDIX_B, **_UNIFORM_SAMPLING, **_SUBGRADIENT_READING}),
    ),
)
