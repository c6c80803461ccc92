"""fedtheory's Scaffnew through the contract (what the kit must accept)."""
from __future__ import annotations

import numpy as np

from ....algorithms import Draw, Scaffnew, ScaffnewState
from ...adapters.problem import keyed, population, problem_of, state_rows

__all__ = ["scaffnew"]


def scaffnew(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=1, weighting="uniform",
             num_clients=None, **_):
    """``local_steps`` iterations of fedtheory's Scaffnew whose coins are (0, ..., 0, 1): one communication;
    ``local_steps=None``: its own coins, a Geometric(p) number of local steps (ProxSkip's theta_t ~ Bernoulli(p))."""
    if local_steps is None:
        local_steps = int(rng.geometric(p))
    ids = population(clients, num_clients, (state or {}).get("h_i"))
    problem, S = problem_of(clients, weighting, num_clients, ids)
    n = problem.n_clients
    st = ScaffnewState(x=x, X=np.tile(x, (n, 1)), H=state_rows((state or {}).get("h_i"), ids, n, x.size))
    alg = Scaffnew(step=step, p=p)
    for k in range(local_steps):
        st, _ = alg.round_given(problem, st, Draw(S, coin=(k == local_steps - 1)))
    return st.x, {"h_i": keyed(st.H, ids)}
