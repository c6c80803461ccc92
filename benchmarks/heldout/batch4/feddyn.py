"""FedDyn (Acar et al. 2021, Alg. 1): theta_k = argmin f_k(t) - <g_k, t> + alpha/2 ||t - x||^2
= (A_k + alpha I)^{-1}(b_k + g_k + alpha x); g_k+ = g_k - alpha (theta_k - x); h+ = h - alpha/m sum_{P} (theta_k - x);
x+ = 1/|P| sum_P theta_k - h+/alpha; g_k = 0 and h = 0 initially."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ._common import hess_lin

DynState = namedtuple("DynState", ["h", "g"])


def _local(client, x, g, alpha):
    A, b = hess_lin(client)
    return np.linalg.solve(A + alpha * np.eye(len(x)), b + g + alpha * x)


# ---------------------------------------------------------------- correct

def feddyn_namedtuple(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """Correct: exact local solves, state a namedtuple (h, {cid: g_k}) (opaque to the kit)."""
    st = state if state is not None else DynState(np.zeros_like(x), {})
    m = num_clients or len(clients)
    g = dict(st.g)
    thetas = []
    h = st.h.copy()
    for c in clients:
        gk = g.get(c.cid, np.zeros_like(x))
        th = _local(c, x, gk, alpha)
        g[c.cid] = gk - alpha * (th - x)
        h -= alpha / m * (th - x)
        thetas.append(th)
    x_new = np.mean(thetas, axis=0) - h / alpha
    return x_new, DynState(h, g)


def feddyn_inplace_cholesky(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """Correct: the paper's dict layout updated in place; local solve by a Cholesky factorisation written out;
    absent entries read as 0."""
    if state is None:
        state = {}
    state.setdefault("h", np.zeros_like(x))
    state.setdefault("g_i", {})
    m = num_clients or len(clients)
    sum_th = np.zeros_like(x)
    sum_dev = np.zeros_like(x)
    for c in clients:
        A, b = hess_lin(c)
        L = np.linalg.cholesky(A + alpha * np.eye(len(x)))
        gk = np.asarray(state["g_i"].get(c.cid, np.zeros_like(x)), dtype=np.float64)
        z = np.linalg.solve(L, b + gk + alpha * x)
        th = np.linalg.solve(L.T, z)
        state["g_i"][c.cid] = gk - alpha * (th - x)
        sum_th += th
        sum_dev += th - x
    state["h"] = np.asarray(state["h"], dtype=np.float64) - alpha / m * sum_dev
    return sum_th / len(clients) - state["h"] / alpha, state


# ---------------------------------------------------------------- wrong

def feddyn_h_over_participants(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: h+ = h - alpha/|P| sum_P (theta_k - x), divided by the participants instead of the m clients
    (Alg. 1 line 11 has 1/m: h is the mean of all m g_k); right only under full participation."""
    st = state or {"h": np.zeros_like(x), "g_i": {}}
    g = dict(st["g_i"])
    ths = []
    for c in clients:
        gk = g.get(c.cid, np.zeros_like(x))
        th = _local(c, x, gk, alpha)
        g[c.cid] = gk - alpha * (th - x)
        ths.append(th)
    ths = np.array(ths)
    h = st["h"] - alpha / len(clients) * (ths - x).sum(axis=0)
    return ths.mean(axis=0) - h / alpha, {"h": h, "g_i": g}


def feddyn_newcomer_g_from_h(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: a client seen for the first time after round 1 starts with g_k = h (the server's mean state, a "warm
    start") instead of grad f_k(theta_k^0) = 0 (Alg. 1's initialisation); h = 1/m sum g_k breaks for late joiners."""
    st = state or {"h": np.zeros_like(x), "g_i": {}}
    m = num_clients or len(clients)
    g = dict(st["g_i"])
    h = st["h"].copy()
    ths = []
    for c in clients:
        gk = g[c.cid] if c.cid in g else st["h"].copy()
        th = _local(c, x, gk, alpha)
        g[c.cid] = gk - alpha * (th - x)
        h -= alpha / m * (th - x)
        ths.append(th)
    return np.mean(ths, axis=0) - h / alpha, {"h": h, "g_i": g}


class FedDynAllModels:
    """WRONG: the server model averages the latest local model of every client seen so far (stale models of
    absent clients included) instead of the participants' theta_k^t (Alg. 1 line 12: 1/|P_t| sum_{k in P_t});
    equal in round 1, differs once a client is absent."""

    def __call__(self, x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
        if state is None:
            state = {"h": np.zeros_like(x), "g_i": {}, "theta": {}}
        m = num_clients or len(clients)
        g, th_all = dict(state["g_i"]), dict(state.get("theta", {}))
        h = state["h"].copy()
        for c in clients:
            gk = g.get(c.cid, np.zeros_like(x))
            th = _local(c, x, gk, alpha)
            g[c.cid] = gk - alpha * (th - x)
            h -= alpha / m * (th - x)
            th_all[c.cid] = th
        x_new = np.mean(list(th_all.values()), axis=0) - h / alpha
        return x_new, {"h": h, "g_i": g, "theta": th_all}


def feddyn_h_without_alpha(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: the server model x+ = 1/|P| sum theta_k - h (the 1/alpha dropped); Alg. 1 line 12 subtracts h/alpha.
    Invisible at the default alpha = 1."""
    st = state if state is not None else {"h": np.zeros_like(x), "g_i": {}}
    m = num_clients or len(clients)
    g = dict(st["g_i"])
    h = np.asarray(st["h"], float).copy()
    ths = []
    for c in clients:
        gk = np.asarray(g.get(c.cid, np.zeros_like(x)), float)
        th = _local(c, x, gk, alpha)
        g[c.cid] = gk - alpha * (th - x)
        h -= alpha / m * (th - x)
        ths.append(th)
    return np.mean(ths, axis=0) - h, {"h": h, "g_i": g}


class _Dyn:
    def __init__(self, d):
        self.h = np.zeros(d)
        self.g = {}


def feddyn_opaque_g_sign(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG, carried only in an opaque state: the client state stored as g_k + alpha (theta_k - x) (sign slip in
    line 9's update), while h is updated correctly; Alg. 1 has grad L_k(theta_k) = grad L_k(theta_k^{t-1})
    - alpha (theta_k - x). Round 1 is right (g_k = 0 then); the slip shows from a client's second round."""
    st = state if state is not None else _Dyn(len(x))
    m = num_clients or len(clients)
    new = _Dyn(len(x))
    new.g = dict(st.g)
    h = st.h.copy()
    ths = []
    for c in clients:
        gk = st.g.get(c.cid, np.zeros(len(x)))
        th = _local(c, x, gk, alpha)
        new.g[c.cid] = gk + alpha * (th - x)
        h = h - alpha / m * (th - x)
        ths.append(th)
    new.h = h
    return np.mean(ths, axis=0) - h / alpha, new


CORRECT = [
    ("feddyn_namedtuple", feddyn_namedtuple, {}),
    ("feddyn_inplace_cholesky", feddyn_inplace_cholesky, {}),
]
WRONG = [
    ("feddyn_h_over_participants", feddyn_h_over_participants, {}),
    ("feddyn_newcomer_g_from_h", feddyn_newcomer_g_from_h, {}),
    ("feddyn_all_models_average", FedDynAllModels(), {}),
    ("feddyn_h_without_alpha", feddyn_h_without_alpha, {}),
    ("feddyn_opaque_g_sign", feddyn_opaque_g_sign, {}),
]
CRASH_IS_THE_BUG: tuple = ()
