"""Small helpers shared by batch 4's implementations (none of them comes from the kit).

Every helper here is plain linear algebra on a client's own data: for the kit's least squares
f_i(x) = 1/(2m) ||Z x - y||^2 the Hessian is A = Z^T Z / m and grad f_i(x) = A x - Z^T y / m.
"""
from __future__ import annotations

import numpy as np


def hess_lin(client) -> tuple[np.ndarray, np.ndarray]:
    """(A, b) with f_i(x) = 1/2 x^T A x - b^T x + const: A = Z^T Z / m, b = Z^T y / m."""
    Z = np.asarray(client.features, dtype=np.float64)
    y = np.asarray(client.targets, dtype=np.float64)
    m = Z.shape[0]
    return Z.T @ Z / m, Z.T @ y / m


def soft(z, t):
    """Soft-threshold S_t(z) = sign(z) max(|z| - t, 0)."""
    return np.sign(z) * np.maximum(np.abs(z) - t, 0.0)


def elastic_net(Q: np.ndarray, p: np.ndarray, l1: float, sweeps: int = 20000) -> np.ndarray:
    """argmin_u 1/2 u^T Q u + p^T u + l1 ||u||_1 for a symmetric positive definite Q.

    Coordinate descent finds the support and signs; every 10 sweeps the linear system on the current support is
    solved exactly and the KKT conditions (|p_j + (Q u)_j| <= l1 off the support, sign(u_j) consistent on it) are
    checked: the first support that passes gives the exact minimiser, with off-support entries exactly 0.
    """
    d = len(p)
    if l1 <= 0:
        return np.linalg.solve(Q, -p)
    u = np.zeros(d)
    for sweep in range(1, sweeps + 1):
        for i in range(d):
            r = p[i] + Q[i] @ u - Q[i, i] * u[i]
            u[i] = -soft(r, l1) / Q[i, i]
        if sweep % 10:
            continue
        S = np.flatnonzero(u != 0)
        v = np.zeros(d)
        if len(S):
            sg = np.sign(u[S])
            v[S] = np.linalg.solve(Q[np.ix_(S, S)], -(p[S] + l1 * sg))
            if np.any(np.sign(v[S]) != sg):
                continue
        g = p + Q @ v
        off = np.setdiff1d(np.arange(d), S)
        if np.all(np.abs(g[off]) <= l1 * (1 + 1e-12)):
            return v
    return u


def st(T: np.ndarray, q: float | None) -> np.ndarray:
    """EFL's Algorithm 2 (sparse ternary): the k = max(floor(n q), 1) largest magnitudes kept, each set to
    their mean magnitude with its sign; exactly k indices (ties broken by argsort). q = None: identity."""
    T = np.asarray(T, dtype=np.float64)
    if q is None:
        return T.copy()
    n = T.size
    k = max(int(np.floor(n * q)), 1)
    idx = np.argsort(-np.abs(T), kind="stable")[:k]
    mu = np.abs(T[idx]).sum() / k
    out = np.zeros_like(T)
    out[idx] = mu * np.sign(T[idx])
    return out


def grid_round(v: np.ndarray, h: float) -> np.ndarray:
    """Deterministic grid compressor: nearest multiple of h (h = 0: identity)."""
    if not h:
        return np.array(v, dtype=np.float64)
    return h * np.round(np.asarray(v, dtype=np.float64) / h)
