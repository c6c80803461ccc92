"""FedRed (Jiang, Rodomanov & Stich 2024, Algs. 2-3), one call per iteration k; x is the reference point x~.
Alg. 2: x_i+ = (A_i + (lam + 1/eta) I)^{-1} (b_i - h_i + lam x~ + x_i/eta); Alg. 3 (linearized):
x_i+ = (x_i + lam eta x~ - eta (g_i + h_i)) / (1 + lam eta). Coin theta ~ Bernoulli(p) (the kit's
draw["communicate"] when given): x~+ = sum w_i x_i+, h_i = grad f(x~+) - grad f_i(x~+) (4), x_i = x~+ with reset.
Start: x_i = x~_0, h_i = (4) at x~_0."""
from __future__ import annotations

import math

import numpy as np

from ._common import quad, weights


def _cv(AB, w, cids, x):
    gf = sum(wi * (AB[c][0] @ x - AB[c][1]) for wi, c in zip(w, cids))
    return {c: gf - (AB[c][0] @ x - AB[c][1]) for c in cids}


def fedred_dict_exact(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, reset=True,
                      weighting="uniform", draw=None, **_):
    """Correct: Alg. 2 (exact local solver), the paper's mapping, own coin rng.random() < p without a draw."""
    cids = [c.cid for c in clients]
    AB = {c.cid: quad(c) for c in clients}
    w = weights(clients, weighting)
    if state is None:
        state = {"x_i": {c: x.copy() for c in cids}, "h_i": _cv(AB, w, cids, x)}
    I = np.eye(len(x))
    xi = {c: np.linalg.solve(AB[c][0] + (lam + 1 / eta) * I,
                             AB[c][1] - state["h_i"][c] + lam * x + state["x_i"][c] / eta) for c in cids}
    comm = draw["communicate"] if draw is not None and "communicate" in draw else bool(rng.random() < p)
    if not comm:
        return x.copy(), {"x_i": xi, "h_i": dict(state["h_i"])}
    xn = sum(wi * xi[c] for wi, c in zip(w, cids))
    return xn, {"x_i": {c: xn.copy() for c in cids} if reset else xi, "h_i": _cv(AB, w, cids, xn)}


class _Red:
    __slots__ = ("X", "H", "order")


def fedred_opaque_sgd(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, reset=True,
                      batch_size=2, weighting="uniform", draw=None, **_):
    """Correct: FedRed-SGD (Alg. 3 with minibatch gradients, the kit's draw["batches"] when given), state an
    opaque object holding (n, d) arrays."""
    cids = [c.cid for c in clients]
    AB = {c.cid: quad(c) for c in clients}
    w = weights(clients, weighting)
    if state is None:
        state = _Red(); state.order = cids
        state.X = np.repeat(x[None], len(cids), 0)
        hv = _cv(AB, w, cids, x); state.H = np.array([hv[c] for c in cids])
    pos = {c: r for r, c in enumerate(state.order)}
    new = _Red(); new.order = cids
    new.X = np.empty((len(cids), len(x))); new.H = np.array([state.H[pos[c]] for c in cids])
    for r, c in enumerate(clients):
        Z = np.asarray(c.features); y = np.asarray(c.targets)
        if draw is not None and "batches" in draw:
            rows = np.asarray(draw["batches"][c.cid])
        else:
            rows = rng.choice(len(y), min(batch_size or len(y), len(y)), replace=False)
        xi = state.X[pos[c.cid]]
        g = Z[rows].T @ (Z[rows] @ xi - y[rows]) / len(rows)
        new.X[r] = (xi + lam * eta * x - eta * (g + new.H[r])) / (1 + lam * eta)
    comm = draw["communicate"] if draw is not None and "communicate" in draw else bool(rng.random() < p)
    if not comm:
        return x.copy(), new
    xn = w @ new.X
    if reset:
        new.X = np.repeat(xn[None], len(cids), 0)
    hv = _cv(AB, w, cids, xn); new.H = np.array([hv[c] for c in cids])
    return xn, new


def _linearized_round(x, clients, state, lam, eta, w, AB, cids):
    return {c: (state["x_i"][c] + lam * eta * x - eta * (AB[c][0] @ state["x_i"][c] - AB[c][1] + state["h_i"][c]))
            / (1 + lam * eta) for c in cids}


def fedred_coin_gt_p(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, reset=True,
                     weighting="uniform", draw=None, **_):
    """WRONG: own coin `rng.random() > p`, i.e. Bernoulli(1 - p) (theta ~ Bernoulli(p)); right at p = 0.5."""
    cids = [c.cid for c in clients]; AB = {c.cid: quad(c) for c in clients}; w = weights(clients, weighting)
    state = state or {"x_i": {c: x.copy() for c in cids}, "h_i": _cv(AB, w, cids, x)}
    xi = _linearized_round(x, clients, state, lam, eta, w, AB, cids)
    comm = draw["communicate"] if draw is not None and "communicate" in draw else bool(rng.random() > p)
    if not comm:
        return x.copy(), {"x_i": xi, "h_i": state["h_i"]}
    xn = sum(wi * xi[c] for wi, c in zip(w, cids))
    return xn, {"x_i": {c: xn.copy() for c in cids} if reset else xi, "h_i": _cv(AB, w, cids, xn)}


def fedred_forced_communication(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, reset=True,
                                weighting="uniform", draw=None, **_):
    """WRONG: a "staleness cap" that communicates whenever ceil(1/p) iterations passed without one, on top of
    the coin; the law is no longer Bernoulli(p) per iteration (frequency 2/3 at p = 0.5)."""
    cids = [c.cid for c in clients]; AB = {c.cid: quad(c) for c in clients}; w = weights(clients, weighting)
    state = state or {"x_i": {c: x.copy() for c in cids}, "h_i": _cv(AB, w, cids, x), "since": 0}
    xi = _linearized_round(x, clients, state, lam, eta, w, AB, cids)
    since = state.get("since", 0) + 1
    if draw is not None and "communicate" in draw:
        comm = draw["communicate"]
    else:
        comm = bool(rng.random() < p) or since >= math.ceil(1 / p)
    if not comm:
        return x.copy(), {"x_i": xi, "h_i": state["h_i"], "since": since}
    xn = sum(wi * xi[c] for wi, c in zip(w, cids))
    return xn, {"x_i": {c: xn.copy() for c in cids} if reset else xi, "h_i": _cv(AB, w, cids, xn), "since": 0}


class _Anchored:
    def __init__(self, anchor, xi, hi):
        self.anchor, self.xi, self.hi = anchor, xi, hi


def fedred_stale_anchor(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, reset=True,
                        weighting="uniform", draw=None, **_):
    """WRONG: the lam-pull's reference point is kept in the opaque state from the start and never moved to the
    new x~ at a communication (Alg. 3 pulls towards the current x~_k); visible after the first communication."""
    cids = [c.cid for c in clients]; AB = {c.cid: quad(c) for c in clients}; w = weights(clients, weighting)
    if state is None:
        state = _Anchored(x.copy(), {c: x.copy() for c in cids}, _cv(AB, w, cids, x))
    xt = state.anchor
    xi = {c: (state.xi[c] + lam * eta * xt - eta * (AB[c][0] @ state.xi[c] - AB[c][1] + state.hi[c]))
          / (1 + lam * eta) for c in cids}
    comm = draw["communicate"] if draw is not None and "communicate" in draw else bool(rng.random() < p)
    if not comm:
        return x.copy(), _Anchored(xt, xi, state.hi)
    xn = sum(wi * xi[c] for wi, c in zip(w, cids))
    return xn, _Anchored(xt, {c: xn.copy() for c in cids} if reset else xi, _cv(AB, w, cids, xn))


CORRECT = [("dict_state_exact_no_reset", fedred_dict_exact, {"solver": "exact", "reset": False}),
           ("opaque_arrays_fedred_sgd", fedred_opaque_sgd, {"batch_size": 2})]
WRONG = [("own_coin_rng_gt_p (p=0.5 default)", fedred_coin_gt_p, {}),
         ("own_coin_with_staleness_cap", fedred_forced_communication, {}),
         ("lam_pull_to_stale_anchor_opaque", fedred_stale_anchor, {})]
