"""fedtheory's docofl through the contract (what the kit must accept; never the expected side)."""
from __future__ import annotations

import numpy as np

from ....algorithms.docofl import DoCoFL, DoCoFLDraw, DoCoFLState, TwoClassParticipation
from ...adapters.problem import problem_of

__all__ = ["docofl"]


class _Grid:
    """The kit's grid compressor h round(x / h) as a fedtheory compressor (compress(X, rng) -> (X_hat, bits))."""

    def __init__(self, h: float) -> None:
        self.h = h

    def compress(self, X, rng=None):
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        out = X.copy() if not self.h else self.h * np.round(X / self.h)
        return out, np.full(X.shape[0], 64.0 * X.shape[1])


def docofl(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, weighting="uniform",
           num_clients=None, draw=None, grid=None, **_):
    """One round of fedtheory's DoCoFL with the kit's leads and grid compressors."""

    problem, S = problem_of(clients, weighting, num_clients)
    g = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}
    alg = DoCoFL(step=step, n_sampled=len(clients), period=period, queue_size=queue_size, stochastic=False,
                 anchor_compressor=_Grid(g["anchor"]), correction_compressor=_Grid(g["correction"]),
                 uplink_compressor=_Grid(g["gradient"]), participation=TwoClassParticipation())
    st = alg.init(problem, x) if state is None else DoCoFLState(
        x=x, t=int(state["t"]), anchors=np.asarray(state["anchors"], dtype=np.float64),
        raw_anchors=np.asarray(state["raw_anchors"], dtype=np.float64),
        anchor_rounds=np.asarray(state["anchor_rounds"], dtype=np.int64),
        anchor_bits=np.asarray(state["anchor_bits"], dtype=np.float64))
    order = np.argsort([c.cid for c in clients])
    leads = np.array([int(draw["leads"][c.cid]) for c in clients])[order] if draw else np.zeros(len(clients), int)
    new, _ = alg.round_given(problem, st, DoCoFLDraw(clients=S, leads=leads, noise_seed=0))
    return new.x, {"t": new.t, "anchors": new.anchors, "raw_anchors": new.raw_anchors,
                   "anchor_rounds": new.anchor_rounds, "anchor_bits": new.anchor_bits}
