"""FedElasticNet, the experiments that run small and offline: Table 1 (the qualitative comparison), Tables 2-4
(cumulative non-zeros and entropy), Figure 2 (the distribution of the transmitted updates) and Figures 3-5 (the
lambda1 sweep), on quadratics and synthetic logistic problems. The paper's numbers are on MNIST, EMNIST-L,
CIFAR-10/100 and Shakespeare with neural networks, which this repository does not download;
docs/fedelasticnet.md ("Experiments, side by side") sets the two next to each other.
"""
from __future__ import annotations

import numpy as np

from ...algorithms.fedavg import FedAvg
from ...algorithms.feddyn import FedDyn
from ...algorithms.fedprox import FedProx
from ...algorithms.scaffold import Scaffold
from ...metrics import communication as comm
from ...participation import Full, UniformSubset
from ...problems.logistic import logistic
from ...problems.quadratic import quadratic
from ...run import run
from ..registry import Evidence, claim
from ..tolerances import CONVERGED_REL, MATERIAL_REL
from .instances import algorithm3, spec_problem

__all__ = ["TABLE5_CIFAR10", "table1_rows", "training_accuracy", "headline_algorithms", "headline_table",
           "transmitted_updates", "binned_entropy_bits", "update_statistics", "figure2_shape", "LIKENESS_SPLIT",
           "lambda1_sweep"]

PAPER = "fedelasticnet"

#: What the synthetic stand-ins of Tables 3-4 and Figures 2-5 leave out: they are narrower checks next to the
#: experiments in the paper's setting (fedtheory/claims/fedelasticnet/neural.py), whose shape tests decide.
CONVEX_STAND_IN = ("a convex stand-in (synthetic logistic regression), not the paper's non-IID neural setting; "
                   "the experiment in that setting is fedelasticnet.neural.*")


# ---------------------------------------------------------------------------------------------------------
# Table 1: communication efficiency and robustness to heterogeneous data, qualitatively
# ---------------------------------------------------------------------------------------------------------

def _table1_instances(thorough: bool):
    yield quadratic(8, 6, mu=0.2, L=2.0, delta_B=0.5, zeta2=1.0, seed=0), 300
    if thorough:
        yield quadratic(12, 10, mu=0.1, L=1.0, delta_B=0.3, zeta2=2.0, seed=1), 600
        yield spec_problem(m=5, d=4, seed=0), 600


#: Rounds over which Table 1's communication row is measured.
COMM_ROUNDS = 20


def table1_rows(problem, rounds: int) -> dict:
    """Run the five methods of Table 1 with full participation on a heterogeneous quadratic: FedAvg (5 local GD
    steps), FedProx (exact prox, lambda2 = beta), SCAFFOLD (option II, 5 local steps), FedDyn (lambda2 = beta) and
    FedElasticNet integrated with FedDyn (Algorithm 3, lambda1 = 0.01, exact solves, sub-gradient reading).
    Returns, per method, ||theta^T - theta*|| and the uplink non-zeros per participant per round (first
    :data:`COMM_ROUNDS` rounds)."""
    beta = problem.certificate.L
    algs = {"FedAvg": FedAvg(local_steps=5, local_step=0.2 / beta),
            "FedProx": FedProx(prox=beta),
            "SCAFFOLD": Scaffold(local_steps=5, local_step=0.2 / beta),
            "FedDyn": FedDyn(alpha=beta),
            "FedElasticNet": algorithm3(beta, 0.01, "kkt")}
    xs = problem.certificate.x_star
    rows = {}
    for name, alg in algs.items():
        tr = run(alg, problem, rounds, seed=0)
        # the communication row is read over the first rounds, before the exact-arithmetic convergence of
        # SCAFFOLD and FedDyn makes their updates exactly zero (a floating-point artefact of the small problem)
        n = min(COMM_ROUNDS, rounds) + 1
        per_client = np.asarray(tr.uplink_nnz[1:n], dtype=float) / np.maximum(1, np.asarray(tr.participants[1:n]))
        rows[name] = {"distance": float(np.linalg.norm(tr.x_final - xs)),
                      "nnz_per_client_round_max": float(per_client.max()),
                      "nnz_per_client_round_mean": float(per_client.mean())}
    return rows


@claim(cites=("Table 1",),
       id="fedelasticnet.statements.table1", paper=PAPER,
       reference="communication efficiency: FedAvg/FedProx/FedDyn triangle, SCAFFOLD cross, FedElasticNet circle; "
                 "robustness: FedAvg cross, FedProx triangle, the others circle",
       statement="on a heterogeneous quadratic with full participation: SCAFFOLD, FedDyn and FedElasticNet "
                 "(Alg. 3, sub-gradient reading) reach theta* (distance <= 1e-8) while FedAvg and FedProx stop at "
                 "a biased point (distance >= 1e-3); per participant and round FedAvg, FedProx and FedDyn send d "
                 "non-zeros, SCAFFOLD 2d, FedElasticNet at most d and on average fewer than d/2 (first 20 rounds)",
       kind="qualitative", instances=_table1_instances, runs=("fedavg", "feddyn", "fedprox", "scaffold"))
def check_table1(inst) -> Evidence:
    problem, T = inst
    rows = table1_rows(problem, T)
    d = problem.dim
    scale = max(1.0, float(np.linalg.norm(problem.certificate.x_star)))
    robust = all(rows[k]["distance"] <= CONVERGED_REL * scale for k in ("SCAFFOLD", "FedDyn", "FedElasticNet"))
    biased = all(rows[k]["distance"] >= MATERIAL_REL * scale for k in ("FedAvg", "FedProx"))
    dense = all(rows[k]["nnz_per_client_round_max"] == d == rows[k]["nnz_per_client_round_mean"]
                for k in ("FedAvg", "FedProx", "FedDyn"))
    double = rows["SCAFFOLD"]["nnz_per_client_round_mean"] == 2 * d == rows["SCAFFOLD"]["nnz_per_client_round_max"]
    sparse = (rows["FedElasticNet"]["nnz_per_client_round_max"] <= d
              and rows["FedElasticNet"]["nnz_per_client_round_mean"] < d / 2)
    ok = robust and biased and dense and double and sparse
    return Evidence(f"quadratic m={problem.n_clients} d={d} T={T}", rows["FedElasticNet"]["nnz_per_client_round_mean"],
                    d / 2, bool(ok),
                    details={"rows": rows, "robust_circle": robust, "biased_fedavg_fedprox": biased,
                             "dense_triangle": dense, "scaffold_double": double, "fedelasticnet_sparse": sparse,
                             # the triangle/cross split of the robustness row (FedProx less biased than FedAvg)
                             # depends on lambda2 and K: measured here, not asserted
                             "fedprox_less_biased_than_fedavg":
                                 rows["FedProx"]["distance"] < rows["FedAvg"]["distance"]})


# ---------------------------------------------------------------------------------------------------------
# Tables 2-4: cumulative non-zeros and entropy with Table 5's hyperparameters (synthetic logistic problems)
# ---------------------------------------------------------------------------------------------------------

#: Table 5's CIFAR-10 hyperparameters: (lambda1, lambda2, epsilon) per algorithm; the paper's baselines use no
#: l1 and no threshold.
TABLE5_CIFAR10 = {"FedProx": (0.0, 1e-4, 0.0), "Alg. 1": (1e-6, 1e-4, 1e-3), "SCAFFOLD": (0.0, 0.0, 0.0),
                  "Alg. 2": (1e-4, 0.0, 1e-4), "FedDyn": (0.0, 1e-2, 0.0), "Alg. 3": (1e-4, 1e-2, 5e-3)}


#: Table 2 reductions of cumulative non-zeros, Alg. 3 vs FedDyn, on the image datasets.
PAPER_ALG3_NNZ_REDUCTION = (0.678, 0.889)


def training_accuracy(problem, x: np.ndarray) -> float:
    """Fraction of training samples with y a^T x > 0 for a :class:`LogisticProblem` (signed samples z = y a)."""
    Z = problem._Z  # the padded signed samples; the problem's documented storage layout
    if problem.shared:
        return float(np.mean(Z @ x > 0))
    correct = (np.einsum("nmd,d->nm", Z, x) > 0) * problem._mask
    return float(correct.sum() / problem._mask.sum())


def headline_algorithms(participation, local_steps: int = 10, table: dict = TABLE5_CIFAR10,
                        upload_metrics=None) -> dict:
    """FedProx/Alg. 1, SCAFFOLD/Alg. 2, FedDyn/Alg. 3 with K local (proximal) gradient steps, as the paper's
    local SGD (exact solves would make FedProx with lambda2 = 1e-4 one-shot averaging)."""
    em = upload_metrics if upload_metrics is not None else comm.EntropyMetrics()
    common = dict(participation=participation, upload_metrics=em, local_steps=local_steps)
    out = {}
    for name, (l1, l2, eps) in table.items():
        if name in ("FedProx", "Alg. 1"):
            out[name] = FedProx(prox=l2, l1=l1, threshold=eps, solver="gd", l1_mode="proximal", **common)
        elif name in ("SCAFFOLD", "Alg. 2"):
            out[name] = Scaffold(prox=l2, l1=l1, threshold=eps, **common)
        else:
            out[name] = FedDyn(alpha=l2, l1=l1, threshold=eps, solver="gd", l1_mode="proximal", **common)
    return out


def headline_table(problem, participation, rounds: int, seed: int = 0) -> dict:
    """Cumulative uplink non-zeros, cumulative entropy (bits/element, bin 0.01), final gap and training accuracy
    of the six algorithms, plus the reductions of each FedElasticNet variant against its baseline."""
    rows = {}
    for name, alg in headline_algorithms(participation).items():
        tr = run(alg, problem, rounds, seed=seed)
        rows[name] = {"cumulative_nnz": float(tr.cumulative("uplink_nnz")[-1]),
                      "cumulative_entropy": float(comm.cumulative(tr.entropy)[-1]),
                      "final_gap": float(tr.gap[-1]), "train_accuracy": training_accuracy(problem, tr.x_final),
                      "status": tr.status}
    red = {}
    for en, base in (("Alg. 1", "FedProx"), ("Alg. 2", "SCAFFOLD"), ("Alg. 3", "FedDyn")):
        red[f"{en} vs {base}"] = {
            "nnz_reduction": 1 - rows[en]["cumulative_nnz"] / rows[base]["cumulative_nnz"],
            "entropy_reduction": 1 - rows[en]["cumulative_entropy"] / rows[base]["cumulative_entropy"],
            "accuracy_difference": rows[en]["train_accuracy"] - rows[base]["train_accuracy"]}
    return {"rows": rows, "reductions": red}


def _headline_instances(thorough: bool):
    synth = logistic("synthetic", 20, alpha=1.0, beta=1.0, dim=30, seed=0)
    yield "synthetic(1,1) 20 clients 10%", synth, UniformSubset(2), 60
    if thorough:
        yield "synthetic(1,1) 20 clients 100%", synth, Full(), 200
        for src in ("breast_cancer", "digits"):
            pb = logistic(src, 20, partition="dirichlet", dirichlet_alpha=0.3, seed=0)
            yield f"{src} Dir(0.3) 20 clients 10%", pb, UniformSubset(2), 200
            yield f"{src} Dir(0.3) 20 clients 100%", pb, Full(), 200


@claim(cites=("Algorithm 3", "Table 2"),
       id="fedelasticnet.headline.logistic", paper="fedelasticnet", reference="Section 4 (headline: 68-89% fewer "
                                                                              "non-zeros for Alg. 3 than FedDyn on "
                                                                              "image data, smallest entropy, "
                                                                              "accuracy maintained)",
       statement="with Table 5's hyperparameters, Algs. 1-3 transmit fewer cumulative non-zeros than FedProx, SCAFFOLD "
                 "and FedDyn, Alg. 3 the fewest of the six (entropy and accuracy are recorded in the details; Tables "
                 "3-4's entropy shapes are fedelasticnet.statements.table3 and table4)",
       kind="qualitative", expected="exploratory", instances=_headline_instances,
       runs=("feddyn", "fedprox", "scaffold"))
def check_headline(inst) -> Evidence:
    """Exploratory reproduction on small logistic problems with local GD (K = 10); measured = Alg. 3's cumulative
    nnz reduction against FedDyn, theory = the lower end of the paper's image-data range (0.678)."""
    label, problem, participation, T = inst
    tab = headline_table(problem, participation, T)
    r3 = tab["reductions"]["Alg. 3 vs FedDyn"]["nnz_reduction"]
    fewest = min(tab["rows"], key=lambda k: tab["rows"][k]["cumulative_nnz"]) == "Alg. 3"
    all_reduce = all(v["nnz_reduction"] > 0 for v in tab["reductions"].values())
    return Evidence(f"{label} T={T}", r3, PAPER_ALG3_NNZ_REDUCTION[0], bool(fewest and all_reduce),
                    details={**tab, "paper_alg3_vs_feddyn_nnz_reduction": PAPER_ALG3_NNZ_REDUCTION,
                             "alg3_fewest_nnz": fewest})


def _synthetic_logistic():
    # Li et al.'s synthetic(1, 1) federated logistic regression: heterogeneous clients, 10 of them, d = 20 (small
    # enough for the default run; the thorough points run longer)
    return logistic("synthetic", 10, alpha=1.0, beta=1.0, dim=20, seed=0)


def _entropy_instances_of(table: str):
    def instances(thorough: bool):
        part = UniformSubset(1) if table == "Table 3" else Full()
        yield f"synthetic(1,1) 10 clients {'10%' if table == 'Table 3' else '100%'}", _synthetic_logistic(), part, \
            80 if thorough else 30
    return instances


def _entropy_check(inst) -> Evidence:
    """Measured: the entropy reductions of Algs. 1-3 against FedProx, SCAFFOLD, FedDyn (bin 0.01, Section 4) with
    Table 5's CIFAR-10 hyperparameters and K = 10 local steps; the paper's shape: every reduction > 0 and Alg. 3
    the smallest cumulative entropy of the six."""
    label, problem, participation, T = inst
    tab = headline_table(problem, participation, T)
    ent = {k: v["cumulative_entropy"] for k, v in tab["rows"].items()}
    reductions = {k: v["entropy_reduction"] for k, v in tab["reductions"].items()}
    smallest = min(ent, key=ent.get)
    shape = smallest == "Alg. 3" and all(r > 0 for r in reductions.values())
    return Evidence(f"{label} T={T}", reductions["Alg. 3 vs FedDyn"], 0.0, bool(shape),
                    details={"cumulative_entropy": ent, "entropy_reductions": reductions, "smallest": smallest,
                             "train_accuracy": {k: v["train_accuracy"] for k, v in tab["rows"].items()}})


@claim(cites=("Table 3",),
       id="fedelasticnet.statements.table3", paper=PAPER,
       reference="cumulative entropy, 10% participation, with Table 5's CIFAR-10 hyperparameters",
       statement="at 10% participation, Algs. 1, 2, 3 transmit less cumulative entropy (bin 0.01) than FedProx, "
                 "SCAFFOLD, FedDyn, and Alg. 3 the least of the six (the paper's shape, measured on synthetic(1,1) "
                 "logistic regression; the paper's data sets are not available offline)",
       kind="qualitative", expected="exploratory", narrower=CONVEX_STAND_IN, instances=_entropy_instances_of("Table 3"),
       runs=("feddyn", "fedprox", "scaffold"))
def check_table3(inst) -> Evidence:
    return _entropy_check(inst)


@claim(cites=("Table 4",),
       id="fedelasticnet.statements.table4", paper=PAPER,
       reference="cumulative entropy, 100% participation, with Table 5's CIFAR-10 hyperparameters",
       statement="at 100% participation, Algs. 1, 2, 3 transmit less cumulative entropy (bin 0.01) than FedProx, "
                 "SCAFFOLD, FedDyn, and Alg. 3 the least of the six (measured on synthetic(1,1) logistic "
                 "regression)",
       kind="qualitative", expected="exploratory", narrower=CONVEX_STAND_IN, instances=_entropy_instances_of("Table 4"),
       runs=("feddyn", "fedprox", "scaffold"))
def check_table4(inst) -> Evidence:
    return _entropy_check(inst)


# ---------------------------------------------------------------------------------------------------------
# Figure 2: the distribution of the transmitted updates
# ---------------------------------------------------------------------------------------------------------

def transmitted_updates(problem, alg, rounds: int, seed: int = 0) -> np.ndarray:
    """Every entry of every model update Delta_k^t sent over ``rounds`` rounds, pooled into one vector."""
    state = alg.init(problem, np.zeros(problem.dim))
    rng = np.random.default_rng(seed)
    sent = []
    for _ in range(rounds):
        state, _ = alg.round(problem, state, rng)
        sent.append(np.ravel(state.last_upload))
    return np.concatenate(sent)


def binned_entropy_bits(x: np.ndarray, bin_size: float = 0.01) -> float:
    """Shannon entropy (bits) of the values rounded to bins of ``bin_size`` (Kim et al., Section 4)."""
    _, counts = np.unique(np.round(x / bin_size), return_counts=True)
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum())


def _figure2_instances(thorough: bool):
    yield "synthetic(1,1) 10 clients 10%", _synthetic_logistic(), UniformSubset(1), 80 if thorough else 30


#: The excess kurtosis halfway between a Gaussian's (0) and a Laplace distribution's (3): Figure 2's "Gaussian-like"
#: and "Laplace-like" read as the nearer of the two.
LIKENESS_SPLIT = 1.5


def update_statistics(x: np.ndarray) -> dict:
    """Fraction of exact zeros, excess kurtosis E(x - m)^4 / sd^4 - 3, binned entropy (bits, bin 0.01) and
    standard deviation of the pooled transmitted entries ``x``."""
    sd = float(x.std())
    kurt = float(np.mean((x - x.mean()) ** 4) / sd ** 4 - 3.0) if sd > 0 else float("nan")
    return {"zero_fraction": float(np.mean(x == 0)), "excess_kurtosis": kurt,
            "binned_entropy_bits": binned_entropy_bits(x), "std": sd}


def figure2_shape(alg3: dict, feddyn: dict) -> bool:
    """Figure 2's shape from :func:`update_statistics` of Alg. 3's and FedDyn's updates: Alg. 3's sparser, more
    peaked and of smaller binned entropy, and, as printed, Alg. 3's Laplace-like and FedDyn's Gaussian-like
    (excess kurtosis on either side of :data:`LIKENESS_SPLIT`)."""
    return bool(alg3["zero_fraction"] > feddyn["zero_fraction"]
                and alg3["excess_kurtosis"] > feddyn["excess_kurtosis"]
                and alg3["binned_entropy_bits"] < feddyn["binned_entropy_bits"]
                and alg3["excess_kurtosis"] > LIKENESS_SPLIT > feddyn["excess_kurtosis"])


@claim(cites=("Figure 2",),
       id="fedelasticnet.statements.figure2", paper=PAPER,
       reference="distribution of the transmitted Delta_k^t of FedDyn, Alg. 2 and Alg. 3, CIFAR-10, 10% "
                 "participation, Dirichlet(0.3)",
       statement="Alg. 3's transmitted updates are sparser (more exact zeros), more peaked (larger excess kurtosis) "
                 "and of smaller binned entropy than FedDyn's, Alg. 3's Laplace-like and FedDyn's Gaussian-like "
                 "(excess kurtosis nearer Laplace's 3 than the Gaussian's 0, and nearer 0 than 3) (measured on "
                 "synthetic(1,1) logistic regression with Table 5's CIFAR-10 hyperparameters)",
       kind="qualitative", expected="exploratory", narrower=CONVEX_STAND_IN, instances=_figure2_instances, runs=("feddyn", "scaffold"))
def check_figure2(inst) -> Evidence:
    label, problem, participation, T = inst
    algs = headline_algorithms(participation)
    stats = {name: update_statistics(transmitted_updates(problem, algs[name], T))
             for name in ("FedDyn", "Alg. 2", "Alg. 3")}
    a3, fd = stats["Alg. 3"], stats["FedDyn"]
    shape = figure2_shape(a3, fd)
    stats["alg3_laplace_like"] = a3["excess_kurtosis"] > LIKENESS_SPLIT
    stats["feddyn_gaussian_like"] = fd["excess_kurtosis"] < LIKENESS_SPLIT
    return Evidence(f"{label} T={T}", a3["zero_fraction"], fd["zero_fraction"], bool(shape), details=stats)


# ---------------------------------------------------------------------------------------------------------
# Figures 3-5: accuracy and sparsity against lambda1
# ---------------------------------------------------------------------------------------------------------

#: Appendix A.2's grid of lambda1.
LAMBDA1_GRID = (1e-8, 1e-6, 1e-4, 1e-2)


def _lambda1_instances(thorough: bool):
    yield "synthetic(1,1) 10 clients 10%", _synthetic_logistic(), UniformSubset(1), 60 if thorough else 20


def lambda1_sweep(problem, participation, rounds: int, name: str) -> dict:
    """Cumulative uplink non-zeros and final training accuracy of Alg. ``name`` (1, 2 or 3) over
    :data:`LAMBDA1_GRID`, the other hyperparameters from Table 5 (CIFAR-10)."""
    _, l2, eps = TABLE5_CIFAR10[name]
    out = {}
    for l1 in LAMBDA1_GRID:
        alg = headline_algorithms(participation, table={name: (l1, l2, eps)})[name]
        tr = run(alg, problem, rounds, seed=0)
        out[l1] = {"cumulative_nnz": float(tr.cumulative("uplink_nnz")[-1]),
                   "train_accuracy": training_accuracy(problem, tr.x_final)}
    return out


def _sweep_shape(inst, name: str) -> Evidence:
    """The shape of Figures 3-5 for Alg. ``name``: the cumulative non-zeros do not increase as lambda1 grows over
    :data:`LAMBDA1_GRID`, and the largest lambda1 costs training accuracy against the smallest."""
    label, problem, participation, T = inst
    r = lambda1_sweep(problem, participation, T, name)
    nnz = [r[l]["cumulative_nnz"] for l in LAMBDA1_GRID]
    monotone = bool(all(b <= a for a, b in zip(nnz, nnz[1:])))
    cost = r[LAMBDA1_GRID[-1]]["train_accuracy"] - r[LAMBDA1_GRID[0]]["train_accuracy"]
    return Evidence(f"{label} T={T} {name}", cost, 0.0, monotone and cost < 0,
                    details={"per_lambda1": {str(l): v for l, v in r.items()}, "nnz_monotone": monotone,
                             "accuracy_change_largest_vs_smallest_lambda1": cost})


_SWEEP_STATEMENT = ("for {name} the cumulative non-zeros do not increase as lambda1 grows over {{1e-8, 1e-6, 1e-4, "
                    "1e-2}} and the largest lambda1 costs training accuracy (measured on synthetic(1,1) logistic "
                    "regression, 10% participation)")


@claim(cites=("Figure 3",),
       id="fedelasticnet.statements.figure3", paper=PAPER,
       reference="accuracy and sparsity of Alg. 1 against lambda1 in {1e-8, 1e-6, 1e-4, 1e-2}, CIFAR-10",
       statement=_SWEEP_STATEMENT.format(name="Alg. 1"),
       kind="monotonicity", expected="exploratory", narrower=CONVEX_STAND_IN, instances=_lambda1_instances, runs=("fedprox",))
def check_figure3(inst) -> Evidence:
    return _sweep_shape(inst, "Alg. 1")


@claim(cites=("Figure 4",),
       id="fedelasticnet.statements.figure4", paper=PAPER,
       reference="accuracy and sparsity of Alg. 2 against lambda1 in {1e-8, 1e-6, 1e-4, 1e-2}, CIFAR-10",
       statement=_SWEEP_STATEMENT.format(name="Alg. 2"),
       kind="monotonicity", expected="exploratory", narrower=CONVEX_STAND_IN, instances=_lambda1_instances, runs=("scaffold",))
def check_figure4(inst) -> Evidence:
    return _sweep_shape(inst, "Alg. 2")


@claim(cites=("Figure 5",),
       id="fedelasticnet.statements.figure5", paper=PAPER,
       reference="accuracy and sparsity of Alg. 3 against lambda1 in {1e-8, 1e-6, 1e-4, 1e-2}, CIFAR-10",
       statement=_SWEEP_STATEMENT.format(name="Alg. 3"),
       kind="monotonicity", expected="exploratory", narrower=CONVEX_STAND_IN, instances=_lambda1_instances, runs=("feddyn",))
def check_figure5(inst) -> Evidence:
    return _sweep_shape(inst, "Alg. 3")
