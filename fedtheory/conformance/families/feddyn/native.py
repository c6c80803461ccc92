"""fedtheory's FedDyn (exact local solves) through the contract (what the kit must accept)."""
from __future__ import annotations

import numpy as np

from ...adapters.problem import problem_of, state_rows
from ....algorithms import Draw, FedDyn, FedDynState

__all__ = ["feddyn"]


def feddyn(x, clients, *, state=None, rng=None, alpha=1.0, weighting="uniform", num_clients=None, **_):
    problem, S = problem_of(clients, weighting, num_clients)
    G = state_rows(state, "g_i", problem.n_clients, x.size)
    h = np.zeros(x.size) if state is None else np.asarray(state["h"])
    alg = FedDyn(alpha=alpha, solver="exact")
    new, _ = alg.round_given(problem, FedDynState(x=x, h=h, G=G), Draw(S))
    return new.x, {"h": new.h, "g_i": {i: new.G[i] for i in range(problem.n_clients)}}
