"""EFL, the reweighting of incomplete updates (§4.2, eq. (6)): unbiased to first order, and inverse-probability
weighting unbiased exactly.
"""
from __future__ import annotations

import numpy as np

from ...algorithms.efl import EFL, EFLDraw
from ...problems.quadratic import QuadraticProblem
from ..patterns import expectation
from ..registry import Evidence, claim
from ..tolerances import EXACT_REL, MATERIAL_REL
from ._shared import harness_instances
from .harness import efl_harness

__all__ = []

PAPER = "efl"


# ---------------------------------------------------------------------------------------------------------
# §4.2, eq. (6): first-order unbiasedness and inverse-probability weighting
# ---------------------------------------------------------------------------------------------------------

def _aggregate(problem, steps, eta: float, weighting: str, x: np.ndarray) -> np.ndarray:
    alg = EFL(E=int(max(steps)), step=eta, weighting=weighting)
    state = alg.init(problem, x)
    new, _ = alg.round_given(problem, state, EFLDraw(steps=np.asarray(steps, dtype=np.int64)))
    return new.x - x


@claim(id="efl.reweighting.first_order.derived", paper=PAPER, reference="§4.2, eq. 6",
       statement="with p_tau^k = E p^k / s^k the aggregate sum_k p_tau^k Delta^k / (-eta E) equals grad F(w) + O(eta) "
                 "(normalised error halves when eta halves: ratio in [0.45, 0.55]); with p_tau^k = p^k the "
                 "error normalised by eta sum p^k s^k does not vanish",
       kind="rate", derived=True, instances=harness_instances, runs=("efl",))
def check_first_order(seed: int) -> Evidence:
    problem = efl_harness(seed=seed)
    steps = np.arange(1, problem.n_clients + 1)
    E = int(steps.max())
    x = problem.certificate.x_star + np.random.default_rng(seed).standard_normal(problem.dim)
    g = problem.grad(x)
    p = problem.weights
    def err(eta, weighting):
        agg = _aggregate(problem, steps, eta, weighting, x)
        norm = E if weighting == "efl" else float(p @ steps)
        return float(np.linalg.norm(agg / (-eta * norm) - g) / np.linalg.norm(g))
    e1, e2 = err(0.01, "efl"), err(0.005, "efl")
    f1, f2 = err(0.01, "fedavg"), err(0.005, "fedavg")
    G = problem.grads(problem.broadcast(x))
    limit = float(np.linalg.norm((p * steps) @ G / (p @ steps) - g) / np.linalg.norm(g))
    ratio = e2 / e1
    ok = 0.45 <= ratio <= 0.55 and f2 >= 0.5 * limit and limit > 0.01
    # tightness against the check's upper end: a ratio of 0.55 (the error no longer O(eta)) is at 1
    return Evidence(f"harness seed={seed} s=1..{E}", ratio, 0.5, ok, tightness=ratio / 0.55,
                    details={"efl_error": [e1, e2], "fedavg_error": [f1, f2], "fedavg_error_limit": limit})


def _ipw_instances(thorough: bool):
    yield {"seed": 0, "weights": "problem"}
    yield {"seed": 1, "weights": "equal"}


@claim(id="efl.reweighting.ipw_unbiased.derived", paper=PAPER, reference="§4.2, eq. 6",
       statement="(derived by fedtheory) with independent participation pi^k and coefficients E p^k / (s^k pi^k), the aggregate's "
                 "expectation over every participation outcome (enumerated exactly) equals the full-participation "
                 "EFL aggregate with E p^k / s^k, to 1e-12 relative; with the plain EFL coefficients it is "
                 "biased by the factor pi^k per client",
       kind="identity", derived=True, instances=_ipw_instances, runs=("efl",))
def check_ipw_unbiased(inst: dict) -> Evidence:
    problem = efl_harness(seed=inst["seed"], n=4, d=3)
    if inst["weights"] == "equal":
        problem = QuadraticProblem(problem.A, problem.b)
    steps = (1, 2, 3, 2)
    pi = (0.3, 0.9, 0.6, 1.0)
    x = problem.certificate.x_star + np.random.default_rng(inst["seed"]).standard_normal(problem.dim)

    def expected_step(alg: EFL) -> np.ndarray:
        return expectation(alg, problem, alg.init(problem, x), lambda s: s.x - x)

    kw = dict(E=3, step=0.05, s_min=steps, s_max=steps)
    full = expected_step(EFL(**kw))
    ipw = expected_step(EFL(weighting="efl_ipw", participation=pi, **kw))
    plain = expected_step(EFL(participation=pi, **kw))
    err = float(np.linalg.norm(ipw - full) / np.linalg.norm(full))
    bias = float(np.linalg.norm(plain - full) / np.linalg.norm(full))
    return Evidence(f"harness seed={inst['seed']} n=4 weights={inst['weights']} pi={pi}", err, EXACT_REL,
                    err <= EXACT_REL and bias > MATERIAL_REL, details={"plain_efl_relative_bias": bias})
