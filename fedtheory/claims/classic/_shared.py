"""Instances and run helpers shared by the classic claim modules (private to this package).

Every check of the classic claims takes one problem (a :class:`~fedtheory.problems.base.Problem`; most need a
quadratic for the closed forms) and picks the algorithm's hyperparameters from the certificate, so the tests in
``tests/claims/classic/`` call the same checks on hypothesis-drawn problems.
"""
from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from ...participation import Bernoulli, Full, UniformSubset
from ...problems.base import Problem
from ...problems.logistic import logistic
from ...problems.quadratic import quadratic

PAPER = "classic"


def describe(problem: Problem) -> str:
    c = problem.certificate
    # QuadraticProblem.hessians names the storage ("dense"/"diagonal"); on smooth problems it is a method
    kind = problem.hessians if isinstance(getattr(problem, "hessians", None), str) else "smooth"
    return (f"{type(problem).__name__}({kind}) n={problem.n_clients} d={problem.dim} mu={c.mu:.3g} L={c.L:.3g} "
            f"delta_B={c.delta_B:.3g} zeta2={c.zeta2:.3g}")


def heterogeneous(thorough: bool) -> Iterable[Problem]:
    """Quadratics with heterogeneous Hessians and gradients (where client drift exists)."""
    grid = [dict(n_clients=4, dim=3, mu=0.2, L=2.0, delta_B=0.6, zeta2=1.0, seed=0),
            dict(n_clients=5, dim=4, mu=0.5, L=5.0, delta_A=1.0, zeta2=3.0, hessians="diagonal", seed=1),
            dict(n_clients=3, dim=5, mu=0.1, L=1.0, delta_B=0.3, zeta2=0.5, seed=2)]
    if thorough:
        grid += [dict(n_clients=8, dim=6, mu=0.05, L=5.0, delta_B=1.5, zeta2=4.0, seed=s) for s in range(3, 7)]
    for kw in grid:
        yield quadratic(**kw)


def equal_hessians(thorough: bool) -> Iterable[Problem]:
    grid = [dict(n_clients=4, dim=3, mu=0.2, L=2.0, zeta2=2.0, seed=3),
            dict(n_clients=5, dim=4, mu=0.5, L=4.0, zeta2=1.0, hessians="diagonal", seed=4)]
    if thorough:
        grid += [dict(n_clients=9, dim=7, mu=0.05, L=3.0, zeta2=5.0, seed=s) for s in range(5, 9)]
    for kw in grid:
        yield quadratic(**kw)


SMALL_QUADRATICS = (dict(n_clients=4, dim=3, mu=0.3, L=3.0, delta_B=0.8, zeta2=1.5, seed=5),
          dict(n_clients=3, dim=4, mu=0.5, L=2.0, delta_A=0.4, zeta2=1.0, hessians="diagonal", seed=6))


def small_enumerable(thorough: bool) -> Iterable[Problem]:
    """Few clients, so every participation outcome can be enumerated (2^n Bernoulli outcomes)."""
    grid = list(SMALL_QUADRATICS)
    if thorough:
        grid += [dict(n_clients=6, dim=5, mu=0.1, L=4.0, delta_B=1.0, zeta2=3.0, seed=s) for s in range(7, 10)]
    for kw in grid:
        yield quadratic(**kw)


def partial_schemes(n: int) -> list:
    return [Full(), UniformSubset(max(1, n // 2)), Bernoulli(0.5)]


def scale_of(problem: Problem) -> float:
    return max(1.0, float(np.linalg.norm(problem.certificate.x_star)))


def rounds_for(rho: float, target: float = 1e-14, cap: int = 20000) -> int:
    """Rounds for a linear rate rho to shrink an error by ``target`` (plus a margin), capped."""
    if rho <= 0.0:
        return 5
    if rho >= 1.0:
        return cap
    return min(cap, int(math.ceil(math.log(target) / math.log(rho))) + 20)


def iterate(alg: Any, problem: Problem, rounds: int, *, seed: int = 0, state: Any = None, stop_dist: float = 0.0,
             callback=None) -> Any:
    """Run ``rounds`` rounds (or until ||x - x*|| <= stop_dist, checked every 10 rounds); return the state."""
    rng = np.random.default_rng(seed)
    state = alg.init(problem, np.zeros(problem.dim)) if state is None else state
    xs = problem.certificate.x_star
    for r in range(rounds):
        state, log = alg.round(problem, state, rng)
        if callback is not None:
            callback(state, log)
        if stop_dist > 0.0 and r % 10 == 9 and np.linalg.norm(state.x - xs) <= stop_dist:
            break
    return state



def logistic_instances(thorough: bool) -> Iterable[Problem]:
    """Small synthetic logistic problems (FedProx's Synthetic(1, 1), size-weighted clients; Newton certificate)."""
    grid = [dict(n_clients=4, dim=4, reg=0.3, samples=[20, 25, 30, 35], seed=0),
            dict(n_clients=3, dim=3, reg=0.5, samples=[20, 25, 30], seed=1)]
    if thorough:
        grid += [dict(n_clients=6, dim=8, reg=0.1, samples=[30] * 6, seed=s) for s in range(2, 4)]
    for kw in grid:
        yield logistic("synthetic", **kw)

