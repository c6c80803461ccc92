"""FedElasticNet for SCAFFOLD (Kim et al., Alg. 2): from th, K steps of eq. (7)
t <- t - eta_l (grad L_k(t) - c_k + c + lam2 (t - th) + lam1 sign(t - th)), sign(0) = 0;
c_k+ = c_k - c + (th - t)/(K eta_l); th+ = th + eta_g/|P| sum_P Delta_k; c+ = c + 1/m sum_P (c_k+ - c_k); c = c_k = 0."""
from __future__ import annotations

import numpy as np


def _steps(c, x, ck, cs, K, eta, lam2, lam1):
    t = x.copy()
    for _ in range(K):
        t = t - eta * (c.grad(t) - ck + cs + lam2 * (t - x) + lam1 * np.sign(t - x))
    return t


# ---------------------------------------------------------------- correct

def fenet2_tuple_state(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                       l1_mode="subgradient", server_step=1.0, weighting="uniform", num_clients=None, **_):
    """Correct: the state is a plain tuple (c, {cid: c_k}) (opaque to the kit); clients of the round in a dict."""
    cs, cks = state if state is not None else (np.zeros_like(x), {})
    m = num_clients or len(clients)
    cks = dict(cks)
    dth, dc = [], np.zeros_like(x)
    for c in clients:
        ck = cks.get(c.cid, np.zeros_like(x))
        t = _steps(c, x, ck, cs, local_steps, local_step, prox, l1)
        ck_new = ck - cs + (x - t) / (local_steps * local_step)
        dth.append(t - x)
        dc += ck_new - ck
        cks[c.cid] = ck_new
    if weighting == "num_examples":
        n = np.array([c.num_examples for c in clients], float)
        avg = (n / n.sum()) @ np.array(dth)
    else:
        avg = np.mean(dth, axis=0)
    return x + server_step * avg, (cs + dc / m, cks)


# ---------------------------------------------------------------- wrong

def fenet2_c_over_participants(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                               l1_mode="subgradient", server_step=1.0, weighting="uniform", num_clients=None, **_):
    """WRONG: c+ = c + 1/|P| sum_P Delta c_k (the participants' mean) instead of 1/m (line 14); c then stops being
    the mean of all m client variates under partial participation."""
    st = state or {"c": np.zeros_like(x), "c_i": {}}
    cs = np.asarray(st["c"], float)
    cis = dict(st["c_i"])
    dth, dc = np.zeros_like(x), np.zeros_like(x)
    for c in clients:
        ck = np.asarray(cis.get(c.cid, np.zeros_like(x)), float)
        t = _steps(c, x, ck, cs, local_steps, local_step, prox, l1)
        new = ck - cs + (x - t) / (local_steps * local_step)
        dth += (t - x) / len(clients)
        dc += new - ck
        cis[c.cid] = new
    return x + server_step * dth, {"c": cs + dc / len(clients), "c_i": cis}


def fenet2_cv_gradient_average(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                               l1_mode="subgradient", server_step=1.0, weighting="uniform", num_clients=None, **_):
    """WRONG: c_k+ = average of the local gradients grad L_k over the K steps (the regularisers left out); line 10's
    c_k+ = c_k - c + (th - theta_k)/(B eta_l) equals the average of the whole step direction, lam2 and lam1 sign
    terms included."""
    st = state or {"c": np.zeros_like(x), "c_i": {}}
    cs = np.asarray(st["c"], float)
    m = num_clients or len(clients)
    cis = dict(st["c_i"])
    dth, dc = np.zeros_like(x), np.zeros_like(x)
    for c in clients:
        ck = np.asarray(cis.get(c.cid, np.zeros_like(x)), float)
        t = x.copy()
        gsum = np.zeros_like(x)
        for _ in range(local_steps):
            g = c.grad(t)
            gsum += g
            t = t - local_step * (g - ck + cs + prox * (t - x) + l1 * np.sign(t - x))
        new = gsum / local_steps
        dth += (t - x) / len(clients)
        dc += new - ck
        cis[c.cid] = new
    return x + server_step * dth, {"c": cs + dc / m, "c_i": cis}


def fenet2_newcomer_c_from_server(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0,
                                  l1=0.05, l1_mode="subgradient", server_step=1.0, weighting="uniform",
                                  num_clients=None, **_):
    """WRONG: a client that joins in a later round starts from c_k = c^{t-1} (copied from the server) instead of
    c_k^0 = 0; with c^0 = 1/m sum c_k^0 the paper's updates keep c = 1/m sum c_k, which this breaks."""
    st = state or {"c": np.zeros_like(x), "c_i": {}}
    cs = np.asarray(st["c"], float)
    m = num_clients or len(clients)
    cis = dict(st["c_i"])
    dth, dc = np.zeros_like(x), np.zeros_like(x)
    for c in clients:
        ck = np.asarray(cis[c.cid], float) if c.cid in cis else cs.copy()
        t = _steps(c, x, ck, cs, local_steps, local_step, prox, l1)
        new = ck - cs + (x - t) / (local_steps * local_step)
        dth += (t - x) / len(clients)
        dc += new - ck
        cis[c.cid] = new
    return x + server_step * dth, {"c": cs + dc / m, "c_i": cis}


CORRECT = [
    ("fenet2_tuple_state", fenet2_tuple_state, {}),
]
WRONG = [
    ("fenet2_c_over_participants", fenet2_c_over_participants, {}),
    ("fenet2_cv_gradient_average", fenet2_cv_gradient_average, {}),
    ("fenet2_newcomer_c_from_server", fenet2_newcomer_c_from_server, {}),
]
CRASH_IS_THE_BUG: tuple = ()
