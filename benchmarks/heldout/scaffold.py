"""SCAFFOLD (Karimireddy et al. 2020, Alg. 1, eq. (4)): held-out implementations, written from the paper only.

Local: y <- y - eta_l (grad f_i(y) - c_i + c), K times from x. Option I: c_i+ = grad f_i(x); option II:
c_i+ = c_i - c + (x - y)/(K eta_l). Server: x + eta_g * mean_S (y_i - x), c + (1/N) sum_S (c_i+ - c_i).
State {"c", "c_i": {cid: vec}}; c_i = 0 for a client not seen yet.
"""
from __future__ import annotations

import numpy as np


class _Opaque:
    """Server memory the kit cannot read (not a mapping)."""
    __slots__ = ("c", "store")

    def __init__(self, d):
        self.c = np.zeros(d)
        self.store = {}


def _local(c, x, cc, ci, K, eta):
    y = x.copy()
    for _ in range(K):
        y = y - eta * (c.grad(y) - ci + cc)
    return y


def scaffold_opaque_option_i(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                             num_clients=None, option="II", **_):
    """Correct: option I declared (c_i+ = grad f_i(x)), state in an opaque object."""
    st = state if state is not None else _Opaque(len(x))
    N = num_clients or len(clients)
    dx = []; dc = []
    for c in clients:
        ci = st.store.get(c.cid, np.zeros(len(x)))
        y = _local(c, x, st.c, ci, local_steps, local_step)
        ci_new = c.grad(x) if option == "I" else ci - st.c + (x - y) / (local_steps * local_step)
        dx.append(y - x); dc.append(ci_new - ci); st.store[c.cid] = ci_new
    st.c = st.c + np.sum(dc, axis=0) / N
    return x + server_step * np.mean(dx, axis=0), st


def scaffold_dict_vectorised(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                             num_clients=None, option="II", **_):
    """Correct: option II, readable dict state, clients vectorised (stacked Hessians)."""
    d = len(x); N = num_clients or len(clients)
    c = np.zeros(d) if state is None else np.asarray(state["c"], float)
    old = {} if state is None else dict(state["c_i"])
    Ci = np.stack([np.asarray(old.get(cl.cid, np.zeros(d)), float) for cl in clients])
    A = np.stack([cl.features.T @ cl.features / cl.num_examples for cl in clients])
    b = np.stack([cl.features.T @ cl.targets / cl.num_examples for cl in clients])
    Y = np.tile(x, (len(clients), 1))
    for _ in range(local_steps):
        Y = Y - local_step * (np.einsum("nij,nj->ni", A, Y) - b - Ci + c)
    Cn = Ci - c + (x - Y) / (local_steps * local_step)
    new = dict(old); new.update({cl.cid: Cn[k] for k, cl in enumerate(clients)})
    return x + server_step * (Y - x).mean(0), {"c": c + (Cn - Ci).sum(0) / N, "c_i": new}


# ---------------------------------------------------------------- wrong
def scaffold_sequential_c(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                          num_clients=None, **_):
    """WRONG: a sequential simulation updates the server c after each client, so later clients see a moved c."""
    d = len(x); N = num_clients or len(clients)
    c = np.zeros(d) if state is None else state["c"].copy()
    ci_all = {} if state is None else dict(state["c_i"])
    dx = []
    for cl in clients:
        ci = ci_all.get(cl.cid, np.zeros(d))
        y = _local(cl, x, c, ci, local_steps, local_step)
        ci_new = ci - c + (x - y) / (local_steps * local_step)
        c = c + (ci_new - ci) / N
        ci_all[cl.cid] = ci_new; dx.append(y - x)
    return x + server_step * np.mean(dx, axis=0), {"c": c, "c_i": ci_all}


def scaffold_new_client_gets_c(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                               num_clients=None, **_):
    """WRONG: a client seen for the first time starts with c_i = c (the server's) instead of 0."""
    d = len(x); N = num_clients or len(clients)
    c = np.zeros(d) if state is None else state["c"]
    ci_all = {} if state is None else dict(state["c_i"])
    dx, dc = [], []
    for cl in clients:
        ci = ci_all.get(cl.cid, c.copy())
        y = _local(cl, x, c, ci, local_steps, local_step)
        ci_new = ci - c + (x - y) / (local_steps * local_step)
        dc.append(ci_new - ci); ci_all[cl.cid] = ci_new; dx.append(y - x)
    return x + server_step * np.mean(dx, axis=0), {"c": c + np.sum(dc, 0) / N, "c_i": ci_all}


def scaffold_server_step_on_c(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                              num_clients=None, **_):
    """WRONG (non-default hyperparameter): the global step also scales the control-variate update."""
    st = state if state is not None else _Opaque(len(x))
    N = num_clients or len(clients)
    dx, dc = [], []
    for cl in clients:
        ci = st.store.get(cl.cid, np.zeros(len(x)))
        y = _local(cl, x, st.c, ci, local_steps, local_step)
        ci_new = ci - st.c + (x - y) / (local_steps * local_step)
        dx.append(y - x); dc.append(ci_new - ci); st.store[cl.cid] = ci_new
    st.c = st.c + server_step * np.sum(dc, 0) / N
    return x + server_step * np.mean(dx, 0), st


def scaffold_option_i_at_y(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                           num_clients=None, option="I", **_):
    """WRONG: option I declared, but c_i+ is the gradient at the local model y_K instead of at x."""
    d = len(x); N = num_clients or len(clients)
    c = np.zeros(d) if state is None else state["c"]
    ci_all = {} if state is None else dict(state["c_i"])
    dx, dc = [], []
    for cl in clients:
        ci = ci_all.get(cl.cid, np.zeros(d))
        y = _local(cl, x, c, ci, local_steps, local_step)
        ci_new = cl.grad(y)
        dc.append(ci_new - ci); ci_all[cl.cid] = ci_new; dx.append(y - x)
    return x + server_step * np.mean(dx, 0), {"c": c + np.sum(dc, 0) / N, "c_i": ci_all}


def scaffold_ci_not_saved_opaque(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                 server_step=1.0, num_clients=None, **_):
    """WRONG (state-carried): the opaque state saves c_i only for clients already present (dict.update on a
    filtered copy), so a client that joins late never gets its c_i stored."""
    st = state if state is not None else _Opaque(len(x))
    N = num_clients or len(clients)
    dx, dc = [], []
    first = state is None
    for cl in clients:
        ci = st.store.get(cl.cid, np.zeros(len(x)))
        y = _local(cl, x, st.c, ci, local_steps, local_step)
        ci_new = ci - st.c + (x - y) / (local_steps * local_step)
        dx.append(y - x); dc.append(ci_new - ci)
        if first or cl.cid in st.store:
            st.store[cl.cid] = ci_new
    st.c = st.c + np.sum(dc, 0) / N
    return x + server_step * np.mean(dx, 0), st


CORRECT = [
    ("opaque_state_option_I", scaffold_opaque_option_i, {"option": "I"}),
    ("dict_state_vectorised_option_II", scaffold_dict_vectorised, {}),
    ("opaque_state_option_II", scaffold_opaque_option_i, {}),
]
WRONG = [
    ("sequential_server_c_update", scaffold_sequential_c, {}),
    ("new_client_ci_equals_c", scaffold_new_client_gets_c, {}),
    ("server_step_scales_c", scaffold_server_step_on_c, {}),
    ("option_I_grad_at_local_model", scaffold_option_i_at_y, {"option": "I"}),
    ("late_joiner_ci_never_stored", scaffold_ci_not_saved_opaque, {}),
]


def scaffold_inplace_dict(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                          num_clients=None, option="II", **_):
    """Correct: the readable dict state is updated in place and returned (as a server object would)."""
    d = len(x); N = num_clients or len(clients)
    st = state if state is not None else {"c": np.zeros(d), "c_i": {}}
    dx, dc = [], []
    for cl in clients:
        ci = st["c_i"].get(cl.cid, np.zeros(d))
        y = _local(cl, x, st["c"], ci, local_steps, local_step)
        cn = ci - st["c"] + (x - y) / (local_steps * local_step)
        dx.append(y - x); dc.append(cn - ci); st["c_i"][cl.cid] = cn
    st["c"] = st["c"] + np.sum(dc, 0) / N
    return x + server_step * np.mean(dx, 0), st


CORRECT.append(("dict_state_mutated_in_place", scaffold_inplace_dict, {}))


def scaffold_n_seen(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                    num_clients=None, **_):
    """WRONG: the server does not use num_clients; N = the number of distinct clients seen so far."""
    d = len(x)
    c = np.zeros(d) if state is None else state["c"]
    ci_all = {} if state is None else dict(state["c_i"])
    dx, dc = [], []
    for cl in clients:
        ci = ci_all.get(cl.cid, np.zeros(d))
        y = _local(cl, x, c, ci, local_steps, local_step)
        cn = ci - c + (x - y) / (local_steps * local_step)
        dc.append(cn - ci); ci_all[cl.cid] = cn; dx.append(y - x)
    N = len(ci_all)
    return x + server_step * np.mean(dx, 0), {"c": c + np.sum(dc, 0) / N, "c_i": ci_all}


WRONG.append(("N_is_clients_seen_so_far", scaffold_n_seen, {}))
