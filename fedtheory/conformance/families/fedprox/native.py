"""fedtheory's FedProx through the contract (what the kit must accept)."""
from __future__ import annotations

from ....algorithms import Draw, FedProx
from ...adapters.problem import problem_of

__all__ = ["fedprox"]


def fedprox(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0, server_step=1.0,
            weighting="num_examples", **_):
    problem, S = problem_of(clients, weighting)
    solver = {"solver": "exact"} if local_steps is None else {"solver": "gd", "local_steps": local_steps,
                                                               "local_step": local_step}
    alg = FedProx(prox=prox, server_step=server_step, **solver)
    new, _ = alg.round_given(problem, alg.init(problem, x), Draw(S))
    return new.x
