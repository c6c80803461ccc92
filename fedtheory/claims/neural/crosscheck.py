"""The metamorphic cross-check of the two backends: ``neural.crosscheck.logistic`` (docs/torch.md).

On binary l2-regularised logistic regression in float64, the torch backend (:class:`fedtheory.torch.TorchProblem`
with the binary linear model) and the NumPy :class:`fedtheory.problems.logistic.LogisticProblem` give the same
iterates, round by round, to 1e-8 relative, for every algorithm whose local work is deterministic given the round's
draws -- including local *SGD*, since both problems draw minibatch indices identically from the algorithm's
generator.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ...algorithms import (
    EFL,
    DANEPlus,
    DoCoFL,
    FedAvg,
    FedDyn,
    FedProx,
    FedRed,
    Scaffnew,
    Scaffold,
    TwoClassParticipation,
)
from ...compressors.ecuq import ECUQ
from ...compressors.quantizers import StochasticUniformQuantizer
from ...participation import Bernoulli, UniformSubset
from ...problems.datasets import synthetic_fedprox
from ...problems.logistic import LogisticProblem
from ..patterns import relative_error
from ..registry import Evidence
from ..tolerances import CROSSCHECK_TOL, PRESENT_REL
from ._shared import neural_claim, torch_threads

__all__ = ["crosscheck_problems", "crosscheck_algorithms", "iterate_deviation"]


def crosscheck_problems(n_clients: int = 6, dim: int = 8, *, reg: float = 1e-2, batch_size: int = 4,
                        seed: int = 0) -> tuple[Any, Any]:
    """(NumPy LogisticProblem, TorchProblem) on the same binary Synthetic(1, 1) data with unequal client sizes.

    The torch problem uses the binary linear model (no bias) with ``loss="logistic"`` in float64 and the NumPy
    problem's exact certificate, so algorithms that default to certificate constants resolve them identically.
    """
    from ...torch import TorchProblem, logistic_regression  # here, not at the top: fedtheory.torch needs torch

    sizes = np.random.default_rng([seed, 3]).integers(5, 25, n_clients)
    data = synthetic_fedprox(1.0, 1.0, n_clients, dim=dim, n_classes=2, sizes=sizes, seed=seed)
    np_problem = LogisticProblem(data.features, data.labels, reg=reg, batch_size=batch_size)
    torch_problem = TorchProblem(logistic_regression(dim, 2), data, loss="logistic", reg=reg, batch_size=batch_size,
                                 dtype="float64", certificate=np_problem.certificate)
    return np_problem, torch_problem


def crosscheck_algorithms(n_clients: int = 6) -> dict[str, Any]:
    """Every algorithm family with deterministic local work given its draws (exact local solves excluded:
    they do not exist for neural models), with partial participation, l1 terms, thresholds and compressors."""
    half = UniformSubset(n_clients // 2)
    return {
        "FedAvg (local GD, half the clients)": FedAvg(local_steps=5, participation=half),
        "FedAvg (local SGD)": FedAvg(local_steps=5, stochastic=True),
        "FedProx (local GD, Bernoulli(0.5))": FedProx(prox=0.1, solver="gd", local_steps=5,
                                                      participation=Bernoulli(0.5)),
        "FedElasticNet Alg. 1 (proximal l1, eps)": FedProx(prox=0.1, l1=1e-3, threshold=1e-4, solver="gd",
                                                           local_steps=5, stochastic=True),
        "SCAFFOLD option II": Scaffold(local_steps=5),
        "SCAFFOLD option I (local SGD, half)": Scaffold(local_steps=5, option="I", stochastic=True,
                                                        participation=half),
        "FedElasticNet Alg. 2 (sign sub-gradient, eps)": Scaffold(local_steps=5, l1=1e-3, threshold=1e-4),
        "FedDyn (local GD)": FedDyn(alpha=0.1, solver="gd", local_steps=5),
        "FedElasticNet Alg. 3 (printed sign, eps, half)": FedDyn(alpha=0.1, l1=1e-3, threshold=1e-4, solver="gd",
                                                                 local_steps=5, participation=half),
        "Scaffnew": Scaffnew(p=0.5),
        "DANE+ (local GD, relative stopping)": DANEPlus(lam=0.1, solver="gd", local_steps=50),
        "DANE+ (local fast GD, K = 5 steps)": DANEPlus(lam=0.1, solver="fgd", stopping="steps", local_steps=5),
        "DANE+-SGD (K = 5 steps)": DANEPlus(lam=0.1, solver="gd", stopping="steps", local_steps=5, stochastic=True,
                                            local_step=0.1),
        "FedRed-GD (p = 0.5)": FedRed(lam=0.1, p=0.5),
        "FedRed-SGD (p = 0.5)": FedRed(lam=0.1, p=0.5, stochastic=True),
        "DoCoFL (ECUQ anchors, stochastic corrections, minibatch SGD)": DoCoFL(
            n_sampled=n_clients // 2, period=2, queue_size=2, anchor_compressor=ECUQ(b=4.0),
            correction_compressor=StochasticUniformQuantizer(levels=4),
            participation=TwoClassParticipation(lead_strong=1)),
        "EFL (ST q=0.5, Fisher elastic term, incomplete + inactive)": EFL(E=3, step=0.05, lam=0.05, q=0.5, s_min=1,
                                                                           s_max=3, participation=0.8),
    }


def iterate_deviation(algorithm: Any, problem_a: Any, problem_b: Any, rounds: int, seed: int = 0,
                      x0: np.ndarray | None = None) -> dict[str, Any]:
    """Run ``algorithm`` on both problems with equally seeded generators; the largest relative deviation of the
    server iterates, max_r ||x_r^a - x_r^b||_inf / max(1, ||x_r^a||_inf), and the final iterates' norm."""
    x0 = np.zeros(problem_a.dim) if x0 is None else np.asarray(x0, dtype=np.float64)
    rng_a, rng_b = np.random.default_rng(seed), np.random.default_rng(seed)
    sa, sb = algorithm.init(problem_a, x0), algorithm.init(problem_b, x0)
    worst, per_round = 0.0, []
    for _ in range(rounds):
        sa, _ = algorithm.round(problem_a, sa, rng_a)
        sb, _ = algorithm.round(problem_b, sb, rng_b)
        dev = relative_error(sb.x, sa.x)
        per_round.append(dev)
        worst = max(worst, dev)
    return {"max_relative_deviation": worst, "per_round": per_round,
            "final_norm": float(np.linalg.norm(sa.x)), "moved": float(np.linalg.norm(sa.x - x0))}


@lru_cache(maxsize=4)
def _cached_crosscheck_problems(n_clients: int, dim: int, seed: int) -> tuple[Any, Any]:
    return crosscheck_problems(n_clients, dim, seed=seed)


def _crosscheck_instances(thorough: bool):
    configs = [(6, 8, 0)] + ([(10, 20, 1), (4, 3, 2)] if thorough else [])
    for n, d, seed in configs:
        for name, alg in crosscheck_algorithms(n).items():
            yield {"label": f"{name}; n={n} d={d} seed={seed}", "n_clients": n, "dim": d, "seed": seed,
                   "algorithm": alg, "rounds": 8}


@neural_claim(id="neural.crosscheck.logistic",
              runs=("dane+", "docofl", "efl", "fedavg", "feddyn", "fedprox", "fedred", "scaffnew", "scaffold"),
              reference="metamorphic cross-check of fedtheory's two backends "
        "(docs/torch.md)",
        statement="on binary logistic regression in float64 the torch backend and the NumPy LogisticProblem produce "
                  "the same iterates (1e-8 relative, every round) for every algorithm with deterministic local work",
        kind="metamorphic", instances=_crosscheck_instances)
def check_crosscheck(inst: dict) -> Evidence:
    """measured = max over rounds of ||x^torch - x^numpy||_inf / max(1, ||x^numpy||_inf); theory = 1e-8."""
    with torch_threads(1):
        np_problem, torch_problem = _cached_crosscheck_problems(inst["n_clients"], inst["dim"], inst["seed"])
        out = iterate_deviation(inst["algorithm"], np_problem, torch_problem, inst["rounds"], seed=inst["seed"])
    dev = out["max_relative_deviation"]
    # a run that never moves would agree trivially: require the iterates to have moved
    return Evidence(inst["label"], dev, CROSSCHECK_TOL, bool(dev <= CROSSCHECK_TOL and out["moved"] > PRESENT_REL),
                    tightness=dev / CROSSCHECK_TOL, details=out)

