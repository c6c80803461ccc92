"""fedtheory's FedDyn (exact local solves) through the contract (what the kit must accept)."""
from __future__ import annotations

import numpy as np

from ....algorithms import Draw, FedDyn, FedDynState
from ...adapters.problem import keyed, population, problem_of, state_rows

__all__ = ["feddyn"]


def feddyn(x, clients, *, state=None, rng=None, alpha=1.0, weighting="uniform", num_clients=None, **_):
    ids = population(clients, num_clients, (state or {}).get("g_i"))
    problem, S = problem_of(clients, weighting, num_clients, ids)
    G = state_rows((state or {}).get("g_i"), ids, problem.n_clients, x.size)
    h = np.zeros(x.size) if state is None else np.asarray(state["h"])
    alg = FedDyn(alpha=alpha, solver="exact")
    new, _ = alg.round_given(problem, FedDynState(x=x, h=h, G=G), Draw(S))
    return new.x, {"h": new.h, "g_i": keyed(new.G, ids)}
