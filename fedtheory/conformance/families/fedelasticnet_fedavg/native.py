"""fedtheory's fedelasticnet_fedavg through the contract (what the kit must accept; never the expected side)."""
from __future__ import annotations

from ....algorithms import Draw, FedProx
from ...adapters.problem import problem_of

__all__ = ["fedelasticnet_fedavg"]


def fedelasticnet_fedavg(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5, l1=0.1,
                         l1_mode="subgradient", server_step=1.0, weighting="num_examples", **_):
    """FedElasticNet Alg. 1 = fedtheory's FedProx with l1 (exact solve, or K local steps)."""

    problem, S = problem_of(clients, weighting)
    solver = {"solver": "exact"} if local_steps is None else {"solver": "gd", "local_steps": local_steps,
                                                               "local_step": local_step}
    alg = FedProx(prox=prox, l1=l1, l1_mode=l1_mode, server_step=server_step, **solver)
    new, _ = alg.round_given(problem, alg.init(problem, x), Draw(S))
    return new.x
