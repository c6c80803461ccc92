"""FedDyn (Acar et al. 2021, Alg. 1)
written as framework code, with ``slip`` options, and the state-carried slips (a wrapper that loses or
misfiles the state between rounds: only the multi-round property sees them)."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...statekit import by_position, forgetful, in_place, opaque, sealed, zero_absent
from ...textbook import prox_solve, require_uniform

__all__ = ["feddyn", "TEXTBOOK", "WRONG", "CORRECT"]


def feddyn(x, clients, *, state=None, rng=None, alpha=1.0, weighting="uniform", num_clients=None,
           slip: str | None = None, **_):
    """FedDyn (Acar et al. 2021, Alg. 1) with exact local solves:
    theta_i = argmin f_i - <g_i, .> + alpha/2 ||. - x||^2; g_i <- g_i - alpha (theta_i - x);
    h <- h - alpha/m sum_S (theta_i - x); x+ = mean_S theta_i - h/alpha."""
    require_uniform(weighting, "FedDyn")
    state = state or {"h": np.zeros_like(x), "g_i": {}}
    h, g_i = state["h"], dict(state["g_i"])
    thetas = []
    for cl in clients:
        g = g_i.get(cl.cid, np.zeros_like(x))
        theta = prox_solve(cl, x, -g if slip == "lin_sign" else g, alpha)
        g_i[cl.cid] = g - alpha * (theta - x)
        thetas.append(theta)
    thetas = np.stack(thetas)
    h_new = h if slip == "no_h_update" else h - alpha * np.sum(thetas - x, axis=0) / num_clients
    x_new = thetas.mean(axis=0) - (0.0 if slip == "no_server_correction" else h_new / alpha)
    return x_new, {"h": h_new, "g_i": g_i}


TEXTBOOK = feddyn
WRONG: list[Variant] = [
    Variant("feddyn", "no_h_update", partial(feddyn, slip="no_h_update")),
    Variant("feddyn", "no_server_correction", partial(feddyn, slip="no_server_correction")),
    Variant("feddyn", "lin_sign", partial(feddyn, slip="lin_sign")),
    Variant("feddyn", "forgets_h_between_rounds", forgetful(feddyn, "g_i", server="h")),
    Variant("feddyn", "g_i_by_participant_slot", by_position(feddyn, "g_i")),
    Variant("feddyn", "absent_g_i_reset", zero_absent(feddyn, "g_i")),
]
CORRECT: list[Variant] = [
    Variant("feddyn", "opaque_state", opaque(feddyn)),
    Variant("feddyn", "sealed_state", sealed(feddyn)),
    Variant("feddyn", "state_updated_in_place", in_place(feddyn)),
]
