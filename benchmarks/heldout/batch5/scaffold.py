"""SCAFFOLD (Karimireddy et al. 2020, Alg. 1, eq. (4)), written from the paper and docs/conformance.md only.

Client i: y <- y - eta_l (g_i(y) - c_i + c), K times from x; c_i+ = grad f_i(x) (option I) or
c_i - c + (x - y)/(K eta_l) (option II). Server: x+ = x + eta_g sum_S a_i (y_i - x),
c+ = c + 1/N sum_S (c_i+ - c_i). Initial control variates 0.
"""
from __future__ import annotations

import numpy as np


def _a(clients, weighting):
    m = np.array([1.0 if weighting == "uniform" else c.num_examples for c in clients])
    return m / m.sum()


class _Variates:
    """Opaque state: server variate and a dict of client variates."""
    __slots__ = ("c", "ci")

    def __init__(self, d):
        self.c = np.zeros(d)
        self.ci = {}


def scaffold_option1_object(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                            weighting="uniform", option="II", num_clients=None, **_):
    """Correct (declared option="I"): option I, c_i+ = grad f_i(x), state an opaque object updated in place,
    option II supported too."""
    st = state if state is not None else _Variates(len(x))
    N = num_clients or len(clients)
    dx, dc = np.zeros_like(x), np.zeros_like(x)
    for ai, cl in zip(_a(clients, weighting), clients):
        ci = st.ci.get(cl.cid, np.zeros_like(x))
        y = x.copy()
        for _ in range(int(local_steps)):
            y = y - local_step * (cl.grad(y) - ci + st.c)
        if option == "I":
            ci_new = cl.grad(x)
        else:
            ci_new = ci - st.c + (x - y) / (local_steps * local_step)
        dx += ai * (y - x)
        dc += ci_new - ci
        st.ci[cl.cid] = ci_new
    st.c = st.c + dc / N
    return x + server_step * dx, st


def scaffold_dict_inplace(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                          weighting="uniform", option="II", num_clients=None, **_):
    """Correct. Option II, the contract's dict {"c", "c_i"} updated in place (a given state is mutated), all
    clients' local runs vectorised."""
    d = len(x)
    if state is None:
        state = {"c": np.zeros(d), "c_i": {}}
    c, cis = state["c"], state["c_i"]
    N = num_clients or len(clients)
    C = np.stack([np.asarray(cis.get(cl.cid, np.zeros(d)), float) for cl in clients])
    Y = np.tile(x, (len(clients), 1))
    for _ in range(int(local_steps)):
        G = np.stack([cl.grad(Y[i]) for i, cl in enumerate(clients)])
        Y -= local_step * (G - C + c)
    if option == "I":
        Cn = np.stack([cl.grad(x) for cl in clients])
    else:
        Cn = C - c + (x - Y) / (local_steps * local_step)
    a = _a(clients, weighting)
    x_new = x + server_step * (a @ (Y - x))
    c_new = c + (Cn - C).sum(axis=0) / N
    state["c"] = c_new
    for i, cl in enumerate(clients):
        cis[cl.cid] = Cn[i]
    return x_new, state


def scaffold_newcomer_gets_c(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                             server_step=1.0, weighting="uniform", option="II", num_clients=None, **_):
    """WRONG: a client seen for the first time starts from c_i = c (the server variate, "so that its
    correction is zero") instead of c_i = 0. In round 1 c = 0, so it is the paper's; a client that joins in
    a later round runs plain local GD, and since the server's c was built with that client's c_i = 0, the
    invariant c = 1/N sum_i c_i that Alg. 1's update c <- c + |S|/N Delta c maintains is broken for good."""
    d = len(x)
    state = state if state is not None else {"c": np.zeros(d), "c_i": {}}
    c = state["c"]
    N = num_clients or len(clients)
    dx, dc, new_ci = np.zeros(d), np.zeros(d), {}
    for ai, cl in zip(_a(clients, weighting), clients):
        ci = state["c_i"][cl.cid] if cl.cid in state["c_i"] else c.copy()
        y = x.copy()
        for _ in range(int(local_steps)):
            y = y - local_step * (cl.grad(y) - ci + c)
        cn = cl.grad(x) if option == "I" else ci - c + (x - y) / (local_steps * local_step)
        dx += ai * (y - x)
        dc += cn - ci
        new_ci[cl.cid] = cn
    out = {"c": c + dc / N, "c_i": {**state["c_i"], **new_ci}}
    return x + server_step * dx, out


def scaffold_shared_zero_buffer(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                server_step=1.0, weighting="uniform", option="II", num_clients=None, **_):
    """WRONG (state aliasing): unseen clients get the same zero array object, and c_i is then updated in
    place (c_i += Delta c_i), which also changes the shared "zero" every other unseen client reads. With two
    or more new clients in a round, the second one starts from the first one's variate instead of 0."""
    d = len(x)
    if state is None:
        state = {"c": np.zeros(d), "c_i": {}, "zero": np.zeros(d)}
    zero = state.setdefault("zero", np.zeros(d))
    c = np.asarray(state["c"], float)
    N = num_clients or len(clients)
    dx, dc = np.zeros(d), np.zeros(d)
    for ai, cl in zip(_a(clients, weighting), clients):
        ci = state["c_i"].setdefault(cl.cid, zero)
        y = x.copy()
        for _ in range(int(local_steps)):
            y = y - local_step * (cl.grad(y) - ci + c)
        delta_ci = (cl.grad(x) - ci) if option == "I" else (-c + (x - y) / (local_steps * local_step))
        ci += delta_ci                      # in place: `ci` may be the shared zero buffer
        dx += ai * (y - x)
        dc += delta_ci
    state["c"] = c + dc / N
    return x + server_step * dx, state


def scaffold_server_step_on_c(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                              server_step=1.0, weighting="uniform", option="II", num_clients=None, **_):
    """WRONG: the global step eta_g is applied to the control-variate update too, c+ = c + eta_g/N sum Delta c_i.
    Alg. 1 applies eta_g to the model only (c <- c + |S|/N Delta c). Invisible at eta_g = 1."""
    d = len(x)
    state = state if state is not None else {"c": np.zeros(d), "c_i": {}}
    c = state["c"]
    N = num_clients or len(clients)
    dx, dc, cis = np.zeros(d), np.zeros(d), dict(state["c_i"])
    for ai, cl in zip(_a(clients, weighting), clients):
        ci = cis.get(cl.cid, np.zeros(d))
        y = x.copy()
        for _ in range(int(local_steps)):
            y = y - local_step * (cl.grad(y) - ci + c)
        cn = cl.grad(x) if option == "I" else ci - c + (x - y) / (local_steps * local_step)
        dx += ai * (y - x)
        dc += cn - ci
        cis[cl.cid] = cn
    return x + server_step * dx, {"c": c + server_step * dc / N, "c_i": cis}


CORRECT = [
    ("scaffold_option1_object", scaffold_option1_object, {"option": "I"}),
    ("scaffold_dict_inplace", scaffold_dict_inplace, {}),
]
WRONG = [
    ("scaffold_newcomer_gets_c", scaffold_newcomer_gets_c, {}),
    ("scaffold_shared_zero_buffer", scaffold_shared_zero_buffer, {}),
    ("scaffold_server_step_on_c", scaffold_server_step_on_c, {}),
]
