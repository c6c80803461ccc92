"""fedtheory's fedred through the contract (what the kit must accept; never the expected side)."""
from __future__ import annotations

import numpy as np

from ....algorithms.fedred import FedRed, FedRedDraw, FedRedState
from ...adapters.problem import problem_of, stacked

__all__ = ["fedred"]


def fedred(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized", reset=True,
           batch_size=None, weighting="uniform", draw=None, **_):
    """One iteration k of FedRed (Alg. 2) / FedRed-GD (Alg. 3) from x~_k; FedRed-SGD with the kit's minibatches
    (``draw["batches"]``) turned into the stochastic gradients of the draw."""
    problem, _S = problem_of(clients, weighting)
    d = x.size
    alg = FedRed(lam=lam, eta=eta, p=p, solver=solver, reset=reset)
    if state is None:
        st = alg.init(problem, x)
    else:
        st = FedRedState(x=x, X=stacked(state["x_i"], clients, d), H=stacked(state["h_i"], clients, d), G=None)
    communicate = bool(draw["communicate"]) if draw is not None and "communicate" in draw else bool(rng.random() < p)
    grads = None
    if batch_size is not None:
        batches = (draw or {}).get("batches") or {
            c.cid: rng.choice(c.num_examples, size=batch_size, replace=False) for c in clients}
        grads = np.stack([c.features[np.asarray(batches[c.cid])].T
                          @ (c.features[np.asarray(batches[c.cid])] @ st.X[i] - c.targets[np.asarray(batches[c.cid])])
                          / len(batches[c.cid]) for i, c in enumerate(clients)])
        st = FedRedState(x=st.x, X=st.X, H=st.H, G=grads)
    new, _ = alg.round_given(problem, st, FedRedDraw(communicate))
    return new.x, {"x_i": {c.cid: new.X[i] for i, c in enumerate(clients)},
                   "h_i": {c.cid: new.H[i] for i, c in enumerate(clients)}}
