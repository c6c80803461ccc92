"""Gradient descent's classical contraction, the first algorithm claim (Nesterov 2004, Thm 2.1.15)."""
from __future__ import annotations

import numpy as np

from ..algorithms.gd import GradientDescent
from ..problems.quadratic import quadratic
from ..run import run
from ..theory.gd import gd_contraction
from .registry import Evidence, claim
from .space import quadratic_space

__all__: list[str] = []

#: Floating-point floor (DESIGN.md): gaps below 1e-12 of their start, i.e. distances below 1e-6 of theirs,
#: carry relative errors that swamp a 1e-9 comparison of per-step ratios.
DIST_FLOOR = 1e-6


#: Theorem 2.1.15's class: quadratics with any mu_f, L_f (the statement is about f, so any client split).
_SPACE = quadratic_space(
    defaults=(dict(n_clients=4, dim=5, mu=0.1, L=1.0, delta_B=0.3, zeta2=1.0, seed=0),
              dict(n_clients=10, dim=8, mu=1.0, L=50.0, delta_A=5.0, zeta2=2.0, seed=1),
              dict(n_clients=3, dim=4, mu=0.2, L=0.2, seed=2)),
    thorough=tuple(dict(n_clients=30, dim=20, mu=0.01, L=1.0, delta_B=0.1, zeta2=1.0, seed=s) for s in range(4)),
    make=lambda kw: quadratic(**kw))


@claim(id="classic.gd.contraction", paper="classic", reference="Nesterov 2004, Thm 2.1.15",
       statement="GD with step 1/L_f on a quadratic contracts ||x - x*|| by at most 1 - mu_f/L_f every round",
       kind="bound", space=_SPACE)
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
                    worst, q, worst <= q + 1e-9, tightness=worst / q if q > 0 else None)
