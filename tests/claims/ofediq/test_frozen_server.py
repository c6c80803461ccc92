"""OFedIQ, Theorems 1-2 (fedtheory/claims/ofediq/theorem1.py, theorem2.py): the regret bounds reject a server
that never learns at their last default point, a horizon where the rate term dominates (benchmarks/mutation/
discrimination.py), while the faithful algorithms keep them there."""
from __future__ import annotations

import numpy as np
import pytest

from fedtheory.claims import REGISTRY
from fedtheory.claims.ofediq._shared import stream_problem


def frozen_regret(inst: dict) -> float:
    """The regret of a model that never leaves w_1 = 0 on the claim's ridge stream, by a linear solve of its own:
    sum_{t,k} L_kt(0) - min_w sum_{t,k} L_kt(w) = 1/2 w*^T H w*, H = X^T X + lam T K I, w* = H^{-1} X^T y."""
    problem = stream_problem(inst)
    X = problem.features.reshape(-1, problem.dim)
    y = problem.labels.reshape(-1)
    H = X.T @ X + problem.lam * X.shape[0] * np.eye(problem.dim)
    w = np.linalg.solve(H, X.T @ y)
    return 0.5 * float(w @ H @ w)


@pytest.mark.parametrize("cid, factor", [("ofediq.thm1.ofedavg", 1.5), ("ofediq.thm2.L1", 3.0),
                                         ("ofediq.thm2.L_gt_1", 1.5)])
def test_the_bound_rejects_a_frozen_server_at_the_last_default(cid: str, factor: float):
    inst = REGISTRY[cid].space.defaults[-1]
    ev = REGISTRY[cid].check(inst)
    assert ev.holds
    assert frozen_regret(inst) > factor * ev.theory
