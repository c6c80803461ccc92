"""fedtheory's fedelasticnet_scaffold through the contract (what the kit must accept; never the expected side)."""
from __future__ import annotations

import numpy as np

from ....algorithms import Draw, Scaffold, ScaffoldState
from ...adapters.problem import keyed, population, problem_of, state_rows

__all__ = ["fedelasticnet_scaffold"]


def fedelasticnet_scaffold(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                           l1_mode="subgradient", server_step=1.0, weighting="uniform", num_clients=None, **_):
    """FedElasticNet Alg. 2 = fedtheory's Scaffold (option II) with prox and l1."""

    ids = population(clients, num_clients, (state or {}).get("c_i"))
    problem, S = problem_of(clients, weighting, num_clients, ids)
    C = state_rows((state or {}).get("c_i"), ids, problem.n_clients, x.size)
    c = np.zeros(x.size) if state is None else np.asarray(state["c"])
    alg = Scaffold(local_steps=local_steps, local_step=local_step, server_step=server_step, option="II", prox=prox,
                   l1=l1, l1_mode=l1_mode)
    new, _ = alg.round_given(problem, ScaffoldState(x=x, c=c, C=C), Draw(S))
    return new.x, {"c": new.c, "c_i": keyed(new.C, ids)}
