"""Expected side for DANE / DANE+ and FedRed: the papers' updates on quadratics by direct linear algebra.

Jiang, Rodomanov & Stich 2024 ("Federated Optimization with Doubly Regularized Drift Correction"). With
f_i(x) = 1/2 x^T A_i x - b_i^T x and f = sum_i w_i f_i:

* control variate (1) / (4): h_i = grad f(x) - grad f_i(x), so sum_i w_i h_i = 0;
* the local problem of Alg. 1, F_i(y) = f_i(y) + <h_i, y> + lam/2 ||y - c||^2, has the minimiser
  y* = (A_i + lam I)^{-1} (b_i - h_i + lam c) (one linear solve), and K steps of gradient descent with step eta
  from y_0 satisfy y_K - y* = (I - eta (A_i + lam I))^K (y_0 - y*) (the matrix power by an eigendecomposition);
* DANE+ with control variate (B.84): h_i+ = h_i + m (x_i - x+) (Appendix B.3);
* FedRed (Alg. 2): the two proximal terms lam/2 ||y - x~||^2 + 1/(2 eta) ||y - x_i||^2 are one term
  (lam + 1/eta)/2 ||y - c_i||^2 with c_i = (lam x~ + x_i/eta)/(lam + 1/eta) (completing the square);
  FedRed-GD / -SGD (Alg. 3): x_i+ = (x_i + lam eta x~ - eta (g_i + h_i)) / (1 + lam eta), the closed-form
  minimiser of the linearised subproblem (Section 4.2).

Nothing here iterates an algorithm: every function is a solve, an eigendecomposition or a weighted sum.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ...instance import Instance

__all__ = ["grads", "control_variates", "prox_solve", "gd_from", "dane_locals", "fedred_locals",
           "minibatch_grads"]


def grads(inst: Instance, X: np.ndarray) -> np.ndarray:
    """(n, d): grad f_i at X_i (X of shape (n, d)) or at one point x (shape (d,))."""
    X = np.broadcast_to(X, inst.b.shape)
    return np.einsum("nij,nj->ni", inst.A, X) - inst.b


def control_variates(inst: Instance, x: np.ndarray) -> np.ndarray:
    """Control variate (1) = (4): h_i = grad f(x) - grad f_i(x), f weighted by the instance's weights."""
    G = grads(inst, x)
    return inst.weights @ G - G


def prox_solve(inst: Instance, lin: np.ndarray, center: np.ndarray, lam: float) -> np.ndarray:
    """argmin_y f_i(y) + <lin_i, y> + lam/2 ||y - c_i||^2 = (A_i + lam I)^{-1} (b_i - lin_i + lam c_i), all i."""
    C = np.broadcast_to(center, inst.b.shape)
    M = inst.A + lam * np.eye(inst.d)[None]
    return np.linalg.solve(M, (inst.b - lin + lam * C)[..., None])[..., 0]


def gd_from(inst: Instance, lin: np.ndarray, center: np.ndarray, lam: float, start: np.ndarray, steps: int,
            step: float) -> np.ndarray:
    """K gradient steps with step eta on f_i + <lin_i, .> + lam/2 ||. - c_i||^2 from start_i, last iterate:
    y* + (I - eta (A_i + lam I))^K (start_i - y*) (the error of GD on a quadratic is multiplied by the
    iteration matrix each step)."""
    y_star = prox_solve(inst, lin, center, lam)
    s, V = np.linalg.eigh(inst.A)
    power = (1.0 - step * (s + lam)) ** steps
    E = np.broadcast_to(start, inst.b.shape) - y_star
    return y_star + np.einsum("nij,nj,nkj,nk->ni", V, power, V, E)


def dane_locals(inst: Instance, x: np.ndarray, h: np.ndarray | None, *, lam: float, local_steps: int | None,
                local_step: float) -> tuple[np.ndarray, np.ndarray]:
    """(X, h): the local models x_{i,r+1} of DANE+ (Alg. 1) from x^r and the control variates used.

    ``h=None`` is control variate (1) recomputed at x^r; ``local_steps=None`` the exact solve, otherwise K GD
    steps from x^r returning the last iterate."""
    H = control_variates(inst, x) if h is None else np.asarray(h, dtype=np.float64)
    if local_steps is None:
        return prox_solve(inst, H, x, lam), H
    return gd_from(inst, H, x, lam, x, local_steps, local_step), H


def minibatch_grads(inst: Instance, X: np.ndarray, batches: Mapping[int, Sequence[int]]) -> np.ndarray:
    """Stochastic gradients from the given minibatches: Z_B^T (Z_B x_i - y_B) / |B| (full batch if absent)."""
    out = np.empty_like(inst.b)
    for i, c in enumerate(inst.clients):  # one small matrix product per client; the kit's side, not a hot path
        rows = np.asarray(batches.get(c.cid, range(c.num_examples)), dtype=np.int64)
        Z, y = c.features[rows], c.targets[rows]
        out[i] = Z.T @ (Z @ X[i] - y) / len(rows)
    return out


def fedred_locals(inst: Instance, x_ref: np.ndarray, X: np.ndarray, H: np.ndarray, *, lam: float, eta: float,
                  solver: str, G: np.ndarray | None = None) -> np.ndarray:
    """x_{i,k+1} of FedRed (Alg. 2, ``solver="exact"``) or FedRed-GD/-SGD (Alg. 3, ``solver="linearized"``;
    ``G`` the stochastic gradients, default the exact ones at X)."""
    if solver == "exact":
        total = lam + 1.0 / eta
        center = (lam * x_ref[None] + X / eta) / total
        return prox_solve(inst, H, center, total)
    G = grads(inst, X) if G is None else G
    return (X + lam * eta * x_ref[None] - eta * (G + H)) / (1.0 + lam * eta)
