"""DANE+ (Jiang, Rodomanov & Stich 2024, Alg. 1). Local problem F_i(y) = f_i(y) + <h_i, y> + lam/2 ||y - x||^2,
solved exactly, x_i = (A_i + lam I)^{-1}(b_i - h_i + lam x), or by K GD steps from x; control variate (1)
h_i = grad f(x) - grad f_i(x) with f = sum_i w_i f_i, or (B.84) h_i+ = h_i + m (x_i - x+) from
h_i0 = grad f(x0) - grad f_i(x0); x+ = sum_i w_i x_i (standard) or x_xi with xi ~ w (random; `draw={"client": cid}`)."""
from __future__ import annotations

import numpy as np

from ._common import hess_lin


def _w(clients, weighting):
    if weighting == "num_examples":
        m = np.array([c.num_examples for c in clients], dtype=float)
        return m / m.sum()
    return np.full(len(clients), 1.0 / len(clients))


def _solve(c, x, h, lam, local_steps, local_step):
    if local_steps is None:
        A, b = hess_lin(c)
        return np.linalg.solve(A + lam * np.eye(len(x)), b - h + lam * x)
    y = x.copy()
    for _ in range(local_steps):
        y = y - local_step * (c.grad(y) + h + lam * (y - x))
    return y


# ---------------------------------------------------------------- correct

class DaneState:
    def __init__(self, h):
        self.h = h


def dane_b84_opaque(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                    control_variate="gradient", m=1.0, averaging="standard", weighting="uniform", draw=None, **_):
    """Correct: both control variates; the (B.84) variates kept in an object (opaque); random averaging honours
    the kit's draw and otherwise draws xi ~ w itself."""
    w = _w(clients, weighting)
    grads = {c.cid: c.grad(x) for c in clients}
    gbar = sum(wi * grads[c.cid] for wi, c in zip(w, clients))
    if control_variate == "scaffnew":
        h = state.h if state is not None else {c.cid: gbar - grads[c.cid] for c in clients}
    else:
        h = {c.cid: gbar - grads[c.cid] for c in clients}
    xs = {c.cid: _solve(c, x, h[c.cid], lam, local_steps, local_step) for c in clients}
    if averaging == "random":
        j = draw["client"] if draw and "client" in draw else clients[rng.choice(len(clients), p=w)].cid
        x_new = xs[j].copy()
    else:
        x_new = sum(wi * xs[c.cid] for wi, c in zip(w, clients))
    if control_variate == "scaffnew":
        return x_new, DaneState({k: h[k] + m * (xs[k] - x_new) for k in h})
    return x_new, None


def dane_random_dict(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                     control_variate="gradient", m=1.0, averaging="standard", weighting="uniform", draw=None, **_):
    """Correct: the paper's dict layout {"h_i"} for (B.84) (absent entries = the initialisation), clients sorted
    by id internally, own selection by inverse CDF on the sorted weights."""
    cl = sorted(clients, key=lambda c: c.cid)
    w = _w(cl, weighting)
    G = np.stack([c.grad(x) for c in cl])
    gbar = w @ G
    if control_variate == "scaffnew":
        hs = (state or {}).get("h_i", {})
        H = np.stack([np.asarray(hs[c.cid], dtype=float) if c.cid in hs else gbar - G[j] for j, c in enumerate(cl)])
    else:
        H = gbar - G
    X = np.stack([_solve(c, x, H[j], lam, local_steps, local_step) for j, c in enumerate(cl)])
    if averaging == "random":
        if draw and "client" in draw:
            j = [c.cid for c in cl].index(draw["client"])
        else:
            j = int(np.searchsorted(np.cumsum(w), rng.random(), side="right"))
            j = min(j, len(cl) - 1)
        x_new = X[j].copy()
    else:
        x_new = w @ X
    if control_variate == "scaffnew":
        Hn = H + m * (X - x_new)
        return x_new, {"h_i": {c.cid: Hn[j] for j, c in enumerate(cl)}}
    return x_new, None


# ---------------------------------------------------------------- wrong

def dane_b84_old_model(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                       control_variate="gradient", m=1.0, averaging="standard", weighting="uniform", draw=None, **_):
    """WRONG: (B.84) written h_i+ = h_i + m (x_i - x^r) with the round's starting model instead of the new x^{r+1};
    the paper's update keeps sum_i w_i h_i = 0 only with x^{r+1} (a state-carried slip, visible from round 2)."""
    w = _w(clients, weighting)
    grads = {c.cid: c.grad(x) for c in clients}
    gbar = sum(wi * grads[c.cid] for wi, c in zip(w, clients))
    if control_variate == "scaffnew" and state is not None:
        h = dict(state["h_i"])
    else:
        h = {c.cid: gbar - grads[c.cid] for c in clients}
    xs = {c.cid: _solve(c, x, np.asarray(h[c.cid], dtype=float), lam, local_steps, local_step) for c in clients}
    if averaging == "random":
        j = draw["client"] if draw and "client" in draw else clients[rng.choice(len(clients), p=w)].cid
        x_new = xs[j]
    else:
        x_new = sum(wi * xs[c.cid] for wi, c in zip(w, clients))
    if control_variate == "scaffnew":
        return x_new, {"h_i": {k: h[k] + m * (xs[k] - x) for k in h}}
    return x_new, None


def dane_cv_unweighted_mean(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                            control_variate="gradient", m=1.0, averaging="standard", weighting="uniform", draw=None,
                            **_):
    """WRONG: the control variate uses the plain mean of the gradients, grad f = 1/n sum grad f_i, while the
    averaging is weighted by num_examples; f is sum_i w_i f_i, so h_i = grad f(x) - grad f_i(x) must use the same w
    (right only under uniform weights). Checked with weighting="num_examples"."""
    w = _w(clients, weighting)
    grads = [c.grad(x) for c in clients]
    gmean = np.mean(grads, axis=0)
    xs = [_solve(c, x, gmean - g, lam, local_steps, local_step) for c, g in zip(clients, grads)]
    if averaging == "random":
        j = [c.cid for c in clients].index(draw["client"]) if draw and "client" in draw else \
            int(rng.choice(len(clients), p=w))
        return xs[j], None
    return sum(wi * xi for wi, xi in zip(w, xs)), None


class DaneNoRepeat:
    """WRONG: random averaging whose own selection never picks the same client twice in a row (redrawn, "for
    diversity"); Thm 1's xi_r are i.i.d. ~ w: a client of weight 0.7 must be selected 70% of the rounds."""

    def __init__(self):
        self.last = None

    def __call__(self, x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                 control_variate="gradient", m=1.0, averaging="standard", weighting="uniform", draw=None, **_):
        w = _w(clients, weighting)
        grads = [c.grad(x) for c in clients]
        gbar = sum(wi * g for wi, g in zip(w, grads))
        xs = [_solve(c, x, gbar - g, lam, local_steps, local_step) for c, g in zip(clients, grads)]
        if averaging != "random":
            return sum(wi * xi for wi, xi in zip(w, xs)), None
        if draw and "client" in draw:
            j = [c.cid for c in clients].index(draw["client"])
        else:
            j = int(rng.choice(len(clients), p=w))
            while len(clients) > 1 and clients[j].cid == self.last:
                j = int(rng.choice(len(clients), p=w))
        self.last = clients[j].cid
        return xs[j], None


CORRECT = [
    ("dane_b84_opaque_kstep", dane_b84_opaque, {"control_variate": "scaffnew", "local_steps": 5, "local_step": 0.1}),
    ("dane_random_dict_sorted", dane_random_dict, {"averaging": "random"}),
]
WRONG = [
    ("dane_b84_old_model", dane_b84_old_model, {"control_variate": "scaffnew"}),
    ("dane_cv_unweighted_mean", dane_cv_unweighted_mean, {"weighting": "num_examples"}),
    ("dane_no_repeat_selection", DaneNoRepeat(), {"averaging": "random"}),
]
CRASH_IS_THE_BUG: tuple = ()
