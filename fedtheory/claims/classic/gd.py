"""Gradient descent's classical contraction, the first algorithm claim (Nesterov 2004, Thm 2.1.15).

Both claims declare their exact worst case over the whole class F(mu, L) (``pep=``,
:func:`fedtheory.pep.gd_contraction`; ``fedtheory verify --worst-case``): for one GD step the PEP value is
max(|1 - eta mu|, |1 - eta L|)^2, so the bound is tight and the reported ratio is 1.
"""
from __future__ import annotations

import math

import numpy as np

from ... import pep
from ...algorithms.gd import GradientDescent
from ...problems.quadratic import QuadraticProblem, quadratic
from ...run import run
from ...theory.gd import gd_contraction
from ..registry import Evidence, claim
from ..space import InstanceSpace, Param, quadratic_space
from ..tolerances import DIST_FLOOR, EXACT_REL, ITERATE_REL

__all__: list[str] = []


#: Theorem 2.1.15's class: quadratics with any mu_f, L_f (the statement is about f, so any client split).
_SPACE = quadratic_space(
    defaults=(dict(n_clients=4, dim=5, mu=0.1, L=1.0, delta_B=0.3, zeta2=1.0, seed=0),
              dict(n_clients=10, dim=8, mu=1.0, L=50.0, delta_A=5.0, zeta2=2.0, seed=1),
              dict(n_clients=3, dim=4, mu=0.2, L=0.2, seed=2),
              dict(n_clients=4, dim=5, mu=0.1, L=1.0, delta_A=0.2, zeta2=1.0, weights=(0.1, 0.2, 0.3, 0.4), seed=3)),
    thorough=tuple(dict(n_clients=30, dim=20, mu=0.01, L=1.0, delta_B=0.1, zeta2=1.0, seed=s) for s in range(4)),
    make=lambda kw: quadratic(**kw))


def gd_worst_case(problem: QuadraticProblem) -> tuple[float, float]:
    """(PEP value, bound) of one GD step with step 1/L_f over all of F(mu_f, L_f), as distance ratios (square
    roots of the PEP's squared ratio)."""
    c = problem.certificate
    if c.mu_f <= 0:
        return 0.0, 0.0
    return math.sqrt(pep.gd_contraction(c.mu_f, c.L_f, 1.0 / c.L_f)), 1.0 - c.mu_f / c.L_f


@claim(id="classic.gd.contraction", paper="classic", reference="Nesterov 2004, Thm 2.1.15",
       statement="GD with step 1/L_f on a quadratic contracts ||x - x*|| by at most 1 - mu_f/L_f every round",
       kind="bound", space=_SPACE, pep=gd_worst_case, runs=("gd",))
def check_gd_contraction(problem) -> Evidence:
    """Per-round ratio ||x_{r+1}-x*|| / ||x_r-x*|| never exceeds the theory factor (floor-cut at 1e-12)."""
    c = problem.certificate
    trace = run(GradientDescent(), problem, 200, seed=0, x0=c.x_star + np.ones(problem.dim))
    dist = np.sqrt(trace.dist2)
    q = gd_contraction(c.mu_f, c.L_f, 1.0 / c.L_f)
    # x is stored to ~1e-16 relative, so ||x_r - x*|| carries an absolute error of a few ulps of ||x*||.
    keep = (dist[:-1] > DIST_FLOOR * (dist[0] + np.linalg.norm(c.x_star))) & (dist[1:] > 0)
    ratios = dist[1:][keep] / dist[:-1][keep]
    worst = float(ratios.max()) if ratios.size else 0.0
    return Evidence(f"quadratic n={problem.n_clients} d={problem.dim} L_f/mu_f={c.L_f / c.mu_f:.3g}",
                    worst, q, worst <= q + ITERATE_REL, tightness=worst / q if q > 0 else None)


#: The statement's class: steps eta = factor / L_f in (0, 2/L_f) on quadratics with any mu_f <= L_f (here
#: diagonal with spectrum {mu_f, 0.5, 1}, L_f = 1; the middle eigenvalue never decides the max). The default
#: points are the ledger's four steps on mu_f = 0.1.
_STEP_SPACE = InstanceSpace(
    params=(Param("factor", 1e-3, 2.0 - 1e-3), Param("mu", 1e-3, 0.5, log=True)),
    regime=lambda pt: 0 < pt["factor"] < 2,
    defaults=tuple(dict(factor=f) for f in (0.5, 1.0, 1.5, 1.9)))


def gd_any_step_worst_case(inst: dict) -> tuple[float, float]:
    """(PEP value, bound) of one GD step eta = factor / L_f over all of F(mu_f, 1) (mu_f = the point's mu, 0.1 by
    default), as distance ratios."""
    factor, mu = inst["factor"], inst.get("mu", 0.1)
    return math.sqrt(pep.gd_contraction(mu, 1.0, factor)), max(abs(1 - factor * mu), abs(1 - factor))


@claim(id="classic.gd.contraction_tight_any_step", paper="classic", reference="Nesterov 2004, Thm 2.1.15",
       statement="on a quadratic, the worst one-step ratio ||x_1 - x*|| / ||x_0 - x*|| of GD with step eta in "
                 "(0, 2/L_f) equals max(|1 - eta mu_f|, |1 - eta L_f|) (attained along an extreme eigenvector)",
       kind="tightness", space=_STEP_SPACE, pep=gd_any_step_worst_case, runs=("gd",))
def check_gd_contraction_any_step(inst: dict) -> Evidence:
    """Steps beyond 2/(mu + L) make the L-branch of the max the active one (a 1/L step never does)."""
    factor = inst["factor"]
    # mu_f = 0.1 unless the point says otherwise, L_f = 1; x* = 0 (b = 0), so x_1 = (1 - eta a) x_0 exactly
    diag = np.array([inst.get("mu", 0.1), 0.5, 1.0])
    problem = QuadraticProblem(np.stack([diag, diag]), np.zeros((2, 3)))
    eta = factor / problem.certificate.L_f
    alg = GradientDescent(step=eta)
    worst = 0.0
    for k in range(3):  # start on each eigenvector: the ratio is |1 - eta a_k|
        state = alg.init(problem, np.eye(3)[k])
        new, _ = alg.round(problem, state, np.random.default_rng(0))
        worst = max(worst, float(np.linalg.norm(new.x)))
    q = gd_contraction(problem.certificate.mu_f, problem.certificate.L_f, eta)
    # a handful of flops on numbers of size <= 1: agreement to 1e-12 absolute
    return Evidence(f"step = {factor}/L_f", worst, q, abs(worst - q) <= EXACT_REL, tightness=worst / q)
