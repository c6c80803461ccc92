"""FedElasticNet for FedDyn (Kim et al., Alg. 3, eqs. (10)-(11)), from the paper and docs/conformance.md only.

Client k in P: Delta_k = argmin_u 1/2 u^T (A_k + lam2 I) u + (grad L_k(th) - g_k)^T u + lam1 ||u||_1 (exact,
eq. (10)); line 6: g_k+ = g_k - lam2 Delta_k - lam1 sign(Delta_k) with sign(0) = 0 ("printed") or
g_k+ = grad L_k(theta_k) ("kkt"); h+ = h + 1/m sum_P (g_k+ - g_k) (line 12), th+ = mean_P theta_k - h+/lam2.
Initially h = 0, g_k = 0. lam2 is the kit's `alpha`, lam1 its `l1`.
"""
from __future__ import annotations

import numpy as np


def _cd(Q, q, lam1, tol=1e-15):
    """min_u 1/2 u^T Q u + q^T u + lam1 ||u||_1, coordinate descent with a maintained residual."""
    d = len(q)
    u = np.zeros(d)
    r = q.copy()
    for _ in range(200000):
        big = 0.0
        for i in range(d):
            z = Q[i, i] * u[i] - r[i]
            new = np.sign(z) * max(abs(z) - lam1, 0.0) / Q[i, i]
            if new != u[i]:
                r += Q[:, i] * (new - u[i])
                big = max(big, abs(new - u[i]))
                u[i] = new
        if big <= tol * (1 + np.abs(u).max()):
            break
    return u


def _solve(c, x, g, lam1, lam2):
    Z = c.features
    Q = Z.T @ Z / Z.shape[0] + lam2 * np.eye(len(x))
    return _cd(Q, c.grad(x) - g, lam1)


def fen3_kkt_dict(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed",
                  num_clients=None, **_):
    """Correct (declared sign_at_zero="kkt"): g_k+ = grad L_k(theta_k) (eq. (11) exact), h moved by the same
    increments, dict state {"h", "g_i"}."""
    d = len(x)
    st = state if state is not None else {"h": np.zeros(d), "g_i": {}}
    h = np.asarray(st["h"], float).copy()
    gi = {k: np.asarray(v, float) for k, v in st["g_i"].items()}
    m = num_clients or len(clients)
    thetas = []
    for c in clients:
        g = gi.get(c.cid, np.zeros(d))
        delta = _solve(c, x, g, l1, alpha)
        th = x + delta
        if sign_at_zero == "kkt":
            gn = c.grad(th)
        else:
            gn = g - alpha * delta - l1 * np.sign(delta)
        h += (gn - g) / m
        gi[c.cid] = gn
        thetas.append(th)
    return np.mean(thetas, axis=0) - h / alpha, {"h": h, "g_i": gi}


class _DynState:
    def __init__(self):
        self.g = {}


def fen3_printed_object_mean_h(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed",
                               num_clients=None, **_):
    """Correct. Printed line 6 (sign(0) = 0), an opaque state holding only the g_k; h is recomputed every round
    as 1/m sum_k g_k (Lemma B.2: lines 6 and 12 use the same increments, so h^t = 1/m sum_k g_k^t)."""
    st = state if state is not None else _DynState()
    d = len(x)
    m = num_clients or len(clients)
    thetas = []
    for c in clients:
        g = st.g.get(c.cid, np.zeros(d))
        delta = _solve(c, x, g, l1, alpha)
        st.g[c.cid] = c.grad(x + delta) if sign_at_zero == "kkt" else g - alpha * delta - l1 * np.sign(delta)
        thetas.append(x + delta)
    h = sum(st.g.values()) / m
    return np.mean(thetas, axis=0) - h / alpha, st


def fen3_h_sign(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed", num_clients=None,
                **_):
    """WRONG: line 13 written as th+ = mean theta_k + h/lam2 (sign of the h correction flipped). Round 1 from
    h = 0 differs already, since h^1 is built from round 1's increments."""
    d = len(x)
    st = state if state is not None else {"h": np.zeros(d), "g_i": {}}
    m = num_clients or len(clients)
    h = np.asarray(st["h"], float)
    gi = dict(st["g_i"])
    acc = np.zeros(d)
    for c in clients:
        g = np.asarray(gi.get(c.cid, np.zeros(d)), float)
        delta = _solve(c, x, g, l1, alpha)
        gn = c.grad(x + delta) if sign_at_zero == "kkt" else g - alpha * delta - l1 * np.sign(delta)
        h = h + (gn - g) / m
        gi[c.cid] = gn
        acc += x + delta
    return acc / len(clients) + h / alpha, {"h": h, "g_i": gi}


def fen3_h_over_participants(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed",
                             num_clients=None, **_):
    """WRONG: line 12 divides by |P_t| instead of m, so h != 1/m sum_k g_k (Lemma B.2) under partial
    participation; identical when every client participates."""
    d = len(x)
    st = state if state is not None else {"h": np.zeros(d), "g_i": {}}
    h = np.asarray(st["h"], float)
    gi = dict(st["g_i"])
    acc, inc = np.zeros(d), np.zeros(d)
    for c in clients:
        g = np.asarray(gi.get(c.cid, np.zeros(d)), float)
        delta = _solve(c, x, g, l1, alpha)
        gn = c.grad(x + delta) if sign_at_zero == "kkt" else g - alpha * delta - l1 * np.sign(delta)
        inc += gn - g
        gi[c.cid] = gn
        acc += x + delta
    h = h + inc / len(clients)
    return acc / len(clients) - h / alpha, {"h": h, "g_i": gi}


CORRECT = [
    ("fen3_kkt_dict", fen3_kkt_dict, {"sign_at_zero": "kkt"}),
    ("fen3_printed_object_mean_h", fen3_printed_object_mean_h, {}),
]
WRONG = [
    ("fen3_h_sign", fen3_h_sign, {}),
    ("fen3_h_over_participants", fen3_h_over_participants, {}),
]
