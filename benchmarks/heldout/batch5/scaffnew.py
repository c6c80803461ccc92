"""Scaffnew / ProxSkip (Mishchenko et al. 2022, Alg. 2), written from the paper and docs/conformance.md only.

One call = one communication round: every client starts at x and takes K local steps
xhat_i = x_i - gamma (grad f_i(x_i) - h_i); after the K-th step x+ = sum_i w_i (xhat_i - (gamma/p) h_i) and
h_i+ = h_i + (p/gamma)(x+ - xhat_i). K is given (local_steps), or, with local_steps=None, the
implementation's own coins: after each step communicate with probability p (K ~ Geometric(p)). h_i = 0
initially.
"""
from __future__ import annotations

import math

import numpy as np


def _w(clients, weighting):
    m = np.array([1.0 if weighting == "uniform" else c.num_examples for c in clients])
    return m / m.sum()


class ProxSkipState:
    def __init__(self):
        self.h = {}


def scaffnew_object_coins(x, clients, *, state=None, rng=None, step=0.5, p=0.5, weighting="uniform",
                          local_steps=None, **_):
    """Correct. Opaque state object; with local_steps=None it flips its own coin after each local step with
    rng.random() < p."""
    st = state if state is not None else ProxSkipState()
    rng = rng if rng is not None else np.random.default_rng()
    H = [st.h.get(c.cid, np.zeros_like(x)) for c in clients]
    X = [x.copy() for _ in clients]
    k = 0
    while True:
        k += 1
        Xh = [X[i] - step * (c.grad(X[i]) - H[i]) for i, c in enumerate(clients)]
        if local_steps is None:
            done = rng.random() < p
        else:
            done = k >= int(local_steps)
        if done:
            break
        X = Xh
    w = _w(clients, weighting)
    x_new = sum(w[i] * (Xh[i] - step / p * H[i]) for i in range(len(clients)))
    for i, c in enumerate(clients):
        st.h[c.cid] = H[i] + p / step * (x_new - Xh[i])
    return x_new, st


def scaffnew_dict_inplace(x, clients, *, state=None, rng=None, step=0.5, p=0.5, weighting="uniform",
                          local_steps=None, **_):
    """Correct. The contract's {"h_i": {cid: vector}} mutated in place, clients stacked in an (n, d) array."""
    if state is None:
        state = {"h_i": {}}
    if local_steps is None:
        K = int(rng.geometric(p))
    else:
        K = int(local_steps)
    H = np.stack([np.asarray(state["h_i"].get(c.cid, np.zeros(len(x))), float) for c in clients])
    X = np.tile(x, (len(clients), 1))
    for _ in range(K):
        G = np.stack([c.grad(X[i]) for i, c in enumerate(clients)])
        X = X - step * (G - H)
    w = _w(clients, weighting)
    x_new = w @ (X - (step / p) * H)
    for i, c in enumerate(clients):
        state["h_i"][c.cid] = H[i] + (p / step) * (x_new - X[i])
    return x_new, state


def scaffnew_exponential_k(x, clients, *, state=None, rng=None, step=0.5, p=0.5, weighting="uniform",
                           local_steps=None, **_):
    """WRONG (own randomness with a wrong law): with local_steps=None it draws K = ceil(Exponential(mean 1/p)),
    a "continuous geometric". P(K > k) = exp(-p k), so K ~ Geometric(1 - e^{-p}) (0.39 at p = 0.5), not the
    paper's Geometric(p) (one Bernoulli(p) coin per step). With K given it is exact."""
    if local_steps is None:
        K = max(1, math.ceil(rng.exponential(1.0 / p)))
    else:
        K = int(local_steps)
    hs = {} if state is None else dict(state["h_i"])
    X = {c.cid: x.copy() for c in clients}
    H = {c.cid: hs.get(c.cid, np.zeros_like(x)) for c in clients}
    for _ in range(K):
        for c in clients:
            X[c.cid] = X[c.cid] - step * (c.grad(X[c.cid]) - H[c.cid])
    w = _w(clients, weighting)
    x_new = sum(wi * (X[c.cid] - step / p * H[c.cid]) for wi, c in zip(w, clients))
    for c in clients:
        hs[c.cid] = H[c.cid] + p / step * (x_new - X[c.cid])
    return x_new, {"h_i": hs}


def scaffnew_list_by_cid(x, clients, *, state=None, rng=None, step=0.5, p=0.5, weighting="uniform",
                         local_steps=None, num_clients=None, **_):
    """WRONG (crash is the bug): h_i kept in a list indexed by the client id, sized by num_clients. Ids are
    labels (docs: ids from 10 on, sparse), so h[c.cid] raises IndexError, or reads another client's h_i."""
    n = num_clients or len(clients)
    h = state if state is not None else [np.zeros_like(x) for _ in range(n)]
    K = int(local_steps) if local_steps is not None else int(rng.geometric(p))
    Xs = []
    for c in clients:
        xi = x.copy()
        for _ in range(K):
            xi = xi - step * (c.grad(xi) - h[c.cid])
        Xs.append(xi)
    w = _w(clients, weighting)
    x_new = sum(w[i] * (Xs[i] - step / p * h[c.cid]) for i, c in enumerate(clients))
    for i, c in enumerate(clients):
        h[c.cid] = h[c.cid] + p / step * (x_new - Xs[i])
    return x_new, h


def scaffnew_deterministic_k(x, clients, *, state=None, rng=None, step=0.5, p=0.5, weighting="uniform",
                             local_steps=None, **_):
    """WRONG (deterministic "randomness" with the right mean): with local_steps=None it always takes
    K = round(1/p) local steps, the mean of Geometric(p); the paper communicates after each step with
    probability p (Alg. 2, theta_t ~ Bernoulli(p)). With K given it is exact."""
    K = int(local_steps) if local_steps is not None else max(1, int(round(1.0 / p)))
    hs = {} if state is None else {k: np.asarray(v) for k, v in state["h_i"].items()}
    H = np.array([hs.get(c.cid, np.zeros_like(x)) for c in clients])
    X = np.repeat(x[None, :], len(clients), axis=0)
    for _ in range(K):
        X = X - step * (np.array([c.grad(X[i]) for i, c in enumerate(clients)]) - H)
    w = _w(clients, weighting)
    x_new = w @ (X - step / p * H)
    for i, c in enumerate(clients):
        hs[c.cid] = H[i] + p / step * (x_new - X[i])
    return x_new, {"h_i": hs}



def scaffnew_one_minus_p(x, clients, *, state=None, rng=None, step=0.5, p=0.5, weighting="uniform",
                         local_steps=None, **_):
    """WRONG (invisible at the default p = 0.5): p read as the probability of *skipping* communication, so the
    control-variate factors use 1 - p: x+ = sum w_i (xhat_i - gamma/(1-p) h_i), h_i+ = h_i + (1-p)/gamma
    (x+ - xhat_i). Alg. 2 uses p/gamma and gamma/p with p the communication probability."""
    q = 1.0 - p
    st = state if state is not None else {"h_i": {}}
    K = int(local_steps) if local_steps is not None else int(rng.geometric(p))
    hs = {c.cid: np.asarray(st["h_i"].get(c.cid, np.zeros_like(x)), float) for c in clients}
    xs = {}
    for c in clients:
        z = x.copy()
        for _ in range(K):
            z = z - step * (c.grad(z) - hs[c.cid])
        xs[c.cid] = z
    w = _w(clients, weighting)
    x_new = sum(wi * (xs[c.cid] - step / q * hs[c.cid]) for wi, c in zip(w, clients))
    new_h = dict(st["h_i"])
    for c in clients:
        new_h[c.cid] = hs[c.cid] + q / step * (x_new - xs[c.cid])
    return x_new, {"h_i": new_h}


CORRECT = [
    ("scaffnew_object_coins", scaffnew_object_coins, {}),
    ("scaffnew_dict_inplace", scaffnew_dict_inplace, {}),
]
WRONG = [
    ("scaffnew_one_minus_p", scaffnew_one_minus_p, {}),
    ("scaffnew_exponential_k", scaffnew_exponential_k, {}),
    ("scaffnew_list_by_cid", scaffnew_list_by_cid, {}),
    ("scaffnew_deterministic_k", scaffnew_deterministic_k, {}),
]
CRASH_IS_THE_BUG = ("scaffnew_list_by_cid",)
