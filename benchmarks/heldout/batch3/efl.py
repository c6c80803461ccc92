"""EFL (Ma et al., Alg. 1, eqs. (2)-(6), consistent reading): client k with s_k > 0 local steps starts from the
synchronised model x, runs w <- w - eta (grad f_k(w) + lam (U o w - V)) s_k times, Delta^k = R^k + w - x,
sends ST(Delta^k), keeps R^k = Delta^k - ST(Delta^k); server Delta^G = R^G + sum_k p_tau^k ST(Delta^k),
p_tau^k = E p^k / s_k (Sec. 4.2), x+ = x + ST(Delta^G), R^G = Delta^G - ST(Delta^G); u^k = diag I_k (the
Gaussian Fisher diag(A_k) for least squares), v^k = u^k o w, U, V their sums over the reporting clients."""
from __future__ import annotations

import numpy as np

from ._common import hess, st


def _p(clients, weighting):
    if weighting == "uniform":
        return {c.cid: 1.0 / len(clients) for c in clients}
    tot = sum(c.num_examples for c in clients)
    return {c.cid: c.num_examples / tot for c in clients}


def _client(c, x, s, step, lam, U, V):
    w = x.copy()
    for _ in range(s):
        w = w - step * (c.grad(w) + lam * (U * w - V))
    return w


def efl_dict(x, clients, *, state=None, rng=None, draw=None, E=3, step=0.05, lam=0.1, q=None, weighting="num_examples",
             **_):
    """Correct: the consistent reading with the state as a dict (residuals, U, V), compression q."""
    if state is None:
        state = {"U": np.zeros_like(x), "V": np.zeros_like(x), "R_G": np.zeros_like(x), "R": {}}
    steps = draw["steps"] if draw and "steps" in draw else {c.cid: int(rng.integers(0, E + 1)) for c in clients}
    p = _p(clients, weighting)
    U, V = np.asarray(state["U"], float), np.asarray(state["V"], float)
    agg = np.array(state["R_G"], float)
    newU, newV = np.zeros_like(x), np.zeros_like(x)
    R = dict(state["R"])
    for c in clients:
        s = steps[c.cid]
        if s == 0:
            continue
        w = _client(c, x, s, step, lam, U, V)
        D = R.get(c.cid, np.zeros_like(x)) + (w - x)
        sent = st(D, q)
        R[c.cid] = D - sent
        agg += E * p[c.cid] / s * sent
        u = np.diag(hess(c)[0]).copy()
        newU += u; newV += u * w
    b = st(agg, q)
    return x + b, {"U": newU, "V": newV, "R_G": agg - b, "R": R}


class EflServer:
    def __init__(self, d):
        self.res_server = np.zeros(d)
        self.res_client = {}
        self.U = np.zeros(d)
        self.V = np.zeros(d)


def efl_opaque_uncompressed(x, clients, *, state=None, rng=None, draw=None, E=3, step=0.05, lam=0.1, q=None,
                            weighting="num_examples", **_):
    """Correct: an opaque server object, vectorised aggregation, q = None (ST = identity, residuals stay 0)."""
    srv = state if isinstance(state, EflServer) else EflServer(len(x))
    steps = draw["steps"] if draw and "steps" in draw else {c.cid: int(rng.integers(0, E + 1)) for c in clients}
    p = _p(clients, weighting)
    act = [c for c in clients if steps[c.cid] > 0]
    ws = [_client(c, x, steps[c.cid], step, lam, srv.U, srv.V) for c in act]
    Ds = [srv.res_client.get(c.cid, np.zeros_like(x)) + w - x for c, w in zip(act, ws)]
    sent = [st(D, q) for D in Ds]
    for c, D, s_ in zip(act, Ds, sent):
        srv.res_client[c.cid] = D - s_
    coef = np.array([E * p[c.cid] / steps[c.cid] for c in act])
    agg = srv.res_server + (coef @ np.array(sent) if act else 0.0)
    b = st(agg, q)
    srv.res_server = agg - b
    us = [np.diag(hess(c)[0]) for c in act]
    srv.U = np.sum(us, axis=0) if act else np.zeros_like(x)
    srv.V = np.sum([u * w for u, w in zip(us, ws)], axis=0) if act else np.zeros_like(x)
    return x + b, srv


def efl_max_s_instead_of_E(x, clients, *, state=None, rng=None, draw=None, E=3, step=0.05, lam=0.1, q=None,
                           weighting="num_examples", **_):
    """WRONG: the compensation is p^k max_j(s_j) / s_k, with the round's largest step count standing in for E;
    Sec. 4.2's p_tau^k = E p^k / s_k uses the fixed maximum E (equal only when some client completes E)."""
    if state is None:
        state = {"U": np.zeros_like(x), "V": np.zeros_like(x), "R_G": np.zeros_like(x), "R": {}}
    steps = draw["steps"] if draw and "steps" in draw else {c.cid: int(rng.integers(0, E + 1)) for c in clients}
    Emax = max(steps.values())
    p = _p(clients, weighting)
    U, V = np.asarray(state["U"], float), np.asarray(state["V"], float)
    agg = np.array(state["R_G"], float); R = dict(state["R"])
    newU, newV = np.zeros_like(x), np.zeros_like(x)
    for c in clients:
        s = steps[c.cid]
        if s == 0:
            continue
        w = _client(c, x, s, step, lam, U, V)
        D = R.get(c.cid, np.zeros_like(x)) + (w - x)
        sent = st(D, q); R[c.cid] = D - sent
        agg += Emax * p[c.cid] / s * sent
        u = np.diag(hess(c)[0]).copy(); newU += u; newV += u * w
    b = st(agg, q)
    return x + b, {"U": newU, "V": newV, "R_G": agg - b, "R": R}


def efl_double_sync(x, clients, *, state=None, rng=None, draw=None, E=3, step=0.05, lam=0.1, q=None,
                    weighting="num_examples", **_):
    """WRONG: an active client synchronises as omega^k = x + b_{tau-1}, adding the last broadcast to the x it is
    given although x = omega^G already includes it (Step 1: omega^k_{(tau-1)E} + ST(Delta^G), applied once)."""
    if state is None:
        state = {"U": np.zeros_like(x), "V": np.zeros_like(x), "R_G": np.zeros_like(x), "R": {}, "b": np.zeros_like(x)}
    steps = draw["steps"] if draw and "steps" in draw else {c.cid: int(rng.integers(0, E + 1)) for c in clients}
    p = _p(clients, weighting)
    U, V = np.asarray(state["U"], float), np.asarray(state["V"], float)
    base = x + np.asarray(state.get("b", np.zeros_like(x)), float)
    agg = np.array(state["R_G"], float); R = dict(state["R"])
    newU, newV = np.zeros_like(x), np.zeros_like(x)
    for c in clients:
        s = steps[c.cid]
        if s == 0:
            continue
        w = _client(c, base, s, step, lam, U, V)
        D = R.get(c.cid, np.zeros_like(x)) + (w - base)
        sent = st(D, q); R[c.cid] = D - sent
        agg += E * p[c.cid] / s * sent
        u = np.diag(hess(c)[0]).copy(); newU += u; newV += u * w
    b = st(agg, q)
    return x + b, {"U": newU, "V": newV, "R_G": agg - b, "R": R, "b": b}


def efl_st_mean_over_n(x, clients, *, state=None, rng=None, draw=None, E=3, step=0.05, lam=0.1, q=0.5,
                       weighting="num_examples", **_):
    """WRONG: ST's magnitude is the mean of |T^mask| over all n entries instead of over the k kept ones
    (Alg. 2: mu = 1/k sum |T^mask_i|), shrinking every compressed update by k/n."""
    def st_bad(T):
        if q is None:
            return T.copy()
        n = T.size; k = max(int(np.floor(n * q)), 1)
        idx = np.argsort(-np.abs(T))[:k]
        out = np.zeros_like(T); out[idx] = np.abs(T[idx]).sum() / n * np.sign(T[idx])
        return out
    if state is None:
        state = {"U": np.zeros_like(x), "V": np.zeros_like(x), "R_G": np.zeros_like(x), "R": {}}
    steps = draw["steps"] if draw and "steps" in draw else {c.cid: int(rng.integers(0, E + 1)) for c in clients}
    p = _p(clients, weighting)
    U, V = np.asarray(state["U"], float), np.asarray(state["V"], float)
    agg = np.array(state["R_G"], float); R = dict(state["R"])
    newU, newV = np.zeros_like(x), np.zeros_like(x)
    for c in clients:
        s = steps[c.cid]
        if s == 0:
            continue
        w = _client(c, x, s, step, lam, U, V)
        D = R.get(c.cid, np.zeros_like(x)) + (w - x)
        sent = st_bad(D); R[c.cid] = D - sent
        agg += E * p[c.cid] / s * sent
        u = np.diag(hess(c)[0]).copy(); newU += u; newV += u * w
    b = st_bad(agg)
    return x + b, {"U": newU, "V": newV, "R_G": agg - b, "R": R}


CORRECT = [("dict_compressed", efl_dict, {"q": 0.5}),
           ("opaque_uncompressed", efl_opaque_uncompressed, {})]
WRONG = [("max_s_instead_of_E", efl_max_s_instead_of_E, {}),
         ("double_sync", efl_double_sync, {}),
         ("st_mean_over_n", efl_st_mean_over_n, {"q": 0.5})]
