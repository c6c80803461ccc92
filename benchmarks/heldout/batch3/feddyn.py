"""FedDyn (Acar et al. 2021, Alg. 1): theta_i = argmin f_i(t) - <g_i, t> + alpha/2 ||t - x||^2, i.e.
(A_i + alpha I) theta_i = b_i + g_i + alpha x; g_i+ = g_i - alpha (theta_i - x); h+ = h - alpha/N sum_S
(theta_i - x); x+ = 1/|S| sum_S theta_i - h+/alpha; h = g_i = 0 initially."""
from __future__ import annotations

import numpy as np

from ._common import hess


class DynServer:
    """Opaque state: the server's h and the clients' stored gradients, updated in place."""

    def __init__(self, d):
        self.h = np.zeros(d)
        self.grads = {}


def feddyn_opaque(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """Correct: opaque object state updated in place, local problems solved by Cholesky."""
    st = state if isinstance(state, DynServer) else DynServer(len(x))
    N = num_clients or len(clients)
    thetas = []
    for c in clients:
        A, b = hess(c)
        g = st.grads.get(c.cid, np.zeros_like(x))
        Lc = np.linalg.cholesky(A + alpha * np.eye(len(x)))
        th = np.linalg.solve(Lc.T, np.linalg.solve(Lc, b + g + alpha * x))
        st.grads[c.cid] = g - alpha * (th - x)
        thetas.append(th)
    st.h = st.h - alpha / N * np.sum(np.array(thetas) - x, axis=0)
    return np.mean(thetas, axis=0) - st.h / alpha, st


def feddyn_h_over_participants(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: h is updated with alpha/|S| instead of alpha/N (Alg. 1 line 9 divides by the number of all
    clients m); equal under full participation, and h = 1/N sum g_i breaks under partial participation."""
    if state is None:
        state = {"h": np.zeros_like(x), "g_i": {}}
    g_i = dict(state["g_i"]); ths = []
    for c in clients:
        A, b = hess(c)
        g = np.asarray(g_i.get(c.cid, np.zeros_like(x)), dtype=float)
        th = np.linalg.solve(A + alpha * np.eye(len(x)), b + g + alpha * x)
        g_i[c.cid] = g - alpha * (th - x); ths.append(th)
    h = np.asarray(state["h"], dtype=float) - alpha / len(clients) * np.sum(np.array(ths) - x, axis=0)
    return np.mean(ths, axis=0) - h / alpha, {"h": h, "g_i": g_i}


def feddyn_late_joiner_grad(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: a client seen for the first time initialises its stored gradient to grad f_i(x) (its true
    gradient) instead of 0 (Alg. 1: grad L_k(theta_k^0) = 0, which h^0 = 0 = mean of them assumes); the
    server's h = 1/N sum g_i no longer holds once such a client joins after round 1."""
    first_round = state is None
    if state is None:
        state = {"h": np.zeros_like(x), "g_i": {}}
    g_i = dict(state["g_i"]); ths = []
    N = num_clients or len(clients)
    for c in clients:
        A, b = hess(c)
        g = np.asarray(g_i[c.cid], dtype=float) if c.cid in g_i else (np.zeros_like(x) if first_round else c.grad(x))
        th = np.linalg.solve(A + alpha * np.eye(len(x)), b + g + alpha * x)
        g_i[c.cid] = g - alpha * (th - x); ths.append(th)
    h = np.asarray(state["h"], dtype=float) - alpha / N * np.sum(np.array(ths) - x, axis=0)
    return np.mean(ths, axis=0) - h / alpha, {"h": h, "g_i": g_i}


def feddyn_mean_all_models(x, clients, *, state=None, rng=None, alpha=1.0, num_clients=None, **_):
    """WRONG: the server model averages the latest theta_k of every client seen so far (absent ones' stale
    models included, kept in an opaque tuple state) instead of the participants' 1/|P_t| sum_{P_t} theta_k of
    Alg. 1 line 10; equal under full participation."""
    h, gs, models = (np.zeros_like(x), {}, {}) if state is None else state
    N = num_clients or len(clients)
    ths = []
    for c in clients:
        A, b = hess(c)
        g = gs.get(c.cid, np.zeros_like(x))
        th = np.linalg.solve(A + alpha * np.eye(len(x)), b + g + alpha * x)
        gs[c.cid] = g - alpha * (th - x); models[c.cid] = th; ths.append(th)
    h = h - alpha / N * np.sum(np.array(ths) - x, axis=0)
    return np.mean(list(models.values()), axis=0) - h / alpha, (h, gs, models)


CORRECT = [("opaque_object", feddyn_opaque, {})]
WRONG = [("h_over_participants", feddyn_h_over_participants, {}),
         ("late_joiner_starts_at_gradient", feddyn_late_joiner_grad, {}),
         ("server_mean_of_all_stored_models", feddyn_mean_all_models, {})]
