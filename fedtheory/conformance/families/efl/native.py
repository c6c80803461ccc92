"""fedtheory's efl through the contract (what the kit must accept; never the expected side)."""
from __future__ import annotations

import numpy as np

from ....algorithms.efl import EFL, EFLDraw, EFLState
from ...adapters.problem import problem_of

__all__ = ["efl"]


def efl(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
        variant="consistent", weighting="num_examples", draw=None, **_):
    """One round of fedtheory's EFL with the kit's s_k; the state is EFLState's fields as a mapping."""

    problem, _S = problem_of(clients, weighting)
    alg = EFL(E=E, step=step, lam=lam, q=q, weighting=aggregation, variant=variant)
    st = alg.init(problem, x) if state is None else EFLState(x=x, **{k: np.asarray(v) if k not in ("tau", "clock")
                                                                      else v for k, v in state.items()})
    steps = np.array([int(draw["steps"][c.cid]) for c in clients]) if draw is not None else \
        alg.draw(problem, st, rng).steps
    new, _ = alg.round_given(problem, st, EFLDraw(steps=steps.astype(np.int64)))
    return new.x, {f: getattr(new, f) for f in ("client_x", "client_res", "server_res", "broadcast", "U", "V",
                                                "u_cache", "v_cache", "last_seen", "client_end", "tau", "clock")}
