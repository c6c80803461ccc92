"""Scaffnew (ProxSkip for consensus; Mishchenko et al. 2022, Alg. 2). One call = one communication round:
K ~ Geometric(p) local steps x_i <- x_i - gamma (grad f_i(x_i) - h_i) from x; at the K-th step the server averages
x+ = sum_i w_i xhat_i and h_i+ = h_i + p/gamma (x+ - xhat_i); h_i = 0 initially. `local_steps` = K drawn by the kit,
or None: the implementation flips its own coin (probability p) after each local step."""
from __future__ import annotations

import math

import numpy as np


def _wts(clients, weighting):
    if weighting == "num_examples":
        t = float(sum(c.num_examples for c in clients))
        return [c.num_examples / t for c in clients]
    return [1.0 / len(clients)] * len(clients)


def _round(x, clients, h, K_or_coin, gamma, p, weighting, last_corrected=True):
    """Runs the local steps; K_or_coin is an int K or a callable returning True when the round communicates."""
    xs = [x.copy() for _ in clients]
    k = 0
    while True:
        k += 1
        last = (k == K_or_coin) if isinstance(K_or_coin, int) else K_or_coin()
        for j, c in enumerate(clients):
            corr = h[c.cid] if (not last or last_corrected) else 0.0
            xs[j] = xs[j] - gamma * (c.grad(xs[j]) - corr)
        if last:
            break
    x_new = sum(w * xj for w, xj in zip(_wts(clients, weighting), xs))
    h_new = {c.cid: h[c.cid] + p / gamma * (x_new - xs[j]) for j, c in enumerate(clients)}
    return x_new, h_new


# ---------------------------------------------------------------- correct

class ScaffnewState:
    def __init__(self):
        self.h = {}


def scaffnew_opaque(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=None, weighting="uniform",
                    **_):
    """Correct: h_i kept in an object; written as an explicit loop over steps with the coin `k == K`; its own
    coins when local_steps is None (one shared Bernoulli(p) after every local step)."""
    st = state if state is not None else ScaffnewState()
    h = {c.cid: st.h.get(c.cid, np.zeros_like(x)) for c in clients}
    if local_steps is None:
        gen = rng if rng is not None else np.random.default_rng()
        coin = lambda: bool(gen.random() < p)  # noqa: E731
        x_new, h_new = _round(x, clients, h, coin, step, p, weighting)
    else:
        x_new, h_new = _round(x, clients, h, int(local_steps), step, p, weighting)
    out = ScaffnewState()
    out.h = {**st.h, **h_new}
    return x_new, out


def scaffnew_geometric_dict(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=None,
                            weighting="uniform", **_):
    """Correct: vectorised over clients, the paper's dict layout {"h_i": ...}; its own K = rng.geometric(p)
    (support 1, 2, ..., P(K = k) = (1-p)^(k-1) p, the law of the first communicating coin)."""
    K = int(rng.geometric(p)) if local_steps is None else int(local_steps)
    hs = (state or {}).get("h_i", {})
    H = np.stack([np.asarray(hs.get(c.cid, np.zeros_like(x)), dtype=np.float64) for c in clients])
    X = np.tile(x, (len(clients), 1))
    for _ in range(K):
        G = np.stack([c.grad(X[j]) for j, c in enumerate(clients)])
        X = X - step * (G - H)
    w = np.array(_wts(clients, weighting))
    xn = w @ X
    Hn = H + p / step * (xn - X)
    return xn, {"h_i": {**hs, **{c.cid: Hn[j] for j, c in enumerate(clients)}}}


# ---------------------------------------------------------------- wrong

def scaffnew_fixed_period(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=None,
                          weighting="uniform", **_):
    """WRONG: its own "coin" is a fixed period K = round(1/p) local steps: the right mean number of steps, but
    Alg. 2 communicates after a Bernoulli(p) coin, so K ~ Geometric(p), not a constant (right when the kit draws K)."""
    K = max(1, int(round(1.0 / p))) if local_steps is None else int(local_steps)
    h = {c.cid: (state or {}).get("h_i", {}).get(c.cid, np.zeros_like(x)) for c in clients}
    xn, hn = _round(x, clients, h, K, step, p, weighting)
    return xn, {"h_i": hn}


def scaffnew_capped_geometric(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=None,
                              weighting="uniform", **_):
    """WRONG: its own coins, but communication forced after ceil(2/p) local steps (a staleness cap): K is a
    Geometric(p) truncated at 2/p (at p = 0.5, P(K > 4) = 1/16 moves to K = 4); the paper's coin has no cap."""
    if local_steps is None:
        cap = math.ceil(2.0 / p)
        K = 1
        while K < cap and not (rng.random() < p):
            K += 1
    else:
        K = int(local_steps)
    h = {c.cid: (state or {}).get("h_i", {}).get(c.cid, np.zeros_like(x)) for c in clients}
    xn, hn = _round(x, clients, h, K, step, p, weighting)
    return xn, {"h_i": hn}


def scaffnew_last_step_uncorrected(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=None,
                                   weighting="uniform", **_):
    """WRONG: the communicating step is a plain gradient step without the -h_i correction (the loop runs K-1
    corrected steps and then "the" step before averaging); Alg. 2 line 4 corrects every local step."""
    K = int(rng.geometric(p)) if local_steps is None else int(local_steps)
    h = {c.cid: (state or {}).get("h_i", {}).get(c.cid, np.zeros_like(x)) for c in clients}
    xn, hn = _round(x, clients, h, K, step, p, weighting, last_corrected=False)
    return xn, {"h_i": hn}


def scaffnew_f32(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=None, weighting="uniform",
                 **_):
    """Correct, float32 throughout (declared rtol 1e-4): the iterates, gradients and h_i in float32 (the data cast
    once per call), its own coin `while rng.random() >= p` (K ~ Geometric(p) on 1, 2, ...)."""
    f32 = np.float32
    g, p32 = f32(step), f32(p)
    hs = state if state is not None else {}
    data = [(np.asarray(c.features, f32), np.asarray(c.targets, f32)) for c in clients]
    if local_steps is None:
        K = 1
        while rng.random() >= p:
            K += 1
    else:
        K = int(local_steps)
    X = [np.asarray(x, f32).copy() for _ in clients]
    H = [hs.get(c.cid, np.zeros(len(x), f32)) for c in clients]
    for _ in range(K):
        for j, (Z, y) in enumerate(data):
            X[j] = X[j] - g * (Z.T @ (Z @ X[j] - y) / f32(Z.shape[0]) - H[j])
    w = [f32(a) for a in _wts(clients, weighting)]
    xn = sum(wj * xj for wj, xj in zip(w, X))
    out = dict(hs)
    for j, c in enumerate(clients):
        out[c.cid] = H[j] + p32 / g * (xn - X[j])
    return xn.astype(np.float64), out


CORRECT = [
    ("scaffnew_opaque_own_coin", scaffnew_opaque, {}),
    ("scaffnew_geometric_dict", scaffnew_geometric_dict, {}),
    ("scaffnew_f32", scaffnew_f32, {"rtol": 1e-4}),
]
WRONG = [
    ("scaffnew_fixed_period", scaffnew_fixed_period, {}),
    ("scaffnew_capped_geometric", scaffnew_capped_geometric, {}),
    ("scaffnew_last_step_uncorrected", scaffnew_last_step_uncorrected, {}),
]
CRASH_IS_THE_BUG: tuple = ()
