"""fedtheory's dane through the contract (what the kit must accept; never the expected side)."""
from __future__ import annotations

from ....algorithms.dane import DANEDraw, DANEPlus, DANEState, sample_client
from ...adapters.problem import problem_of, stacked

__all__ = ["dane"]


def dane(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
         control_variate="gradient", m=1.0, averaging="standard", weighting="uniform", draw=None, **_):
    problem, _S = problem_of(clients, weighting)
    inexact = {} if local_steps is None else {"solver": "gd", "stopping": "steps", "local_steps": local_steps,
                                              "local_step": local_step, "local_output": "last"}
    alg = DANEPlus(lam=lam, control_variate=control_variate, m=m, averaging=averaging, **inexact)
    if control_variate == "scaffnew":
        st = DANEState(x=x, r=0, h=stacked(None if state is None else state["h_i"], clients, x.size)) if state is not None \
            else alg.init(problem, x)
    else:
        st = alg.init(problem, x)
    client = None
    if averaging == "random":
        # the kit's draw names a client id; DANEDraw takes its position in the list
        client = [c.cid for c in clients].index(draw["client"]) if draw is not None \
            else sample_client(problem.weights, rng)
    new, _ = alg.round_given(problem, st, DANEDraw(client))
    if control_variate == "scaffnew":
        return new.x, {"h_i": {c.cid: new.h[i] for i, c in enumerate(clients)}}
    return new.x
