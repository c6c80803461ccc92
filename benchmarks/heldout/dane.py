"""DANE+ (Jiang, Rodomanov & Stich 2024, Alg. 1): held-out implementations, from the spec only.

F_i(x) = f_i(x) + <h_i, x> + lam/2 ||x - x^r||^2, x_i = argmin F_i (exact) or K GD steps of size eta from x^r
(last iterate); x^{r+1} = sum_i w_i x_i (standard) or x_xi, xi ~ w (random; the kit passes draw={"client": cid}).
CV (1): h_i = grad f(x^r) - grad f_i(x^r), grad f = sum_i w_i grad f_i. CV (B.84): h_i+ = h_i + m (x_i - x^{r+1}),
h_i0 = grad f(x^0) - grad f_i(x^0); state {"h_i": {cid: vec}}.
"""
from __future__ import annotations

import numpy as np

from ._util import quad, weights


def _local(c, x, h, lam, K, eta):
    if K is None:
        A, b = quad(c)
        return np.linalg.solve(A + lam * np.eye(len(x)), b - h + lam * x)
    y = x.copy()
    for _ in range(K):
        y = y - eta * (c.grad(y) + h + lam * (y - x))
    return y


def _cv1(clients, x, w):
    G = np.array([c.grad(x) for c in clients])
    gf = w @ G
    return {c.cid: gf - G[k] for k, c in enumerate(clients)}


def dane_preconditioned(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, weighting="uniform", **_):
    """Correct (exact solves, CV (1)): DANE as one preconditioned step x - [sum w_i (A_i + lam I)^{-1}] grad f(x)."""
    w = weights(clients, weighting)
    P = sum(wi * np.linalg.inv(quad(c)[0] + lam * np.eye(len(x))) for wi, c in zip(w, clients))
    gf = sum(wi * c.grad(x) for wi, c in zip(w, clients))
    return x - P @ gf


def dane_f32_exact(x, clients, *, state=None, rng=None, lam=1.0, weighting="uniform", **_):
    """Correct (rtol 1e-5): CV (1), exact solves in float32 via Cholesky."""
    w = weights(clients, weighting).astype(np.float32)
    x32 = x.astype(np.float32)
    quads = [quad(c, np.float32) for c in clients]
    G = [A @ x32 - b for A, b in quads]
    gf = sum(wi * g for wi, g in zip(w, G))
    out = np.zeros_like(x32)
    for wi, (A, b), g in zip(w, quads, G):
        Lc = np.linalg.cholesky(A + np.float32(lam) * np.eye(len(x), dtype=np.float32))
        rhs = b - (gf - g) + np.float32(lam) * x32
        out += wi * np.linalg.solve(Lc.T, np.linalg.solve(Lc, rhs))
    return out.astype(np.float64)


class _HBox:
    def __init__(self):
        self.h = None


def dane_b84_opaque(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1, m=1.0,
                    weighting="uniform", control_variate="scaffnew", **_):
    """Correct: CV (B.84) with K local steps, the variates in an opaque object."""
    st = state or _HBox(); w = weights(clients, weighting)
    if st.h is None:
        st.h = _cv1(clients, x, w)
    locs = [_local(c, x, st.h[c.cid], lam, local_steps, local_step) for c in clients]
    xn = sum(wi * y for wi, y in zip(w, locs))
    for c, y in zip(clients, locs):
        st.h[c.cid] = st.h[c.cid] + m * (y - xn)
    return xn, st


def dane_random_own(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                    weighting="uniform", averaging="random", draw=None, **_):
    """Correct: randomized averaging; the kit's draw when given, else its own xi ~ w by inverse CDF."""
    w = weights(clients, weighting)
    if draw is not None:
        j = [c.cid for c in clients].index(draw["client"])
    else:
        j = int(np.searchsorted(np.cumsum(w), rng.random() * np.sum(w), side="right"))
        j = min(j, len(clients) - 1)
    h = _cv1(clients, x, w)
    c = clients[j]
    return _local(c, x, h[c.cid], lam, local_steps, local_step)


# ---------------------------------------------------------------- wrong
def dane_b84_old_model(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1, m=1.0,
                       weighting="uniform", **_):
    """WRONG: (B.84) update with the broadcast model x^r instead of the new average x^{r+1}."""
    w = weights(clients, weighting)
    H = _cv1(clients, x, w) if state is None else dict(state["h_i"])
    locs = [_local(c, x, H[c.cid], lam, local_steps, local_step) for c in clients]
    xn = sum(wi * y for wi, y in zip(w, locs))
    return xn, {"h_i": {c.cid: H[c.cid] + m * (y - x) for c, y in zip(clients, locs)}}


def dane_uniform_gradf(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                       weighting="uniform", **_):
    """WRONG (non-default hyperparameter): grad f in the control variate is the plain mean of the clients'
    gradients even when weighting='num_examples' (the average of the local models is weighted)."""
    w = weights(clients, weighting)
    h = _cv1(clients, x, weights(clients, "uniform"))
    return sum(wi * _local(c, x, h[c.cid], lam, local_steps, local_step) for wi, c in zip(w, clients))


def dane_random_never_last(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                           weighting="uniform", averaging="random", draw=None, **_):
    """WRONG: own selection rng.choice(len(clients) - 1, p=renormalised w[:-1]): the last client is never chosen."""
    w = weights(clients, weighting)
    if draw is not None:
        j = [c.cid for c in clients].index(draw["client"])
    else:
        j = int(rng.choice(len(clients) - 1, p=w[:-1] / w[:-1].sum())) if len(clients) > 1 else 0
    h = _cv1(clients, x, w)
    return _local(clients[j], x, h[clients[j].cid], lam, local_steps, local_step)


def dane_steps_without_anchor(x, clients, *, state=None, rng=None, lam=1.0, local_steps=5, local_step=0.1,
                              weighting="uniform", **_):
    """WRONG: K local steps where the lam-term is anchored at the previous local iterate (lam (y - y_prev) = 0 on
    the first step), i.e. the regulariser is lost after a refactor that moved y_prev into the loop."""
    w = weights(clients, weighting)
    h = _cv1(clients, x, w)
    out = np.zeros_like(x)
    for wi, c in zip(w, clients):
        y = x.copy()
        for _ in range(local_steps):
            y_prev = y.copy()
            y = y - local_step * (c.grad(y) + h[c.cid] + lam * (y - y_prev))
        out += wi * y
    return out


def dane_b84_first_round_zero(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                              m=1.0, weighting="uniform", **_):
    """(B.84) with h_i0 = 0 (FedProx in round 1) instead of grad f(x^0) - grad f_i(x^0): a start App. B.3 allows
    (first labelled WRONG; see CORRECT below)."""
    w = weights(clients, weighting)
    H = {c.cid: np.zeros(len(x)) for c in clients} if state is None else dict(state["h_i"])
    locs = [_local(c, x, H[c.cid], lam, local_steps, local_step) for c in clients]
    xn = sum(wi * y for wi, y in zip(w, locs))
    return xn, {"h_i": {c.cid: H[c.cid] + m * (y - xn) for c, y in zip(clients, locs)}}


CORRECT = [
    ("preconditioned_step", dane_preconditioned, {}),
    ("f32_cholesky_exact (rtol 1e-5)", dane_f32_exact, {"rtol": 1e-5}),
    ("b84_opaque_K_steps", dane_b84_opaque, {"control_variate": "scaffnew", "local_steps": 5, "local_step": 0.1,
                                            "m": 1.0}),
    ("random_averaging_inverse_cdf", dane_random_own, {"averaging": "random", "weighting": "num_examples"}),
]
WRONG = [
    ("b84_update_with_old_model", dane_b84_old_model, {"control_variate": "scaffnew"}),
    ("gradf_unweighted_under_num_examples", dane_uniform_gradf, {"weighting": "num_examples"}),
    ("random_never_selects_last", dane_random_never_last, {"averaging": "random", "weighting": "num_examples"}),
    ("k_steps_lam_anchor_lost", dane_steps_without_anchor, {"local_steps": 5, "local_step": 0.1}),
]
# Relabelled correct after the first run: App. B.3 of Jiang, Rodomanov & Stich asks of the (B.84) start only
# sum_i w_i h_i0 = 0, which h_i0 = 0 satisfies; this implementation's "WRONG" label (and the kit's former
# rejection of it) read the paper's example start as the only one. The kit now accepts every allowed start.
CORRECT.append(("b84_zero_initial_variates", dane_b84_first_round_zero, {"control_variate": "scaffnew"}))


def dane_b84_inplace(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1, m=1.0,
                     weighting="uniform", **_):
    """Correct: (B.84) with a readable state whose h_i arrays are updated in place (h += m (x_i - x+))."""
    w = weights(clients, weighting)
    st = state if state is not None else {"h_i": _cv1(clients, x, w)}
    locs = [_local(c, x, st["h_i"][c.cid], lam, local_steps, local_step) for c in clients]
    xn = sum(wi * y for wi, y in zip(w, locs))
    for c, y in zip(clients, locs):
        st["h_i"][c.cid] += m * (y - xn)
    return xn, st


CORRECT.append(("b84_dict_state_mutated_in_place", dane_b84_inplace, {"control_variate": "scaffnew"}))
