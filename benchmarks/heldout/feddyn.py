"""FedDyn (Acar et al. 2021, Alg. 1): held-out implementations, written from the paper only.

theta_i = argmin f_i - <g_i, .> + alpha/2 ||. - x||^2 = (A_i + alpha I)^{-1}(b_i + g_i + alpha x);
g_i+ = g_i - alpha (theta_i - x); h+ = h - alpha/N sum_S (theta_i - x); x+ = mean_S theta_i - h+/alpha.
State {"h", "g_i"}; g_i = 0 and h = 0 initially.
"""
from __future__ import annotations

import numpy as np

from ._util import quad


def _solve(c, x, g, alpha):
    A, b = quad(c)
    return np.linalg.solve(A + alpha * np.eye(len(x)), b + g + alpha * x)


class _Box:
    def __init__(self, d):
        self.h = np.zeros(d); self.mem = {}


def feddyn_opaque_lstsq(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """Correct: opaque state; each local problem solved as a stacked least-squares problem."""
    st = state or _Box(len(x)); N = num_clients or len(clients); d = len(x)
    thetas = []
    for c in clients:
        g = st.mem.get(c.cid, np.zeros(d)); m = c.num_examples
        # f_i - <g,.> + a/2||.-x||^2 = 1/(2m)||Z t - y||^2 + a/2 ||t - (x + g/a)||^2 + const
        M = np.vstack([c.features / np.sqrt(m), np.sqrt(alpha) * np.eye(d)])
        r = np.concatenate([c.targets / np.sqrt(m), np.sqrt(alpha) * (x + g / alpha)])
        th = np.linalg.lstsq(M, r, rcond=None)[0]
        st.mem[c.cid] = g - alpha * (th - x); thetas.append(th)
    st.h = st.h - alpha / N * np.sum([t - x for t in thetas], axis=0)
    return np.mean(thetas, axis=0) - st.h / alpha, st


def feddyn_dict_kkt(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """Correct: readable state; g_i+ stored as grad f_i(theta_i) (equal to g_i - alpha(theta_i - x) by the KKT
    condition), h+ as h + 1/N sum (g_i+ - g_i)."""
    d = len(x); N = num_clients or len(clients)
    h = np.zeros(d) if state is None else state["h"]
    gi = {} if state is None else dict(state["g_i"])
    thetas, dg = [], np.zeros(d)
    for c in clients:
        g = gi.get(c.cid, np.zeros(d))
        th = _solve(c, x, g, alpha)
        gi[c.cid] = c.grad(th); dg += gi[c.cid] - g; thetas.append(th)
    h = h + dg / N
    return np.mean(thetas, 0) - h / alpha, {"h": h, "g_i": gi}


# ---------------------------------------------------------------- wrong
def feddyn_h_over_participants(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: h averages over the participants |S| instead of all N clients."""
    d = len(x)
    h = np.zeros(d) if state is None else state["h"]
    gi = {} if state is None else dict(state["g_i"])
    thetas = []
    for c in clients:
        g = gi.get(c.cid, np.zeros(d)); th = _solve(c, x, g, alpha)
        gi[c.cid] = g - alpha * (th - x); thetas.append(th)
    h = h - alpha / len(clients) * np.sum([t - x for t in thetas], 0)
    return np.mean(thetas, 0) - h / alpha, {"h": h, "g_i": gi}


def feddyn_alpha_times_h(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG (non-default hyperparameter): x+ = mean theta - alpha h (instead of h/alpha); equal at alpha = 1."""
    st = state or _Box(len(x)); N = num_clients or len(clients); d = len(x)
    thetas = []
    for c in clients:
        g = st.mem.get(c.cid, np.zeros(d)); th = _solve(c, x, g, alpha)
        st.mem[c.cid] = g - alpha * (th - x); thetas.append(th)
    st.h = st.h - alpha / N * np.sum([t - x for t in thetas], 0)
    return np.mean(thetas, 0) - alpha * st.h, st


def feddyn_warm_start_g(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: a client seen for the first time starts with g_i = grad f_i(x) ('warm start') instead of 0."""
    d = len(x); N = num_clients or len(clients)
    h = np.zeros(d) if state is None else state["h"]
    gi = {} if state is None else dict(state["g_i"])
    thetas = []
    for c in clients:
        g = gi[c.cid] if c.cid in gi else c.grad(x)
        th = _solve(c, x, g, alpha)
        gi[c.cid] = g - alpha * (th - x); thetas.append(th)
    h = h - alpha / N * np.sum([t - x for t in thetas], 0)
    return np.mean(thetas, 0) - h / alpha, {"h": h, "g_i": gi}


def feddyn_state_keyed_by_position(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: g_i kept in a list indexed by the client id (IndexError or another client's state)."""
    d = len(x); N = num_clients or len(clients)
    h = np.zeros(d) if state is None else state[0]
    gl = [np.zeros(d) for _ in range(N)] if state is None else state[1]
    thetas = []
    for c in clients:
        g = gl[c.cid]; th = _solve(c, x, g, alpha)
        gl[c.cid] = g - alpha * (th - x); thetas.append(th)
    h = h - alpha / N * np.sum([t - x for t in thetas], 0)
    return np.mean(thetas, 0) - h / alpha, (h, gl)


def feddyn_g_update_sign(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: the client state is updated with + alpha (theta - x) while the server h uses the paper's sign."""
    st = state or _Box(len(x)); N = num_clients or len(clients); d = len(x)
    thetas = []
    for c in clients:
        g = st.mem.get(c.cid, np.zeros(d)); th = _solve(c, x, g, alpha)
        st.mem[c.cid] = g + alpha * (th - x); thetas.append(th)
    st.h = st.h - alpha / N * np.sum([t - x for t in thetas], 0)
    return np.mean(thetas, 0) - st.h / alpha, st


CORRECT = [
    ("opaque_state_lstsq", feddyn_opaque_lstsq, {}),
    ("dict_state_g_as_gradient", feddyn_dict_kkt, {}),
]
WRONG = [
    ("h_over_participants", feddyn_h_over_participants, {}),
    ("alpha_times_h", feddyn_alpha_times_h, {}),
    ("warm_start_g_i", feddyn_warm_start_g, {}),
    ("g_i_list_indexed_by_cid", feddyn_state_keyed_by_position, {}),
    ("client_state_sign_opaque", feddyn_g_update_sign, {}),
]
CRASH_IS_THE_BUG = {"g_i_list_indexed_by_cid"}


def feddyn_inplace(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """Correct: the readable dict state updated in place (h with -=, g_i arrays with -=)."""
    d = len(x); N = num_clients or len(clients)
    st = state if state is not None else {"h": np.zeros(d), "g_i": {}}
    thetas = []
    for c in clients:
        g = st["g_i"].setdefault(c.cid, np.zeros(d))
        th = _solve(c, x, g, alpha)
        g -= alpha * (th - x); thetas.append(th)
    st["h"] -= alpha / N * np.sum([t - x for t in thetas], 0)
    return np.mean(thetas, 0) - st["h"] / alpha, st


CORRECT.append(("dict_state_mutated_in_place", feddyn_inplace, {}))
