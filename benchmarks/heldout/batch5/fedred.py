"""FedRed (Jiang, Rodomanov & Stich 2024, Algs. 2-3), written from the paper and docs/conformance.md only.

One call = one iteration k. Every client: Alg. 3 (linearized) x_i+ = (x_i + lam eta x~ - eta (g_i + h_i)) /
(1 + lam eta), g_i = grad f_i(x_i) (or the minibatch gradient); Alg. 2 (exact) x_i+ = argmin f_i + <h_i, .> +
lam/2 ||. - x~||^2 + 1/(2 eta) ||. - x_i||^2. One shared coin theta ~ Bernoulli(p) (draw["communicate"] when
given): if 1, x~+ = sum_i w_i x_i+, h_i = grad f(x~+) - grad f_i(x~+) (4), and x_i+ = x~+ with reset.
Initialisation (state=None): x_i = x~ = x, h_i = (4) at x.
"""
from __future__ import annotations

import numpy as np


def _w(clients, weighting):
    m = np.array([1.0 if weighting == "uniform" else c.num_examples for c in clients])
    return m / m.sum()


def _cv(clients, w, z):
    G = {c.cid: c.grad(z) for c in clients}
    gf = sum(wi * G[c.cid] for wi, c in zip(w, clients))
    return {cid: gf - g for cid, g in G.items()}


def _minibatch_grad(c, z, rows):
    Z, y = c.features[rows], c.targets[rows]
    return Z.T @ (Z @ z - y) / len(rows)


def fedred_gd_dict(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized",
                   reset=True, batch_size=None, weighting="uniform", draw=None, **_):
    """Correct. FedRed-GD/-SGD (Alg. 3) and Alg. 2, the contract's dict {"x_i", "h_i"} mutated in place; its
    own coin rng.random() < p when no draw is given."""
    w = _w(clients, weighting)
    if state is None:
        state = {"x_i": {c.cid: x.copy() for c in clients}, "h_i": _cv(clients, w, x)}
    xi, hi = state["x_i"], state["h_i"]
    new = {}
    for c in clients:
        z, h = np.asarray(xi[c.cid], float), np.asarray(hi[c.cid], float)
        if solver == "exact":
            Z, y = c.features, c.targets
            M = Z.T @ Z / len(y) + (lam + 1.0 / eta) * np.eye(len(x))
            new[c.cid] = np.linalg.solve(M, Z.T @ y / len(y) - h + lam * x + z / eta)
        else:
            if batch_size is not None and draw is not None and "batches" in draw:
                g = _minibatch_grad(c, z, np.asarray(draw["batches"][c.cid]))
            else:
                g = c.grad(z)
            new[c.cid] = (z + lam * eta * x - eta * (g + h)) / (1.0 + lam * eta)
    if draw is not None and "communicate" in draw:
        comm = bool(draw["communicate"])
    else:
        comm = rng.random() < p
    xt = x
    if comm:
        xt = sum(wi * new[c.cid] for wi, c in zip(w, clients))
        hi.update(_cv(clients, w, xt))
        if reset:
            new = {c.cid: xt.copy() for c in clients}
    xi.update(new)
    return xt, state


class _RedState:
    __slots__ = ("xt", "xi", "hi")


def fedred_exact_object(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="exact",
                        reset=True, batch_size=None, weighting="uniform", draw=None, **_):
    """Correct (declared solver="exact"): Alg. 2 with exact local solves, state an opaque object with the
    clients in (n, d) arrays ordered by id."""
    cl = sorted(clients, key=lambda c: c.cid)
    w = _w(cl, weighting)
    d = len(x)
    if state is None:
        st = _RedState()
        st.xt = x.copy()
        st.xi = np.tile(x, (len(cl), 1))
        G = np.array([c.grad(x) for c in cl])
        st.hi = (w @ G)[None, :] - G
    else:
        st = state
    Xn = np.empty_like(st.xi)
    for i, c in enumerate(cl):
        Z, y = c.features, c.targets
        if solver == "exact":
            Xn[i] = np.linalg.solve(Z.T @ Z / len(y) + (lam + 1 / eta) * np.eye(d),
                                    Z.T @ y / len(y) - st.hi[i] + lam * st.xt + st.xi[i] / eta)
        else:
            Xn[i] = (st.xi[i] + lam * eta * st.xt - eta * (c.grad(st.xi[i]) + st.hi[i])) / (1 + lam * eta)
    comm = draw["communicate"] if draw is not None and "communicate" in draw else rng.random() < p
    if comm:
        st.xt = w @ Xn
        G = np.array([c.grad(st.xt) for c in cl])
        st.hi = (w @ G)[None, :] - G
        if reset:
            Xn = np.tile(st.xt, (len(cl), 1))
    st.xi = Xn
    return st.xt.copy(), st


def fedred_any_client_coin(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized",
                           reset=True, batch_size=None, weighting="uniform", draw=None, **_):
    """WRONG (own coin with a wrong law): without a draw every client flips its own Bernoulli(p) coin and the
    round communicates when any client's coin is 1, so the communication probability is 1 - (1 - p)^n. The
    paper has one coin theta_k ~ Bernoulli(p) shared by all clients; right only with a single client."""
    w = _w(clients, weighting)
    st = state if state is not None else {"x_i": {c.cid: x.copy() for c in clients}, "h_i": _cv(clients, w, x)}
    xs = {}
    for c in clients:
        z, h = st["x_i"][c.cid], st["h_i"][c.cid]
        if solver == "exact":
            Z, y = c.features, c.targets
            xs[c.cid] = np.linalg.solve(Z.T @ Z / len(y) + (lam + 1 / eta) * np.eye(len(x)),
                                        Z.T @ y / len(y) - h + lam * x + z / eta)
        else:
            xs[c.cid] = (z + lam * eta * x - eta * (c.grad(z) + h)) / (1 + lam * eta)
    if draw is not None and "communicate" in draw:
        comm = draw["communicate"]
    else:
        comm = any(rng.random() < p for _ in clients)
    if not comm:
        return x, {"x_i": xs, "h_i": dict(st["h_i"])}
    xt = sum(wi * xs[c.cid] for wi, c in zip(w, clients))
    return xt, {"x_i": {c.cid: (xt.copy() if reset else xs[c.cid]) for c in clients}, "h_i": _cv(clients, w, xt)}


def fedred_cv_at_old_reference(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5,
                               solver="linearized", reset=True, batch_size=None, weighting="uniform", draw=None,
                               **_):
    """WRONG: on communication the control variates are refreshed at the old reference point x~_k (computed
    before the average replaces it) instead of (4) at x~_{k+1}. Invisible on an iteration without
    communication and at a fixed point."""
    w = _w(clients, weighting)
    st = state if state is not None else {"x_i": {c.cid: x.copy() for c in clients}, "h_i": _cv(clients, w, x)}
    xs = {}
    for c in clients:
        z, h = np.asarray(st["x_i"][c.cid]), np.asarray(st["h_i"][c.cid])
        if solver == "exact":
            Z, y = c.features, c.targets
            xs[c.cid] = np.linalg.solve(Z.T @ Z / len(y) + (lam + 1 / eta) * np.eye(len(x)),
                                        Z.T @ y / len(y) - h + lam * x + z / eta)
        else:
            xs[c.cid] = (z + lam * eta * x - eta * (c.grad(z) + h)) / (1 + lam * eta)
    comm = draw["communicate"] if draw is not None and "communicate" in draw else rng.random() < p
    h_new = dict(st["h_i"])
    xt = x
    if comm:
        h_new = _cv(clients, w, x)           # slip: x is still the old reference point here
        xt = sum(wi * xs[c.cid] for wi, c in zip(w, clients))
        if reset:
            xs = {cid: xt.copy() for cid in xs}
    return xt, {"x_i": xs, "h_i": h_new}


def fedred_grad_at_reference(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized",
                             reset=True, batch_size=None, weighting="uniform", draw=None, **_):
    """WRONG (needs two iterations without communication to show, with reset): Alg. 3's gradient is taken at
    the reference point x~ instead of the local iterate x_i (g_i = grad f_i(x~)). Right after a reset
    x_i = x~, so the first local step after every communication is exact; the second is not."""
    w = _w(clients, weighting)
    st = state if state is not None else {"x_i": {c.cid: x.copy() for c in clients}, "h_i": _cv(clients, w, x)}
    xs = {}
    for c in clients:
        z, h = np.asarray(st["x_i"][c.cid]), np.asarray(st["h_i"][c.cid])
        if solver == "exact":
            Z, y = c.features, c.targets
            xs[c.cid] = np.linalg.solve(Z.T @ Z / len(y) + (lam + 1 / eta) * np.eye(len(x)),
                                        Z.T @ y / len(y) - h + lam * x + z / eta)
        else:
            xs[c.cid] = (z + lam * eta * x - eta * (c.grad(x) + h)) / (1 + lam * eta)
    comm = draw["communicate"] if draw is not None and "communicate" in draw else rng.random() < p
    if not comm:
        return x, {"x_i": xs, "h_i": dict(st["h_i"])}
    xt = sum(wi * xs[c.cid] for wi, c in zip(w, clients))
    return xt, {"x_i": {c.cid: (xt.copy() if reset else xs[c.cid]) for c in clients}, "h_i": _cv(clients, w, xt)}


CORRECT = [
    ("fedred_gd_dict", fedred_gd_dict, {}),
    ("fedred_exact_object", fedred_exact_object, {"solver": "exact"}),
]
WRONG = [
    ("fedred_any_client_coin", fedred_any_client_coin, {}),
    ("fedred_cv_at_old_reference", fedred_cv_at_old_reference, {}),
    ("fedred_grad_at_reference", fedred_grad_at_reference, {}),
]
