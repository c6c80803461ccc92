"""Small helpers the batch-2 implementations share (written for this batch from the papers only).

Each client's loss is f_i(x) = 1/(2 m_i) ||Z_i x - y_i||^2 (docs/conformance.md, "The contract"), so
A_i = Z_i^T Z_i / m_i and b_i = Z_i^T y_i / m_i give grad f_i(x) = A_i x - b_i.
"""
from __future__ import annotations

import numpy as np


def quad(client, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """(A_i, b_i) of the client's least-squares loss."""
    Z = np.asarray(client.features, dtype=dtype)
    y = np.asarray(client.targets, dtype=dtype)
    m = Z.shape[0]
    return Z.T @ Z / m, Z.T @ y / m


def weights(clients, weighting: str) -> np.ndarray:
    """a_i = m_i / sum_S m_j ("num_examples") or 1/|S| ("uniform")."""
    if weighting == "uniform":
        return np.full(len(clients), 1.0 / len(clients))
    m = np.array([c.num_examples for c in clients], dtype=float)
    return m / m.sum()


def soft(v: np.ndarray, t: float) -> np.ndarray:
    """Soft-threshold S_t(v) = sign(v) max(|v| - t, 0)."""
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def elastic_net(Q: np.ndarray, p: np.ndarray, l1: float, iters: int = 20000) -> np.ndarray:
    """argmin_u 1/2 u^T Q u + p^T u + l1 ||u||_1 (Q positive definite), exactly.

    FISTA finds the support and signs; the linear system on the support is then solved exactly and the KKT
    conditions checked (|p_j + (Q u)_j| <= l1 off the support, signs kept on it); if they fail, FISTA's answer."""
    d = len(p)
    if l1 == 0:
        return -np.linalg.solve(Q, p)
    L = np.linalg.eigvalsh(Q)[-1]
    u = np.zeros(d); z = u.copy(); t = 1.0
    for _ in range(iters):
        u_new = soft(z - (Q @ z + p) / L, l1 / L)
        t_new = (1 + np.sqrt(1 + 4 * t * t)) / 2
        z = u_new + (t - 1) / t_new * (u_new - u)
        if np.max(np.abs(u_new - u)) < 1e-15 * (1 + np.max(np.abs(u_new))):
            u = u_new
            break
        u, t = u_new, t_new
    S = np.abs(u) > 1e-12
    if not S.any():
        return np.zeros(d) if np.max(np.abs(p)) <= l1 else u
    s = np.sign(u[S])
    v = np.zeros(d)
    v[S] = -np.linalg.solve(Q[np.ix_(S, S)], p[S] + l1 * s)
    ok = np.all(np.sign(v[S]) == s) and np.all(np.abs((p + Q @ v)[~S]) <= l1 * (1 + 1e-9))
    return v if ok else u


def st(T: np.ndarray, q: float | None) -> np.ndarray:
    """EFL's Algorithm 2 (ST) with exactly k = max(floor(n q), 1) entries kept; q None = no compression."""
    if q is None:
        return T.copy()
    n = T.size
    k = max(int(np.floor(n * q)), 1)
    idx = np.argsort(-np.abs(T), kind="stable")[:k]
    out = np.zeros_like(T)
    mu = np.abs(T[idx]).sum() / k
    out[idx] = mu * np.sign(T[idx])
    return out


def grid(v: np.ndarray, step: float) -> np.ndarray:
    """DoCoFL's grid compressor as the kit passes it: round to the nearest multiple of step (0 = identity)."""
    return v.copy() if not step else step * np.round(v / step)
