"""The fedred claims' checks on hypothesis-drawn instances (the ledger test runs their default instances).

Each test draws an instance in the claim's regime and asserts the same Evidence verdict that
``fedtheory verify`` reports; ``target`` steers the search towards the tightest instances.
"""
from __future__ import annotations

from hypothesis import assume, given, target
from hypothesis import strategies as st

from fedtheory.claims import fedred as C
from fedtheory.strategies import quadratic_params


def _sc_params(**kw):
    return quadratic_params(max_clients=6, max_dim=5, dissimilarity="delta_A", **kw)


def _verdict(ev, label):
    if ev.tightness is not None:
        target(float(ev.tightness), label=label)
    assert ev.holds, (ev.instance, ev.measured, ev.theory, dict(ev.details))


@given(_sc_params())
def test_dane_closed_form(kw):
    assume(kw["delta_A"] > 0)
    _verdict(C.check_dane_closed_form(kw), "closed_form")


@given(_sc_params())
def test_fixed_points(kw):
    assume(kw["delta_A"] > 0)
    _verdict(C.check_fixed_point(kw), "fixed_point")


@given(_sc_params(), st.sampled_from([1.0, 2.0]))
def test_dane_lyapunov_and_monotonicity(kw, lam_factor):
    """Cor. 21 with lam = 2 delta_A (paper) and lam = delta_A (derived by fedtheory, not stated in the paper)."""
    assume(kw["delta_A"] > 0)
    kw = {**kw, "rounds": 80}
    _verdict(C._dane_lyapunov(kw, lam_factor), f"lyapunov{lam_factor}")
    _verdict(C._dane_monotone(kw, lam_factor), f"monotone{lam_factor}")


@given(_sc_params())
def test_dane_gap_bound(kw):
    assume(kw["delta_A"] > 0)
    _verdict(C.check_dane_gap_bound({**kw, "rounds": 60}), "gap_bound")


@given(_sc_params(), st.sampled_from([0.02, 0.1, 0.5, 1.0]), st.floats(1.0, 3.0), st.floats(0.1, 1.0),
       st.booleans())
def test_fedred_gd_expected_lyapunov_contraction(kw, p, lam_factor, eta_L, reset):
    """Lemma 35 (constants derived by fedtheory): exact expectation over both coins, lam >= delta_A, eta <= 1/L,
    with or without reset."""
    assume(kw["delta_A"] > 0)
    inst = {**kw, "p": p, "lam_factor": lam_factor, "eta_L": eta_L, "reset": reset, "iterations": 60}
    _verdict(C.check_fedred_gd_lyapunov(inst), "fedred_gd_lyapunov")


@given(_sc_params(), st.sampled_from([0.05, 0.3, 1.0]), st.floats(1.0, 3.0), st.floats(0.1, 100.0),
       st.booleans())
def test_fedred_exact_expected_lyapunov_contraction(kw, p, lam_factor, eta_L, reset):
    """Section 4.1 / App. B.4 (constants derived by fedtheory): the exact-solver version needs no bound on eta."""
    assume(kw["delta_A"] > 0)
    inst = {**kw, "p": p, "lam_factor": lam_factor, "eta_L": eta_L, "reset": reset, "iterations": 60}
    _verdict(C.check_fedred_exact_lyapunov(inst), "fedred_exact_lyapunov")


@given(_sc_params())
def test_fedred_gd_closed_form_and_reductions(kw):
    assume(kw["delta_A"] > 0)
    _verdict(C.check_fedred_gd_closed_form(kw), "fedred_closed_form")


@given(st.integers(2, 6), st.integers(1, 4), st.floats(0.1, 2.0), st.floats(1.0, 6.0), st.integers(0, 10**6),
       st.sampled_from(["random", "fixed"]), st.integers(1, 30))
def test_nonconvex_descent_and_stationarity(n, d, delta_B, c, seed, averaging, local_steps):
    """Lemma 28 and Thm 1 (constants derived by fedtheory) on the non-convex family with any number of local GD
    steps."""
    kw = dict(n_clients=n, dim=d, delta_B=delta_B, c=c, nu=0.1, seed=seed, rounds=12, local_steps=local_steps,
              averaging=averaging)
    _verdict(C.check_nonconvex_descent(kw), "nc_descent")
    _verdict(C.check_nonconvex_stationarity(kw), "nc_stationarity")


@given(quadratic_params(min_clients=2, max_clients=6, max_dim=5))
def test_dissimilarity_constants(kw):
    # delta at rounding level of L (e.g. L - mu = 2e-16) is not a dissimilarity any construction can resolve
    assume(max(kw.get("delta_A", 0), kw.get("delta_B", 0)) > 1e-8 * kw["L"])
    _verdict(C.check_dissimilarity_constants(kw), "dissimilarity")


@given(_sc_params(max_condition=30.0))
def test_cv_b84_converges_linearly(kw):
    assume(kw["delta_A"] > 0)
    _verdict(C.check_cv_b84(kw), "cv_b84")


@given(st.integers(2, 8), st.integers(1, 6), st.integers(0, 10**6), st.floats(1e-3, 10.0))
def test_scaffold_subproblem_ill_posed(n, d, seed, lam):
    _verdict(C.check_scaffold_ill_posed(dict(n_clients=n, dim=d, seed=seed, lam=lam)), "scaffold")


def test_checks_can_fail_outside_the_theorem_regime():
    """Sensitivity: with eta = 3/L (outside Lemma 35's eta <= 1/L) the FedRed-GD step overshoots along the top
    eigendirection and the expected-Lyapunov check must report the violation."""
    kw = dict(n_clients=6, dim=5, mu=0.5, L=10.0, delta_A=0.5, zeta2=1.0, seed=0, p=0.5, lam_factor=1.0,
              eta_L=3.0, reset=True, iterations=40)
    ev = C.check_fedred_gd_lyapunov(kw)
    assert not ev.holds and ev.measured > 1.0


@given(_sc_params(max_condition=300.0))
def test_daneplus_gd_inexact_within_constant_of_exact(kw):
    """Thm 4 / Cor 5: DANE+-GD with the relative rule, on drawn instances."""
    assume(kw["delta_A"] > 0)
    _verdict(C.check_daneplus_gd_inexact(kw), "daneplus_gd_inexact")
