"""EFL (Ma et al., Alg. 1 with ST of Alg. 2), the consistent reading: every client is called each round with s_k
local steps (draw["steps"][cid]; 0 = inactive). An active client starts from the server model w^G (the "download
w^G" catch-up), runs s_k steps w <- w - eta (grad f_k(w) + lam (U o w - V)), Delta^k = R^k + (w - w^G),
c^k = ST(Delta^k), R^k = Delta^k - c^k; the server Delta^G = R^G + sum_k p_tau^k c^k with p_tau^k = E p^k / s_k
("efl") or p^k ("fedavg"), b = ST(Delta^G), R^G = Delta^G - b, w^G+ = w^G + b. q = None: ST = identity.
p^k = n_k / n over all N clients (or 1/N). U, V: sums of u^k = diag(Fisher) = diag(Z^T Z/m), v^k = u^k o w_end."""
from __future__ import annotations

import numpy as np

from ._common import hess_lin, st


def _p(clients, weighting):
    if weighting == "uniform":
        return {c.cid: 1.0 / len(clients) for c in clients}
    n = float(sum(c.num_examples for c in clients))
    return {c.cid: c.num_examples / n for c in clients}


def _steps(draw, clients, E):
    if draw and "steps" in draw:
        return {c.cid: int(draw["steps"][c.cid]) for c in clients}
    return {c.cid: E for c in clients}


def _train(c, x, s, step, lam, U, V):
    w = x.copy()
    for _ in range(s):
        w = w - step * (c.grad(w) + lam * (U * w - V))
    return w


# ---------------------------------------------------------------- correct

def efl_dict_compressed(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
                        variant="consistent", weighting="num_examples", draw=None, **_):
    """Correct: residuals in a dict state {"R_k", "R_G", "U", "V"}; checked with compression q = 0.5."""
    d = len(x)
    S = state if state is not None else {"R_k": {}, "R_G": np.zeros(d), "U": np.zeros(d), "V": np.zeros(d)}
    p = _p(clients, weighting)
    s = _steps(draw, clients, E)
    R_k = dict(S["R_k"])
    agg = np.zeros(d)
    U, V = np.zeros(d), np.zeros(d)
    for c in clients:
        if s[c.cid] <= 0:
            continue
        w = _train(c, x, s[c.cid], step, lam, S["U"], S["V"])
        D = R_k.get(c.cid, np.zeros(d)) + (w - x)
        comp = st(D, q)
        R_k[c.cid] = D - comp
        coef = E * p[c.cid] / s[c.cid] if aggregation == "efl" else p[c.cid]
        agg += coef * comp
        u = np.diag(hess_lin(c)[0])
        U += u
        V += u * w
    DG = S["R_G"] + agg
    b = st(DG, q)
    return x + b, {"R_k": R_k, "R_G": DG - b, "U": U, "V": V}


class EflClient:
    def __init__(self, d):
        self.residual = np.zeros(d)


class EflServer:
    """Correct: object-oriented (a server object holding client objects, the state it returns is the server);
    weighting and compression as declared (checked with q = 0.4 and uniform p^k)."""

    def __init__(self, d):
        self.residual = np.zeros(d)
        self.clients = {}
        self.U = np.zeros(d)
        self.V = np.zeros(d)

    @staticmethod
    def round(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
              variant="consistent", weighting="num_examples", draw=None, **_):
        srv = state if state is not None else EflServer(len(x))
        p = _p(clients, weighting)
        s = _steps(draw, clients, E)
        total = np.zeros(len(x))
        U, V = np.zeros(len(x)), np.zeros(len(x))
        for c in clients:
            k = s[c.cid]
            if k == 0:
                continue
            cl = srv.clients.setdefault(c.cid, EflClient(len(x)))
            w = _train(c, x, k, step, lam, srv.U, srv.V)
            upd = cl.residual + w - x
            sent = st(upd, q)
            cl.residual = upd - sent
            total += (E * p[c.cid] / k if aggregation == "efl" else p[c.cid]) * sent
            u = np.diag(hess_lin(c)[0])
            U, V = U + u, V + u * w
        srv.U, srv.V = U, V
        dg = srv.residual + total
        bcast = st(dg, q)
        srv.residual = dg - bcast
        return x + bcast, srv


# ---------------------------------------------------------------- wrong

def efl_p_over_active(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
                      variant="consistent", weighting="num_examples", draw=None, **_):
    """WRONG: p^k renormalised over the active clients of the round (s_k > 0); the declared scheme
    (aggregation="efl", Section 4.2) is p_tau^k = E p^k / s_k with the p^k of eq. (1) over all N clients (an inactive
    client contributes nothing, the others keep their weight)."""
    d = len(x)
    S = state or {"R_k": {}, "R_G": np.zeros(d)}
    s = _steps(draw, clients, E)
    active = [c for c in clients if s[c.cid] > 0]
    p = _p(active, weighting) if active else {}
    R_k = dict(S["R_k"])
    agg = np.zeros(d)
    for c in active:
        w = _train(c, x, s[c.cid], step, lam, S.get("U", np.zeros(d)), S.get("V", np.zeros(d)))
        D = R_k.get(c.cid, np.zeros(d)) + w - x
        comp = st(D, q)
        R_k[c.cid] = D - comp
        agg += (E * p[c.cid] / s[c.cid] if aggregation == "efl" else p[c.cid]) * comp
    DG = S["R_G"] + agg
    b = st(DG, q)
    return x + b, {"R_k": R_k, "R_G": DG - b}


def efl_steps_plus_one(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
                       variant="consistent", weighting="num_examples", draw=None, **_):
    """WRONG: the compensation p_tau^k = E p^k / (s_k + 1), counting the steps j = 0..s_k as eq. (6)'s misprinted sum
    does; Section 4.2's scheme is E p^k / s_k (s_k local updates were made)."""
    d = len(x)
    S = state or {"R_k": {}, "R_G": np.zeros(d)}
    p = _p(clients, weighting)
    s = _steps(draw, clients, E)
    R_k = dict(S["R_k"])
    agg = np.zeros(d)
    for c in clients:
        if s[c.cid] == 0:
            continue
        w = _train(c, x, s[c.cid], step, lam, S.get("U", np.zeros(d)), S.get("V", np.zeros(d)))
        D = R_k.get(c.cid, np.zeros(d)) + w - x
        comp = st(D, q)
        R_k[c.cid] = D - comp
        agg += (E * p[c.cid] / (s[c.cid] + 1) if aggregation == "efl" else p[c.cid]) * comp
    DG = S["R_G"] + agg
    b = st(DG, q)
    return x + b, {"R_k": R_k, "R_G": DG - b}


def efl_server_residual_dropped(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None,
                                aggregation="efl", variant="consistent", weighting="num_examples", draw=None, **_):
    """WRONG: the server compresses its aggregate without error feedback (R^G never carried to the next round);
    eq. (5)'s server residual R^G_{tau E} = Delta^G - ST(Delta^G) enters Delta^G of the next round. Visible from
    round 2 with compression."""
    d = len(x)
    S = state or {"R_k": {}}
    p = _p(clients, weighting)
    s = _steps(draw, clients, E)
    R_k = dict(S["R_k"])
    agg = np.zeros(d)
    for c in clients:
        if s[c.cid] == 0:
            continue
        w = _train(c, x, s[c.cid], step, lam, S.get("U", np.zeros(d)), S.get("V", np.zeros(d)))
        D = R_k.get(c.cid, np.zeros(d)) + w - x
        comp = st(D, q)
        R_k[c.cid] = D - comp
        agg += (E * p[c.cid] / s[c.cid] if aggregation == "efl" else p[c.cid]) * comp
    return x + st(agg, q), {"R_k": R_k}


CORRECT = [
    ("efl_dict_compressed_q05", efl_dict_compressed, {"q": 0.5}),
    ("efl_object_uniform_q04", EflServer.round, {"q": 0.4, "weighting": "uniform"}),
]
WRONG = [
    ("efl_p_over_active", efl_p_over_active, {}),
    ("efl_steps_plus_one", efl_steps_plus_one, {}),
    ("efl_server_residual_dropped", efl_server_residual_dropped, {"q": 0.5}),
]
CRASH_IS_THE_BUG: tuple = ()
