"""Expected side for FedElasticNet (Kim et al., Algorithms 1-3), by direct evaluation of the printed equations.

* Exact local solve of eq. (4) / eq. (10) on a general quadratic: u = th - x minimises
  1/2 u^T Q u + q^T u + lam1 ||u||_1 with Q = A_i + lam2 I and q = A_i x - b_i + lin_i. Its solution is the
  unique u with u_S = -Q_SS^{-1} (q_S + lam1 sign(u_S)) on its support S and |(Q u + q)_j| <= lam1 off it (the
  KKT conditions). Coordinate descent finds the support; an active-set loop then solves the linear system on
  it exactly and moves coordinates in or out until the KKT conditions hold to rounding, so the result is exact
  (off-support entries exactly 0), not an iterate. On a diagonal Q this is the soft-threshold
  u = -S_{lam1}(q) / diag(Q), S_t(z) = sign(z) max(|z| - t, 0).
* K local steps of eq. (7), th <- th - eta (grad f_i(th) + lin_i + lam2 (th - x) + lam1 sign(th - x)) from th = x,
  with sign(0) = 0 as printed ("subgradient"), or the proximal reading that takes the l1 term by a
  soft-threshold after each gradient step ("proximal", ISTA). The sign makes the map piecewise affine, so the
  kit evaluates eq. (7) step by step (K einsums; this is the paper's equation, not an algorithm of fedtheory)
  and reports the smallest |th_k - x| entry after the first step, so that a case whose sign is decided by
  rounding can be skipped.
"""
from __future__ import annotations

import numpy as np

from .instance import Instance
from .tolerances import EXACT_REL

__all__ = ["soft", "exact_local", "elastic_steps"]


def soft(z: np.ndarray, t: float) -> np.ndarray:
    """Soft-threshold S_t(z) = sign(z) max(|z| - t, 0)."""
    return np.sign(z) * np.maximum(np.abs(z) - t, 0.0)


def exact_local(inst: Instance, x: np.ndarray, lin: np.ndarray, S: np.ndarray, lam2: float,
                lam1: float) -> tuple[np.ndarray, float]:
    """(th_i for i in S (rows of ``lin`` are the participants'), margin): the exact solves of eq. (4) / (10) and
    how far the solution is from a change of its support, min over coordinates of |u_j| (on the support) and
    lam1 - |(Q u + q)_j| (off it); a sign(0) read off a solution within rounding of a support change is decided
    by rounding."""
    TH, margin = [], np.inf
    for k, i in enumerate(S):  # a few clients of d <= 12 each: one small active-set solve per client
        Q = inst.A[i] + lam2 * np.eye(inst.d)
        q = inst.A[i] @ x - inst.b[i] + lin[k]
        u, m = _lasso(Q, q, lam1)
        TH.append(x + u)
        margin = min(margin, m)
    return np.stack(TH), margin


def _lasso(Q: np.ndarray, q: np.ndarray, t: float) -> tuple[np.ndarray, float]:
    """argmin_u 1/2 u^T Q u + q^T u + t ||u||_1 for positive definite Q, exact (see the module docstring)."""
    d = q.size
    if t == 0.0:
        return -np.linalg.solve(Q, q), np.inf
    u = np.zeros(d)
    for _sweep in range(200):  # coordinate descent: only the support and signs it finds are used
        for j in range(d):
            r = q[j] + Q[j] @ u - Q[j, j] * u[j]
            u[j] = -float(soft(np.array(r), t)) / Q[j, j]
    sgn = np.sign(u)
    tol = EXACT_REL * max(1.0, t, float(np.max(np.abs(q))))
    for _ in range(4 * d + 8):  # active set: exact on the support, then repair the KKT conditions
        on = sgn != 0
        u = np.zeros(d)
        if on.any():
            u[on] = -np.linalg.solve(Q[np.ix_(on, on)], q[on] + t * sgn[on])
        g = Q @ u + q  # = -t sgn on the support by construction
        flipped = on & (np.sign(u) != sgn)
        over = ~on & (np.abs(g) > t + tol)
        if not flipped.any() and not over.any():
            margin = min(float(np.min(np.abs(u[on]), initial=np.inf)),
                         float(np.min(t - np.abs(g[~on]), initial=np.inf)))
            return u, margin
        if flipped.any():
            sgn[flipped] = 0.0
        else:
            j = int(np.argmax(np.where(over, np.abs(g), -np.inf)))
            sgn[j] = -np.sign(g[j])
    raise RuntimeError("the active-set solve of the elastic-net subproblem did not settle (expected side)")


def elastic_steps(inst: Instance, x: np.ndarray, lin: np.ndarray, S: np.ndarray, *, steps: int, step: float,
                  lam2: float, lam1: float, mode: str) -> tuple[np.ndarray, float]:
    """(th_K for i in S, margin): eq. (7) K times from th = x; margin = min |th_k - x| over k >= 1 (subgradient)."""
    A, b = inst.A[S], inst.b[S]
    th = np.broadcast_to(x, b.shape).copy()
    margin = np.inf
    for k in range(steps):  # K steps of the printed update, vectorised over the participants
        g = np.einsum("nij,nj->ni", A, th) - b + lin + lam2 * (th - x)
        if mode == "subgradient":
            if k > 0:
                margin = min(margin, float(np.min(np.abs(th - x))))
            th = th - step * (g + lam1 * np.sign(th - x))
        else:
            th = x + soft(th - x - step * g, step * lam1)
    return th, margin
