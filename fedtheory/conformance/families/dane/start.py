"""Which (B.84) start h_{i,0} an implementation used: every start App. B.3 allows, not one of them.

Jiang, Rodomanov & Stich 2024, App. B.3, ask of DANE+ with control variate (B.84) only that the initial control
variates sum to zero, sum_i w_i h_{i,0} = 0 (h_{i,0} = grad f(x^0) - grad f_i(x^0) is one such start, h_{i,0} = 0
another). An implementation started from ``state=None`` picks its own, which the kit cannot see when the state is
opaque. On quadratics one round is affine in the state z = (x, h_1, ..., h_n):

    x_i = Q_i x - P_i h_i + c_i,        x+ = sum_i a_i x_i,        h_i+ = h_i + m (x_i - x+),

with, for the exact local solve (M_i = A_i + lam I), Q_i = lam M_i^{-1}, P_i = M_i^{-1}, c_i = M_i^{-1} b_i, and for
K gradient steps with step eta from x (T_i = (I - eta M_i)^K): Q_i = (I - T_i) lam M_i^{-1} + T_i,
P_i = (I - T_i) M_i^{-1}, c_i = (I - T_i) M_i^{-1} b_i; ``a`` is w (standard averaging) or the selected client's
indicator (random averaging). So every observed model (and a readable h_i) after R rounds is an affine function of
h_0, and :func:`fit_start` finds, by least squares, the start with sum_i w_i h_{i,0} = 0 that reproduces the
observations best. The property then compares the implementation with the closed-form recursion
(:func:`fedtheory.conformance.families.dane.expected.dane_locals`, computed independently of these matrices) from
that start: a conforming implementation matches whatever admissible start it took, and a start the paper does not
allow (a non-zero sum) cannot be fitted.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...instance import Instance

__all__ = ["round_operators", "fit_start"]


def round_operators(inst: Instance, *, lam: float, local_steps: int | None, local_step: float
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Q, P, c) of shapes (n, d, d), (n, d, d), (n, d): the local model x_i = Q_i x - P_i h_i + c_i."""
    s, V = np.linalg.eigh(inst.A)
    inv = 1.0 / (s + lam)
    if local_steps is None:
        keep = np.zeros_like(s)
    else:
        keep = (1.0 - local_step * (s + lam)) ** local_steps  # the eigenvalues of T_i
    P = np.einsum("nij,nj,nkj->nik", V, (1.0 - keep) * inv, V)
    Q = np.einsum("nij,nj,nkj->nik", V, (1.0 - keep) * lam * inv + keep, V)
    c = np.einsum("nij,nj->ni", P, inst.b)
    return Q, P, c


def _step(Q: np.ndarray, P: np.ndarray, c: np.ndarray, a: np.ndarray, m: float) -> tuple[np.ndarray, np.ndarray]:
    """(G, g): one round z+ = G z + g on z = (x, h_1..h_n), the averaging vector ``a``."""
    n, d, _ = Q.shape
    G = np.zeros(((n + 1) * d, (n + 1) * d))
    QA = np.einsum("n,nij->ij", a, Q)
    G[:d, :d] = QA
    for j in range(n):
        G[:d, (j + 1) * d:(j + 2) * d] = -a[j] * P[j]
    g = np.zeros((n + 1) * d)
    g[:d] = a @ c
    for i in range(n):
        rows = slice((i + 1) * d, (i + 2) * d)
        G[rows, :d] = m * (Q[i] - QA)
        for j in range(n):
            G[rows, (j + 1) * d:(j + 2) * d] = m * a[j] * P[j]
        G[rows, rows] += np.eye(d) - m * P[i]
        g[rows] = m * (c[i] - a @ c)
    return G, g


def fit_start(inst: Instance, Q: np.ndarray, P: np.ndarray, c: np.ndarray, m: float, averages: Sequence[np.ndarray],
              models: Sequence[np.ndarray], states: Sequence[np.ndarray | None], *, zero_sum: bool = True
              ) -> np.ndarray:
    """The start H_0 (n, d) whose rounds best reproduce the observed ``models`` x_1..x_R (and ``states`` h_r where
    readable, None where not), the rounds averaged by ``averages[r]``; with ``zero_sum`` it is sought among the
    starts with sum_i w_i h_{i,0} = 0 (App. B.3), without it among all starts (to measure how far a rejected
    start's sum is from zero). Least squares; the caller judges the fit by the independent recursion."""
    n, d = inst.n, inst.d
    # h_0 = B u: with zero_sum, the projection u_i - sum_j w_j u_j onto the allowed starts
    B = np.eye(n * d)
    if zero_sum:
        B = B - np.kron(np.outer(np.ones(n), inst.weights), np.eye(d))
    J = np.vstack([np.zeros((d, n * d)), B])            # z_0 = J u + k
    k = np.concatenate([inst.x0, np.zeros(n * d)])
    lhs, rhs = [], []
    for a, x_obs, h_obs in zip(averages, models, states):
        G, g = _step(Q, P, c, np.asarray(a, dtype=np.float64), m)
        J, k = G @ J, G @ k + g
        lhs.append(J[:d])
        rhs.append(np.asarray(x_obs) - k[:d])
        if h_obs is not None:
            lhs.append(J[d:])
            rhs.append(np.asarray(h_obs).reshape(-1) - k[d:])
    u = np.linalg.lstsq(np.vstack(lhs), np.concatenate(rhs), rcond=None)[0]
    return (B @ u).reshape(n, d)
