"""fedtheory's ofediq through the contract (what the kit must accept; never the expected side)."""
from __future__ import annotations

import numpy as np

from ....algorithms.ofediq import OFedIQ, OnlineDraw, OnlineState
from ...adapters.problem import problem_of

__all__ = ["ofediq"]


def ofediq(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1, weighting="uniform",
           draw=None, **_):
    """One time step of fedtheory's OFedIQ (FedOGD: p = 1, period = 1, s = None) with the kit's draws; the
    state carries the cumulative regret of the round log."""

    problem, _S = problem_of(clients, weighting)
    alg = OFedIQ(eta=eta, p=p, period=period, s=s, b=None if s is None else b)
    st = alg.init(problem, x) if state is None else OnlineState(
        x=x, t=int(state["t"]), theta=np.asarray(state["theta"], dtype=np.float64),
        acc=np.asarray(state["acc"], dtype=np.float64), cum_loss=float(state["cum_loss"]))
    dr = OnlineDraw(None, None)
    if alg.transmits(st.t):
        if draw is not None:
            dr = OnlineDraw(np.array([bool(draw["participate"][c.cid]) for c in clients]),
                            None if s is None else np.stack([np.asarray(draw["uniforms"][c.cid]) for c in clients]))
        else:
            dr = alg.draw(problem, st, rng)
        if dr.participate is None and p < 1.0:
            dr = OnlineDraw(np.ones(len(clients), dtype=bool), dr.uniforms)
    new, log = alg.round_given(problem, st, dr)
    return new.x, {"t": new.t, "theta": new.theta, "acc": new.acc, "cum_loss": new.cum_loss,
                   "regret": log.extra["regret"]}
