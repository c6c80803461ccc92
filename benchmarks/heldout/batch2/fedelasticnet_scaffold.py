"""FedElasticNet Alg. 2 (Kim et al.): K steps of eq. (7)
th_k <- th_k - eta_l (grad L_k(th_k) - c_k + c + lam2 (th_k - th) + lam1 sign(th_k - th)), sign(0) = 0
("subgradient", as printed); c_k+ = c_k - c + (th - th_k)/(K eta_l); th+ = th + eta_g/|P| sum Delta_k;
c+ = c + 1/m sum Delta c_k; c = c_k = 0 at the start."""
from __future__ import annotations

import numpy as np


def fen2_dict_inplace(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                      server_step=1.0, num_clients=None, l1_mode="subgradient", **_):
    """Correct (printed sign(0) = 0): the paper's mapping, mutated in place."""
    m = num_clients or len(clients)
    state = state if state is not None else {"c": np.zeros_like(x), "c_i": {}}
    c = np.array(state["c"], dtype=float)
    dsum = np.zeros_like(x)
    for cl in clients:
        ck = np.array(state["c_i"].get(cl.cid, np.zeros_like(x)), dtype=float)
        th = x.copy()
        for _ in range(local_steps):
            th = th - local_step * (cl.grad(th) - ck + c + prox * (th - x) + l1 * np.sign(th - x))
        cnew = ck - c + (x - th) / (local_steps * local_step)
        state["c_i"][cl.cid] = cnew
        state["c"] += (cnew - ck) / m
        dsum += th - x
    return x + server_step / len(clients) * dsum, state


def fen2_ck_average_gradient(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0,
                             l1=0.05, server_step=1.0, num_clients=None, **_):
    """WRONG: c_k+ = the average of grad L_k over the local path (an option-I-like variate without the l1/l2
    terms); line 10 gives c_k+ = the average of the whole step direction, regularisers included."""
    m = num_clients or len(clients)
    st = state or {"c": np.zeros_like(x), "c_i": {}}
    c = st["c"]; ci = dict(st["c_i"])
    dsum = np.zeros_like(x); dc = np.zeros_like(x)
    for cl in clients:
        ck = ci.get(cl.cid, np.zeros_like(x))
        th = x.copy(); gsum = np.zeros_like(x)
        for _ in range(local_steps):
            g = cl.grad(th); gsum += g
            th = th - local_step * (g - ck + c + prox * (th - x) + l1 * np.sign(th - x))
        ci[cl.cid] = gsum / local_steps
        dc += (ci[cl.cid] - ck) / m; dsum += th - x
    return x + server_step / len(clients) * dsum, {"c": c + dc, "c_i": ci}


def fen2_late_joiner_ck_is_c(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0,
                             l1=0.05, server_step=1.0, num_clients=None, **_):
    """WRONG: a client seen for the first time starts from c_k = c (server variate) instead of c_k^0 = 0 (SCAFFOLD's
    initialisation, which Alg. 2 inherits; with c_k = c its first local steps carry no drift correction); round 1 is right."""
    m = num_clients or len(clients)
    st = state or {"c": np.zeros_like(x), "c_i": {}}
    c = st["c"]; ci = dict(st["c_i"])
    dsum = np.zeros_like(x); dc = np.zeros_like(x)
    for cl in clients:
        ck = ci.get(cl.cid, c.copy())
        th = x.copy()
        for _ in range(local_steps):
            th = th - local_step * (cl.grad(th) - ck + c + prox * (th - x) + l1 * np.sign(th - x))
        ci[cl.cid] = ck - c + (x - th) / (local_steps * local_step)
        dc += (ci[cl.cid] - ck) / m; dsum += th - x
    return x + server_step / len(clients) * dsum, {"c": c + dc, "c_i": ci}


CORRECT = [("dict_state_in_place_printed", fen2_dict_inplace, {})]
WRONG = [("c_k_is_mean_gradient_without_regularisers", fen2_ck_average_gradient, {}),
         ("late_joiner_c_k_starts_at_c", fen2_late_joiner_ck_is_c, {})]
