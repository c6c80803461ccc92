"""DANE+ (Jiang, Rodomanov & Stich 2024, Alg. 1): F_i(x) = f_i(x) + <h_i, x> + lam/2 ||x - x^r||^2,
x_i = argmin F_i (exact) or K GD steps from x^r; control variate (1) h_i = grad f(x^r) - grad f_i(x^r) with
f = sum_i w_i f_i, or (B.84) h_i+ = h_i + m (x_i - x+) from h_i0 = grad f(x0) - grad f_i(x0);
x+ = sum_i w_i x_i ("standard") or x_xi with xi ~ w ("random")."""
from __future__ import annotations

import numpy as np

from ._common import quad, weights


def dane_f32_k_steps(x, clients, *, state=None, rng=None, lam=1.0, local_steps=5, local_step=0.1,
                     weighting="uniform", **_):
    """Correct: control variate (1), K local GD steps, float32 (checked with rtol 1e-4)."""
    w = weights(clients, weighting).astype(np.float32)
    x32 = x.astype(np.float32)
    AB = [quad(c, np.float32) for c in clients]
    grads = [A @ x32 - b for A, b in AB]
    gf = sum(wi * g for wi, g in zip(w, grads))
    out = np.zeros_like(x32)
    for wi, (A, b), gi in zip(w, AB, grads):
        h = gf - gi
        y = x32.copy()
        for _ in range(local_steps if local_steps is not None else 0):
            y -= np.float32(local_step) * (A @ y - b + h + np.float32(lam) * (y - x32))
        out += wi * y
    return out.astype(np.float64)


class _B84:
    def __init__(self, h):
        self.h = h


def dane_b84_opaque_exact(x, clients, *, state=None, rng=None, lam=1.0, m=1.0, weighting="uniform", **_):
    """Correct: (B.84) with exact local solves, the variates in an opaque object."""
    w = weights(clients, weighting)
    AB = {c.cid: quad(c) for c in clients}
    if state is None:
        gf = sum(wi * (AB[c.cid][0] @ x - AB[c.cid][1]) for wi, c in zip(w, clients))
        state = _B84({c.cid: gf - (AB[c.cid][0] @ x - AB[c.cid][1]) for c in clients})
    locs = {}
    for c in clients:
        A, b = AB[c.cid]
        locs[c.cid] = np.linalg.solve(A + lam * np.eye(len(x)), b - state.h[c.cid] + lam * x)
    xn = sum(wi * locs[c.cid] for wi, c in zip(w, clients))
    return xn, _B84({c.cid: state.h[c.cid] + m * (locs[c.cid] - xn) for c in clients})


def dane_random_own_selection(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                              weighting="uniform", draw=None, **_):
    """Correct: averaging="random", exact solves; the kit's draw when given, else xi ~ w by inverse CDF."""
    w = weights(clients, weighting)
    AB = [quad(c) for c in clients]
    gf = sum(wi * (A @ x - b) for wi, (A, b) in zip(w, AB))
    if draw is not None and "client" in draw:
        j = [c.cid for c in clients].index(draw["client"])
    else:
        j = int(np.searchsorted(np.cumsum(w), rng.random() * w.sum(), side="right"))
        j = min(j, len(clients) - 1)
    A, b = AB[j]
    h = gf - (A @ x - b)
    return np.linalg.solve(A + lam * np.eye(len(x)), b - h + lam * x)


def dane_random_sorted_weights(x, clients, *, state=None, rng=None, lam=1.0, weighting="uniform", draw=None, **_):
    """WRONG: the selection law is built over the clients sorted by id but indexes the local models in list
    order, so client j is chosen with another client's weight whenever the list is not sorted by id (Alg. 1:
    xi ~ w)."""
    w = weights(clients, weighting)
    AB = [quad(c) for c in clients]
    gf = sum(wi * (A @ x - b) for wi, (A, b) in zip(w, AB))
    locs = [np.linalg.solve(A + lam * np.eye(len(x)), b - (gf - (A @ x - b)) + lam * x) for A, b in AB]
    if draw is not None and "client" in draw:
        return locs[[c.cid for c in clients].index(draw["client"])]
    order = sorted(range(len(clients)), key=lambda i: clients[i].cid)
    j = rng.choice(len(clients), p=w[order])
    return locs[j]


class _B84Neg:
    """Stores -h (the authors' code's sign convention for the stored variate)."""
    def __init__(self, neg_h):
        self.neg_h = neg_h


def dane_b84_opaque_sign(x, clients, *, state=None, rng=None, lam=1.0, m=1.0, weighting="uniform", **_):
    """WRONG: the state stores -h (c = -h) but the next round loads it as h, so from round 2 on the control
    variate has the wrong sign; the slip lives only in the opaque state ((B.84) carries h itself)."""
    w = weights(clients, weighting)
    AB = {c.cid: quad(c) for c in clients}
    if state is None:
        gf = sum(wi * (AB[c.cid][0] @ x - AB[c.cid][1]) for wi, c in zip(w, clients))
        h = {c.cid: gf - (AB[c.cid][0] @ x - AB[c.cid][1]) for c in clients}
    else:
        h = state.neg_h          # should be {k: -v for k, v in state.neg_h.items()}
    locs = {c.cid: np.linalg.solve(AB[c.cid][0] + lam * np.eye(len(x)), AB[c.cid][1] - h[c.cid] + lam * x)
            for c in clients}
    xn = sum(wi * locs[c.cid] for wi, c in zip(w, clients))
    return xn, _B84Neg({c.cid: -(h[c.cid] + m * (locs[c.cid] - xn)) for c in clients})


def dane_draw_client_as_index(x, clients, *, state=None, rng=None, lam=1.0, weighting="uniform", draw=None, **_):
    """WRONG: the kit's draw {"client": cid} used as a list position (a cid is a label: IndexError for ids
    >= n, another client's model when ids are permuted positions)."""
    w = weights(clients, weighting)
    AB = [quad(c) for c in clients]
    gf = sum(wi * (A @ x - b) for wi, (A, b) in zip(w, AB))
    locs = [np.linalg.solve(A + lam * np.eye(len(x)), b - (gf - (A @ x - b)) + lam * x) for A, b in AB]
    j = draw["client"] if draw is not None and "client" in draw else rng.choice(len(clients), p=w)
    return locs[j]


CORRECT = [("f32_k_steps (rtol 1e-4)", dane_f32_k_steps, {"local_steps": 5, "rtol": 1e-4}),
           ("b84_opaque_exact", dane_b84_opaque_exact, {"control_variate": "scaffnew"}),
           ("random_inverse_cdf_own_rng", dane_random_own_selection, {"averaging": "random"})]
WRONG = [("random_selection_law_over_sorted_ids", dane_random_sorted_weights,
          {"averaging": "random", "weighting": "num_examples"}),
         ("b84_opaque_state_stores_minus_h", dane_b84_opaque_sign, {"control_variate": "scaffnew"}),
         ("draw_client_used_as_list_index", dane_draw_client_as_index, {"averaging": "random"})]
CRASH_IS_THE_BUG = ("draw_client_used_as_list_index",)
