"""FedElasticNet, properties of Algorithm 3 (fedtheory/claims/fedelasticnet/algorithm3.py) on hypothesis-drawn
quadratics beyond the claims' own instances."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY
from fedtheory.claims.fedelasticnet import algorithm3
from fedtheory.problems.quadratic import quadratic
from fedtheory.strategies import quadratic_params

small = dict(min_clients=2, max_clients=5, min_dim=2, max_dim=4, max_condition=30.0)


@given(kw=quadratic_params(**small), r=st.floats(0.1, 50.0), lam1=st.sampled_from([0.01, 0.3, 2.0]),
       reading=st.sampled_from(["printed", "kkt"]))
def test_local_kkt_eq11(kw, r, lam1, reading):
    problem = quadratic(**kw)
    ev = REGISTRY["fedelasticnet.local_kkt_eq11"].check(
        (problem, algorithm3(r * problem.certificate.L, lam1, reading, None), 8))
    assert ev.holds, ev.details


@given(kw=quadratic_params(**small), r=st.floats(0.1, 20.0), lam1=st.sampled_from([0.0, 0.1]),
       reading=st.sampled_from(["printed", "kkt"]), eps=st.sampled_from([0.0, 0.01]))
def test_fixed_point_invariance(kw, r, lam1, reading, eps):
    problem = quadratic(**kw)
    P = None if problem.n_clients == 2 else 2
    ev = REGISTRY["fedelasticnet.fixed_point.invariance"].check(
        (problem, algorithm3(r * problem.certificate.L, lam1, reading, P, eps)))
    assert ev.holds, ev.details


@settings(max_examples=12)
@given(kw=quadratic_params(min_clients=2, max_clients=5, min_dim=2, max_dim=4, max_condition=20.0,
                           hessians=("diagonal",)),
       r=st.floats(0.55, 5.0), lam1=st.sampled_from([0.0, 0.05, 0.3]))
def test_alg3_subgradient_converges_to_theta_star(kw, r, lam1):
    """The corrected fixed-point claim: lambda2 > L_f/2 (diagonal Hessians keep the exact solves cheap)."""
    problem = quadratic(**kw)
    ev = REGISTRY["fedelasticnet.fixed_point.corrected"].check(
        (problem, algorithm3(r * problem.certificate.L_f, lam1, "kkt"), 3000))
    assert ev.holds, (ev.measured, ev.details)


def test_alg3_any_lambda2_counterexample_is_a_cycle():
    """lambda2 = beta/2: all updates vanish and theta alternates around theta* forever (h flips sign)."""
    problem, alg, _ = next(iter(REGISTRY["fedelasticnet.fixed_point.derived"].instances(False)))
    state = alg.init(problem, np.zeros(1))
    rng = np.random.default_rng(0)
    xs = []
    for _ in range(50):
        state, _ = alg.round(problem, state, rng)
        xs.append(state.x[0])
    assert not np.any(state.last_upload)
    assert xs[-1] == pytest.approx(xs[-3], abs=1e-15) and abs(xs[-1] - 1.0) > 1e-3
    assert (xs[-1] - 1.0) == pytest.approx(-(xs[-2] - 1.0), abs=1e-15)
