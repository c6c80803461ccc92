"""DoCoFL (Dorfman et al. 2023): algorithm mechanics, theory functions and the claim checks on drawn instances.

The claims' default instances run in tests/test_claims_ledger.py; here the same check functions run on
hypothesis-drawn instances, plus validation and metamorphic tests of the algorithm and theory code.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fedtheory.algorithms.docofl import DoCoFL, TwoClassParticipation, anchor_round
from fedtheory.claims.docofl import (HingeProblem, check_identity_is_sgd, check_lemma_c1, check_queue,
                                     check_unbiased_estimate, check_eq23, lemma_violations, separable_quadratic)
from fedtheory.compressors.ecuq import ECUQ
from fedtheory.compressors.noise import Identity, ScaledRademacher, Zero
from fedtheory.compressors.quantizers import QSGD
from fedtheory.compressors.sparsifiers import RandK
from fedtheory.problems.quadratic import quadratic
from fedtheory.run import run
from fedtheory.theory import docofl as th


# ------------------------------------------------------------------ claims on drawn instances

@given(seed=st.integers(0, 10**6))
def test_lemmas_c5_c10_hold(seed):
    v = lemma_violations(seed)
    assert max(v.values()) <= 1e-12, v


@given(N=st.integers(2, 7), data=st.data(), seed=st.integers(0, 10**5), sigma2=st.floats(0.0, 3.0))
def test_lemma_c1_enumeration(N, data, seed, sigma2):
    S = data.draw(st.integers(1, N))
    ev = check_lemma_c1({"N": N, "S": S, "d": 3, "seed": seed, "sigma2": sigma2})
    assert ev.holds, ev


@given(K=st.integers(1, 6), V=st.integers(1, 4), seed=st.integers(0, 100))
def test_queue_invariants(K, V, seed):
    ev = check_queue({"K": K, "V": V, "rounds": 3 * K * V + 4, "seed": seed})
    assert ev.holds, ev
    assert ev.measured == K * V - 1   # the staleness bound KV - 1 is attained with lead K(V-1)


@given(seed=st.integers(0, 1000), anchor=st.sampled_from([Identity(), ECUQ(b=2.0), ECUQ(b=1.5), Zero()]),
       K=st.integers(1, 4), V=st.integers(1, 3), reference=st.sampled_from(["fedavg", "sgd"]))
def test_identity_compressors_are_sgd(seed, anchor, K, V, reference):
    ev = check_identity_is_sgd({"anchor": anchor, "seed": seed, "n": 8, "S": 4, "d": 5, "K": K, "V": V,
                                "rounds": 15, "reference": reference})
    assert ev.holds, ev


@given(seed=st.integers(0, 1000), comp=st.sampled_from([ScaledRademacher(scale=0.9), RandK(k=3), QSGD(s=1)]))
def test_unbiased_estimate_and_eq23(seed, comp):
    inst = {"correction": comp, "d": 6, "seed": seed, "draws": 2000}
    assert check_unbiased_estimate(inst).holds
    assert check_eq23(inst).holds


# ------------------------------------------------------------------ algorithm mechanics

def _problem(seed=0, sigma2=0.0):
    return quadratic(n_clients=6, dim=4, mu=0.5, L=2.0, zeta2=1.0, seed=seed).with_noise(sigma2)


def test_same_seed_same_numbers():
    p = _problem(sigma2=0.2)
    alg = DoCoFL(step=0.2, n_sampled=3, period=2, queue_size=3, anchor_compressor=ECUQ(b=2.0),
                 correction_compressor=QSGD(s=2), uplink_compressor=RandK(k=2),
                 participation=TwoClassParticipation(lead_strong=1, lead_weak=4, strong_fraction=1 / 3))
    a, b = run(alg, p, 30, seed=5), run(alg, p, 30, seed=5)
    assert a.same_numbers(b)
    c = run(alg, p, 30, seed=6)
    assert not np.array_equal(a.gap, c.gap)


def test_identity_docofl_full_participation_is_gd():
    p = _problem()
    x0 = np.ones(4)
    alg = DoCoFL(step=0.3, period=3, queue_size=2, stochastic=False)
    tr = run(alg, p, 20, seed=0, x0=x0)
    x = x0.copy()
    for _ in range(20):
        x = x - 0.3 * p.grad(x)
    np.testing.assert_allclose(tr.state.x, x, rtol=1e-12, atol=1e-14)


def test_meta_algorithm_staleness():
    """DoCoFL.meta(tau): the anchor is exactly w_{max(t - tau, 0)} (App. C, Alg. 3)."""
    p = _problem()
    tau = 3
    alg = DoCoFL.meta(0.2, tau, ScaledRademacher(scale=0.5), n_sampled=2, stochastic=False)
    rng = np.random.default_rng(0)
    st_ = alg.init(p, np.ones(4))
    xs = [st_.x]
    for t in range(12):
        s1 = alg.enqueue(st_, rng)
        est = alg.client_estimates(s1, np.full(2, tau), np.random.default_rng(t))
        np.testing.assert_array_equal(est["anchors"], np.broadcast_to(xs[max(t - tau, 0)], (2, 4)))
        assert np.all(est["staleness"] == min(t, tau))
        st_, _ = alg.round(p, st_, rng)
        xs.append(st_.x)


def test_anchor_round_and_correction_at_zero():
    np.testing.assert_array_equal(anchor_round(np.array([0, 5, 9, 10, 11]), 0, 5), [0, 5, 5, 10, 10])
    np.testing.assert_array_equal(anchor_round(7, np.array([0, 2, 3, 10]), 5), [5, 5, 0, 0])
    p = _problem()
    x0 = np.array([0.3, -1.0, 2.5, 4.0])
    alg = DoCoFL(step=0.1, n_sampled=2, anchor_compressor=ECUQ(b=1.0))
    _, log = alg.round(p, alg.init(p, x0), np.random.default_rng(0))
    y = ECUQ(b=1.0).compress(x0)[0][0]
    assert log.extra["correction_norm2"] == pytest.approx(float(np.sum((x0 - y) ** 2)), rel=1e-12)
    assert log.extra["estimation_error"] == 0.0        # identity C_c reconstructs w_0 up to rounding


def test_naive_mode_bits_and_error():
    p = _problem()
    alg = DoCoFL(step=0.1, n_sampled=3, naive=True, anchor_compressor=ScaledRademacher(scale=0.4))
    st_ = alg.init(p, np.ones(4))
    st_, log = alg.round(p, st_, np.random.default_rng(0))
    assert log.extra["estimation_error"] == pytest.approx(0.16 * 4, rel=1e-12)   # omega_w^2 ||w||^2, exactly
    assert log.extra["online_downlink_bits"] == 0.0 and log.vectors_down == 3


def test_bits_logged_per_round():
    p = quadratic(n_clients=4, dim=16, mu=0.5, L=2.0, seed=0)
    alg = DoCoFL(step=0.1, n_sampled=2, period=2, queue_size=2, anchor_compressor=ECUQ(b=2.0),
                 correction_compressor=QSGD(s=1), uplink_compressor=QSGD(s=3))
    tr = run(alg, p, 4, seed=0)
    np.testing.assert_allclose(tr.uplink_bits[1:], 2 * QSGD(s=3).bits(16))
    np.testing.assert_allclose(tr.extra["online_downlink_bits"][1:], 2 * QSGD(s=1).bits(16))
    np.testing.assert_allclose(tr.downlink_bits[1:], tr.extra["online_downlink_bits"][1:]
                               + tr.extra["anchor_downlink_bits"][1:])


def test_weighted_aggregation_is_unbiased_for_nonuniform_weights():
    """With client weights p_i the aggregate (1/S) sum N p_i g_i is unbiased: full participation gives GD."""
    A = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 0.5]])
    from fedtheory.problems.quadratic import QuadraticProblem
    p = QuadraticProblem(A, np.ones((3, 2)), weights=np.array([0.5, 0.3, 0.2]))
    alg = DoCoFL(step=0.2, stochastic=False)
    tr = run(alg, p, 5, seed=0, x0=np.zeros(2))
    x = np.zeros(2)
    for _ in range(5):
        x = x - 0.2 * p.grad(x)
    np.testing.assert_allclose(tr.state.x, x, rtol=1e-12)


# ------------------------------------------------------------------ validation

@pytest.mark.parametrize("kwargs, exc", [
    ({"step": 0.0}, ValueError), ({"step": -1.0}, ValueError), ({"period": 0}, ValueError),
    ({"queue_size": 0}, ValueError), ({"n_sampled": 0}, ValueError),
    ({"correction_compressor": "eden"}, TypeError), ({"participation": 3}, TypeError),
    ({"period": 2, "queue_size": 2, "participation": TwoClassParticipation(lead_strong=3)}, ValueError),
    ({"period": 2, "queue_size": 1, "participation": TwoClassParticipation(lead_strong=1)}, ValueError)])
def test_docofl_bad_hyperparameters(kwargs, exc):
    with pytest.raises(exc):
        DoCoFL(**kwargs)


def test_participation_validation():
    with pytest.raises(ValueError):
        TwoClassParticipation(lead_strong=-1)
    with pytest.raises(ValueError):
        TwoClassParticipation(strong_fraction=1.5)
    with pytest.raises(ValueError, match="proportional"):
        TwoClassParticipation(strong_fraction=0.5).draw(6, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_sampled"):
        DoCoFL(n_sampled=10).init(_problem(), np.zeros(4))
    c, leads = TwoClassParticipation(lead_strong=1, lead_weak=4, strong_fraction=0.5).draw(
        8, 4, np.random.default_rng(0))
    assert np.unique(c).size == 4 and np.sum(c < 4) == 2
    np.testing.assert_array_equal(leads, np.where(c < 4, 1, 4))


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


# ------------------------------------------------------------------ theory identities

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


def test_appendix_a_limit_and_hinge_problem():
    p = HingeProblem(3)
    np.testing.assert_array_equal(p.grads(np.array([[1.0, 2.0, 0.0]])), [[0.0, 2.0, -1.0]])
    assert p.gap(np.ones(3)) == 0.0
    assert th.appendix_a_limit(0.5) == pytest.approx(3 / 3.5)
    assert th.appendix_a_mean(0, 0.2, 0.5) == 1.0


def test_naive_second_moment_limit_is_floor():
    q = th.naive_second_moment(20000, 2.0, 0.05, 0.09, 5.0, 6.0)
    assert q[-1] == pytest.approx(th.naive_variance_floor(2.0, 0.05, 0.09, 5.0), rel=1e-12)
    assert q[-1] == pytest.approx(0.1190, abs=1e-4)  # an independent Monte Carlo estimate (a = 2, w* = 5, omega = 0.3)


def test_separable_paths_have_per_path_noise():
    p = separable_quadratic(2.0, 5.0, 1000, sigma2_per_path=0.5)
    g = p.stochastic_grads(np.full((1, 1000), 5.0), np.random.default_rng(0))
    assert abs(np.var(g) - 0.5) < 0.5 * 5 * math.sqrt(2 / 1000)


@settings(max_examples=5)
@given(seed=st.integers(0, 10**4), step=st.sampled_from([0.03, 0.2]))
def test_correction_value_corrected_on_drawn_seeds(seed, step):
    from fedtheory.claims.docofl import check_correction_value_corrected
    ev = check_correction_value_corrected({"seed": seed, "scale": 0.5, "K": 5, "V": 3, "rounds": 300, "step": step})
    assert ev.holds, ev.details
