"""Property tests for the non-convex family (fedtheory's construction, docs/problems.md)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from fedtheory.claims import REGISTRY
from fedtheory.problems import NonconvexProblem, nonconvex
from fedtheory.prox_l1 import kkt_residual_l1
from fedtheory.strategies import nonconvex_params
from fedtheory.testing import assert_oracles_match_finite_differences

# the claims' checks (fedtheory/claims/foundation/), through the public registry
check_nonconvex = REGISTRY["foundation.nonconvex.constants_exact"]


@given(nonconvex_params())
def test_constants_exact_and_f_star_bracketed(kw):
    ev = check_nonconvex(kw)
    assert ev.holds, ev.details


@given(nonconvex_params(min_clients=2))
def test_sandwich_and_exact_labels(kw):
    p = nonconvex(**kw)
    c = p.certificate
    assert c.delta_A <= c.delta_B * (1 + 1e-12)
    assert c.delta_B <= np.sqrt(p.n_clients) * c.delta_A * (1 + 1e-12)
    assert c.exact["delta_B"] and c.exact["f_star"] and not c.exact["f_inf_multistart"]
    # the global objective is reg-free non-convex when nu < c/4: mu_f reports it
    assert c.mu_f == pytest.approx(kw["nu"] - kw["curvature"] / 4)


@given(nonconvex_params(), st.integers(0, 1000))
def test_f_star_is_a_global_lower_bound_on_samples(kw, seed):
    p = nonconvex(**kw)
    c = p.certificate
    rng = np.random.default_rng(seed)
    X = c.x_star + rng.standard_normal((64, p.dim)) * rng.choice([0.01, 1.0, 10.0], size=(64, 1))
    vals = np.array([p.value(x) for x in X])
    assert np.all(vals >= c.f_star - 1e-12 * max(1.0, abs(c.f_star)))


@given(nonconvex_params(max_clients=4, max_dim=4), st.integers(0, 100))
def test_oracles_match_finite_differences(kw, seed):
    p = nonconvex(**kw)
    X = np.random.default_rng(seed).standard_normal((p.n_clients, p.dim)) * 2
    assert_oracles_match_finite_differences(p, X, check_hessians=True)


@settings(max_examples=10)
@given(nonconvex_params(max_clients=3, max_dim=4), st.floats(0.01, 3.0), st.sampled_from([0.0, 0.1]),
       st.integers(0, 100))
def test_solve_local_matches_reference_and_kkt(kw, extra, l1, seed):
    p = nonconvex(**kw)
    lam = max(0.0, -p.certificate.mu) + extra
    rng = np.random.default_rng(seed)
    lin, center = rng.standard_normal((2, p.n_clients, p.dim))
    X = p.solve_local(lin, center, lam, l1=l1)
    G = p.grads(X) + lin + lam * (X - center)
    scale = max(1.0, np.abs(lin).max(), lam * np.abs(center).max(), np.abs(p.grads(center) + lin).max(), l1)
    if l1 == 0:
        assert np.abs(G).max() <= 1e-12 * scale * np.sqrt(p.dim)
    else:
        assert kkt_residual_l1(G, X - center, l1).max() <= 1e-12 * scale
    for i in range(p.n_clients):  # independent reference: the subproblem is strongly convex, so unique
        def phi(x, i=i):
            return (p.values(x[None], np.array([i]))[0] + lin[i] @ x + lam / 2 * np.sum((x - center[i]) ** 2)
                    + l1 * np.abs(x - center[i]).sum())
        ref = optimize.minimize(phi, center[i], method="Powell" if l1 else "BFGS",
                                options={"xtol": 1e-10, "ftol": 1e-14, "maxiter": 100000} if l1 else {"gtol": 1e-10})
        assert phi(X[i]) <= ref.fun + 1e-10 * max(1.0, abs(ref.fun))


def test_lam_outside_strongly_convex_range_raises():
    p = nonconvex(4, 3, curvature=1.0, nu=0.01, delta_B=0.3, seed=0)
    need = -p.certificate.mu
    assert need > 0
    zeros = np.zeros((4, 3))
    with pytest.raises(ValueError, match="lam must be >"):
        p.solve_local(zeros, zeros, 0.99 * need)
    p.solve_local(zeros, zeros, 1.01 * need)


def test_determinism_under_seed():
    a = nonconvex(5, 4, delta_A=0.2, zeta2=1.0, seed=3)
    b = nonconvex(5, 4, delta_A=0.2, zeta2=1.0, seed=3)
    np.testing.assert_array_equal(a.E, b.E)
    np.testing.assert_array_equal(a.c, b.c)
    assert a.certificate.f_star == b.certificate.f_star


@pytest.mark.parametrize("call, name", [
    (lambda: nonconvex(3, 2, curvature=0.0), "curvature"),
    (lambda: nonconvex(3, 2, nu=-1.0), "nu"),
    (lambda: nonconvex(3, 2, delta_A=0.1, delta_B=0.1), "delta_A and delta_B"),
    (lambda: nonconvex(1, 2, delta_B=0.1), "n_clients=1"),
    (lambda: nonconvex(3, 0), "dim"),
    (lambda: nonconvex(3, 2, zeta2=-1.0), "zeta2"),
    (lambda: NonconvexProblem(np.ones((2, 2, 2)), np.zeros((2, 2)), curvature=1.0, nu=1.0), "sum_i w_i E_i = 0"),
])
def test_invalid_parameters_raise(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()
