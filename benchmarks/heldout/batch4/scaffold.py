"""SCAFFOLD (Karimireddy et al. 2020, Alg. 1): y_i <- y_i - eta_l (grad f_i(y_i) - c_i + c), K times from x;
c_i+ = grad f_i(x) (option I) or c_i - c + (x - y_i)/(K eta_l) (option II); x+ = x + eta_g/|S| sum (y_i - x),
c+ = c + 1/N sum (c_i+ - c_i); c = c_i = 0 initially."""
from __future__ import annotations

import numpy as np


def _w(clients, weighting):
    if weighting == "num_examples":
        t = sum(c.num_examples for c in clients)
        return {c.cid: c.num_examples / t for c in clients}
    return {c.cid: 1.0 / len(clients) for c in clients}


# ---------------------------------------------------------------- correct

class _ScState:
    __slots__ = ("c", "ci")

    def __init__(self, d):
        self.c = np.zeros(d)
        self.ci = {}


def scaffold_option1_object(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                            weighting="uniform", option="II", num_clients=None, **_):
    """Correct: option I (c_i+ = grad f_i(x)), declared with option="I"; the state is a slotted object."""
    st = state if state is not None else _ScState(len(x))
    N = num_clients or len(clients)
    wts = _w(clients, weighting)
    dx = np.zeros_like(x)
    dc = np.zeros_like(x)
    new_ci = {}
    for c in clients:
        ci = st.ci.get(c.cid, np.zeros_like(x))
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * (c.grad(y) - ci + st.c)
        if option == "I":
            cnew = c.grad(x)
        else:
            cnew = ci - st.c + (x - y) / (local_steps * local_step)
        new_ci[c.cid] = cnew
        dx += wts[c.cid] * (y - x)
        dc += cnew - ci
    out = _ScState(len(x))
    out.ci = dict(st.ci)
    out.ci.update(new_ci)
    out.c = st.c + dc / N
    return x + server_step * dx, out


def scaffold_inplace(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                     weighting="uniform", option="II", num_clients=None, **_):
    """Correct: the paper's dict layout, the given state updated in place and returned; a client with no entry
    reads c_i = 0; all client steps vectorised over a stacked (n, d) array."""
    if state is None:
        state = {"c": np.zeros_like(x), "c_i": {}}
    state.setdefault("c_i", {})
    c = np.asarray(state.get("c", np.zeros_like(x)), dtype=np.float64)
    N = num_clients or len(clients)
    C_i = np.stack([np.asarray(state["c_i"].get(cl.cid, np.zeros_like(x)), dtype=np.float64) for cl in clients])
    Y = np.tile(x, (len(clients), 1))
    for _ in range(local_steps):
        G = np.stack([cl.grad(Y[j]) for j, cl in enumerate(clients)])
        Y -= local_step * (G - C_i + c)
    if option == "I":
        C_new = np.stack([cl.grad(x) for cl in clients])
    else:
        C_new = C_i - c + (x - Y) / (local_steps * local_step)
    wv = np.array([_w(clients, weighting)[cl.cid] for cl in clients])
    x_new = x + server_step * (wv @ (Y - x))
    state["c"] = c + (C_new - C_i).sum(axis=0) / N
    for j, cl in enumerate(clients):
        state["c_i"][cl.cid] = C_new[j]
    return x_new, state


# ---------------------------------------------------------------- wrong

def scaffold_newcomer_warm_c(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                             weighting="uniform", option="II", num_clients=None, **_):
    """WRONG: a client seen for the first time starts from c_i = c (the server's variate, a "warm start") instead
    of 0; the server never accounts for it, so c = 1/N sum c_i (kept by Alg. 1's update from c = c_i = 0) breaks.
    Invisible in round 1 (c = 0 then); only clients that join in a later round are affected."""
    if state is None:
        state = {"c": np.zeros_like(x), "c_i": {}}
    c = state["c"]
    N = num_clients or len(clients)
    wts = _w(clients, weighting)
    ci_new, dx, dc = {}, np.zeros_like(x), np.zeros_like(x)
    for cl in clients:
        ci = state["c_i"].get(cl.cid)
        if ci is None:
            ci = c.copy()
        y = x.copy()
        for _ in range(local_steps):
            y -= local_step * (cl.grad(y) - ci + c)
        cn = cl.grad(x) if option == "I" else ci - c + (x - y) / (local_steps * local_step)
        ci_new[cl.cid] = cn
        dx += wts[cl.cid] * (y - x)
        dc += cn - ci
    return x + server_step * dx, {"c": c + dc / N, "c_i": {**state["c_i"], **ci_new}}


def scaffold_sequential_c(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                          weighting="uniform", option="II", num_clients=None, **_):
    """WRONG: clients processed one after another and the server variate c updated after each client, so later
    clients correct with a partly updated c; Alg. 1 sends every participant the same c of round r (the update
    depends on the client order)."""
    if state is None:
        state = {"c": np.zeros_like(x), "c_i": {}}
    c = np.array(state["c"], dtype=np.float64)
    cis = dict(state["c_i"])
    N = num_clients or len(clients)
    wts = _w(clients, weighting)
    dx = np.zeros_like(x)
    for cl in clients:
        ci = cis.get(cl.cid, np.zeros_like(x))
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * (cl.grad(y) - ci + c)
        cn = cl.grad(x) if option == "I" else ci - c + (x - y) / (local_steps * local_step)
        c = c + (cn - ci) / N
        cis[cl.cid] = cn
        dx += wts[cl.cid] * (y - x)
    return x + server_step * dx, {"c": c, "c_i": cis}


def scaffold_server_step_on_c(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                              server_step=1.0, weighting="uniform", option="II", num_clients=None, **_):
    """WRONG: the global step size applied to the control variate too, c+ = c + eta_g/N sum dc_i; Alg. 1 scales only
    the model update by eta_g (c+ = c + |S|/N * mean dc_i). Invisible at eta_g = 1."""
    if state is None:
        state = {"c": np.zeros_like(x), "c_i": {}}
    c = state["c"]
    N = num_clients or len(clients)
    wts = _w(clients, weighting)
    new = {}
    dx, dc = np.zeros_like(x), np.zeros_like(x)
    for cl in clients:
        ci = state["c_i"].get(cl.cid, np.zeros_like(x))
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * (cl.grad(y) - ci + c)
        cn = cl.grad(x) if option == "I" else ci - c + (x - y) / (local_steps * local_step)
        new[cl.cid] = cn
        dx += wts[cl.cid] * (y - x)
        dc += cn - ci
    return x + server_step * dx, {"c": c + server_step * dc / N, "c_i": {**state["c_i"], **new}}


def scaffold_shared_zero_default(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                 server_step=1.0, weighting="uniform", option="II", num_clients=None, **_):
    """WRONG (state aliasing): new clients get `c_i.setdefault(cid, zero)` with ONE zero vector per call, and c_i is
    then updated in place (`ci += ...`), so the second new client of a round starts from the first one's updated
    variate instead of 0 (Alg. 1: each client's own c_i, initially 0)."""
    if state is None:
        state = {"c": np.zeros_like(x), "c_i": {}}
    c = np.asarray(state["c"], float)
    cis = {k: np.array(v, dtype=float) for k, v in state["c_i"].items()}
    zero = np.zeros_like(x)
    N = num_clients or len(clients)
    wts = _w(clients, weighting)
    dx, dc = np.zeros_like(x), np.zeros_like(x)
    for cl in clients:
        ci = cis.setdefault(cl.cid, zero)
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * (cl.grad(y) - ci + c)
        new = cl.grad(x) if option == "I" else ci - c + (x - y) / (local_steps * local_step)
        dc += new - ci
        ci += new - ci
        dx += wts[cl.cid] * (y - x)
    return x + server_step * dx, {"c": c + dc / N, "c_i": {k: v.copy() for k, v in cis.items()}}


CORRECT = [
    ("scaffold_option1_object", scaffold_option1_object, {"option": "I"}),
    ("scaffold_inplace_vectorised", scaffold_inplace, {}),
]
WRONG = [
    ("scaffold_newcomer_warm_c", scaffold_newcomer_warm_c, {}),
    ("scaffold_sequential_c", scaffold_sequential_c, {}),
    ("scaffold_server_step_on_c", scaffold_server_step_on_c, {}),
    ("scaffold_shared_zero_default", scaffold_shared_zero_default, {}),
]
CRASH_IS_THE_BUG: tuple = ()
