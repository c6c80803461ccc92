"""The round loop: determinism, divergence reporting, recording and validation."""
import numpy as np
import pytest

from fedtheory.algorithms import GradientDescent
from fedtheory.problems import quadratic
from fedtheory.run import run


@pytest.fixture
def problem():
    return quadratic(5, 4, mu=0.1, L=1.0, delta_B=0.2, zeta2=1.0, seed=0)


def test_same_seed_same_trace(problem):
    a = run(GradientDescent(), problem, 30, seed=3)
    b = run(GradientDescent(), problem, 30, seed=3)
    assert a.same_numbers(b)


def test_divergence_is_reported_not_nan_filled(problem):
    trace = run(GradientDescent(step=5.0), problem, 10_000, seed=0)
    assert trace.status == "diverged"
    assert trace.stopped_at is not None and trace.stopped_at < 10_000
    assert np.all(np.isfinite(trace.gap))


def test_tol_stops_with_converged(problem):
    trace = run(GradientDescent(), problem, 10_000, seed=0, tol=1e-10)
    assert trace.status == "converged" and trace.gap[-1] <= 1e-10


def test_record_every_keeps_costs(problem):
    full = run(GradientDescent(), problem, 20, seed=0)
    sparse = run(GradientDescent(), problem, 20, seed=0, record_every=7)
    assert list(sparse.round) == [0, 7, 14, 20]
    assert sparse.uplink_bits.sum() == full.uplink_bits.sum()
    assert sparse.gap[-1] == full.gap[-1]


@pytest.mark.parametrize("kwargs, name", [(dict(rounds=-1), "rounds"), (dict(rounds=3, record_every=0), "record_every"),
                                          (dict(rounds=3, tol=-1.0), "tol")])
def test_bad_arguments(problem, kwargs, name):
    with pytest.raises(ValueError, match=name):
        run(GradientDescent(), problem, **kwargs)


def test_bad_step_rejected():
    with pytest.raises(ValueError, match="step"):
        GradientDescent(step=-1.0)
