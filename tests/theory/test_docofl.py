"""DoCoFL's theory module (fedtheory/theory/docofl.py): closed forms, their reductions and bad inputs."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.theory import docofl as th


def test_theory_bad_inputs():
    with pytest.raises(ValueError):
        th.pretuning_bound(1.0, 1.0, 1.0, 1.0, 1, 10, 0.0, 1)        # eta above 1/(30 gamma beta theta)
    with pytest.raises(ValueError):
        th.effective_noise(1.0, 1.0, 5, 3)                           # S > N
    with pytest.raises(ValueError):
        th.appendix_a_mean(3, 0.5, 0.3)                              # eta >= 1/(2(1 + omega))
    with pytest.raises(ValueError):
        th.naive_variance_floor(2.0, 1.5, 0.5, 1.0)                  # second moment diverges
    with pytest.raises(ValueError):
        th.lemma_c6(np.ones(5), 2, 3)
    with pytest.raises(ValueError):
        th.bandwidth_reduction(0, 2, 3)


@given(M=st.floats(1e-3, 1e3), beta=st.floats(1e-2, 1e2), s2=st.floats(0.0, 1e2), S=st.integers(1, 50),
       T=st.integers(1, 10**6), nmse=st.floats(0.0, 10.0), Tt=st.integers(0, 100))
def test_theorem1_step_and_bound(M, beta, s2, S, T, nmse, Tt):
    eta = th.theorem1_step(M, beta, s2, S, T, nmse, Tt)
    assert 0 < eta <= 1 / (30 * beta * th.theta(nmse, Tt))
    pre = th.pretuning_bound(eta, M, beta, s2, S, T, nmse, Tt)
    assert pre <= th.theorem1_bound(M, beta, s2, S, T, nmse, Tt) * (1 + 1e-12)


def test_theorem1_reduces_to_sgd_rate_at_omega_zero():
    """Cor. 3.5: omega = 0 removes the middle term and theta = 1."""
    b0 = th.theorem1_bound(2.0, 3.0, 1.5, 4, 1000, 0.0, 30)
    assert b0 == pytest.approx(4 * math.sqrt(2 * 2 * 3 * 1.5 / 4000) + 120 * 2 * 3 / 1000, rel=1e-14)


@given(a=st.floats(0.1, 3.0), eta=st.floats(0.01, 0.3), s2=st.floats(0.0, 2.0), u0=st.floats(-3, 3))
def test_stale_moments_at_tau_zero_is_sgd(a, eta, s2, u0):
    if eta * a >= 1.9:
        return
    u2, corr = th.stale_second_moments(50, a, eta, 0.7, s2, 0, u0)
    q = 1 - eta * a
    t = np.arange(51)
    expect = q ** (2 * t) * u0**2 + eta**2 * s2 * (1 - q ** (2 * t)) / (1 - q**2)
    np.testing.assert_allclose(u2, expect, rtol=1e-10, atol=1e-14)
    assert np.all(corr == 0)


def test_bandwidth_table3_emnist():
    assert th.bandwidth_reduction(2, 2, 3) == {"online": 16.0, "total": 8.0, "uplink": 32 / 3}
    assert th.one_direction_bytes(1.3e6, 6500, 2000) / 2**40 == pytest.approx(61.48, abs=0.005)


def test_naive_second_moment_limit_is_floor():
    q = th.naive_second_moment(20000, 2.0, 0.05, 0.09, 5.0, 6.0)
    assert q[-1] == pytest.approx(th.naive_variance_floor(2.0, 0.05, 0.09, 5.0), rel=1e-12)
    assert q[-1] == pytest.approx(0.1190, abs=1e-4)  # an independent Monte Carlo estimate (a = 2, w* = 5, omega = 0.3)


def test_appendix_a_limit_and_mean_at_zero():
    assert th.appendix_a_limit(0.5) == pytest.approx(3 / 3.5)
    assert th.appendix_a_mean(0, 0.2, 0.5) == 1.0
