"""Scaffnew (ProxSkip for FL, Mishchenko et al. 2022, Alg. 2): every iteration x^_i = x_i - gamma (grad f_i(x_i)
- h_i); with probability p the clients communicate: x_i = 1/n sum_j (x^_j - gamma/p h_j) and
h_i += p/gamma (x_i - x^_i); otherwise x_i = x^_i. One call = one communication round after K ~ Geometric(p)
iterations (given as local_steps, or drawn by the implementation's own coins when local_steps is None)."""
from __future__ import annotations

import numpy as np


def _round(x, clients, h, K, step, p, rng, coin):
    xs = {c.cid: x.copy() for c in clients}
    k = 0
    while True:
        k += 1
        hat = {c.cid: xs[c.cid] - step * (c.grad(xs[c.cid]) - h[c.cid]) for c in clients}
        if (K is not None and k == K) or (K is None and coin(rng, p)):
            break
        xs = hat
    x_new = np.mean([hat[c.cid] - step / p * h[c.cid] for c in clients], axis=0)
    h_new = {c.cid: h[c.cid] + p / step * (x_new - hat[c.cid]) for c in clients}
    return x_new, h_new


def scaffnew_dict_own_coin(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=None, **_):
    """Correct: the contract's dict {"h_i"} updated in place; with local_steps=None its own coin after every
    local step, Bernoulli(p) (so K ~ Geometric(p) on 1, 2, ...)."""
    if state is None:
        state = {"h_i": {}}
    h = {c.cid: np.asarray(state["h_i"].get(c.cid, np.zeros_like(x)), dtype=float) for c in clients}
    x_new, h_new = _round(x, clients, h, local_steps, step, p, rng, lambda r, pp: r.random() < pp)
    state["h_i"].update(h_new)
    return x_new, state


class _Controls:
    def __init__(self):
        self.by_id = {}


def scaffnew_opaque(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=None, **_):
    """Correct: opaque object state; the number of local steps drawn at once as rng.geometric(p) when not given."""
    st = state if isinstance(state, _Controls) else _Controls()
    K = local_steps if local_steps is not None else int(rng.geometric(p))
    h = {c.cid: st.by_id.get(c.cid, np.zeros_like(x)) for c in clients}
    x_new, h_new = _round(x, clients, h, K, step, p, rng, None)
    st.by_id.update(h_new)
    return x_new, st


def scaffnew_poisson_steps(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=None, **_):
    """WRONG: its own number of local steps is 1 + Poisson((1 - p)/p): the right mean 1/p, but not the
    Geometric(p) law that ProxSkip's i.i.d. Bernoulli(p) coin per iteration gives (P(K = 1) = e^{-(1-p)/p},
    not p)."""
    if state is None:
        state = {"h_i": {}}
    K = local_steps if local_steps is not None else 1 + int(rng.poisson((1 - p) / p))
    h = {c.cid: np.asarray(state["h_i"].get(c.cid, np.zeros_like(x)), dtype=float) for c in clients}
    x_new, h_new = _round(x, clients, h, K, step, p, rng, None)
    return x_new, {"h_i": {**state["h_i"], **h_new}}


def scaffnew_h_over_K(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=None, **_):
    """WRONG: the control variate moves by 1/(K gamma) (x - x^_i) with K the realised number of local steps,
    a SCAFFOLD-like 1/(K eta_l), where Alg. 2 has p/gamma."""
    if state is None:
        state = {"h_i": {}}
    K = local_steps if local_steps is not None else int(rng.geometric(p))
    h = {c.cid: np.asarray(state["h_i"].get(c.cid, np.zeros_like(x)), dtype=float) for c in clients}
    x_new, h_new = _round(x, clients, h, K, step, p, rng, None)
    hat = {c.cid: (h_new[c.cid] - h[c.cid]) * step / p for c in clients}  # = x_new - x^_i
    return x_new, {"h_i": {**state["h_i"], **{cid: h[cid] + hat[cid] / (K * step) for cid in hat}}}


CORRECT = [("dict_own_coin", scaffnew_dict_own_coin, {}),
           ("opaque_geometric", scaffnew_opaque, {})]
WRONG = [("own_steps_poisson", scaffnew_poisson_steps, {}),
         ("h_over_K_gamma", scaffnew_h_over_K, {})]
