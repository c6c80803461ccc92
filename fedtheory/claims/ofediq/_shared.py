"""Helpers several OFedIQ claim modules share: the online streams the claims draw (ridge or logistic,
:mod:`fedtheory.problems.online`, w_1 = 0), their parameters as a space, and the Monte Carlo regret of a
stochastic method (the theorems bound the expected regret: a mean over seeds with its standard error).
"""
from __future__ import annotations

import math

import numpy as np

from ...problems.online import OnlineProblem, online_logistic, online_ridge
from ...run import run
from ..space import Param

__all__ = ["ALTERNATING_OFFSET", "alternating_stream", "static_stream", "describe", "stream_problem", "truncate", "STREAM_PARAMS", "mc_regret"]


def describe(d: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.items())


#: The alternating stream's offset c: the comparator is w* = c e_1 (not w_1 = 0, whose gap would be 0, the
#: run loop's divergence test's reference) and adds only K c^2/(2 eta) to the regret bound.
ALTERNATING_OFFSET = 0.1


def alternating_stream(K: int, T: int, D: int, offset: float = ALTERNATING_OFFSET) -> OnlineProblem:
    """Every client sees x = e_1 and the label c + 1, c - 1, c + 1, ... (ridge, lam = 0, c = ``offset``,
    default :data:`ALTERNATING_OFFSET`): L_t(w) = 1/2 (w_1 - c - (-1)^t)^2, beta = 1.

    The stream on which online gradient descent's regret bound is nearly attained (why the ledger runs it): for
    even T the comparator is w* = c e_1 and sigma2_diff = 1, so the bound is K c^2/(2 eta) + eta K T, while OGD
    with a = eta beta settles into the oscillation c +- a/(2 - a) and pays (1/2)(2a/(2 - a) + a^2/(2 - a)^2)
    per client and step: about 0.77 of the bound's eta K T at eta -> 1/(2 beta). A step or an aggregation that
    is off by a factor moves the oscillation's amplitude, and the regret, with it.
    """
    X = np.zeros((T, K, D))
    X[:, :, 0] = 1.0
    y = offset + np.broadcast_to(np.where(np.arange(T) % 2 == 0, 1.0, -1.0)[:, None], (T, K))
    return OnlineProblem(X, y, loss="ridge", lam=0.0)


def static_stream(K: int, T: int, D: int) -> OnlineProblem:
    """Every client sees x = e_1 and the label 1 at every step (ridge, lam = 0): L_t(w) = 1/2 (w_1 - 1)^2, beta = 1.

    The stream on which the bounds' first term K ||w*||^2/(2 eta) is nearly attained (why the ledger runs it):
    sigma2_diff = 0 (every gradient vanishes at w* = e_1), and gradient descent with a = eta beta from w_1 = 0
    pays sum_t (1 - a)^(2t)/2 = 1/(2 (2a - a^2)) per client, 1/(2 - a) > 1/2 of the bound 1/(2a) for every
    step a in (0, 1). A step off by a factor 2 (a/2) pays about twice as much, past the bound.
    """
    X = np.zeros((T, K, D))
    X[:, :, 0] = 1.0
    return OnlineProblem(X, np.ones((T, K)), loss="ridge", lam=0.0)


def stream_problem(d: dict) -> OnlineProblem:
    """The stream of a claim's instance: ``stream`` = "alternating" or "static" (the streams on which the bounds
    are nearly attained), else the synthetic ridge or (``loss`` = "logistic") logistic stream."""
    if d.get("stream") == "alternating":
        return alternating_stream(d["K"], d["T"], d["D"], d.get("offset", ALTERNATING_OFFSET))
    if d.get("stream") == "static":
        return static_stream(d["K"], d["T"], d["D"])
    kw = {k: v for k, v in d.items() if k in ("heterogeneity", "drift", "noise", "lam", "seed")}
    maker = online_logistic if d.get("loss") == "logistic" else online_ridge
    return maker(d["K"], d["T"], d["D"], **kw)


def truncate(problem: OnlineProblem, T: int) -> OnlineProblem:
    return OnlineProblem(problem.features[:T], problem.labels[:T], loss=problem.loss, lam=problem.lam)


STREAM_PARAMS = (Param("K", 1, 20, integer=True), Param("T", 10, 300, integer=True), Param("D", 1, 6, integer=True),
           Param("frac", 0.01, 0.99), Param("heterogeneity", 0.0, 3.0), Param("drift", 0.0, 2.0))


def mc_regret(alg, problem: OnlineProblem, seeds: int) -> tuple[float, float]:
    finals = np.array([run(alg, problem, problem.horizon, seed=s).regret[-1] for s in range(seeds)])
    return float(finals.mean()), float(finals.std(ddof=1) / math.sqrt(seeds))
