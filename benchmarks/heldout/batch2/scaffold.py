"""SCAFFOLD (Karimireddy et al. 2020, Alg. 1): y <- y - eta_l (g_i(y) - c_i + c) K times; option II
c_i+ = c_i - c + (x - y)/(K eta_l), option I c_i+ = grad f_i(x); x+ = x + eta_g/|S| sum (y_i - x),
c+ = c + 1/N sum_S (c_i+ - c_i); c = c_i = 0 at the start."""
from __future__ import annotations

import numpy as np


class _ScaffoldState:
    __slots__ = ("c", "ci")

    def __init__(self, c, ci):
        self.c, self.ci = c, ci


def scaffold_opaque_option_I(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                             server_step=1.0, num_clients=None, option="I", **_):
    """Correct (option I declared): opaque __slots__ state, new object every round."""
    N = num_clients or len(clients)
    c = state.c if state is not None else np.zeros_like(x)
    ci = dict(state.ci) if state is not None else {}
    dx = np.zeros_like(x); dc = np.zeros_like(x)
    for cl in clients:
        cold = ci.get(cl.cid, np.zeros_like(x))
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * (cl.grad(y) - cold + c)
        cnew = cl.grad(x) if option == "I" else cold - c + (x - y) / (local_steps * local_step)
        ci[cl.cid] = cnew
        dx += (y - x) / len(clients); dc += (cnew - cold) / N
    return x + server_step * dx, _ScaffoldState(c + dc, ci)


def scaffold_dict_inplace(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                          num_clients=None, option="II", **_):
    """Correct (option II): the paper's mapping, mutated in place and returned."""
    N = num_clients or len(clients)
    if state is None:
        state = {"c": np.zeros_like(x), "c_i": {}}
    c = state["c"].copy()   # the c every client sees this round
    dx = np.zeros_like(x)
    for cl in clients:
        cold = np.array(state["c_i"].get(cl.cid, np.zeros_like(x)), dtype=float)
        y = x.copy()
        for _ in range(local_steps):
            y -= local_step * (cl.grad(y) - cold + c)
        cnew = cl.grad(x) if option == "I" else cold - c + (x - y) / (local_steps * local_step)
        state["c_i"][cl.cid] = cnew
        state["c"] += (cnew - cold) / N
        dx += y - x
    return x + server_step * dx / len(clients), state


def scaffold_setdefault_alias(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                              server_step=1.0, num_clients=None, **_):
    """WRONG: new clients get c_i via setdefault(cid, zero) with ONE zero array, updated in place: the second
    new client of a round starts from the first one's c_i (Alg. 1: every c_i starts at 0) and they alias."""
    N = num_clients or len(clients)
    if state is None:
        state = {"c": np.zeros_like(x), "c_i": {}}
    c = state["c"].copy()
    zero = np.zeros_like(x)
    dx = np.zeros_like(x); dc = np.zeros_like(x)
    for cl in clients:
        ci = state["c_i"].setdefault(cl.cid, zero)
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * (cl.grad(y) - ci + c)
        delta_c = -c + (x - y) / (local_steps * local_step)   # c_i+ - c_i
        ci += delta_c
        dc += delta_c / N; dx += (y - x) / len(clients)
    state["c"] = c + dc
    return x + server_step * dx, state


def scaffold_c_is_mean_of_participants(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                       server_step=1.0, **_):
    """WRONG: c+ = mean of the participants' new c_i (the paper: c + 1/N sum_S (c_i+ - c_i), i.e. the mean
    over all N clients); equal only under full participation."""
    st = state or {"c": np.zeros_like(x), "c_i": {}}
    c = st["c"]; ci = dict(st["c_i"])
    ys, news = [], []
    for cl in clients:
        cold = ci.get(cl.cid, np.zeros_like(x))
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * (cl.grad(y) - cold + c)
        ci[cl.cid] = cold - c + (x - y) / (local_steps * local_step)
        ys.append(y); news.append(ci[cl.cid])
    return x + server_step * (np.mean(ys, 0) - x), {"c": np.mean(news, 0), "c_i": ci}


def scaffold_server_step_in_local(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                  server_step=1.0, num_clients=None, **_):
    """WRONG: eta_g folded into the local step (eta_l eta_g) and the plain average applied at the server; the
    same only at eta_g = 1 (the default)."""
    N = num_clients or len(clients)
    st = state or {"c": np.zeros_like(x), "c_i": {}}
    c = st["c"]; ci = dict(st["c_i"])
    eta = local_step * server_step
    dx = np.zeros_like(x); dc = np.zeros_like(x)
    for cl in clients:
        cold = ci.get(cl.cid, np.zeros_like(x))
        y = x.copy()
        for _ in range(local_steps):
            y = y - eta * (cl.grad(y) - cold + c)
        ci[cl.cid] = cold - c + (x - y) / (local_steps * eta)
        dx += (y - x) / len(clients); dc += (ci[cl.cid] - cold) / N
    return x + dx, {"c": c + dc, "c_i": ci}


CORRECT = [("opaque_slots_option_I", scaffold_opaque_option_I, {"option": "I"}),
           ("dict_state_mutated_in_place", scaffold_dict_inplace, {})]
WRONG = [("new_clients_alias_one_zero_array", scaffold_setdefault_alias, {}),
         ("c_is_mean_of_participants", scaffold_c_is_mean_of_participants, {}),
         ("server_step_folded_into_local (eta_g=1 default)", scaffold_server_step_in_local, {})]
