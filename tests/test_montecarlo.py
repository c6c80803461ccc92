"""The one Monte Carlo rule (fedtheory/montecarlo.py): its size and what it promises."""
from __future__ import annotations

from statistics import NormalDist

import numpy as np

from fedtheory.montecarlo import Z_MONTE_CARLO, mc_slack


def test_mc_slack_is_z_standard_errors_for_floats_and_arrays():
    assert mc_slack(0.2) == Z_MONTE_CARLO * 0.2
    se = np.array([0.0, 1.0, 3.5])
    np.testing.assert_array_equal(mc_slack(se), Z_MONTE_CARLO * se)


def test_false_alarm_probability_the_docstring_states():
    one_sided = 1.0 - NormalDist().cdf(Z_MONTE_CARLO)
    assert one_sided < 3e-7                       # per one-sided comparison
    assert 1e4 * 2 * one_sided < 6e-3              # union bound over 10^4 two-sided comparisons


def test_a_correct_estimate_passes_and_a_shifted_one_fails():
    # R samples of a known mean: the sample mean is within mc_slack of it; a mean shifted by 8 se is not.
    rng = np.random.default_rng(0)
    R = 4000
    x = rng.normal(1.0, 2.0, size=R)
    se = x.std(ddof=1) / np.sqrt(R)
    assert abs(x.mean() - 1.0) <= mc_slack(se)
    assert not abs(x.mean() + 8 * se - 1.0) <= mc_slack(se)
