"""EFL, the experiments that run small and offline on logistic regression (§5): Table 2 and Figure 3 (the
qualitative comparison) and Figure 2 (the elastic term on non-IID data). The paper's Figure 1 (VGG11 on
CIFAR-100, ResNet50 on EMNIST) is not checkable here.
"""
from __future__ import annotations

import numpy as np

from ...algorithms.efl import EFL
from ...algorithms.fedavg import FedAvg
from ...algorithms.fedprox import FedProx
from ...participation import Bernoulli
from ...problems.datasets import load_breast_cancer, load_digits
from ...problems.logistic import LogisticProblem
from ...problems.partition import dirichlet_partition
from ...run import run
from ..registry import Evidence, claim

__all__ = ["logistic_experiment_problem"]

PAPER = "efl"
#: What the convex stand-ins leave out: the paper's setting is a deep model on non-IID data (the neural
#: experiments of fedtheory/experiments/efl.py run it on MNIST-1D).
CONVEX_STAND_IN = ("a convex stand-in (breast-cancer logistic regression), not the paper's non-IID neural setting; "
                   "the experiment in that setting is {}")


# ---------------------------------------------------------------------------------------------------------
# Table 2 and Figure 3: the qualitative experiment on logistic regression (§5)
# ---------------------------------------------------------------------------------------------------------

#: Table 2 of the paper: best mean test accuracy (%) under non-IID data (deep models; reproduced exactly).
TABLE2 = {"FedAvg": {"MNIST": 98.30, "CIFAR100": 2.27, "Sent140": 59.14, "Shakes.": 51.35},
          "FedGATE": {"MNIST": 99.15, "CIFAR100": 80.94, "Sent140": 68.84, "Shakes.": 54.71},
          "VRL-SGD": {"MNIST": 98.86, "CIFAR100": 2.81, "Sent140": 68.62, "Shakes.": 52.33},
          "APFL": {"MNIST": 98.49, "CIFAR100": 77.19, "Sent140": 68.81, "Shakes.": 55.27},
          "FedAMP": {"MNIST": 99.06, "CIFAR100": 81.17, "Sent140": 69.01, "Shakes.": 58.42},
          "EFL": {"MNIST": 99.10, "CIFAR100": 81.38, "Sent140": 68.95, "Shakes.": 60.49}}


def logistic_experiment_problem(seed: int = 0, n_clients: int = 10, dirichlet_alpha: float = 0.3,
                                source: str = "breast_cancer"):
    """A non-IID logistic problem: a 70/30 train/test split of scikit-learn data, the training part split
    over clients by label with Dirichlet(``dirichlet_alpha``) proportions. Returns (problem, test features,
    test labels)."""
    if source == "breast_cancer":
        a, y = load_breast_cancer()
        groups = y
    else:
        a, y, groups = load_digits("one_vs_rest", positive=0)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    cut = int(0.7 * len(y))
    tr, te = perm[:cut], perm[cut:]
    parts = dirichlet_partition(groups[tr], n_clients, alpha=dirichlet_alpha, seed=seed)
    problem = LogisticProblem([a[tr][p] for p in parts], [y[tr][p] for p in parts], reg=1e-2)
    return problem, a[te], y[te]


def _experiment_instances(thorough: bool):
    return [dict(seed=0, rounds=150, participation=0.3, E=5)] + (
        [dict(seed=s, rounds=600, participation=0.2, E=10) for s in (1, 2)] if thorough else [])


@claim(cites=("Table 2", "Figure 3"),
       id="efl.experiment.logistic", paper=PAPER, reference="§5 (qualitative)",
       statement="under non-IID (Dirichlet 0.3) data, low participation and random incomplete updates, EFL "
                 "reaches FedAvg/FedProx-level or better accuracy with fewer communicated bits (the paper's "
                 "deep-model Table 2 numbers are recorded alongside)",
       kind="qualitative", expected="exploratory", narrower=CONVEX_STAND_IN.format("efl.neural.table2 (Table 2)"),
       instances=_experiment_instances, runs=("efl", "fedavg", "fedprox"))
def check_logistic_experiment(inst: dict) -> Evidence:
    """Convex stand-in for the paper's experiment (its deep models and datasets are out of scope): breast-cancer
    logistic regression over 10 clients. Clients are active w.p. ``participation`` and then do
    s ~ U{1..E} local steps. EFL (EFL weighting, lam = 0 and lam > 0, ST q = 0.1 both ways) is compared with
    FedAvg weighting on the same draws, and with the classic FedAvg/FedProx, which drop incomplete clients
    (the paper's description of FedAvg: only clients that finish all E steps count, i.e. Bernoulli
    participation pi / E)."""
    problem, a_te, y_te = logistic_experiment_problem(seed=inst["seed"])
    E, R, pi = inst["E"], inst["rounds"], inst["participation"]
    eta = 0.5 / problem.certificate.L
    base = dict(E=E, step=eta, s_min=1, s_max=E, participation=pi)
    algs = {"EFL (lam=0, no compression)": EFL(**base),
            "EFL (lam=0, ST q=0.1)": EFL(q=0.1, scaling="client", **base),
            "EFL (lam=0.01, ST q=0.1)": EFL(lam=0.01, q=0.1, scaling="client", **base),
            "FedAvg weighting (same draws)": EFL(weighting="fedavg", **base),
            "FedAvg (complete updates only)": FedAvg(local_steps=E, local_step=eta, participation=Bernoulli(pi / E)),
            "FedProx (complete updates only)": FedProx(local_steps=E, local_step=eta, prox=0.1, solver="gd",
                                                       participation=Bernoulli(pi / E))}
    out: dict[str, dict[str, float]] = {}
    for label, alg in algs.items():
        tr = run(alg, problem, R, seed=inst["seed"] + 1)
        acc = float(np.mean(np.sign(a_te @ tr.x_final) == y_te))
        bits = float(np.sum(tr.uplink_bits) + np.sum(tr.downlink_bits))
        # Bits spent until the gap first reaches 2x the best final gap of any method (filled in below).
        out[label] = {"test_accuracy_%": 100 * acc, "final_gap": float(tr.gap[-1]),
                      "total_bits": bits, "uplink_bits": float(np.sum(tr.uplink_bits)),
                      "_gap": tr.gap, "_bits": np.cumsum(tr.uplink_bits + tr.downlink_bits)}
    target = 2 * min(v["final_gap"] for v in out.values())
    for v in out.values():
        gap, cum = v.pop("_gap"), v.pop("_bits")
        hit = np.flatnonzero(gap <= target)
        v["bits_to_2x_best_gap"] = float(cum[hit[0]]) if hit.size else float("inf")
    # The shape test is the statement: EFL at FedAvg/FedProx-level accuracy or better *and* with fewer bits sent
    # (a tie in accuracy reached with more bits is not the paper's shape).
    efl = out["EFL (lam=0.01, ST q=0.1)"]
    baselines = [out[k] for k in ("FedAvg (complete updates only)", "FedProx (complete updates only)")]
    best_acc = max(b["test_accuracy_%"] for b in baselines)
    as_accurate = efl["test_accuracy_%"] >= best_acc
    fewer_bits = efl["total_bits"] < min(b["total_bits"] for b in baselines)
    return Evidence(f"breast_cancer dirichlet(0.3) n=10 pi={pi} E={E} T={R}", efl["test_accuracy_%"], best_acc,
                    as_accurate and fewer_bits,
                    details={"results": out, "paper_table2_BMTA_%": TABLE2, "efl_as_accurate": as_accurate,
                             "efl_fewer_bits": fewer_bits})


# ---------------------------------------------------------------------------------------------------------
# Figure 2: the elastic term on non-IID data (§5.3)
# ---------------------------------------------------------------------------------------------------------

LAMBDAS = (0.0, 1e-3, 1e-2, 1e-1)


def _figure2_instances(thorough: bool):
    yield dict(seed=0, rounds=60, participation=0.3, E=5)
    if thorough:
        yield dict(seed=1, rounds=400, participation=0.2, E=10)


@claim(cites=("Figure 2",),
       id="efl.statements.figure2", paper=PAPER,
       reference="§5.3 (EFL with lambda = 0 against the best lambda, non-IID data)",
       statement="under non-IID (Dirichlet 0.3) data with random incomplete clients, the best lambda > 0 in "
                 "{1e-3, 1e-2, 1e-1} gives EFL a smaller final training gap and smaller late-round oscillation "
                 "than lambda = 0 (measured on breast-cancer logistic regression over 10 clients)",
       kind="qualitative", expected="exploratory", narrower=CONVEX_STAND_IN.format("efl.neural.figure2"),
       instances=_figure2_instances, runs=("efl",))
def check_figure2(inst: dict) -> Evidence:

    problem, _, _ = logistic_experiment_problem(seed=inst["seed"])
    E, R = inst["E"], inst["rounds"]
    eta = 0.5 / problem.certificate.L
    rows = {}
    for lam in LAMBDAS:
        tr = run(EFL(E=E, step=eta, s_min=1, s_max=E, participation=inst["participation"], lam=lam), problem, R,
                 seed=inst["seed"] + 1)
        tail = np.asarray(tr.gap[-max(5, R // 5):], dtype=float)
        rows[lam] = {"final_gap": float(tr.gap[-1]), "tail_std_gap": float(tail.std())}
    best = min((l for l in LAMBDAS if l > 0), key=lambda l: rows[l]["final_gap"])
    shape = (rows[best]["final_gap"] < rows[0.0]["final_gap"]
             and rows[best]["tail_std_gap"] < rows[0.0]["tail_std_gap"])
    return Evidence(f"breast_cancer dirichlet(0.3) n=10 pi={inst['participation']} E={E} T={R}",
                    rows[best]["final_gap"], rows[0.0]["final_gap"], bool(shape),
                    details={"per_lambda": {str(k): v for k, v in rows.items()}, "best_lambda": best})


# ---------------------------------------------------------------------------------------------------------
# Figure 3, asserted: EFL's compensation of incomplete clients against FedAvg weighting on the same draws
# ---------------------------------------------------------------------------------------------------------

#: EFL weighting must end with at most this fraction of FedAvg weighting's final gap on every seed (measured
#: 0.53-0.55 on seeds 0-2 before fixing the margin; a tie is 1).
STRAGGLER_MARGIN = 0.75


def straggler_gaps(seed: int, rounds: int, participation: float, E: int, weighting: str = "efl") -> dict[str, float]:
    """Final optimality gaps of EFL with ``weighting`` and of EFL with FedAvg weighting (p^k) on the same
    straggler draws (active w.p. ``participation``, then s ~ U{1..E} local steps), lam = 0, no compression, on
    :func:`logistic_experiment_problem` (breast-cancer logistic regression, Dirichlet(0.3), 10 clients)."""
    problem, _, _ = logistic_experiment_problem(seed=seed)
    base = dict(E=E, step=0.5 / problem.certificate.L, s_min=1, s_max=E, participation=participation)
    return {name: float(run(EFL(weighting=w, **base), problem, rounds, seed=seed + 1).gap[-1])
            for name, w in (("efl", weighting), ("fedavg", "fedavg"))}


def _straggler_instances(thorough: bool):
    yield dict(seeds=list(range(10 if thorough else 5)), rounds=150, participation=0.3, E=5)


@claim(cites=("Figure 3",),
       id="efl.statements.figure3", paper=PAPER, reference="§5.4 (low participation, stragglers)",
       statement=f"with stragglers (clients active w.p. 0.3, then 1..E local steps), EFL's aggregation "
                 f"p_tau^k = E p^k / s_k ends with at most {STRAGGLER_MARGIN:g}x the final training gap of FedAvg "
                 f"weighting p^k on the same draws, on every seed",
       narrower="on a stand-in: non-IID breast-cancer logistic regression (10 clients, Dirichlet 0.3, 150 rounds, "
                "5 seeds) instead of LSTMs on Sentiment140 and Shakespeare; the training gap, not test accuracy",
       kind="qualitative", instances=_straggler_instances, runs=("efl",))
def check_figure3(inst: dict, weighting: str = "efl") -> Evidence:
    per_seed = {s: straggler_gaps(s, inst["rounds"], inst["participation"], inst["E"], weighting) for s in inst["seeds"]}
    worst = max(g["efl"] / g["fedavg"] for g in per_seed.values())
    return Evidence(f"breast_cancer dirichlet(0.3) n=10 pi={inst['participation']} E={inst['E']} "
                    f"T={inst['rounds']} seeds={inst['seeds']}", worst, STRAGGLER_MARGIN, worst <= STRAGGLER_MARGIN,
                    tightness=worst / STRAGGLER_MARGIN,
                    details={"final_gap_per_seed": {str(s): g for s, g in per_seed.items()}})
