"""FedProx (Li et al. 2020, Alg. 2): each client approximately minimises h_i(w) = f_i(w) + lam/2 ||w - x||^2
(K GD steps from x, or any gamma-inexact solver, Definition 2: ||grad h_i(w)|| <= gamma ||grad f_i(x)||);
x+ = x + eta_g sum_i a_i (w_i - x)."""
from __future__ import annotations

import numpy as np

from ._common import hess_lin


def _cg_prox(client, x, lam, stop):
    """Conjugate gradients on (A + lam I) u = -grad f_i(x), u = w - x; stops when stop(||r||) is true."""
    A, b = hess_lin(client)
    M = A + lam * np.eye(len(x))
    g0 = A @ x - b
    u = np.zeros_like(x)
    r = -g0 - M @ u
    p = r.copy()
    for _ in range(10 * len(x) + 10):
        if stop(np.linalg.norm(r)):
            break
        Mp = M @ p
        alpha = (r @ r) / (p @ Mp)
        u = u + alpha * p
        r_new = r - alpha * Mp
        p = r_new + (r_new @ r_new) / (r @ r) * p
        r = r_new
    return x + u


# ---------------------------------------------------------------- correct

def fedprox_cg_inexact(x, clients, *, state=None, rng=None, prox=1.0, server_step=1.0, weighting="num_examples",
                       gamma=None, **_):
    """Correct: conjugate gradients stopped once ||grad h_i|| <= gamma/2 ||grad f_i(x)|| (a gamma-inexact
    solution, Definition 2), declared with gamma = 0.3."""
    g = 0.3 if gamma is None else gamma
    tot = sum(c.num_examples for c in clients)
    new = np.zeros_like(x)
    for c in clients:
        thr = 0.5 * g * np.linalg.norm(c.grad(x))
        w = _cg_prox(c, x, prox, lambda rn: rn <= thr)
        a = 1.0 / len(clients) if weighting == "uniform" else c.num_examples / tot
        new += a * (w - x)
    return x + server_step * new


def fedprox_dict_loop(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                      server_step=1.0, weighting="num_examples", **_):
    """Correct: K local GD steps on h_i, local models kept in a dict by client id, weights normalised at the end."""
    models, wts = {}, {}
    for c in clients:
        w = np.copy(x)
        for _ in range(local_steps):
            w -= local_step * (c.grad(w) + prox * (w - x))
        models[c.cid] = w
        wts[c.cid] = 1.0 if weighting == "uniform" else float(c.num_examples)
    z = sum(wts.values())
    step = sum((wts[k] / z) * (models[k] - x) for k in models)
    return x + server_step * step


# ---------------------------------------------------------------- wrong

def fedprox_cg_absolute_tol(x, clients, *, state=None, rng=None, prox=1.0, server_step=1.0,
                            weighting="num_examples", gamma=None, **_):
    """WRONG: the solver stops at an absolute residual ||grad h_i|| <= gamma (the usual `tol=gamma`), declared
    gamma = 0.3; Definition 2 is relative, ||grad h_i(w)|| <= gamma ||grad f_i(x)||, so for a client with
    ||grad f_i(x)|| < 1 the solution is not gamma-inexact."""
    g = 0.3 if gamma is None else gamma
    tot = sum(c.num_examples for c in clients)
    new = np.zeros_like(x)
    for c in clients:
        w = _cg_prox(c, x, prox, lambda rn: rn <= g)
        a = 1.0 / len(clients) if weighting == "uniform" else c.num_examples / tot
        new += a * (w - x)
    return x + server_step * new


class FedProxCachedTotal:
    """WRONG: n = sum of num_examples computed at the first call and reused ("the population does not change"):
    Alg. 2 averages the participants of each round with their own weights, so with other participants (or another
    problem) the weights no longer sum to 1. Hidden state in a stateless family."""

    def __init__(self):
        self.total = None

    def __call__(self, x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                 server_step=1.0, weighting="num_examples", **_):
        if self.total is None:
            self.total = sum(c.num_examples for c in clients)
        upd = np.zeros_like(x)
        for c in clients:
            w = x.copy()
            for _ in range(local_steps):
                w = w - local_step * (c.grad(w) + prox * (w - x))
            a = 1.0 / len(clients) if weighting == "uniform" else c.num_examples / self.total
            upd += a * (w - x)
        return x + server_step * upd


def fedprox_prox_per_step(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                          server_step=1.0, weighting="num_examples", **_):
    """WRONG: the proximal coefficient spread over the epoch (lam / K per local step): the local objective of
    eq. (2) has mu/2 ||w - w^t||^2 at full strength in every step; right only at K = 1."""
    tot = sum(c.num_examples for c in clients)
    upd = np.zeros_like(x)
    for c in clients:
        w = x.copy()
        for _ in range(local_steps):
            w = w - local_step * (c.grad(w) + (prox / local_steps) * (w - x))
        a = 1.0 / len(clients) if weighting == "uniform" else c.num_examples / tot
        upd += a * (w - x)
    return x + server_step * upd


CORRECT = [
    ("fedprox_cg_inexact_gamma03", fedprox_cg_inexact, {"gamma": 0.3}),
    ("fedprox_dict_loop", fedprox_dict_loop, {}),
]
WRONG = [
    ("fedprox_cg_absolute_tol", fedprox_cg_absolute_tol, {"gamma": 0.3}),
    ("fedprox_cached_total", FedProxCachedTotal(), {}),
    ("fedprox_prox_per_step", fedprox_prox_per_step, {}),
]
CRASH_IS_THE_BUG: tuple = ()
