"""SCAFFOLD (Karimireddy et al. 2020, Alg. 1, options I and II)
written as framework code, with ``slip`` options, and the state-carried slips (a wrapper that loses or
misfiles the state between rounds: only the multi-round property sees them)."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...sampling import self_sampling
from ...statekit import by_position, forgetful, in_place, opaque, sealed, zero_absent
from ...textbook import require_uniform

__all__ = ["scaffold", "TEXTBOOK", "WRONG", "CORRECT"]


def scaffold(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             weighting="uniform", num_clients=None, option="II", slip: str | None = None, **_):
    """SCAFFOLD (Karimireddy et al. 2020, Alg. 1, eq. (4)):
    y <- y - eta_l (g_i(y) - c_i + c) K times; option II c_i+ = c_i - c + (x - y)/(K eta_l), option I grad f_i(x);
    x+ = x + eta_g/|S| sum dy_i; c+ = c + 1/N sum dc_i."""
    require_uniform(weighting, "SCAFFOLD")
    state = state or {"c": np.zeros_like(x), "c_i": {}}
    c, c_i = state["c"], dict(state["c_i"])
    dys, dcs = [], []
    slots = [c_i.get(i, np.zeros_like(x)) for i in range(num_clients)] if slip == "id_as_index" else None
    for cl in clients:
        ci = slots[cl.cid] if slots is not None else c_i.get(cl.cid, np.zeros_like(x))  # a list indexed by the id
        y = x.copy()
        for _k in range(local_steps):
            corr = (ci - c) if slip == "correction_sign" else (c - ci)
            y = y - local_step * (cl.grad(y) + corr)
        denom = local_steps if slip == "divide_by_K" else local_steps * local_step
        ci_new = cl.grad(x) if "I" in (option, slip) else ci - c + (x - y) / denom
        dys.append(y - x)
        dcs.append(ci_new - ci)
        c_i[cl.cid] = ci_new
    x_new = x + server_step * np.mean(dys, axis=0)
    if slip == "no_server_c":
        c_new = c
    elif slip == "c_mean_over_S":
        c_new = c + np.mean(dcs, axis=0)
    else:
        c_new = c + np.sum(dcs, axis=0) / num_clients
    return x_new, {"c": c_new, "c_i": c_i}


TEXTBOOK = scaffold
WRONG: list[Variant] = [
    Variant("scaffold", "divide_by_K", partial(scaffold, slip="divide_by_K")),
    Variant("scaffold", "option_I_undeclared", partial(scaffold, slip="I")),
    Variant("scaffold", "correction_sign", partial(scaffold, slip="correction_sign")),
    Variant("scaffold", "no_server_c", partial(scaffold, slip="no_server_c")),
    Variant("scaffold", "c_mean_over_S", partial(scaffold, slip="c_mean_over_S")),
    Variant("scaffold", "forgets_c_i_between_rounds", forgetful(scaffold, "c_i")),
    Variant("scaffold", "c_i_by_participant_slot", by_position(scaffold, "c_i")),
    Variant("scaffold", "absent_c_i_reset", zero_absent(scaffold, "c_i")),
    Variant("scaffold", "id_as_index", partial(scaffold, slip="id_as_index")),
]
CORRECT: list[Variant] = [
    Variant("scaffold", "opaque_state", opaque(scaffold)),
    Variant("scaffold", "option_I_declared", scaffold, {"option": "I"}),
    Variant("scaffold", "sealed_state", sealed(scaffold)),
    Variant("scaffold", "state_updated_in_place", in_place(scaffold)),
]

# the implementation's own sampler (scaffold.own_sampler), as for FedAvg
WRONG.append(Variant("scaffold", "sampler_first_m", self_sampling(scaffold, "first")))
WRONG.append(Variant("scaffold", "sampler_reports_other_set", self_sampling(scaffold, "lies")))
CORRECT.append(Variant("scaffold", "own_uniform_sampler", self_sampling(scaffold)))
