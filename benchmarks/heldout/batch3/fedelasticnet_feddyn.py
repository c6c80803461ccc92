"""FedElasticNet for FedDyn (Kim et al., Alg. 3): theta_k = argmin f_k - <g_k, .> + alpha/2 ||. - x||^2
+ lam1 ||. - x||_1 (eq. (10), exact); line 6: g_k+ = g_k - alpha Delta_k - lam1 sign(Delta_k) (printed,
sign(0) = 0) or g_k+ = grad f_k(theta_k) (KKT reading); line 12: h+ = h - alpha/m sum_P Delta_k - lam1/m sum_P
s_k; line 13: x+ = 1/|P| sum_P theta_k - h+/alpha; h = g_k = 0 initially."""
from __future__ import annotations

import numpy as np

from ._common import elastic_net, hess


def _solve(c, x, g, alpha, l1):
    A, b = hess(c)
    return x + elastic_net(A + alpha * np.eye(len(x)), A @ x - b - g, l1)


class _Dyn:
    def __init__(self, d):
        self.h = np.zeros(d)
        self.g = {}


def end_kkt_opaque(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="kkt", num_clients=None,
                   **_):
    """Correct: KKT reading of line 6 (g_k+ = grad f_k(theta_k)), opaque object state updated in place."""
    st = state if isinstance(state, _Dyn) else _Dyn(len(x))
    m = num_clients or len(clients)
    ths = []
    for c in clients:
        g = st.g.get(c.cid, np.zeros_like(x))
        th = _solve(c, x, g, alpha, l1)
        g_new = c.grad(th) if sign_at_zero == "kkt" else g - alpha * (th - x) - l1 * np.sign(th - x)
        st.h = st.h + (g_new - g) / m
        st.g[c.cid] = g_new
        ths.append(th)
    return np.mean(ths, axis=0) - st.h / alpha, st


def end_printed_dict(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, num_clients=None, **_):
    """Correct: the printed line 6 (sign(0) = 0) with the contract's dict state, written line by line."""
    h = np.zeros_like(x) if state is None else np.array(state["h"], float)
    gs = {} if state is None else {k: np.array(v, float) for k, v in state["g_i"].items()}
    m = num_clients or len(clients)
    ths, deltas, signs = [], [], []
    for c in clients:
        g = gs.get(c.cid, np.zeros_like(x))
        th = _solve(c, x, g, alpha, l1)
        D = th - x
        gs[c.cid] = g - alpha * D - l1 * np.sign(D)
        ths.append(th); deltas.append(D); signs.append(np.sign(D))
    h = h - alpha / m * np.sum(deltas, axis=0) - l1 / m * np.sum(signs, axis=0)
    return np.mean(ths, axis=0) - h / alpha, {"h": h, "g_i": gs}


def end_h_over_participants(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, num_clients=None, **_):
    """WRONG: line 12 divided by |P_t| instead of m (Alg. 3 line 12: alpha/m, lam1/m), so h is no longer the
    mean of the stored g_k (Lemma B.2) under partial participation."""
    h = np.zeros_like(x) if state is None else np.array(state["h"], float)
    gs = {} if state is None else {k: np.array(v, float) for k, v in state["g_i"].items()}
    ths, incs = [], []
    for c in clients:
        g = gs.get(c.cid, np.zeros_like(x))
        th = _solve(c, x, g, alpha, l1)
        D = th - x
        gs[c.cid] = g - alpha * D - l1 * np.sign(D)
        ths.append(th); incs.append(alpha * D + l1 * np.sign(D))
    h = h - np.sum(incs, axis=0) / len(clients)
    return np.mean(ths, axis=0) - h / alpha, {"h": h, "g_i": gs}


def end_model_with_old_h(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, num_clients=None, **_):
    """WRONG: the server forms theta^t with h^{t-1} (model line before the h line), where line 13 uses the h^t
    just computed in line 12."""
    h = np.zeros_like(x) if state is None else np.array(state["h"], float)
    gs = {} if state is None else {k: np.array(v, float) for k, v in state["g_i"].items()}
    m = num_clients or len(clients)
    ths, incs = [], []
    for c in clients:
        g = gs.get(c.cid, np.zeros_like(x))
        th = _solve(c, x, g, alpha, l1)
        D = th - x
        gs[c.cid] = g - alpha * D - l1 * np.sign(D)
        ths.append(th); incs.append(alpha * D + l1 * np.sign(D))
    x_new = np.mean(ths, axis=0) - h / alpha
    h = h - np.sum(incs, axis=0) / m
    return x_new, {"h": h, "g_i": gs}


CORRECT = [("kkt_opaque", end_kkt_opaque, {"sign_at_zero": "kkt"}),
           ("printed_dict", end_printed_dict, {})]
WRONG = [("h_over_participants", end_h_over_participants, {}),
         ("model_with_previous_h", end_model_with_old_h, {})]
