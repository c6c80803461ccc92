"""FedRed (Jiang, Rodomanov & Stich 2024, Algs. 2-3), one call per iteration k. Each client:
Alg. 2 (solver="exact"): x_i+ = argmin f_i + <h_i, .> + lam/2 ||. - x~||^2 + 1/(2 eta) ||. - x_i||^2
= (A_i + (lam + 1/eta) I)^{-1}(b_i - h_i + lam x~ + x_i/eta);
Alg. 3 (solver="linearized"): x_i+ = (x_i + lam eta x~ - eta (g_i + h_i)) / (1 + lam eta), g_i = grad f_i(x_i)
(or the minibatch gradient of draw["batches"][cid]). Then one shared coin theta ~ Bernoulli(p) (draw["communicate"]):
on 1, x~+ = sum_i w_i x_i+, h_i = grad f(x~+) - grad f_i(x~+) (4), and x_i = x~+ when reset.
Init: x_i = x~ = x0, h_i from (4) at x0."""
from __future__ import annotations

import numpy as np

from ._common import hess_lin


def _w(clients, weighting):
    if weighting == "num_examples":
        t = float(sum(c.num_examples for c in clients))
        return {c.cid: c.num_examples / t for c in clients}
    return {c.cid: 1.0 / len(clients) for c in clients}


def _cv(clients, w, z):
    g = {c.cid: c.grad(z) for c in clients}
    gbar = sum(w[k] * g[k] for k in g)
    return {k: gbar - g[k] for k in g}


def _grad(c, xi, draw):
    rows = (draw or {}).get("batches", {}).get(c.cid) if draw else None
    if rows is None:
        return c.grad(xi)
    Z = np.asarray(c.features)[np.asarray(rows)]
    y = np.asarray(c.targets)[np.asarray(rows)]
    return Z.T @ (Z @ xi - y) / len(rows)


def _local(c, xi, xt, h, lam, eta, solver, draw):
    if solver == "exact":
        A, b = hess_lin(c)
        return np.linalg.solve(A + (lam + 1.0 / eta) * np.eye(len(xt)), b - h + lam * xt + xi / eta)
    return (xi + lam * eta * xt - eta * (_grad(c, xi, draw) + h)) / (1.0 + lam * eta)


# ---------------------------------------------------------------- correct

class _RedState:
    def __init__(self, xi, hi):
        self.xi, self.hi = xi, hi


def fedred_opaque(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized", reset=True,
                  batch_size=None, weighting="uniform", draw=None, **_):
    """Correct: Algs. 2 and 3 with the state in an object; its own coin rng.random() < p when no draw is given."""
    w = _w(clients, weighting)
    if state is None:
        state = _RedState({c.cid: x.copy() for c in clients}, _cv(clients, w, x))
    xi = {c.cid: _local(c, state.xi[c.cid], x, state.hi[c.cid], lam, eta, solver, draw) for c in clients}
    comm = draw["communicate"] if draw and "communicate" in draw else bool(rng.random() < p)
    if not comm:
        return x.copy(), _RedState(xi, dict(state.hi))
    xt = sum(w[k] * xi[k] for k in xi)
    hi = _cv(clients, w, xt)
    if reset:
        xi = {k: xt.copy() for k in xi}
    return xt, _RedState(xi, hi)


def fedred_inplace(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized", reset=True,
                   batch_size=None, weighting="uniform", draw=None, **_):
    """Correct: the paper's dict layout {"x_i", "h_i"} updated in place (the given state is mutated and returned);
    clients visited in reverse order."""
    w = _w(clients, weighting)
    if state is None:
        state = {"x_i": {c.cid: x.copy() for c in clients}, "h_i": _cv(clients, w, x)}
    for c in reversed(clients):
        xi = np.asarray(state["x_i"][c.cid], dtype=np.float64)
        hi = np.asarray(state["h_i"][c.cid], dtype=np.float64)
        state["x_i"][c.cid] = _local(c, xi, x, hi, lam, eta, solver, draw)
    comm = draw.get("communicate") if draw and "communicate" in draw else rng.random() < p
    if comm:
        xt = np.zeros_like(x)
        for c in reversed(clients):
            xt += w[c.cid] * state["x_i"][c.cid]
        state["h_i"].update(_cv(clients, w, xt))
        if reset:
            for c in clients:
                state["x_i"][c.cid] = xt.copy()
        return xt, state
    return x.copy(), state


# ---------------------------------------------------------------- wrong

def fedred_any_client_coin(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized",
                           reset=True, batch_size=None, weighting="uniform", draw=None, **_):
    """WRONG: without a draw every client flips its own Bernoulli(p) coin and the round communicates when any client
    asks for it: probability 1 - (1-p)^n, not p (Alg. 2 draws one shared theta_k ~ Bernoulli(p)); right for n = 1."""
    w = _w(clients, weighting)
    st = state or {"x_i": {c.cid: x.copy() for c in clients}, "h_i": _cv(clients, w, x)}
    xi = {c.cid: _local(c, np.asarray(st["x_i"][c.cid], dtype=float), x, np.asarray(st["h_i"][c.cid], dtype=float),
                        lam, eta, solver, draw) for c in clients}
    if draw and "communicate" in draw:
        comm = draw["communicate"]
    else:
        comm = bool(np.any(rng.random(len(clients)) < p))
    if not comm:
        return x.copy(), {"x_i": xi, "h_i": dict(st["h_i"])}
    xt = sum(w[k] * xi[k] for k in xi)
    return xt, {"x_i": {k: xt.copy() for k in xi} if reset else xi, "h_i": _cv(clients, w, xt)}


def fedred_cv_at_old_reference(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized",
                               reset=True, batch_size=None, weighting="uniform", draw=None, **_):
    """WRONG: on communication the control variates are recomputed before the new reference point is formed, i.e.
    (4) at the old x~_k instead of x~_{k+1}; they always lag one communication behind (Alg. 2: h_{i,k+1} at x~_{k+1})."""
    w = _w(clients, weighting)
    st = state or {"x_i": {c.cid: x.copy() for c in clients}, "h_i": _cv(clients, w, x)}
    xi = {c.cid: _local(c, np.asarray(st["x_i"][c.cid], dtype=float), x, np.asarray(st["h_i"][c.cid], dtype=float),
                        lam, eta, solver, draw) for c in clients}
    comm = draw["communicate"] if draw and "communicate" in draw else bool(rng.random() < p)
    if not comm:
        return x.copy(), {"x_i": xi, "h_i": dict(st["h_i"])}
    h_new = _cv(clients, w, x)
    xt = sum(w[k] * xi[k] for k in xi)
    return xt, {"x_i": {k: xt.copy() for k in xi} if reset else xi, "h_i": h_new}


class _DiffState:
    def __init__(self, xi, hi, acc):
        self.xi, self.hi, self.acc = xi, hi, acc


def fedred_error_diffusion_coin(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized",
                                reset=True, batch_size=None, weighting="uniform", draw=None, **_):
    """WRONG: its own "coin" is deterministic error diffusion (acc += p; communicate when acc >= 1), which
    communicates with exactly the frequency p but periodically; Alg. 2's theta_k are independent Bernoulli(p)
    (the analysis takes expectations over them), not a schedule."""
    w = _w(clients, weighting)
    if state is None:
        state = _DiffState({c.cid: x.copy() for c in clients}, _cv(clients, w, x), 0.0)
    xi = {c.cid: _local(c, state.xi[c.cid], x, state.hi[c.cid], lam, eta, solver, draw) for c in clients}
    acc = state.acc
    if draw and "communicate" in draw:
        comm = draw["communicate"]
    else:
        acc += p
        comm = acc >= 1.0 - 1e-12
        if comm:
            acc -= 1.0
    if not comm:
        return x.copy(), _DiffState(xi, dict(state.hi), acc)
    xt = sum(w[k] * xi[k] for k in xi)
    return xt, _DiffState({k: xt.copy() for k in xi} if reset else xi, _cv(clients, w, xt), acc)


def fedred_list_by_cid(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized",
                       reset=True, batch_size=None, weighting="uniform", draw=None, **_):
    """WRONG (crashes): local iterates and control variates kept in lists of length n indexed by the client id
    (xs[c.cid]); ids are labels, not positions: IndexError for ids >= n (and another client's iterate for ids that
    are a permutation of the positions)."""
    w = _w(clients, weighting)
    n = len(clients)
    if state is None:
        h0 = _cv(clients, w, x)
        xs = [x.copy() for _ in range(n)]
        hs = [None] * n
        for c in clients:
            hs[c.cid] = h0[c.cid]
    else:
        xs, hs = [v.copy() for v in state[0]], list(state[1])
    for c in clients:
        xs[c.cid] = _local(c, xs[c.cid], x, hs[c.cid], lam, eta, solver, draw)
    comm = draw["communicate"] if draw and "communicate" in draw else bool(rng.random() < p)
    if not comm:
        return x.copy(), (xs, hs)
    xt = sum(w[c.cid] * xs[c.cid] for c in clients)
    h1 = _cv(clients, w, xt)
    for c in clients:
        hs[c.cid] = h1[c.cid]
        if reset:
            xs[c.cid] = xt.copy()
    return xt, (xs, hs)


def fedred_h_zero_init(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized",
                       reset=True, batch_size=None, weighting="uniform", draw=None, **_):
    """WRONG initialisation: from state=None the control variates start at 0 (as SCAFFOLD's do) instead of (4) at
    x~_0, h_{i,0} = grad f(x~_0) - grad f_i(x~_0) (Alg. 2's initialisation); the first iterations until a
    communication run FedProx-like local steps."""
    w = _w(clients, weighting)
    st = state or {"x_i": {c.cid: x.copy() for c in clients}, "h_i": {c.cid: np.zeros_like(x) for c in clients}}
    xi = {c.cid: _local(c, np.asarray(st["x_i"][c.cid], float), x, np.asarray(st["h_i"][c.cid], float), lam, eta,
                        solver, draw) for c in clients}
    comm = draw["communicate"] if draw and "communicate" in draw else bool(rng.random() < p)
    if not comm:
        return x.copy(), {"x_i": xi, "h_i": dict(st["h_i"])}
    xt = sum(w[k] * xi[k] for k in xi)
    return xt, {"x_i": {k: xt.copy() for k in xi} if reset else xi, "h_i": _cv(clients, w, xt)}


CORRECT = [
    ("fedred_opaque_alg3", fedred_opaque, {}),
    ("fedred_inplace_alg2_no_reset", fedred_inplace, {"solver": "exact", "reset": False}),
]
WRONG = [
    ("fedred_any_client_coin", fedred_any_client_coin, {}),
    ("fedred_cv_at_old_reference", fedred_cv_at_old_reference, {}),
    ("fedred_error_diffusion_coin", fedred_error_diffusion_coin, {}),
    ("fedred_list_by_cid", fedred_list_by_cid, {}),
    ("fedred_h_zero_init", fedred_h_zero_init, {}),
]
CRASH_IS_THE_BUG = ("fedred_list_by_cid",)
