"""FedElasticNet Alg. 2 (SCAFFOLD + elastic net, Kim et al.): held-out implementations, from the spec only.

K steps of eq. (7): y <- y - eta_l (grad f_k(y) - c_k + c + lam2 (y - x) + lam1 sign(y - x)) (sign(0) = 0;
"proximal": the l1 part as a soft-threshold around x); c_k+ = c_k - c + (x - y)/(K eta_l);
x+ = x + eta_g/|P| sum Delta_k; c+ = c + 1/m sum (c_k+ - c_k), m = num_clients. State {"c", "c_i"}.
"""
from __future__ import annotations

import numpy as np

from ._util import soft


def _local(cl, x, c, ck, K, eta, lam2, lam1, mode, sign_of_y=False):
    y = x.copy()
    for _ in range(K):
        g = cl.grad(y) - ck + c + lam2 * (y - x)
        if mode == "proximal":
            y = x + soft(y - eta * g - x, eta * lam1)
        else:
            s = np.sign(y) if sign_of_y else np.sign(y - x)
            y = y - eta * (g + lam1 * s)
    return y


def _make(opaque=False, **bug):
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
             l1_mode="subgradient", server_step=1.0, num_clients=None, **_):
        d = len(x); m = num_clients or len(clients)
        if opaque:
            st = state if state is not None else [np.zeros(d), {}]
            c, store = st[0], st[1]
        else:
            c = np.zeros(d) if state is None else np.asarray(state["c"])
            store = {} if state is None else dict(state["c_i"])
        lam2 = 0.0 if bug.get("no_lam2") else prox
        dx, dc = [], []
        for cl in clients:
            ck = store.get(cl.cid, np.zeros(d))
            y = _local(cl, x, c, ck, local_steps, local_step, lam2, l1, l1_mode, bug.get("sign_of_y", False))
            cn = ck - c + (x - y) / (local_steps * local_step)
            dx.append(y - x); dc.append(cn - ck); store[cl.cid] = cn
        denom = len(clients) if bug.get("dc_over_P") else m
        c_new = c + np.sum(dc, 0) / denom
        xn = x + server_step / len(clients) * np.sum(dx, 0)
        if opaque:
            return xn, [c_new, store]
        return xn, {"c": c_new, "c_i": store}
    return impl


CORRECT = [
    ("dict_state_printed_sign", _make(), {}),
    ("opaque_list_state_proximal", _make(opaque=True), {"l1_mode": "proximal"}),
]
WRONG = [
    ("sign_of_theta_not_of_update", _make(sign_of_y=True), {}),
    ("dc_averaged_over_participants", _make(dc_over_P=True), {}),
    ("lam2_dropped (default lam2 = 0)", _make(no_lam2=True), {}),
    ("lam2_dropped_opaque (lam2 = 0.5)", _make(opaque=True, no_lam2=True), {"prox": 0.5}),
]
