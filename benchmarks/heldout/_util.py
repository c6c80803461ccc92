"""Small helpers shared by the held-out implementations (written from the papers, not from the kit)."""
from __future__ import annotations

import numpy as np


def weights(clients, weighting="uniform"):
    if weighting == "num_examples":
        m = np.array([c.num_examples for c in clients], dtype=float)
        return m / m.sum()
    return np.full(len(clients), 1.0 / len(clients))


def quad(c, dtype=np.float64):
    """(A, b) of f_i(x) = 1/(2m)||Z x - y||^2 = 1/2 x'Ax - b'x + const, from the client's data."""
    Z = np.asarray(c.features, dtype=dtype)
    y = np.asarray(c.targets, dtype=dtype)
    m = Z.shape[0]
    return Z.T @ Z / m, Z.T @ y / m


def soft(z, t):
    return np.sign(z) * np.maximum(np.abs(z) - t, 0.0)


def enet(Q, p, l1, iters=20000):
    """argmin_u 1/2 u'Qu + p'u + l1 ||u||_1 exactly: FISTA, then a support polish with KKT checks."""
    d = len(p)
    if l1 == 0:
        return np.linalg.solve(Q, -p)
    L = np.linalg.eigvalsh(Q)[-1]
    u = np.zeros(d); v = u.copy(); t = 1.0
    for _ in range(iters):
        u_new = soft(v - (Q @ v + p) / L, l1 / L)
        t_new = (1 + np.sqrt(1 + 4 * t * t)) / 2
        v = u_new + (t - 1) / t_new * (u_new - u)
        if np.max(np.abs(u_new - u)) < 1e-15 * (1 + np.max(np.abs(u_new))):
            u = u_new
            break
        u, t = u_new, t_new
    # polish: solve on the support with the signs found, then repair KKT if needed
    for _ in range(50):
        S = np.abs(u) > 0
        s = np.sign(u)
        x = np.zeros(d)
        if S.any():
            x[S] = np.linalg.solve(Q[np.ix_(S, S)], -(p[S] + l1 * s[S]))
        g = Q @ x + p
        bad_off = (~S) & (np.abs(g) > l1 * (1 + 1e-12))
        bad_on = S & (np.sign(x) != s)
        if not bad_off.any() and not bad_on.any():
            return x
        # fall back: more proximal iterations from x
        u = x.copy()
        for _ in range(2000):
            u = soft(u - (Q @ u + p) / L, l1 / L)
    return x
