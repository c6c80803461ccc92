"""FedRed (Jiang, Rodomanov & Stich 2024, Algs. 2-3), one call per iteration k, x = x~_k:
Alg. 2: x_i+ = argmin f_i + <h_i, .> + lam/2 ||. - x~||^2 + 1/(2 eta) ||. - x_i||^2
        = (A_i + (lam + 1/eta) I)^{-1} (b_i - h_i + lam x~ + x_i/eta);
Alg. 3: x_i+ = (x_i + lam eta x~ - eta (grad f_i(x_i) + h_i)) / (1 + lam eta);
theta ~ Bernoulli(p) shared: if 1, x~+ = sum w_i x_i+, (reset) x_i+ = x~+, h_i = grad f(x~+) - grad f_i(x~+) (4).
Init (state=None): x_i = x~_0, h_i = (4) at x~_0."""
from __future__ import annotations

import numpy as np

from ._common import hess, weights


def _cv(clients, w, xt):
    gs = {c.cid: c.grad(xt) for c in clients}
    gf = sum(wi * gs[c.cid] for wi, c in zip(w, clients))
    return {cid: gf - g for cid, g in gs.items()}


def _step(c, xi, hi, xt, lam, eta, solver):
    if solver == "exact":
        A, b = hess(c)
        return np.linalg.solve(A + (lam + 1 / eta) * np.eye(len(xt)), b - hi + lam * xt + xi / eta)
    return (xi + lam * eta * xt - eta * (c.grad(xi) + hi)) / (1 + lam * eta)


class RedState:
    """Opaque per-client store: (local iterate, control variate) by id."""

    def __init__(self):
        self.loc = {}


def fedred_opaque(x, clients, *, state=None, rng=None, draw=None, lam=1.0, eta=0.2, p=0.5, solver="linearized",
                  reset=True, weighting="uniform", **_):
    """Correct: an opaque object state, updated in place; its own Bernoulli(p) coin when no draw is given."""
    w = weights(clients, weighting)
    if not isinstance(state, RedState):
        state = RedState()
        hs = _cv(clients, w, x)
        state.loc = {c.cid: (x.copy(), hs[c.cid]) for c in clients}
    new = {c.cid: _step(c, *state.loc[c.cid], x, lam, eta, solver) for c in clients}
    comm = draw["communicate"] if draw and "communicate" in draw else bool(rng.random() < p)
    if not comm:
        for cid, xi in new.items():
            state.loc[cid] = (xi, state.loc[cid][1])
        return x.copy(), state
    xt = sum(wi * new[c.cid] for wi, c in zip(w, clients))
    hs = _cv(clients, w, xt)
    for c in clients:
        state.loc[c.cid] = (xt.copy() if reset else new[c.cid], hs[c.cid])
    return xt, state


def fedred_exact_inplace(x, clients, *, state=None, rng=None, draw=None, lam=1.0, eta=0.2, p=0.5, solver="exact",
                         reset=False, weighting="uniform", **_):
    """Correct: Alg. 2 (exact local solve) without reset, the contract's dict {"x_i", "h_i"} updated in place,
    clients in reverse order."""
    w = weights(clients, weighting)
    if state is None:
        hs = _cv(clients, w, x)
        state = {"x_i": {c.cid: x.copy() for c in clients}, "h_i": hs}
    for c in reversed(clients):
        state["x_i"][c.cid] = _step(c, np.asarray(state["x_i"][c.cid], float), np.asarray(state["h_i"][c.cid], float),
                                    x, lam, eta, solver)
    comm = draw["communicate"] if draw and "communicate" in draw else bool(rng.random() < p)
    if not comm:
        return x.copy(), state
    xt = sum(wi * state["x_i"][c.cid] for wi, c in zip(w, clients))
    state["h_i"].update(_cv(clients, w, xt))
    if reset:
        for c in clients:
            state["x_i"][c.cid] = xt.copy()
    return xt, state


def fedred_credit_coin(x, clients, *, state=None, rng=None, draw=None, lam=1.0, eta=0.2, p=0.5,
                       solver="linearized", reset=True, weighting="uniform", **_):
    """WRONG: its own coin is a deterministic credit counter kept in the state (credit += p; communicate when it
    reaches 1): the right long-run frequency p, but not theta_k ~ Bernoulli(p) i.i.d. (Alg. 2); at p = 1/2 it
    communicates exactly every other iteration."""
    w = weights(clients, weighting)
    if state is None:
        state = {"x_i": {c.cid: x.copy() for c in clients}, "h_i": _cv(clients, w, x), "credit": 0.0}
    xi = {c.cid: _step(c, np.asarray(state["x_i"][c.cid], float), np.asarray(state["h_i"][c.cid], float), x, lam,
                       eta, solver) for c in clients}
    credit = state.get("credit", 0.0)
    if draw and "communicate" in draw:
        comm = draw["communicate"]
    else:
        credit += p
        comm = credit >= 1.0 - 1e-12
        if comm:
            credit -= 1.0
    if not comm:
        return x.copy(), {"x_i": xi, "h_i": dict(state["h_i"]), "credit": credit}
    xt = sum(wi * xi[c.cid] for wi, c in zip(w, clients))
    return xt, {"x_i": {cid: (xt.copy() if reset else v) for cid, v in xi.items()}, "h_i": _cv(clients, w, xt),
                "credit": credit}


def fedred_zero_initial_cv(x, clients, *, state=None, rng=None, draw=None, lam=1.0, eta=0.2, p=0.5,
                           solver="linearized", reset=True, weighting="uniform", **_):
    """WRONG: from state=None the control variates start at 0 (computed only at communications), where
    Alg. 2's initialisation sets h_{i,0} = grad f(x~_0) - grad f_i(x~_0)."""
    w = weights(clients, weighting)
    if state is None:
        state = {"x_i": {c.cid: x.copy() for c in clients}, "h_i": {c.cid: np.zeros_like(x) for c in clients}}
    xi = {c.cid: _step(c, np.asarray(state["x_i"][c.cid], float), np.asarray(state["h_i"][c.cid], float), x, lam,
                       eta, solver) for c in clients}
    comm = draw["communicate"] if draw and "communicate" in draw else bool(rng.random() < p)
    if not comm:
        return x.copy(), {"x_i": xi, "h_i": dict(state["h_i"])}
    xt = sum(wi * xi[c.cid] for wi, c in zip(w, clients))
    return xt, {"x_i": {cid: (xt.copy() if reset else v) for cid, v in xi.items()}, "h_i": _cv(clients, w, xt)}


def fedred_cv_at_local(x, clients, *, state=None, rng=None, draw=None, lam=1.0, eta=0.2, p=0.5,
                       solver="linearized", reset=False, weighting="uniform", **_):
    """WRONG: at a communication each client refreshes h_i = grad f(x~+) - grad f_i(x_i+) with its own local
    iterate in the second gradient, where (4) evaluates both at x~+; the same thing with reset (x_i+ = x~+),
    different without."""
    w = weights(clients, weighting)
    if state is None:
        state = {"x_i": {c.cid: x.copy() for c in clients}, "h_i": _cv(clients, w, x)}
    xi = {c.cid: _step(c, np.asarray(state["x_i"][c.cid], float), np.asarray(state["h_i"][c.cid], float), x, lam,
                       eta, solver) for c in clients}
    comm = draw["communicate"] if draw and "communicate" in draw else bool(rng.random() < p)
    if not comm:
        return x.copy(), {"x_i": xi, "h_i": dict(state["h_i"])}
    xt = sum(wi * xi[c.cid] for wi, c in zip(w, clients))
    gf = sum(wi * c.grad(xt) for wi, c in zip(w, clients))
    xi_new = {cid: (xt.copy() if reset else v) for cid, v in xi.items()}
    return xt, {"x_i": xi_new, "h_i": {c.cid: gf - c.grad(xi_new[c.cid]) for c in clients}}


CORRECT = [("opaque_object", fedred_opaque, {}),
           ("alg2_exact_no_reset_in_place", fedred_exact_inplace, {"solver": "exact", "reset": False})]
WRONG = [("credit_counter_coin", fedred_credit_coin, {}),
         ("zero_initial_control_variates", fedred_zero_initial_cv, {}),
         ("cv_at_local_iterate_no_reset", fedred_cv_at_local, {"reset": False})]
