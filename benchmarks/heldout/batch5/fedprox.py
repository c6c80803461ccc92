"""FedProx (Li et al. 2020, Alg. 2), written from the paper and docs/conformance.md only.

Client i approximately minimises h_i(w) = f_i(w) + lam/2 ||w - x||^2 (K GD steps of size eta_l from x when
gamma is None; any gamma-inexact solution, Definition 2, when gamma is declared), then
x+ = x + eta_g sum_i a_i (w_i - x).
"""
from __future__ import annotations

import numpy as np


def _a(clients, weighting):
    m = np.array([1.0 if weighting == "uniform" else c.num_examples for c in clients])
    return m / m.sum()


def fedprox_gamma_gd(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                     server_step=1.0, weighting="num_examples", gamma=None, **_):
    """Correct (declared gamma = 0.3): each client runs GD with step 1/(L_i + lam) on h_i until
    ||grad h_i(w)|| <= gamma ||grad h_i(x)|| = gamma ||grad f_i(x)|| (Definition 2, w^0 = x). Any such solver
    is the paper's FedProx; gamma=None falls back to K steps of size eta_l."""
    out = np.zeros_like(x)
    for ai, c in zip(_a(clients, weighting), clients):
        w = x.copy()
        if gamma is None and local_steps is None:     # exact local solve
            Z, y = c.features, c.targets
            w = np.linalg.solve(Z.T @ Z / len(y) + prox * np.eye(len(x)), Z.T @ y / len(y) + prox * x)
        elif gamma is None:
            for _ in range(int(local_steps)):
                w = w - local_step * (c.grad(w) + prox * (w - x))
        else:
            Z = c.features
            L = np.linalg.eigvalsh(Z.T @ Z / Z.shape[0]).max()
            step = 1.0 / (L + prox)
            target = gamma * np.linalg.norm(c.grad(x))
            for _ in range(100000):
                g = c.grad(w) + prox * (w - x)
                if np.linalg.norm(g) <= target:
                    break
                w = w - step * g
        out += ai * (w - x)
    return x + server_step * out


def fedprox_closed_inplace(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                           server_step=1.0, weighting="num_examples", gamma=None, **_):
    """Correct. K steps written with in-place numpy operations on a per-client Gram matrix, the weighted sum
    accumulated in reverse order."""
    a = _a(clients, weighting)
    acc = np.zeros_like(x)
    for i in reversed(range(len(clients))):
        c = clients[i]
        Z, y = c.features, c.targets
        G = Z.T @ Z / len(y)
        r = Z.T @ y / len(y)
        w = np.array(x, dtype=float)
        if local_steps is None:                       # exact local solve
            w = np.linalg.solve(G + prox * np.eye(len(x)), r + prox * x)
        for _ in range(0 if local_steps is None else int(local_steps)):
            g = G @ w
            g -= r
            g += prox * (w - x)
            w -= local_step * g
        acc += a[i] * w
    return x + server_step * (acc - x)


def make_fedprox_stale_centre():
    """WRONG: hidden state in a closure. The proximal centre is the server model of the *previous* call (a
    cached `global_params` refreshed at the end of a round instead of the start). Alg. 2's local problem is
    centred at the model just received, w^t; the first call is right, later calls are not."""
    cache = {}

    def fedprox_stale_centre(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                             server_step=1.0, weighting="num_examples", gamma=None, **_):
        prev = cache.get("prev")
        centre = prev if prev is not None and prev.shape == x.shape else x
        out = np.zeros_like(x)
        for ai, c in zip(_a(clients, weighting), clients):
            w = x.copy()
            for _ in range(int(local_steps)):
                w = w - local_step * (c.grad(w) + prox * (w - centre))
            out += ai * (w - x)
        cache["prev"] = np.array(x, copy=True)
        return x + server_step * out
    return fedprox_stale_centre


def fedprox_three_steps_claims_gamma(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                     prox=1.0, server_step=1.0, weighting="num_examples", gamma=None, **_):
    """WRONG (declared gamma = 0.1): the solver is 3 GD steps of size 1/(L_i + lam) whatever the problem,
    and the author declared it 0.1-inexact. On an ill-conditioned client 3 steps do not reach
    ||grad h_i(w)|| <= 0.1 ||grad f_i(x)||, so the output is not a gamma-inexact solution (Definition 2)."""
    out = np.zeros_like(x)
    for ai, c in zip(_a(clients, weighting), clients):
        Z = c.features
        L = np.linalg.eigvalsh(Z.T @ Z / Z.shape[0]).max()
        w = x.copy()
        for _ in range(3):
            w = w - (c.grad(w) + prox * (w - x)) / (L + prox)
        out += ai * (w - x)
    return x + server_step * out


def fedprox_prox_per_sample(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                            server_step=1.0, weighting="num_examples", gamma=None, **_):
    """WRONG: the proximal term is added to a sum-reduced loss and the gradient then divided by m_i, so the
    client minimises f_i + lam/(2 m_i) ||w - x||^2 instead of f_i + lam/2 ||w - x||^2 (eq. (2)).
    Invisible for clients with a single example."""
    out = np.zeros_like(x)
    for ai, c in zip(_a(clients, weighting), clients):
        Z, y = c.features, c.targets
        w = x.copy()
        for _ in range(int(local_steps)):
            g_sum = Z.T @ (Z @ w - y) + prox * (w - x)
            w = w - local_step * g_sum / len(y)
        out += ai * (w - x)
    return x + server_step * out


CORRECT = [
    ("fedprox_gamma_gd", fedprox_gamma_gd, {"gamma": 0.3}),
    ("fedprox_closed_inplace", fedprox_closed_inplace, {}),
]
WRONG = [
    ("fedprox_stale_centre_closure", make_fedprox_stale_centre(), {}),
    ("fedprox_three_steps_claims_gamma", fedprox_three_steps_claims_gamma, {"gamma": 0.1}),
    ("fedprox_prox_per_sample", fedprox_prox_per_sample, {}),
]
