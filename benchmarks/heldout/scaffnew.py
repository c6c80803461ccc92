"""Scaffnew / ProxSkip (Mishchenko et al. 2022, Alg. 2): held-out implementations, written from the paper only.

One call = one communication: from x, each client runs local_steps (drawn by the kit ~ Geometric(p)) steps
x_i <- x_i - gamma (grad f_i(x_i) - h_i); then x+ = mean_i (x_i - gamma/p h_i) (= mean x_i since sum h_i = 0)
and h_i+ = h_i + p/gamma (x+ - x_i). State {"h_i": {cid: vec}}, h_i = 0 initially.
"""
from __future__ import annotations

import numpy as np

from ._util import weights


def _round(x, clients, H, K, gamma, p, w):
    hat = []
    for c in clients:
        y = x.copy()
        for _ in range(K):
            y = y - gamma * (c.grad(y) - H[c.cid])
        hat.append(y)
    xn = sum(wi * (y - gamma / p * H[c.cid]) for wi, y, c in zip(w, hat, clients))
    return xn, hat


def scaffnew_dict(x, clients, *, state=None, rng=None, local_steps=1, step=0.5, p=0.5, weighting="uniform", **_):
    """Correct: the prox-skip form x+ = mean(x_i - gamma/p h_i), readable state."""
    H = {c.cid: np.zeros(len(x)) for c in clients} if state is None else {k: v.copy() for k, v in state["h_i"].items()}
    w = weights(clients, weighting)
    xn, hat = _round(x, clients, H, local_steps, step, p, w)
    return xn, {"h_i": {c.cid: H[c.cid] + p / step * (xn - y) for c, y in zip(clients, hat)}}


class _Mem:
    def __init__(self):
        self.h = {}


def scaffnew_opaque_matrix(x, clients, *, state=None, rng=None, local_steps=1, step=0.5, p=0.5,
                           weighting="uniform", **_):
    """Correct: opaque state, local steps as an affine matrix recursion, x+ = plain mean of the local models."""
    st = state or _Mem(); d = len(x)
    w = weights(clients, weighting)
    hats = []
    for c in clients:
        A = c.features.T @ c.features / c.num_examples; b = c.features.T @ c.targets / c.num_examples
        h = st.h.get(c.cid, np.zeros(d))
        y = x.copy(); M = np.eye(d) - step * A
        for _ in range(local_steps):
            y = M @ y + step * (b + h)
        hats.append(y)
    xn = np.einsum("n,nd->d", w, np.array(hats))
    for c, y in zip(clients, hats):
        st.h[c.cid] = st.h.get(c.cid, np.zeros(d)) + p / step * (xn - y)
    return xn, st


# ---------------------------------------------------------------- wrong
def scaffnew_own_geometric(x, clients, *, state=None, rng=None, local_steps=1, step=0.5, p=0.5,
                           weighting="uniform", **_):
    """WRONG: ignores the kit's local_steps and draws its own Geometric(p) number of local steps."""
    K = int(rng.geometric(p))
    return scaffnew_dict(x, clients, state=state, local_steps=K, step=step, p=p, weighting=weighting)


def scaffnew_h_from_previous_iterate(x, clients, *, state=None, rng=None, local_steps=1, step=0.5, p=0.5,
                                     weighting="uniform", **_):
    """WRONG: the control-variate update uses the local iterate before the last local step (off by one)."""
    H = {c.cid: np.zeros(len(x)) for c in clients} if state is None else dict(state["h_i"])
    w = weights(clients, weighting)
    hat, prev = [], []
    for c in clients:
        y = x.copy(); yp = x.copy()
        for _ in range(local_steps):
            yp = y
            y = y - step * (c.grad(y) - H[c.cid])
        hat.append(y); prev.append(yp)
    xn = sum(wi * y for wi, y in zip(w, hat))
    return xn, {"h_i": {c.cid: H[c.cid] + p / step * (xn - yp) for c, yp in zip(clients, prev)}}


def scaffnew_nonzero_start(x, clients, *, state=None, rng=None, local_steps=1, step=0.5, p=0.5,
                           weighting="uniform", **_):
    """WRONG: initial control variates h_i = grad f_i(x_0) (their sum is not 0)."""
    H = {c.cid: c.grad(x) for c in clients} if state is None else dict(state["h_i"])
    w = weights(clients, weighting)
    xn, hat = _round(x, clients, H, local_steps, step, p, w)
    return xn, {"h_i": {c.cid: H[c.cid] + p / step * (xn - y) for c, y in zip(clients, hat)}}


def scaffnew_h_step_gamma(x, clients, *, state=None, rng=None, local_steps=1, step=0.5, p=0.5,
                          weighting="uniform", **_):
    """WRONG (non-default hyperparameters): h_i+ = h_i + 1/(2 gamma) (x+ - x_i), the factor p/gamma with p
    hard-coded at its default 0.5: equal to the paper's only at p = 0.5."""
    H = {c.cid: np.zeros(len(x)) for c in clients} if state is None else dict(state["h_i"])
    w = weights(clients, weighting)
    xn, hat = _round(x, clients, H, local_steps, step, p, w)
    return xn, {"h_i": {c.cid: H[c.cid] + 1.0 / (2 * step) * (xn - y) for c, y in zip(clients, hat)}}


CORRECT = [
    ("dict_state_proxskip_form", scaffnew_dict, {}),
    ("opaque_state_affine_recursion", scaffnew_opaque_matrix, {}),
]
WRONG = [
    ("own_geometric_steps", scaffnew_own_geometric, {}),
    ("h_from_iterate_before_last_step", scaffnew_h_from_previous_iterate, {}),
    ("h0_is_local_gradient", scaffnew_nonzero_start, {}),
    ("h_update_1_over_2gamma", scaffnew_h_step_gamma, {}),
]


def scaffnew_inplace(x, clients, *, state=None, rng=None, local_steps=1, step=0.5, p=0.5, weighting="uniform", **_):
    """Correct: the readable state's h_i arrays are updated in place (h += ...) and the same dict returned."""
    st = state if state is not None else {"h_i": {}}
    for c in clients:
        st["h_i"].setdefault(c.cid, np.zeros(len(x)))
    w = weights(clients, weighting)
    xn, hat = _round(x, clients, st["h_i"], local_steps, step, p, w)
    for c, y in zip(clients, hat):
        st["h_i"][c.cid] += p / step * (xn - y)
    return xn, st


CORRECT.append(("dict_state_mutated_in_place", scaffnew_inplace, {}))
