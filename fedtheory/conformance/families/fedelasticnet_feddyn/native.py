"""fedtheory's fedelasticnet_feddyn through the contract (what the kit must accept; never the expected side)."""
from __future__ import annotations

import numpy as np

from ....algorithms import Draw, FedDyn, FedDynState
from ...adapters.problem import keyed, population, problem_of, state_rows

__all__ = ["fedelasticnet_feddyn"]


def fedelasticnet_feddyn(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed",
                         weighting="uniform", num_clients=None, **_):
    """FedElasticNet Alg. 3 = fedtheory's FedDyn with l1 and the declared reading of sign(0)."""

    ids = population(clients, num_clients, (state or {}).get("g_i"))
    problem, S = problem_of(clients, weighting, num_clients, ids)
    G = state_rows((state or {}).get("g_i"), ids, problem.n_clients, x.size)
    h = np.zeros(x.size) if state is None else np.asarray(state["h"])
    alg = FedDyn(alpha=alpha, l1=l1, sign_at_zero=sign_at_zero, solver="exact")
    new, _ = alg.round_given(problem, FedDynState(x=x, h=h, G=G), Draw(S))
    return new.x, {"h": new.h, "g_i": keyed(new.G, ids)}
