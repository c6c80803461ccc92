"""fedtheory's test harness for EFL (Ma et al., "Towards Heterogeneous Clients with Elastic Federated Learning";
docs/efl.md): diagonal quadratic clients f_k(w) = 1/2 (w - c_k)^T A_k (w - c_k) with A_k ~ U[0.5, 4],
c_k ~ 3 N(0, I), Dirichlet weights p, whose Fisher diagonal is diag(A_k), and the optimum of any weighting.
"""
from __future__ import annotations

import numpy as np

from ...problems.quadratic import QuadraticProblem

__all__ = ["efl_harness", "weighted_optimum"]


def efl_harness(seed: int = 0, n: int = 5, d: int = 6, a_low: float = 0.5, a_high: float = 4.0,
                spread: float = 3.0, fisher: tuple[float, ...] | None = None) -> QuadraticProblem:
    """fedtheory's test harness (docs/efl.md): diagonal A_k ~ U[a_low, a_high] (or ``fisher`` x U[0.8, 1.2] per
    coordinate), c_k ~ spread N(0, I), p ~ Dirichlet(1)."""
    rng = np.random.default_rng(seed)
    if fisher is None:
        A = rng.uniform(a_low, a_high, (n, d))
    else:
        A = np.asarray(fisher, dtype=np.float64)[None, :] * rng.uniform(0.8, 1.2, (n, len(fisher)))
        d = len(fisher)
    c = spread * rng.standard_normal((n, d))
    p = rng.dirichlet(np.ones(n))
    return QuadraticProblem(A, A * c, p)


def weighted_optimum(problem: QuadraticProblem, w: np.ndarray) -> np.ndarray:
    """argmin_w sum_k w_k f_k for a diagonal quadratic (the limit a biased weighting converges to)."""
    w = np.asarray(w, dtype=np.float64)[:, None]
    return (w * problem.b).sum(axis=0) / (w * problem.A).sum(axis=0)
