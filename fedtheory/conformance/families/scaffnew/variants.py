"""Scaffnew (Mishchenko et al. 2022, Alg. 2)
written as framework code, with ``slip`` options, and the state-carried slips (a wrapper that loses or
misfiles the state between rounds: only the multi-round property sees them)."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...statekit import forgetful, in_place, opaque, sealed
from ...textbook import require_uniform

__all__ = ["scaffnew", "TEXTBOOK", "WRONG", "CORRECT"]


def scaffnew(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=1, weighting="uniform",
             slip: str | None = None, **_):
    """Scaffnew (Mishchenko et al. 2022, Alg. 2), one communication: local_steps steps
    x_i <- x_i - gamma (g_i(x_i) - h_i) from x, then xbar = mean x_i and h_i <- h_i + (p/gamma)(xbar - x_i)."""
    require_uniform(weighting, "Scaffnew")
    if local_steps is None:  # its own ProxSkip coins (the slips: a fair coin whatever p, or 1 - p)
        local_steps = int(rng.geometric({"own_coin_fair": 0.5, "own_coin_one_minus_p": 1 - p}.get(slip, p)))
        if slip == "own_coin_once" and state and "K" in state:  # K drawn at the start and kept for every round
            local_steps = int(state["K"])
    state = state or {"h_i": {}}
    h_i = dict(state["h_i"])
    xs = []
    for cl in clients:
        h = h_i.get(cl.cid, np.zeros_like(x))
        y = x.copy()
        for _k in range(local_steps):
            y = y - step * (cl.grad(y) - (-h if slip == "h_sign" else h))
        xs.append(y)
    xbar = np.mean(xs, axis=0)
    factor = {"h_factor_no_p": 1.0 / step, "p_gamma_swapped": step / p}.get(slip, p / step)
    for cl, y in zip(clients, xs):
        h_i[cl.cid] = h_i.get(cl.cid, np.zeros_like(x)) + factor * (xbar - y)
    out = {"h_i": h_i}
    if slip == "own_coin_once":
        out["K"] = local_steps
    return xbar, out


TEXTBOOK = scaffnew
WRONG: list[Variant] = [
    Variant("scaffnew", "h_factor_no_p", partial(scaffnew, slip="h_factor_no_p")),
    Variant("scaffnew", "h_sign", partial(scaffnew, slip="h_sign")),
    Variant("scaffnew", "p_gamma_swapped_at_p_eq_gamma", partial(scaffnew, slip="p_gamma_swapped")),
    Variant("scaffnew", "forgets_h_i_between_rounds", forgetful(scaffnew, "h_i")),
    # its own coins: fair whatever p (right at the default p = 1/2), and 1 - p
    Variant("scaffnew", "own_coin_fair", partial(scaffnew, slip="own_coin_fair")),
    Variant("scaffnew", "own_coin_one_minus_p", partial(scaffnew, slip="own_coin_one_minus_p"), {"p": 0.3}),
    # K ~ Geometric(p) drawn at the first round and kept in the state: right from a fresh start, the same K ever after
    Variant("scaffnew", "own_coin_once", partial(scaffnew, slip="own_coin_once")),
]
CORRECT: list[Variant] = [
    Variant("scaffnew", "opaque_state", opaque(scaffnew)),
    Variant("scaffnew", "sealed_state", sealed(scaffnew)),
    Variant("scaffnew", "state_updated_in_place", in_place(scaffnew)),
]
