"""FedElasticNet for FedDyn (Kim et al., Alg. 3): theta_k = argmin L_k(t) - <g_k, t> + alpha/2 ||t - th||^2
+ lam1 ||t - th||_1 (eq. (10), exact); line 6: g_k+ = g_k - alpha Delta_k - lam1 sign(Delta_k) ("printed", sign(0) = 0)
or g_k+ = grad L_k(theta_k) ("kkt", eq. (11)); h+ = h - alpha/m sum_P Delta_k - lam1/m sum_P s_k (= h + 1/m sum_P
(g_k+ - g_k)); th+ = 1/|P| sum_P theta_k - h+/alpha; h = g_k = 0 initially."""
from __future__ import annotations

import numpy as np

from ._common import elastic_net, hess_lin


def _delta(c, x, g, alpha, l1):
    A, _b = hess_lin(c)
    return elastic_net(A + alpha * np.eye(len(x)), c.grad(x) - g, l1)


# ---------------------------------------------------------------- correct

def fenet3_inplace(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed",
                   num_clients=None, **_):
    """Correct: the paper's dict layout updated in place; both readings of line 6."""
    if state is None:
        state = {"h": np.zeros_like(x), "g_i": {}}
    m = num_clients or len(clients)
    thetas = []
    dh = np.zeros_like(x)
    for c in clients:
        g = np.asarray(state["g_i"].get(c.cid, np.zeros_like(x)), float)
        D = _delta(c, x, g, alpha, l1)
        th = x + D
        g_new = c.grad(th) if sign_at_zero == "kkt" else g - alpha * D - l1 * np.sign(D)
        dh += g_new - g
        state["g_i"][c.cid] = g_new
        thetas.append(th)
    state["h"] = np.asarray(state["h"], float) + dh / m
    return np.mean(thetas, axis=0) - state["h"] / alpha, state


class _Alg3:
    def __init__(self, d):
        self.h = np.zeros(d)
        self.g = {}


def fenet3_kkt_object(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed",
                      num_clients=None, **_):
    """Correct: state in an object; line 6/12 with the exact subgradient s_k = (g_k - grad L_k(theta_k)
    - alpha Delta_k)/lam1 (the KKT reading, declared sign_at_zero="kkt"), h updated by lines 12's formula."""
    st = state if state is not None else _Alg3(len(x))
    m = num_clients or len(clients)
    new = _Alg3(len(x))
    new.g = dict(st.g)
    h = st.h.copy()
    ths = []
    for c in clients:
        g = st.g.get(c.cid, np.zeros(len(x)))
        D = _delta(c, x, g, alpha, l1)
        th = x + D
        if sign_at_zero == "kkt":
            s = (g - c.grad(th) - alpha * D) / l1 if l1 > 0 else np.zeros_like(D)
        else:
            s = np.sign(D)
        new.g[c.cid] = g - alpha * D - l1 * s
        h = h - alpha / m * D - l1 / m * s
        ths.append(th)
    new.h = h
    return sum(ths) / len(ths) - h / alpha, new


# ---------------------------------------------------------------- wrong

def fenet3_h_over_participants(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed",
                               num_clients=None, **_):
    """WRONG: line 12 divided by |P_t| instead of m, so h is not the mean of the m stored g_k (Lemma B.2) under
    partial participation."""
    st = state or {"h": np.zeros_like(x), "g_i": {}}
    g_all = dict(st["g_i"])
    h = np.asarray(st["h"], float).copy()
    ths = []
    for c in clients:
        g = np.asarray(g_all.get(c.cid, np.zeros_like(x)), float)
        D = _delta(c, x, g, alpha, l1)
        th = x + D
        gn = c.grad(th) if sign_at_zero == "kkt" else g - alpha * D - l1 * np.sign(D)
        h += (gn - g) / len(clients)
        g_all[c.cid] = gn
        ths.append(th)
    return np.mean(ths, axis=0) - h / alpha, {"h": h, "g_i": g_all}


def fenet3_sign_of_model(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed",
                         num_clients=None, **_):
    """WRONG: lines 6 and 12 use sign(theta_k^t) (the l1 subgradient of a lasso on the weights) instead of
    sign(theta_k^t - theta^{t-1}), the subgradient of the l1 term of eq. (10)."""
    st = state or {"h": np.zeros_like(x), "g_i": {}}
    m = num_clients or len(clients)
    g_all = dict(st["g_i"])
    h = np.asarray(st["h"], float).copy()
    ths = []
    for c in clients:
        g = np.asarray(g_all.get(c.cid, np.zeros_like(x)), float)
        D = _delta(c, x, g, alpha, l1)
        th = x + D
        gn = g - alpha * D - l1 * np.sign(th)
        h += (gn - g) / m
        g_all[c.cid] = gn
        ths.append(th)
    return np.mean(ths, axis=0) - h / alpha, {"h": h, "g_i": g_all}


def fenet3_server_all_models(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed",
                             num_clients=None, **_):
    """WRONG: line 13 averages the stored theta_k of every client (line 10 keeps the absent ones' models) instead of
    the participants P_t only; the same as the paper while every client participates."""
    st = state or {"h": np.zeros_like(x), "g_i": {}, "theta_i": {}}
    m = num_clients or len(clients)
    g_all = dict(st["g_i"])
    th_all = dict(st.get("theta_i", {}))
    h = np.asarray(st["h"], float).copy()
    for c in clients:
        g = np.asarray(g_all.get(c.cid, np.zeros_like(x)), float)
        D = _delta(c, x, g, alpha, l1)
        gn = c.grad(x + D) if sign_at_zero == "kkt" else g - alpha * D - l1 * np.sign(D)
        h += (gn - g) / m
        g_all[c.cid] = gn
        th_all[c.cid] = x + D
    return np.mean(list(th_all.values()), axis=0) - h / alpha, {"h": h, "g_i": g_all, "theta_i": th_all}


CORRECT = [
    ("fenet3_inplace_printed", fenet3_inplace, {}),
    ("fenet3_kkt_object", fenet3_kkt_object, {"sign_at_zero": "kkt"}),
]
WRONG = [
    ("fenet3_h_over_participants", fenet3_h_over_participants, {}),
    ("fenet3_sign_of_model", fenet3_sign_of_model, {}),
    ("fenet3_server_all_models", fenet3_server_all_models, {}),
]
CRASH_IS_THE_BUG: tuple = ()
