"""FedDyn (Acar et al. 2021, Alg. 1): theta_i = argmin f_i - <g_i, .> + alpha/2 ||. - x||^2 (exact),
g_i+ = g_i - alpha (theta_i - x), h+ = h - alpha/m sum_S (theta_i - x), x+ = mean_S theta_i - h+/alpha;
g_i = 0, h = 0 at the start."""
from __future__ import annotations

import numpy as np

from ._common import quad


class _Dyn:
    def __init__(self, d):
        self.h = np.zeros(d)
        self.g = {}


def feddyn_opaque_object(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """Correct: an opaque object mutated in place (never a mapping)."""
    m = num_clients or len(clients)
    st = state if state is not None else _Dyn(len(x))
    thetas = []
    for c in clients:
        A, b = quad(c)
        g = st.g.get(c.cid, np.zeros_like(x))
        th = np.linalg.solve(A + alpha * np.eye(len(x)), b + g + alpha * x)
        st.g[c.cid] = g - alpha * (th - x)
        st.h = st.h - alpha / m * (th - x)
        thetas.append(th)
    return np.mean(thetas, 0) - st.h / alpha, st


def feddyn_late_joiner_g_is_h(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: a client seen for the first time starts from g_i = h (the server state) instead of 0; round 1
    is right (h = 0), a client joining later is not."""
    m = num_clients or len(clients)
    st = state or {"h": np.zeros_like(x), "g_i": {}}
    h = st["h"]; g_i = dict(st["g_i"])
    thetas, hn = [], h.copy()
    for c in clients:
        A, b = quad(c)
        g = g_i.get(c.cid, h.copy())
        th = np.linalg.solve(A + alpha * np.eye(len(x)), b + g + alpha * x)
        g_i[c.cid] = g - alpha * (th - x)
        hn -= alpha / m * (th - x)
        thetas.append(th)
    return np.mean(thetas, 0) - hn / alpha, {"h": hn, "g_i": g_i}


def feddyn_alpha_one_in_solver(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: the local solve hard-codes alpha = 1 ((A + I) theta = b + g + x); right only at alpha = 1."""
    m = num_clients or len(clients)
    st = state or {"h": np.zeros_like(x), "g_i": {}}
    g_i = dict(st["g_i"]); hn = st["h"].copy()
    thetas = []
    for c in clients:
        A, b = quad(c)
        g = g_i.get(c.cid, np.zeros_like(x))
        th = np.linalg.solve(A + np.eye(len(x)), b + g + x)
        g_i[c.cid] = g - alpha * (th - x)
        hn -= alpha / m * (th - x)
        thetas.append(th)
    return np.mean(thetas, 0) - hn / alpha, {"h": hn, "g_i": g_i}


CORRECT = [("opaque_object_in_place", feddyn_opaque_object, {})]
WRONG = [("late_joiner_g_starts_at_h", feddyn_late_joiner_g_is_h, {}),
         ("alpha_hardcoded_1_in_solver (alpha=1 default)", feddyn_alpha_one_in_solver, {})]
