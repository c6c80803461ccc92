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

__all__ = ["describe", "stream_problem", "truncate", "STREAM_PARAMS", "mc_regret"]


def describe(d: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.items())


def stream_problem(d: dict) -> OnlineProblem:
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
