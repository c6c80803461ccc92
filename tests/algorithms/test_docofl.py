"""DoCoFL's algorithm (fedtheory/algorithms/docofl.py): mechanics, metamorphic relations and validation of its
hyper-parameters (the paper's claims are checked in fedtheory/claims/docofl/, tests in tests/claims/docofl/)."""
from __future__ import annotations

import numpy as np
import pytest

from fedtheory.algorithms.docofl import DoCoFL, TwoClassParticipation, anchor_round
from fedtheory.compressors.ecuq import ECUQ
from fedtheory.compressors.noise import ScaledRademacher
from fedtheory.compressors.quantizers import QSGD
from fedtheory.compressors.sparsifiers import RandK
from fedtheory.problems.quadratic import QuadraticProblem, quadratic
from fedtheory.run import run

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
