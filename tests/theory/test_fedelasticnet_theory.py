"""FedElasticNet theory constants and communication metrics (Kim et al., Theorem B.1 and Section 4)."""
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.metrics import (
    EntropyMetrics,
    binned_entropy,
    cumulative,
    gaussian_binned_entropy,
    laplace_binned_entropy,
    nnz,
    round_entropy,
    threshold,
)
from fedtheory.theory import fedelasticnet as th


def test_threshold_is_derived_and_equals_closed_form():
    r0 = th.kappa0_threshold_symbolic()
    assert sp.simplify(r0 - (25 + sp.sqrt(825)) / 2) == 0
    assert th.kappa0_threshold() == pytest.approx(26.86140661634507, rel=1e-15)


@given(beta=st.floats(1e-3, 1e3), r=st.floats(0.01, 200.0), m=st.integers(1, 50), frac=st.floats(0.01, 1.0))
def test_positivity_iff_threshold(beta, r, m, frac):
    P = max(1, int(frac * m))
    lam2 = r * beta
    if abs(r - 5.0) < 1e-9 or abs(r - th.kappa0_threshold()) < 1e-9:
        return
    both = th.kappa0(lam2, beta) > 0 and th.kappa(lam2, beta, m, P) > 0
    assert both == (r > th.kappa0_threshold())
    assert th.kappa_prime(lam2, beta) == pytest.approx(th.kappa(lam2, beta, m, P) * P / (2 * m), rel=1e-13)


def test_reference_table_values():
    # reference values at beta = 1, computed independently from Theorem B.1's kappa0 and kappa':
    # lambda2 kappa0 and the floor ratio lambda2 kappa'/kappa0
    table = {27: (0.011364, 472.5), 30: (0.22857, 23.25), 40: (0.69841, 7.4545), 100: (1.49373, 3.3893)}
    for r, (k0, floor) in table.items():
        assert r * th.kappa0(r, 1.0) == pytest.approx(k0, rel=1e-4)
        assert r * th.kappa_prime(r, 1.0) / th.kappa0(r, 1.0) == pytest.approx(floor, rel=1e-4)
        # floor_corrected = (kappa'/kappa0) lambda1^2 d
        assert th.floor_corrected(0.1, r, 1.0, 3) == pytest.approx(floor / r * 0.01 * 3, rel=1e-4)


def test_printed_and_corrected_rhs_differ_as_documented():
    args = dict(T=10, dist0_sq=2.0, C0=3.0, lambda1=0.1, lambda2=30.0, beta=1.0, m=4, P=2, d=3)
    k, k0 = th.kappa(30.0, 1.0, 4, 2), th.kappa0(30.0, 1.0)
    s = 0.7
    printed = th.theorem31_rhs_printed(**args, sign_sum=s)
    corrected = th.theorem31_rhs_corrected(**args, sign_sum=s)
    floor = th.kappa_prime(30.0, 1.0) / k0 * 0.01 * 3
    assert printed == pytest.approx((2 + k * 3) / (10 * k0) + floor - 2 * 0.1 / 30 * s / 10, rel=1e-14)
    assert corrected == pytest.approx((2 + k * 3 - 2 * 0.1 / 30 * s) / (10 * k0) + floor, rel=1e-14)
    with pytest.raises(ValueError, match="lambda2 / beta"):
        th.theorem31_rhs_corrected(**{**args, "lambda2": 26.0})


def test_c0_printed_unsquared_corrected_squared():
    G0 = np.zeros((2, 2))
    Gs = np.array([[3.0, 4.0], [0.0, 1.0]])
    assert th.C0_printed(G0, Gs) == pytest.approx(3.0)
    assert th.C0_corrected(G0, Gs) == pytest.approx(13.0)


@pytest.mark.parametrize("call, name", [
    (lambda: th.kappa(-1.0, 1.0, 2, 1), "lambda2"), (lambda: th.kappa0(1.0, 0.0), "beta"),
    (lambda: th.kappa(1.0, 1.0, 2, 3), "P"), (lambda: th.kappa(5.0, 1.0, 2, 1), "lambda2"),
    (lambda: th.theorem31_rhs_printed(1, 1.0, 1.0, -0.1, 30.0, 1.0, 2, 2, 2), "lambda1"),
    (lambda: th.lemma_b5_rhs(1.0, 1.0, 0.1, 2.0, 1.0, 2), "lambda2"),
    (lambda: threshold(np.ones(3), -1e-3), "eps"), (lambda: binned_entropy(np.ones(3), 0.0), "bin_size"),
    (lambda: binned_entropy(np.ones(3), 0.01, "ceil"), "mode"),
])
def test_bad_input_names_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


@given(st.lists(st.floats(-1, 1), min_size=1, max_size=50), st.floats(0, 1), st.floats(0, 1))
def test_nnz_non_increasing_in_eps(values, e1, e2):
    v = np.array(values)
    lo, hi = min(e1, e2), max(e1, e2)
    assert nnz(threshold(v, hi)) <= nnz(threshold(v, lo))
    # inclusive: an entry equal to eps is zeroed
    assert nnz(threshold(np.array([lo]), lo)) == 0


@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 40))
def test_entropy_bounds(seed, n, d):
    X = np.random.default_rng(seed).normal(0, 0.05, (n, d))
    H = binned_entropy(X)
    distinct = np.array([np.unique(np.rint(row / 0.01)).size for row in X])
    assert np.all(H >= 0) and np.all(H <= np.log2(distinct) + 1e-12)
    assert round_entropy(X) == pytest.approx(float(np.mean(H)))
    assert EntropyMetrics()(X)["entropy"] == pytest.approx(float(np.mean(H)))


def test_entropy_exact_references_match_continuous_limits():
    for sigma in (0.1, 0.5):
        cont_g = 0.5 * math.log2(2 * math.pi * math.e * sigma ** 2) + math.log2(100)
        cont_l = math.log2(2 * math.e * sigma / math.sqrt(2)) + math.log2(100)
        assert gaussian_binned_entropy(sigma) == pytest.approx(cont_g, abs=2e-3)
        assert laplace_binned_entropy(sigma) == pytest.approx(cont_l, abs=2e-3)


def test_cumulative_ignores_missing_rounds():
    assert cumulative(np.array([np.nan, 1.0, 2.0])).tolist() == [0.0, 1.0, 3.0]
