"""FedElasticNet for SCAFFOLD (Kim et al., Alg. 2, eq. (7)), from the paper and docs/conformance.md only.

Client k in P: from th = theta^{t-1}, B = K times
t <- t - eta_l (grad L_k(t) - c_k + c + lam2 (t - th) + lam1 sign(t - th)), sign(0) = 0 ("subgradient");
c_k+ = c_k - c + (th - t)/(K eta_l). Server: th+ = th + eta_g/|P| sum Delta_k, c+ = c + 1/m sum Delta c_k.
Initial c = c_k = 0.
"""
from __future__ import annotations

import numpy as np


def _local(c, th, ck, cg, K, eta, lam1, lam2, mode):
    t = th.copy()
    for _ in range(int(K)):
        if mode == "proximal":
            v = t - th - eta * (c.grad(t) - ck + cg + lam2 * (t - th))
            t = th + np.sign(v) * np.maximum(np.abs(v) - eta * lam1, 0.0)
        else:
            t = t - eta * (c.grad(t) - ck + cg + lam2 * (t - th) + lam1 * np.sign(t - th))
    return t


def fen2_dict_inplace(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                      l1_mode="subgradient", server_step=1.0, weighting="uniform", num_clients=None, **_):
    """Correct. The contract's {"c", "c_i"} updated in place; new arrays are stored (no aliasing)."""
    d = len(x)
    if state is None:
        state = {"c": np.zeros(d), "c_i": {}}
    cg = np.asarray(state["c"], float)
    m = num_clients or len(clients)
    dth, dc = np.zeros(d), np.zeros(d)
    for c in clients:
        ck = np.asarray(state["c_i"].get(c.cid, np.zeros(d)), float)
        t = _local(c, x, ck, cg, local_steps, local_step, l1, prox, l1_mode)
        ck_new = ck - cg + (x - t) / (local_steps * local_step)
        dth += t - x
        dc += ck_new - ck
        state["c_i"][c.cid] = ck_new
    state["c"] = cg + dc / m
    return x + server_step / len(clients) * dth, state


def fen2_aliased_variate(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                         l1_mode="subgradient", server_step=1.0, weighting="uniform", num_clients=None, **_):
    """WRONG (state aliasing): c_k is updated in place through the name `new = old` (the same array), so
    Delta c_k = new - old is always 0 and the server variate c never moves (line 14 needs the real
    Delta c_k = c_k^t - c_k^{t-1}). Round 1 gives the right model; from round 2 the correction -c_k + c is
    wrong."""
    d = len(x)
    if state is None:
        state = {"c": np.zeros(d), "c_i": {}}
    cg = state["c"]
    m = num_clients or len(clients)
    dth, dc = np.zeros(d), np.zeros(d)
    for c in clients:
        old = state["c_i"].setdefault(c.cid, np.zeros(d))
        t = _local(c, x, old.copy(), cg, local_steps, local_step, l1, prox, l1_mode)
        new = old
        new -= cg
        new += (x - t) / (local_steps * local_step)
        dc += new - old
        dth += t - x
    state["c"] = cg + dc / m
    return x + server_step / len(clients) * dth, state


def fen2_c_over_participants(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0,
                             l1=0.05, l1_mode="subgradient", server_step=1.0, weighting="uniform",
                             num_clients=None, **_):
    """WRONG: c+ = c + 1/|P| sum Delta c_k (participants) instead of 1/m (all clients, line 14). Identical
    under full participation; with partial participation c drifts from 1/m sum c_k."""
    d = len(x)
    st = state if state is not None else {"c": np.zeros(d), "c_i": {}}
    cg = np.asarray(st["c"], float)
    cis = {k: np.asarray(v, float) for k, v in st["c_i"].items()}
    dth, dc = np.zeros(d), np.zeros(d)
    for c in clients:
        ck = cis.get(c.cid, np.zeros(d))
        t = _local(c, x, ck, cg, local_steps, local_step, l1, prox, l1_mode)
        cn = ck - cg + (x - t) / (local_steps * local_step)
        dth += t - x
        dc += cn - ck
        cis[c.cid] = cn
    return x + server_step / len(clients) * dth, {"c": cg + dc / len(clients), "c_i": cis}



class _Vars:
    def __init__(self, d):
        self.c = np.zeros(d)
        self.ck = {}


def fen2_proximal_object(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                         l1_mode="subgradient", server_step=1.0, weighting="uniform", num_clients=None, **_):
    """Correct (declared l1_mode="proximal"): the l1 term of eq. (7) taken by its proximal step (soft-threshold
    of t - th after the smooth step, centred at theta^{t-1}), the paper's sub-gradient read as a proximal
    gradient; c_k by line 10, the server by lines 13-14; an opaque state object."""
    st = state if state is not None else _Vars(len(x))
    m = num_clients or len(clients)
    dth, dc = np.zeros_like(x), np.zeros_like(x)
    for c in clients:
        ck = st.ck.get(c.cid, np.zeros_like(x))
        t = x.copy()
        for _ in range(int(local_steps)):
            if l1_mode == "proximal":
                v = (t - x) - local_step * (c.grad(t) - ck + st.c + prox * (t - x))
                t = x + np.sign(v) * np.maximum(np.abs(v) - local_step * l1, 0.0)
            else:
                t = t - local_step * (c.grad(t) - ck + st.c + prox * (t - x) + l1 * np.sign(t - x))
        cn = ck - st.c + (x - t) / (local_steps * local_step)
        dth += t - x
        dc += cn - ck
        st.ck[c.cid] = cn
    st.c = st.c + dc / m
    return x + server_step * dth / len(clients), st


CORRECT = [
    ("fen2_dict_inplace", fen2_dict_inplace, {}),
    ("fen2_proximal_object", fen2_proximal_object, {"l1_mode": "proximal"}),
]
WRONG = [
    ("fen2_aliased_variate", fen2_aliased_variate, {}),
    ("fen2_c_over_participants", fen2_c_over_participants, {}),
]
