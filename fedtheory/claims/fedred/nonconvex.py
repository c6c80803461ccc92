"""Lemma 28 and Theorem 1 (non-convex DANE+, App. B.2) on fedtheory's non-convex family, in the forms fedtheory
derives (docs/fedred.md).
"""
from __future__ import annotations

import numpy as np

from ...algorithms.dane import DANEPlus
from ...theory import fedred as th
from ..registry import Evidence, claim
from ..space import InstanceSpace, Param
from ..tolerances import ITERATE_REL
from ._shared import describe, nonconvex_instance

__all__: list[str] = []


# ---------------------------------------------------------------------------------------------------------
# Lemma 28 and Theorem 1: non-convex DANE+
# ---------------------------------------------------------------------------------------------------------


def _nc_instances(thorough: bool):
    yield dict(n_clients=6, dim=5, delta_B=0.5, c=4.0, nu=0.1, seed=0, rounds=30, local_steps=20,
               averaging="random")
    yield dict(n_clients=6, dim=5, delta_B=1.0, c=4.0, nu=0.1, seed=1, rounds=30, local_steps=20,
               averaging="fixed")
    # The adversarial search's family (small delta_B against the curvature, one local step): the local models
    # barely move, so ||grad f(x^{r+1})||^2 ~ e_r and the ratio tends to 1/2, the sup of the e_r term's share
    # (Lemma 26 with Young's alpha = 1 gives ||grad f||^2 <= 2 e_r + 2(lam + delta_B)^2 ||x_{i,r+1} - x^r||^2).
    yield dict(n_clients=8, dim=4, delta_B=0.02, c=4.63, nu=0.0713, zeta2=3.07, seed=0, rounds=60, local_steps=1,
               averaging="fixed")
    if thorough:
        yield from (dict(n_clients=10, dim=8, delta_B=db, c=4.0, nu=0.05, seed=s, rounds=60, local_steps=50,
                         averaging="random") for s, db in enumerate((0.2, 0.5, 2.0), start=2))




def _nc_build(point: dict) -> dict:
    """A searched point: ``averaging`` 0 = the randomized single-client selection, 1 = the fixed schedule."""
    averaging = point["averaging"]
    return {**point, "averaging": averaging if isinstance(averaging, str) else ("random", "fixed")[int(averaging)]}


#: The derived non-convex theorem's class: smooth (possibly non-convex) f_i with delta_B-BHD, here fedtheory's
#: separable non-convex quadratics (curvature c, nu; non-convex when nu < c/4, convex otherwise: both are in the
#: class) with exact delta_B, any zeta2; DANE+-GD with lam = 2 delta_B and K local GD steps (their output does
#: not increase F_{i,r}, the theorem's only requirement on local work), random or fixed selection, R rounds.
#: The start point is drawn from ``seed``.
_NC_SPACE = InstanceSpace(
    params=(Param("n_clients", 2, 10, integer=True), Param("dim", 1, 10, integer=True),
            Param("delta_B", 0.05, 5.0, log=True), Param("c", 0.5, 10.0, log=True), Param("nu", 0.01, 2.0, log=True),
            Param("zeta2", 0.0, 10.0), Param("rounds", 2, 60, log=True, integer=True),
            Param("local_steps", 1, 50, log=True, integer=True), Param("averaging", 0, 1, integer=True)),
    fixed={"seed": 0}, build=_nc_build, defaults=tuple(_nc_instances(False)),
    thorough=tuple(_nc_instances(True))[3:])


def _nc_run(kw: dict):
    """Run DANE+-GD (K local steps, min-gradient iterate; lam = 2 delta_B; single-client selection) recording,
    per round, every client's local model, its subproblem gradient norm and the selected client."""
    problem = nonconvex_instance(kw)
    c = problem.certificate
    lam = 2.0 * c.delta_B
    # lam=None: the algorithm's own theory default (2 delta_B for a selected model) runs against this lam
    alg = DANEPlus(lam=None, solver="gd", stopping="steps", local_steps=kw["local_steps"],
                   averaging=kw["averaging"], schedule=(0, problem.n_clients - 1))
    rng = np.random.default_rng(kw.get("seed", 0))
    state = alg.init(problem, 3.0 * rng.standard_normal(problem.dim))
    records = []
    for _ in range(kw["rounds"]):
        X, h, _, _ = alg.local_models(problem, state)
        gradF = problem.grads(X) + h + lam * (X - state.x)
        draw = alg.draw(problem, state, rng)
        new, _ = alg.round_given(problem, state, draw)
        records.append((state.x, X, gradF, draw.client, new.x))
        state = new
    return problem, lam, records


@claim(cites=("Lemma 28",),
       id="fedred.nonconvex.descent.derived", paper="fedred", reference="(derived by fedtheory)", derived=True,
       statement="(derived by fedtheory) Non-convex DANE+ (lam = 2 delta_B, local GD that does not increase F_{i,r}): for every "
                 "client, f(x_{i,r+1}) + (lam - delta_B)/2 ||x_{i,r+1} - x^r||^2 <= f(x^r), so f(x^r) is "
                 "non-increasing under any selection rule",
       kind="monotonicity", instances=_nc_instances, runs=("dane+",))


def check_nonconvex_descent(kw: dict) -> Evidence:
    problem, lam, records = _nc_run(kw)
    coef = th.nonconvex_descent_coefficient(lam, problem.certificate.delta_B)
    worst = -np.inf
    f_seq = []
    for x, X, _, _, _x_new in records:
        fx = problem.value(x)
        vals = np.array([problem.value(xi) for xi in X]) + coef * np.sum((X - x) ** 2, axis=1)
        worst = max(worst, float(np.max(vals - fx)))
        f_seq.append(fx)
    f_seq.append(problem.value(records[-1][4]))
    increases = float(np.max(np.diff(f_seq)))
    holds = worst <= ITERATE_REL * max(1.0, abs(f_seq[0])) and increases <= ITERATE_REL * max(1.0, abs(f_seq[0]))
    return Evidence(describe(kw), worst, 0.0, holds,
                    details={"max_f_increase": increases, "f_first": f_seq[0], "f_last": f_seq[-1]})


@claim(cites=("Theorem 1",),
       id="fedred.nonconvex.stationarity.derived", paper="fedred", reference="(derived by fedtheory)", derived=True,
       statement="(derived by fedtheory) Non-convex DANE+ with lam = 2 delta_B: (1/R) sum_{r=1}^R ||grad f(x^r)||^2 <= "
                 "36 delta_B (f(x^0) - f^inf)/R + (2/R) sum_r e_r, e_r = max_i ||grad F_{i,r}(x_{i,r+1})||^2",
       kind="bound", space=_NC_SPACE, runs=("dane+",),
       non_discriminating=(
           "argued, not proven, ceiling 1/2: where the local models barely move, ||grad f(x^{r+1})||^2 is about e_r "
           "(grad F_{i,r} and grad f differ by terms in the move), against the bound's 2 e_r, and where they move, "
           "the 36 delta_B F_0/R term carries Young's factor 2 of Theorem 29's recurrence; measured: the "
           "worst-case search's 198 evaluations never exceeded the defaults' 0.498"))


def check_nonconvex_stationarity(kw: dict) -> Evidence:
    problem, lam, records = _nc_run(kw)
    c = problem.certificate
    F0 = problem.value(records[0][0]) - c.f_star
    R = len(records)
    grad_sq = [float(np.sum(problem.grad(rec[4]) ** 2)) for rec in records]
    errors = [float(np.max(np.sum(rec[2] ** 2, axis=1))) for rec in records]
    measured = float(np.mean(grad_sq))
    bound = th.nonconvex_stationarity_bound(c.delta_B, F0, R, errors)
    return Evidence(describe(kw), measured, bound, measured <= bound * (1 + ITERATE_REL), tightness=measured / bound,
                    details={"F0": F0, "R": R, "mean_e_r": float(np.mean(errors))})
