"""Small helpers shared by the batch-3 held-out implementations (written from the papers, not from the kit).

Each client's loss is f_i(x) = 1/(2 m_i) ||Z_i x - y_i||^2, so grad f_i(x) = Z_i^T (Z_i x - y_i) / m_i, the
Hessian A_i = Z_i^T Z_i / m_i and b_i = Z_i^T y_i / m_i.
"""
from __future__ import annotations

import numpy as np


def hess(c, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """(A_i, b_i) of a client: f_i(x) = 1/2 x^T A_i x - b_i^T x + const."""
    Z = np.asarray(c.features, dtype=dtype)
    y = np.asarray(c.targets, dtype=dtype)
    m = Z.shape[0]
    return Z.T @ Z / m, Z.T @ y / m


def weights(clients, weighting: str) -> np.ndarray:
    """a_i = m_i / sum_S m_j (McMahan et al. 2017, n_k / n over the participants) or 1/|S|."""
    if weighting == "uniform":
        return np.full(len(clients), 1.0 / len(clients))
    m = np.array([c.num_examples for c in clients], dtype=float)
    return m / m.sum()


def soft(z: np.ndarray, t: float) -> np.ndarray:
    """S_t(z) = sign(z) max(|z| - t, 0), the prox of t ||.||_1."""
    return np.sign(z) * np.maximum(np.abs(z) - t, 0.0)


def elastic_net(Q: np.ndarray, p: np.ndarray, lam1: float, iters: int = 20000) -> np.ndarray:
    """argmin_u 1/2 u^T Q u + p^T u + lam1 ||u||_1 (Q symmetric positive definite).

    FISTA finds the support and signs, then the linear system on the support is solved exactly and the KKT
    conditions (|p_j + (Q u)_j| <= lam1 off the support, sign agreement on it) are verified; more iterations
    are run if they fail. The exact solve matters: the kit compares with 1e-8 relative tolerance.
    """
    d = len(p)
    if lam1 == 0:
        return np.linalg.solve(Q, -p)
    Lq = np.linalg.eigvalsh(Q)[-1]
    u = np.zeros(d); v = u.copy(); tk = 1.0
    for _rnd in range(4):
        for _ in range(iters // 4):
            u_new = soft(v - (Q @ v + p) / Lq, lam1 / Lq)
            t_new = (1 + np.sqrt(1 + 4 * tk * tk)) / 2
            v = u_new + (tk - 1) / t_new * (u_new - u)
            u, tk = u_new, t_new
        S = np.abs(u) > 1e-12
        sol = np.zeros(d)
        if S.any():
            sg = np.sign(u[S])
            sol[S] = np.linalg.solve(Q[np.ix_(S, S)], -(p[S] + lam1 * sg))
            if np.any(np.sign(sol[S]) != sg):
                continue
        r = p + Q @ sol
        if np.all(np.abs(r[~S]) <= lam1 * (1 + 1e-10)):
            return sol
    return u


def st(T: np.ndarray, q: float | None) -> np.ndarray:
    """EFL's ST (Alg. 2): keep the k = max(floor(n q), 1) largest magnitudes, replace them by their mean magnitude
    with their signs; q = None is no compression."""
    if q is None:
        return T.copy()
    n = T.size
    k = max(int(np.floor(n * q)), 1)
    idx = np.argpartition(-np.abs(T), k - 1)[:k]
    out = np.zeros_like(T)
    mu = np.abs(T[idx]).sum() / k
    out[idx] = mu * np.sign(T[idx])
    return out


def grid(x: np.ndarray, step: float) -> np.ndarray:
    """Deterministic grid compressor: round to the nearest multiple of step (step 0 = identity)."""
    if not step:
        return np.array(x, dtype=float)
    return step * np.round(np.asarray(x) / step)
