"""fedtheory/conformance/tolerances.py's derived tolerances: the fixed-point one against a direct simulation of
an aggregation in fixed point (round(s n_k Delta_k) summed, divided by s sum n_k), written here in NumPy."""
from __future__ import annotations

import numpy as np
import pytest

from fedtheory.conformance.tolerances import IDENTITY_RTOL, fixed_point_rtol


def fixed_point_average(deltas: np.ndarray, sizes: np.ndarray, s: float) -> np.ndarray:
    """The n_k-weighted average of ``deltas`` with each weighted delta rounded to the grid 1/s (no overflow)."""
    return np.rint(s * sizes[:, None] * deltas).sum(axis=0) / (s * sizes.sum())


@pytest.mark.parametrize("s", [1.0, 100.0, 2.0**20])
def test_the_rounding_of_a_fixed_point_average_stays_within_half_the_derived_rtol(s):
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(2000):
        n, d = rng.integers(1, 7), rng.integers(1, 9)
        sizes = rng.integers(d, 3 * d + 11, size=n).astype(float)  # the kit's instances: n_k >= d
        deltas = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-3, 3)
        exact = sizes @ deltas / sizes.sum()
        worst = max(worst, float(np.linalg.norm(fixed_point_average(deltas, sizes, s) - exact)))
    # one output is off by at most 1/(2s); the rtol allows two outputs compared with each other
    assert worst <= (fixed_point_rtol(s) - IDENTITY_RTOL) / 2
    assert worst > (fixed_point_rtol(s) - IDENTITY_RTOL) / 40  # the bound is not vacuous: same order as measured


def test_the_bound_is_attained_by_one_client_with_n_equal_to_d_in_one_dimension():
    s = 100.0
    sizes, deltas = np.array([1.0]), np.array([[0.5 / s - 1e-12]])  # s n Delta just under a half: rounds to 0
    err = abs(fixed_point_average(deltas, sizes, s)[0] - deltas[0, 0])
    assert err == pytest.approx(1 / (2 * s), rel=1e-6)


@pytest.mark.parametrize("bad", [0, -1.0, "100", None])
def test_a_scaling_factor_that_is_not_positive_is_refused(bad):
    with pytest.raises(ValueError, match="scaling_factor"):
        fixed_point_rtol(bad)
