"""Batched exact solver for l1-regularised local subproblems (FedElasticNet's local solve).

A numerical kernel beside :mod:`fedtheory.linalg`: the problems' ``solve_local`` call it (and the claims check
its KKT residual), so it depends on nothing above linear algebra.

For every client i we solve, in the shifted variable y = x - center_i,

    min_y  1/2 y^T H_i y + g_i^T y + l1 ||y||_1,     H_i = A_i + lam_i I  (positive definite),

with g_i = H_i center_i - rhs_i. FISTA with adaptive restart identifies the support and signs; a Newton
"polish" then solves the reduced linear system on that support exactly, which is the KKT point whenever the
identified pattern is right. We accept only when the KKT residual

    r_j = |(H y + g)_j + l1 sign(y_j)|  (y_j != 0),   r_j = max(|(H y + g)_j| - l1, 0)  (y_j = 0)

is at most ``tol`` times the problem scale, so the returned point is certified, not hoped for.
"""
from __future__ import annotations

import numpy as np

from .linalg import batched_matvec


def kkt_residual_l1(grad_smooth: np.ndarray, y: np.ndarray, l1: float) -> np.ndarray:
    """Per-client infinity norm of the l1 KKT residual (distance of 0 to the subdifferential)."""
    nonzero = y != 0
    r = np.where(nonzero, np.abs(grad_smooth + l1 * np.sign(y)), np.maximum(np.abs(grad_smooth) - l1, 0.0))
    return r.max(axis=-1)


def _soft(z: np.ndarray, tau: np.ndarray | float) -> np.ndarray:
    return np.sign(z) * np.maximum(np.abs(z) - tau, 0.0)


def solve_quadratic_l1(problem, rhs: np.ndarray, center: np.ndarray, lam: np.ndarray, l1: float,
                       clients: np.ndarray | None, tol: float = 1e-12, max_iter: int = 100_000) -> np.ndarray:
    """Exact minimiser of 1/2 x^T A_i x - rhs_i^T x + lam/2 ||x||^2 (+ consts) + l1 ||x - center_i||_1.

    ``rhs = b - lin + lam * center`` as assembled by :meth:`QuadraticProblem.solve_local`.
    """
    A = problem.A if clients is None else problem.A[clients]
    lam_col = lam[..., None] if np.ndim(lam) == 1 else lam
    diagonal = A.ndim == 2

    def hvec(Y: np.ndarray) -> np.ndarray:
        return (A * Y if diagonal else batched_matvec(A, Y)) + lam_col * Y

    g = hvec(center) - rhs
    if diagonal:  # separable: closed form
        return center + (-_soft(g, l1) / (A + lam_col))
    scale = max(1.0, float(np.abs(g).max()), l1)
    L_i = (problem.certificate.L_i if clients is None else problem.certificate.L_i[clients]) + np.asarray(lam)
    step = (1.0 / L_i)[:, None] if np.ndim(L_i) else 1.0 / L_i
    y = np.zeros_like(g)
    z = y.copy()
    t = 1.0
    eye = np.eye(A.shape[-1])
    for it in range(max_iter):
        y_new = _soft(z - step * (hvec(z) + g), step * l1)
        # adaptive restart (O'Donoghue & Candes 2015) keeps FISTA monotone on strongly convex problems
        restart = np.sum((z - y_new) * (y_new - y), axis=1) > 0
        t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        z = y_new + ((t - 1) / t_new) * (y_new - y)
        z[restart] = y_new[restart]
        y, t = y_new, t_new
        if it % 20 == 19:
            # Newton polish on the identified support: solve H_SS y_S = -(g_S + l1 sign(y_S)).
            active = y != 0
            H = A + lam_col[..., None] * eye if np.ndim(lam) == 1 else A + lam * eye
            mask = active[:, :, None] & active[:, None, :]
            H_red = np.where(mask, H, eye)
            rhs_red = np.where(active, -(g + l1 * np.sign(y)), 0.0)
            y_pol = np.linalg.solve(H_red, rhs_red[..., None])[..., 0]
            # a sign flip means the pattern was wrong: keep iterating FISTA for those clients
            consistent = np.all(np.where(active, np.sign(y_pol) == np.sign(y), True), axis=1)
            res = kkt_residual_l1(hvec(y_pol) + g, y_pol, l1)
            ok = consistent & (res <= tol * scale)
            y = np.where(ok[:, None], y_pol, y)
            z = np.where(ok[:, None], y_pol, z)
            if np.all(ok):
                return center + y
    res = kkt_residual_l1(hvec(y) + g, y, l1)
    raise RuntimeError(f"l1 local solve did not reach KKT residual {tol:g} (worst {res.max():.3g})")
