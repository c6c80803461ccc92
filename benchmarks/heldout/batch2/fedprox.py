"""FedProx (Li et al. 2020, Alg. 2): local objective h_i(w) = f_i(w) + lam/2 ||w - x||^2; K GD steps, or any
gamma-inexact solver (Definition 2: ||grad h_i(w)|| <= gamma ||grad h_i(x)|| = gamma ||grad f_i(x)||)."""
from __future__ import annotations

import numpy as np

from ._common import quad, weights


def fedprox_gd_until_gamma(x, clients, *, state=None, rng=None, prox=1.0, server_step=1.0, gamma=0.25,
                           weighting="num_examples", **_):
    """Correct (declared gamma): GD with step 1/(L_i + lam) until Definition 2's test holds."""
    a = weights(clients, weighting)
    upd = np.zeros_like(x)
    for ai, c in zip(a, clients):
        A, b = quad(c)
        step = 1.0 / (np.linalg.eigvalsh(A)[-1] + prox)
        g0 = np.linalg.norm(A @ x - b)
        w = x.copy()
        for _ in range(100000):
            gh = A @ w - b + prox * (w - x)
            if np.linalg.norm(gh) <= gamma * g0:
                break
            w = w - step * gh
        upd += ai * (w - x)
    return x + server_step * upd


def fedprox_k_steps_inplace(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                            server_step=1.0, weighting="num_examples", **_):
    """Correct: K proximal GD steps, vectorised over clients, x updated in place."""
    AB = [quad(c) for c in clients]
    A = np.stack([p[0] for p in AB]); b = np.stack([p[1] for p in AB])
    W = np.repeat(x[None, :], len(clients), axis=0)
    for _ in range(local_steps):
        W -= local_step * (np.einsum("nij,nj->ni", A, W) - b + prox * (W - x))
    x += server_step * (weights(clients, weighting) @ (W - x))
    return x


def fedprox_sgd_declared_gamma(x, clients, *, state=None, rng=None, prox=1.0, server_step=1.0, gamma=0.3,
                               weighting="num_examples", **_):
    """WRONG: minibatch SGD (half the rows) stopped when the *minibatch* gradient of h_i passes the gamma test;
    Definition 2 bounds the full gradient of h_i at the returned point."""
    rng = rng if rng is not None else np.random.default_rng(0)
    a = weights(clients, weighting)
    upd = np.zeros_like(x)
    for ai, c in zip(a, clients):
        Z = np.asarray(c.features); y = np.asarray(c.targets); m = len(y)
        A, b = quad(c)
        step = 1.0 / (np.linalg.eigvalsh(A)[-1] + prox)
        g0 = np.linalg.norm(A @ x - b)
        w = x.copy()
        for _ in range(5000):
            rows = rng.choice(m, max(m // 2, 1), replace=False)
            gh = Z[rows].T @ (Z[rows] @ w - y[rows]) / len(rows) + prox * (w - x)
            if np.linalg.norm(gh) <= gamma * g0:
                break
            w = w - step * gh
        upd += ai * (w - x)
    return x + server_step * upd


def make_stale_centre():
    """WRONG: the proximal centre is the model of the previous call, kept in a closure (Alg. 2 centres
    h_i at the current w^t)."""
    last = {}

    def fedprox_round(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                      server_step=1.0, weighting="num_examples", **_):
        centre = last.get("x", x)
        a = weights(clients, weighting)
        upd = np.zeros_like(x)
        for ai, c in zip(a, clients):
            w = x.copy()
            for _ in range(local_steps):
                w = w - local_step * (c.grad(w) + prox * (w - centre))
            upd += ai * (w - x)
        last["x"] = x.copy()
        return x + server_step * upd
    return fedprox_round


CORRECT = [("gd_until_gamma0.25", fedprox_gd_until_gamma, {"gamma": 0.25}),
           ("k_steps_vectorised_inplace", fedprox_k_steps_inplace, {})]
WRONG = [("sgd_solver_declared_gamma0.3", fedprox_sgd_declared_gamma, {"gamma": 0.3}),
         ("prox_centre_from_previous_call", make_stale_centre(), {})]
