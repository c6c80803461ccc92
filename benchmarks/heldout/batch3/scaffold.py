"""SCAFFOLD (Karimireddy et al. 2020, Alg. 1): local steps y <- y - eta_l (grad f_i(y) - c_i + c) K times from x;
c_i+ = c_i - c + (x - y_i)/(K eta_l) (option II) or grad f_i(x) (option I); x+ = x + eta_g/|S| sum (y_i - x);
c+ = c + 1/N sum_S (c_i+ - c_i); c = c_i = 0 initially."""
from __future__ import annotations

import numpy as np


class _ScaffoldState:
    """An opaque state object (a framework's server/client store)."""

    def __init__(self, d):
        self.c = np.zeros(d)
        self.ci = {}


def scaffold_opaque_option1(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                            num_clients=None, option="I", **_):
    """Correct: option I (c_i+ = grad f_i(x), eq. (4) of the paper) declared with option="I"; state an object
    updated in place."""
    st = state if state is not None else _ScaffoldState(len(x))
    N = num_clients or len(clients)
    dx = np.zeros_like(x); dc = np.zeros_like(x)
    for c in clients:
        ci = st.ci.get(c.cid, np.zeros_like(x))
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * (c.grad(y) - ci + st.c)
        ci_new = c.grad(x) if option == "I" else ci - st.c + (x - y) / (local_steps * local_step)
        dx += y - x; dc += ci_new - ci
        st.ci[c.cid] = ci_new
    st.c = st.c + dc / N
    return x + server_step * dx / len(clients), st


def scaffold_dict_inplace(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                          num_clients=None, **_):
    """Correct: option II, the contract's dict state {"c", "c_i"} updated in place, the clients vectorised when
    they have the same data size (a loop otherwise)."""
    if state is None:
        state = {"c": np.zeros_like(x), "c_i": {}}
    N = num_clients or len(clients)
    c = state["c"].copy()
    ys, dcs = [], []
    for cl in clients:
        ci = np.asarray(state["c_i"].get(cl.cid, np.zeros_like(x)), dtype=float)
        y = x.copy()
        for _ in range(local_steps):
            y -= local_step * (cl.grad(y) - ci + c)
        new = ci - c + (x - y) / (local_steps * local_step)
        dcs.append(new - ci); ys.append(y)
        state["c_i"][cl.cid] = new
    state["c"] = c + np.sum(dcs, axis=0) / N
    return x + server_step * (np.mean(ys, axis=0) - x), state


def scaffold_late_joiner_copies_c(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                  server_step=1.0, num_clients=None, **_):
    """WRONG: a client seen for the first time starts with c_i = c (the server variate it downloads) instead of
    the initial c_i = 0; in Alg. 1 c = 1/N sum c_i over all clients, which a late joiner holding c breaks (its
    correction c - c_i is 0 and its update of c is off)."""
    if state is None:
        state = {"c": np.zeros_like(x), "c_i": {}}
    N = num_clients or len(clients)
    c = np.array(state["c"], dtype=float)
    dx = np.zeros_like(x); dc = np.zeros_like(x); new_ci = dict(state["c_i"])
    for cl in clients:
        ci = np.array(state["c_i"][cl.cid], dtype=float) if cl.cid in state["c_i"] else c.copy()
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * (cl.grad(y) - ci + c)
        n_ci = ci - c + (x - y) / (local_steps * local_step)
        dx += y - x; dc += n_ci - ci; new_ci[cl.cid] = n_ci
    return x + server_step * dx / len(clients), {"c": c + dc / N, "c_i": new_ci}


def scaffold_server_step_in_variate(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                    server_step=1.0, num_clients=None, **_):
    """WRONG: option II divides by K eta_l eta_g (the "effective step" of the round) instead of K eta_l
    (eq. (4)); identical at eta_g = 1."""
    if state is None:
        state = {"c": np.zeros_like(x), "c_i": {}}
    N = num_clients or len(clients)
    c = np.array(state["c"], dtype=float)
    dx = np.zeros_like(x); dc = np.zeros_like(x); new_ci = dict(state["c_i"])
    for cl in clients:
        ci = np.array(state["c_i"].get(cl.cid, np.zeros_like(x)), dtype=float)
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * (cl.grad(y) - ci + c)
        n_ci = ci - c + (x - y) / (local_steps * local_step * server_step)
        dx += y - x; dc += n_ci - ci; new_ci[cl.cid] = n_ci
    return x + server_step * dx / len(clients), {"c": c + dc / N, "c_i": new_ci}


def scaffold_option1_fresh_in_loop(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                   server_step=1.0, num_clients=None, option="I", **_):
    """WRONG: option I's c_i+ = grad f_i(x) is computed before the local loop and written into the (opaque,
    tuple) state first, so the local steps use the new c_i+ instead of the c_i of the previous round that
    Alg. 1 line 10 uses; the first round (c_i = 0 vs grad f_i(x)) already differs."""
    c, ci_all = (np.zeros_like(x), {}) if state is None else state
    N = num_clients or len(clients)
    dx = np.zeros_like(x); dc = np.zeros_like(x)
    for cl in clients:
        old = ci_all.get(cl.cid, np.zeros_like(x))
        ci_all[cl.cid] = cl.grad(x)
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * (cl.grad(y) - ci_all[cl.cid] + c)
        dx += y - x; dc += ci_all[cl.cid] - old
    return x + server_step * dx / len(clients), (c + dc / N, ci_all)


CORRECT = [("opaque_option_I", scaffold_opaque_option1, {"option": "I"}),
           ("dict_in_place", scaffold_dict_inplace, {})]
WRONG = [("late_joiner_copies_c", scaffold_late_joiner_copies_c, {}),
         ("server_step_in_variate", scaffold_server_step_in_variate, {}),
         ("option_I_fresh_variate_in_loop", scaffold_option1_fresh_in_loop, {"option": "I"})]
