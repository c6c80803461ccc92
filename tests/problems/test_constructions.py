"""Property tests for the special quadratic constructions (fedtheory's, docs/problems.md)."""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY
from fedtheory.problems import (
    general_convex_quadratic,
    outlier_quadratic,
    quadratic,
    vary_delta,
    vary_delta_family,
    vary_L,
)
from fedtheory.strategies import quadratic_params

# the claims' checks (fedtheory/claims/foundation/), through the public registry
check_general_convex = REGISTRY["foundation.constructions.general_convex_minimiser"]
check_outlier = REGISTRY["foundation.constructions.outlier_ratio"]
check_vary_delta = REGISTRY["foundation.constructions.vary_delta_scales"]
check_vary_L = REGISTRY["foundation.constructions.vary_L_keeps_delta"]


@given(quadratic_params(), st.floats(1.0, 20.0), st.floats(0.0, 1.0))
def test_vary_L_and_vary_delta_invariants(kw, factor, t):
    inst = {"base": kw, "L": kw["L"] * factor, "scale": t}
    ev = check_vary_L(inst)
    assert ev.holds, ev.details
    ev = check_vary_delta(inst)
    assert ev.holds, ev.details


@given(st.integers(1, 6), st.integers(3, 7), st.floats(0.1, 10.0), st.floats(0.0, 0.3), st.floats(0.0, 3.0),
       st.integers(1, 2), st.integers(0, 2**31 - 1))
def test_general_convex_has_mu_zero_and_a_minimiser(n, d, L, frac, zeta2, null_dim, seed):
    assume(null_dim <= d - 2)
    kw = dict(n_clients=n, dim=d, L=L, delta_B=frac * L if n > 1 else 0.0, zeta2=zeta2 if n > 1 else 0.0,
              null_dim=null_dim, seed=seed)
    ev = check_general_convex(kw)
    assert ev.holds, ev.details
    p = general_convex_quadratic(**kw)
    # the null direction is a direction of constant f: moving x* along it keeps the gap at zero
    v = np.zeros(d)
    v[-1] = 1.0
    assert p.gap(p.certificate.x_star + 3.0 * v) == pytest.approx(0.0, abs=1e-12 * L)


@given(st.integers(2, 30), st.integers(2, 6), st.floats(0.01, 1.0), st.floats(1.5, 100.0),
       st.sampled_from(["delta_A", "delta_B"]), st.floats(0.01, 0.4), st.floats(0.0, 3.0), st.integers(0, 2**31 - 1))
def test_outlier_ratio_with_exact_constants(n, d, mu, kappa, which, frac, zeta2, seed):
    L = mu * kappa
    # delta_B <= 0.4 (L - mu) is always feasible (see strategies.quadratic_params); delta_A = delta_B / sqrt(n-1)
    delta = frac * (L - mu) / (np.sqrt(n - 1) if which == "delta_A" else 1.0)
    ev = check_outlier(dict(n_clients=n, dim=d, mu=mu, L=L, zeta2=zeta2, seed=seed, **{which: delta}))
    assert ev.holds, ev.details


def test_vary_delta_family_keeps_mu_and_L_exactly():
    fam = vary_delta_family(6, 4, mu=0.1, L=2.0, deltas=[0.0, 0.1, 0.3, 0.6], which="delta_B", zeta2=1.0, seed=4)
    for p, dl in zip(fam, [0.0, 0.1, 0.3, 0.6]):
        c = p.certificate
        assert c.mu == pytest.approx(0.1, rel=1e-10) and c.L == pytest.approx(2.0, rel=1e-10)
        assert c.delta_B == pytest.approx(dl, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("call, name", [
    (lambda: vary_L(quadratic(3, 2, mu=0.1, L=1.0, seed=0), 0.5), "L"),
    (lambda: vary_delta(quadratic(3, 2, mu=0.1, L=1.0, seed=0), 1.5), "scale"),
    (lambda: outlier_quadratic(1, 3, mu=0.1, L=1.0), "n_clients"),
    (lambda: outlier_quadratic(3, 3, mu=0.1, L=1.0, delta_B=2.0), "delta_B"),
    (lambda: general_convex_quadratic(3, 4, L=1.0, null_dim=3), "null_dim"),
    (lambda: general_convex_quadratic(3, 4, L=1.0, mu_range=2.0), "mu_range"),
    (lambda: vary_delta_family(3, 3, mu=0.1, L=1.0, deltas=[0.1], which="delta_C"), "which"),
])
def test_invalid_parameters_raise(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


def test_determinism():
    a = outlier_quadratic(5, 3, mu=0.1, L=1.0, delta_A=0.1, zeta2=1.0, seed=11)
    b = outlier_quadratic(5, 3, mu=0.1, L=1.0, delta_A=0.1, zeta2=1.0, seed=11)
    np.testing.assert_array_equal(a.A, b.A)
    np.testing.assert_array_equal(a.b, b.b)
