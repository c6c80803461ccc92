"""FedDyn (Acar et al. 2021, Alg. 1), written from the paper and docs/conformance.md only.

Client i in P: theta_i = argmin f_i(t) - <g_i, t> + alpha/2 ||t - x||^2, i.e. (A_i + alpha I) theta_i =
b_i + g_i + alpha x with A_i = Z^T Z / m_i, b_i = Z^T y / m_i; g_i+ = g_i - alpha (theta_i - x).
Server: h+ = h - alpha/N sum_P (theta_i - x); x+ = mean_P theta_i - h+/alpha. Initially h = 0, g_i = 0.
"""
from __future__ import annotations

import numpy as np


def _solve(c, g, x, alpha):
    Z, y = c.features, c.targets
    m = len(y)
    return np.linalg.solve(Z.T @ Z / m + alpha * np.eye(len(x)), Z.T @ y / m + g + alpha * x)


def feddyn_tuple_state(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """Correct. State an opaque tuple (h, {cid: g_i}); the client dict is copied, not shared."""
    h, gs = (np.zeros_like(x), {}) if state is None else (state[0], dict(state[1]))
    N = num_clients or len(clients)
    thetas = []
    for c in clients:
        g = gs.get(c.cid, np.zeros_like(x))
        th = _solve(c, g, x, alpha)
        gs[c.cid] = g - alpha * (th - x)
        thetas.append(th)
    thetas = np.array(thetas)
    h = h - alpha / N * (thetas - x).sum(axis=0)
    return thetas.mean(axis=0) - h / alpha, (h, gs)


def feddyn_h_over_participants(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: h+ = h - alpha/|P| sum_P (theta_i - x), the participants' count instead of the number of
    clients m (Alg. 1 divides by m so that h = 1/m sum_i g_i). Identical under full participation."""
    st = state if state is not None else {"h": np.zeros_like(x), "g_i": {}}
    gi = dict(st["g_i"])
    acc, diff = np.zeros_like(x), np.zeros_like(x)
    for c in clients:
        g = np.asarray(gi.get(c.cid, np.zeros_like(x)))
        th = _solve(c, g, x, alpha)
        gi[c.cid] = g - alpha * (th - x)
        acc += th
        diff += th - x
    h = st["h"] - alpha / len(clients) * diff
    return acc / len(clients) - h / alpha, {"h": h, "g_i": gi}


def feddyn_warm_newcomer(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG (only for clients that join later): the first-round clients start from g_i = 0, but a client
    first seen in a later round is "warm-started" with g_i = grad f_i(x). Alg. 1 initialises
    grad L_k(theta_k^0) = 0 for every client, whenever it first participates."""
    if state is None:
        st = {"h": np.zeros_like(x), "g_i": {c.cid: np.zeros_like(x) for c in clients}}
    else:
        st = {"h": state["h"], "g_i": dict(state["g_i"])}
    N = num_clients or len(clients)
    thetas = []
    for c in clients:
        if c.cid not in st["g_i"]:
            st["g_i"][c.cid] = c.grad(x)
        g = st["g_i"][c.cid]
        th = _solve(c, g, x, alpha)
        st["g_i"][c.cid] = g - alpha * (th - x)
        thetas.append(th)
    T = np.array(thetas)
    st["h"] = st["h"] - alpha / N * (T - x).sum(0)
    return T.mean(0) - st["h"] / alpha, st


def feddyn_old_h(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: the new server model uses the h of the previous round, x+ = mean theta_i - h^{t-1}/alpha; the
    h update is computed but applied one round late (Alg. 1 uses h^t)."""
    st = state if state is not None else {"h": np.zeros_like(x), "g_i": {}}
    N = num_clients or len(clients)
    gi = dict(st["g_i"])
    T = []
    for c in clients:
        g = gi.get(c.cid, np.zeros_like(x))
        th = _solve(c, g, x, alpha)
        gi[c.cid] = g - alpha * (th - x)
        T.append(th)
    T = np.array(T)
    x_new = T.mean(0) - st["h"] / alpha
    return x_new, {"h": st["h"] - alpha / N * (T - x).sum(0), "g_i": gi}



def feddyn_dict_inplace_cg(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """Correct. The contract's {"h", "g_i"} mutated in place; each local problem solved by conjugate gradients
    on (A_i + alpha I) theta = b_i + g_i + alpha x until the residual is below 1e-14 (relative)."""
    d = len(x)
    if state is None:
        state = {"h": np.zeros(d), "g_i": {}}
    N = num_clients or len(clients)
    total = np.zeros(d)
    for c in clients:
        Z, y = c.features, c.targets
        M = Z.T @ Z / len(y) + alpha * np.eye(d)
        g = np.asarray(state["g_i"].get(c.cid, np.zeros(d)), float)
        rhs = Z.T @ y / len(y) + g + alpha * x
        th = x.copy()
        r = rhs - M @ th
        pdir = r.copy()
        for _ in range(20 * d):
            if np.linalg.norm(r) <= 1e-14 * (1 + np.linalg.norm(rhs)):
                break
            Mp = M @ pdir
            a = (r @ r) / (pdir @ Mp)
            th = th + a * pdir
            r_new = r - a * Mp
            pdir = r_new + (r_new @ r_new) / (r @ r) * pdir
            r = r_new
        state["g_i"][c.cid] = g - alpha * (th - x)
        state["h"] = state["h"] - alpha / N * (th - x)
        total += th
    return total / len(clients) - state["h"] / alpha, state


CORRECT = [
    ("feddyn_tuple_state", feddyn_tuple_state, {}),
    ("feddyn_dict_inplace_cg", feddyn_dict_inplace_cg, {}),
]
WRONG = [
    ("feddyn_h_over_participants", feddyn_h_over_participants, {}),
    ("feddyn_warm_newcomer", feddyn_warm_newcomer, {}),
    ("feddyn_old_h", feddyn_old_h, {}),
]
