"""fedtheory.theory.fedred: closed forms, consistency between the rate and rounds functions, validation."""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.theory import fedred as th

pos = st.floats(1e-3, 1e3)


@given(st.floats(0.0, 10.0), pos, st.floats(0.1, 10.0), st.integers(1, 10**4))
def test_gap_bound_below_sublinear_limit_and_continuous_in_mu(mu, lam, D, R):
    """mu D^2 / (2((1+mu/lam)^R - 1)) <= lam D^2/(2R), equal at mu = 0 (the paper's 'continuous estimate')."""
    b = th.dane_gap_bound(mu, lam, D, R)
    assert b <= lam * D * D / (2 * R) * (1 + 1e-12)
    tiny = th.dane_gap_bound(1e-12 * lam, lam, D, R)
    assert math.isclose(tiny, th.dane_gap_bound(0.0, lam, D, R), rel_tol=1e-6)


@given(st.floats(1e-3, 10.0), pos, st.floats(0.1, 10.0), st.floats(1e-12, 1e-1))
def test_rounds_to_eps_is_the_first_round_where_the_bound_is_met(mu, lam, D, eps_rel):
    eps = eps_rel * mu * D * D
    R = th.dane_rounds_to_eps(mu, lam, D, eps)
    assert th.dane_gap_bound(mu, lam, D, R) <= eps * (1 + 1e-9)
    if R > 1:
        assert th.dane_gap_bound(mu, lam, D, R - 1) > eps * (1 - 1e-9)


def test_rounds_scale_linearly_with_delta_over_mu():
    mu, D, eps = 1.0, 1.0, 1e-8
    r1 = th.dane_rounds_to_eps(mu, 2 * 100.0, D, eps)
    r2 = th.dane_rounds_to_eps(mu, 2 * 1000.0, D, eps)
    assert 9.0 <= r2 / r1 <= 11.0


@given(st.floats(0.0, 1.0), st.floats(0.0, 10.0), st.floats(1e-3, 1.0))
def test_fedred_gd_coefficients_are_a_convex_combination(lam, eta_scale, eta):
    a, b, s = th.fedred_gd_coefficients(lam * eta_scale, eta)
    assert math.isclose(a + b, 1.0, rel_tol=1e-14) and a > 0 and b >= 0
    assert math.isclose(s, eta * a, rel_tol=1e-14)


@given(st.floats(1e-3, 1.0), st.floats(0.0, 10.0), st.floats(1e-3, 1.0))
def test_balanced_p_equates_the_two_contraction_terms(mu, lam, eta):
    p = th.fedred_balanced_p(mu, lam, eta)
    if p < 1.0:
        assert math.isclose(p * mu / (lam + mu), mu * eta, rel_tol=1e-12)
        assert math.isclose(th.fedred_gd_contraction(mu, lam, eta, p), 1 - mu * eta, rel_tol=1e-12)


def test_exact_contraction_with_infinite_eta_is_dane_like():
    assert th.fedred_exact_contraction(1.0, 3.0, math.inf, 1.0) == pytest.approx(1 - 1.0 / 4.0)
    assert th.fedred_exact_contraction(0.0, 3.0, 1.0, 0.5) == 1.0


def test_subproblem_condition_number_at_most_two_when_inv_eta_at_least_L():
    for mu, L, lam in [(0.0, 10.0, 0.1), (1.0, 100.0, 5.0), (-1.0, 10.0, 2.0)]:
        assert th.subproblem_condition_number(mu, L, lam, inv_eta=L) <= 2.0 + 1e-12


def test_local_step_bounds_grow_with_log_round_and_fgd_is_sqrt():
    g0, g9 = th.dane_gd_local_steps(1.0, 100.0, 2.0, 0), th.dane_gd_local_steps(1.0, 100.0, 2.0, 9)
    assert g9 > g0
    kappa = (100 + 2) / (1 + 2)
    assert th.dane_fgd_local_steps(1.0, 100.0, 2.0, 0) == pytest.approx(g0 / math.sqrt(kappa))


def test_nonconvex_bound_and_descent_coefficient():
    assert th.nonconvex_stationarity_bound(0.5, 2.0, 10, [0.1] * 10) == pytest.approx(36 * 0.5 * 2 / 10 + 0.2)
    assert th.nonconvex_descent_coefficient(2.0, 1.0) == 0.5


def test_table1_orders():
    kw = dict(mu=1.0, L=1000.0, delta_A=1.0, delta_B=3.0, D=1.0, F0=1.0, eps=1e-6)
    gd = th.table1("gd", "strongly_convex", **kw)
    dane = th.table1("dane", "strongly_convex", **kw)
    fr = th.table1("fedred-gd", "strongly_convex", **kw)
    assert gd["comm"] / dane["comm"] == pytest.approx(1000.0)
    assert fr["comm"] == dane["comm"] and fr["local_steps"] == pytest.approx(1000.0)
    assert dane["local_steps"] is None  # "-" exact local solves
    assert th.table1("sonata", "general_convex", **kw) == {"comm": None, "local_steps": None}  # "unknown"
    nc = th.table1("dane+-gd", "nonconvex", **kw, R=7)
    assert nc["comm"] == pytest.approx(3.0 / 1e-6) and nc["local_steps"] == pytest.approx(1000 * 7 / 3.0)
    assert th.table1("dane+-fgd", "strongly_convex", **kw)["local_steps"] < \
        th.table1("dane+-gd", "strongly_convex", **kw)["local_steps"]


@pytest.mark.parametrize("call,param", [
    (lambda: th.dane_contraction(-1.0, 1.0), "mu"),
    (lambda: th.dane_contraction(1.0, 0.0), "lam"),
    (lambda: th.dane_gap_bound(1.0, 1.0, -1.0, 3), "D"),
    (lambda: th.dane_rounds_to_eps(1.0, 1.0, 1.0, 0.0), "eps"),
    (lambda: th.fedred_gd_contraction(1.0, 1.0, 1.0, 0.0), "p"),
    (lambda: th.fedred_gd_coefficients(1.0, -1.0), "eta"),
    (lambda: th.table1("fedavg", "nonconvex", L=1.0, eps=1.0), "method"),
    (lambda: th.table1("gd", "convex", L=1.0, eps=1.0), "setting"),
    (lambda: th.table1("gd", "strongly_convex", mu=0.0, L=1.0, eps=1.0), "mu"),
])
def test_validation_names_the_parameter(call, param):
    with pytest.raises((ValueError, TypeError), match=param):
        call()
