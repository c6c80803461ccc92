"""fedtheory's SCAFFOLD (option II) through the contract (what the kit must accept)."""
from __future__ import annotations

import numpy as np

from ....algorithms import Draw, Scaffold, ScaffoldState
from ...adapters.problem import keyed, population, problem_of, state_rows

__all__ = ["scaffold"]


def scaffold(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             weighting="uniform", num_clients=None, option="II", **_):
    ids = population(clients, num_clients, (state or {}).get("c_i"))
    problem, S = problem_of(clients, weighting, num_clients, ids)
    C = state_rows((state or {}).get("c_i"), ids, problem.n_clients, x.size)
    c = np.zeros(x.size) if state is None else np.asarray(state["c"])
    alg = Scaffold(local_steps=local_steps, local_step=local_step, server_step=server_step, option=option)
    new, _ = alg.round_given(problem, ScaffoldState(x=x, c=c, C=C), Draw(S))
    return new.x, {"c": new.c, "c_i": keyed(new.C, ids)}
