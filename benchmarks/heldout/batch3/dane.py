"""DANE+ (Jiang, Rodomanov & Stich 2024, Alg. 1): F_i(z) = f_i(z) + <h_i, z> + lam/2 ||z - x||^2;
x_i = argmin F_i (exact) or K GD steps of size eta from x; x+ = sum_i w_i x_i (standard) or x_xi, xi ~ w
(randomized). Control variate (1): h_i = grad f(x) - grad f_i(x), f = sum_i w_i f_i; (B.84): a stored h_i,
h_i0 = grad f(x0) - grad f_i(x0), h_i+ = h_i + m (x_i - x+)."""
from __future__ import annotations

import numpy as np

from ._common import hess, weights


def _local(c, x, h, lam, K, eta):
    if K is None:
        A, b = hess(c)
        return np.linalg.solve(A + lam * np.eye(len(x)), b - h + lam * x)
    z = x.copy()
    for _ in range(K):
        z = z - eta * (c.grad(z) + h + lam * (z - x))
    return z


class _B84:
    """Opaque (B.84) state: the control variates in a list aligned with a list of ids."""

    def __init__(self, ids, hs):
        self.ids, self.hs = list(ids), [np.array(v) for v in hs]

    def get(self, cid):
        return self.hs[self.ids.index(cid)]


def dane_b84_opaque(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1, m=1.0,
                    weighting="uniform", control_variate="scaffnew", **_):
    """Correct: (B.84) with an opaque state object (parallel lists of ids and variates)."""
    w = weights(clients, weighting)
    if state is None:
        gs = [c.grad(x) for c in clients]
        gf = sum(wi * g for wi, g in zip(w, gs))
        state = _B84([c.cid for c in clients], [gf - g for g in gs])
    xs = [_local(c, x, state.get(c.cid), lam, local_steps, local_step) for c in clients]
    x_new = sum(wi * xi for wi, xi in zip(w, xs))
    for c, xi in zip(clients, xs):
        j = state.ids.index(c.cid)
        state.hs[j] = state.hs[j] + m * (xi - x_new)
    return x_new, state


def dane_own_random(x, clients, *, state=None, rng=None, draw=None, lam=1.0, local_steps=None, local_step=0.1,
                    weighting="num_examples", averaging="random", **_):
    """Correct: randomized averaging; the kit's draw when given, else its own xi ~ w with rng.choice over the
    clients as listed (the law follows the listed weights, whatever the order)."""
    w = weights(clients, weighting)
    gs = [c.grad(x) for c in clients]
    gf = sum(wi * g for wi, g in zip(w, gs))
    xs = {c.cid: _local(c, x, gf - g, lam, local_steps, local_step) for c, g in zip(clients, gs)}
    if averaging != "random":
        return sum(wi * xs[c.cid] for wi, c in zip(w, clients))
    if draw is not None and "client" in draw:
        return xs[draw["client"]]
    j = rng.choice(len(clients), p=w)
    return xs[clients[j].cid]


def dane_reseeded_selection(x, clients, *, state=None, rng=None, draw=None, lam=1.0, local_steps=None,
                            local_step=0.1, weighting="num_examples", averaging="random", **_):
    """WRONG: its own selection uses a generator re-seeded with a fixed seed at every call ("reproducible
    runs"), so xi_r is the same function of the client list every round instead of a fresh draw xi_r ~ w
    (Alg. 1, Thm 1's expectation over xi)."""
    w = weights(clients, weighting)
    gs = [c.grad(x) for c in clients]
    gf = sum(wi * g for wi, g in zip(w, gs))
    xs = {c.cid: _local(c, x, gf - g, lam, local_steps, local_step) for c, g in zip(clients, gs)}
    if averaging != "random":
        return sum(wi * xs[c.cid] for wi, c in zip(w, clients))
    if draw is not None and "client" in draw:
        return xs[draw["client"]]
    own = np.random.default_rng(1234)
    return xs[clients[int(own.choice(len(clients), p=w))].cid]


def dane_b84_old_x(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1, m=1.0,
                   weighting="uniform", **_):
    """WRONG: (B.84) updated as h_i + m (x_i - x^r), against the round's starting model, instead of
    h_i + m (x_{i,r+1} - x^{r+1}); sum_i w_i h_i then drifts by m (x+ - x) each round. State a tuple."""
    w = weights(clients, weighting)
    if state is None:
        gs = [c.grad(x) for c in clients]
        gf = sum(wi * g for wi, g in zip(w, gs))
        hs = {c.cid: gf - g for c, g in zip(clients, gs)}
    else:
        (hs,) = state
    xs = {c.cid: _local(c, x, hs[c.cid], lam, local_steps, local_step) for c in clients}
    x_new = sum(wi * xs[c.cid] for wi, c in zip(w, clients))
    return x_new, ({cid: hs[cid] + m * (xs[cid] - x) for cid in hs},)


def make_warm_start():
    """WRONG: the K local GD steps start from the client's local model of the previous call (a warm start kept
    in a closure) instead of from x^r as DANE+-GD does (Sec. 3.4: "GD on F_{i,r}, started at x^r"); round 1
    is right."""
    last = {}

    def dane_warm(x, clients, *, state=None, rng=None, lam=1.0, local_steps=5, local_step=0.1,
                  weighting="uniform", **_):
        w = weights(clients, weighting)
        gs = [c.grad(x) for c in clients]
        gf = sum(wi * g for wi, g in zip(w, gs))
        out = np.zeros_like(x)
        for wi, c, g in zip(w, clients, gs):
            z = last.get(c.cid, x)
            z = x.copy() if np.shape(z) != np.shape(x) else z.copy()
            for _ in range(local_steps):
                z = z - local_step * (c.grad(z) + gf - g + lam * (z - x))
            last[c.cid] = z
            out += wi * z
        return out
    return dane_warm


CORRECT = [("b84_opaque_lists", dane_b84_opaque, {"control_variate": "scaffnew", "m": 1.0}),
           ("own_random_selection", dane_own_random, {"averaging": "random", "weighting": "num_examples"})]
WRONG = [("selection_reseeded_every_call", dane_reseeded_selection,
          {"averaging": "random", "weighting": "num_examples"}),
         ("b84_against_old_model", dane_b84_old_x, {"control_variate": "scaffnew", "m": 1.0}),
         ("warm_started_local_gd", make_warm_start(), {"local_steps": 5})]
