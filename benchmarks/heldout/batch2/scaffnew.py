"""Scaffnew / ProxSkip (Mishchenko et al. 2022, Alg. 2), one call per communication: local_steps (the kit's
geometric draw) steps y <- y - gamma (grad f_i(y) - h_i) from x; x+ = mean_i y_i (= mean (y_i - gamma/p h_i),
sum h_i = 0); h_i+ = h_i + p/gamma (x+ - y_i); h_i = 0 at the start."""
from __future__ import annotations

import numpy as np

from ._common import quad


def scaffnew_opaque_tuple(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=1, **_):
    """Correct: state is a tuple (ids, H) with one row per client, vectorised over clients."""
    ids, H = state if state is not None else ((), np.zeros((0, len(x))))
    row = {cid: r for r, cid in enumerate(ids)}
    Hn = np.array([H[row[c.cid]] if c.cid in row else np.zeros_like(x) for c in clients])
    AB = [quad(c) for c in clients]
    A = np.stack([a for a, _ in AB]); b = np.stack([bb for _, bb in AB])
    Y = np.repeat(x[None], len(clients), 0)
    for _ in range(local_steps):
        Y = Y - step * (np.einsum("nij,nj->ni", A, Y) - b - Hn)
    xn = (Y - step / p * Hn).mean(0)
    Hn = Hn + p / step * (xn - Y)
    return xn, (tuple(c.cid for c in clients), Hn)


def scaffnew_fromkeys_shared_h(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=1, **_):
    """WRONG: h initialised with dict.fromkeys(ids, np.zeros(d)) (ONE array for all clients) and updated in
    place: every h_i is the same vector, the sum of all updates; Alg. 2 keeps one h_i per client."""
    h = state if state is not None else {"h_i": dict.fromkeys([c.cid for c in clients], np.zeros_like(x))}
    ys = []
    for c in clients:
        y = x.copy()
        for _ in range(local_steps):
            y = y - step * (c.grad(y) - h["h_i"][c.cid])
        ys.append(y)
    xn = np.mean(ys, 0)
    for c, y in zip(clients, ys):
        h["h_i"][c.cid] += p / step * (xn - y)
    return xn, h


def scaffnew_gamma_over_p(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=1, **_):
    """WRONG: h_i+ = h_i + gamma/p (x+ - y_i) (the factor inverted); equal at p = gamma = 0.5 (the defaults)."""
    hi = dict((state or {"h_i": {}})["h_i"])
    ys = []
    for c in clients:
        h = hi.get(c.cid, np.zeros_like(x))
        y = x.copy()
        for _ in range(local_steps):
            y = y - step * (c.grad(y) - h)
        ys.append(y)
    xn = np.mean(ys, 0)
    for c, y in zip(clients, ys):
        hi[c.cid] = hi.get(c.cid, np.zeros_like(x)) + step / p * (xn - y)
    return xn, {"h_i": hi}


CORRECT = [("opaque_tuple_vectorised", scaffnew_opaque_tuple, {})]
WRONG = [("fromkeys_one_shared_h", scaffnew_fromkeys_shared_h, {}),
         ("gamma_over_p_inverted (p=gamma=0.5 default)", scaffnew_gamma_over_p, {})]
