"""fedtheory/local/fgd.py: an overflowing row stops at once (not converged) instead of running to max_steps."""
from __future__ import annotations

import numpy as np

from fedtheory.local.fgd import StopRule, local_descent


def test_a_diverging_row_stops_at_once_and_the_others_run_to_their_rule():
    """Row 0 descends on 1/2 x^2 (converges); row 1 ascends with growth 1e200 per step on the same gradient
    (overflows to inf at step 2). Row 1 must stop there, unconverged, with its non-finite point; row 0 must
    still meet its rule."""
    calls = []

    def grad(Y: np.ndarray, rows: np.ndarray) -> np.ndarray:
        calls.append(len(rows))
        with np.errstate(over="ignore", invalid="ignore"):
            return Y.copy()

    X0 = np.ones((2, 3))
    step = np.array([0.5, -1e200])
    res = local_descent(grad, X0, step, np.zeros(2), StopRule("absolute", 1e-8), max_steps=10_000)
    assert res.converged.tolist() == [True, False]
    assert not np.all(np.isfinite(res.X[1]))
    assert res.steps[1] <= 3
    assert np.linalg.norm(res.X[0]) <= 1e-8
    assert sum(calls) < 100  # without the stop, row 1 would have run 10 000 steps
