"""The certificates' rounding policy: rounding-level constants that are mathematically >= 0 are exact zeros
under a recorded tolerance, on every BLAS kernel (CI runs the catalogue and the ledger under several)."""
from __future__ import annotations

import numpy as np
import pytest

from fedtheory.problems import general_convex_quadratic, logistic_perturbed, quadratic
from fedtheory.problems.base import Certificate
from fedtheory.theory import fedred as th

EPS = np.finfo(float).eps


def _certificate(**over) -> Certificate:
    base = dict(x_star=np.zeros(3), f_star=0.0, mu=0.5, L=2.0, mu_f=0.5, L_f=2.0, mu_i=np.array([0.5, 1.0]),
                L_i=np.array([2.0, 2.0]), delta_A=0.1, delta_B=0.2, zeta2=0.3, weights=np.array([0.5, 0.5]),
                kkt_residual=0.0)
    return Certificate(**{**base, **over})


def test_tolerance_is_max_64_d_eps_times_the_curvature_scale():
    small = _certificate(mu=-1e-15, mu_f=1e-15, mu_i=np.array([-1e-15, 1.0]), delta_A=1e-15, delta_B=2e-15)
    tol = 64 * EPS * 2.0  # d = 3 < 64, scale max(|L|, |L_f|, |mu|, |mu_f|) = 2
    assert small.rounding_tolerance["mu"] == pytest.approx(tol, rel=1e-15)
    assert small.mu == 0.0 and small.mu_f == 0.0 and small.delta_A == 0.0 and small.delta_B == 0.0
    assert small.mu_i.tolist() == [0.0, 1.0] and small.kappa == float("inf")
    # just above the tolerance: a real (tiny) constant is kept, with its sign
    kept = _certificate(mu=-2 * tol, delta_A=2 * tol)
    assert kept.mu == -2 * tol and kept.delta_A == 2 * tol
    # large dimension: the O(d) eps bound takes over
    wide = _certificate(x_star=np.zeros(200))
    assert wide.rounding_tolerance["delta_B"] == pytest.approx(200 * EPS * 2.0, rel=1e-15)


def test_zeta2_uses_the_gradient_error_bound_and_is_not_snapped_without_one():
    assert _certificate(zeta2=1e-30).zeta2 == 1e-30  # no gradient_error given: left alone
    assert _certificate(zeta2=1e-30, gradient_error=1e-14).zeta2 == 0.0
    assert _certificate(zeta2=1e-26, gradient_error=1e-14).zeta2 == 1e-26


def test_generated_zeros_are_exact_zeros():
    identical = quadratic(6, 10, mu=1.0, L=100.0, zeta2=0.0, seed=3)  # delta = zeta2 = 0 requested
    c = identical.certificate
    assert c.delta_A == 0.0 and c.delta_B == 0.0 and c.zeta2 == 0.0
    assert c.rounding_tolerance["zeta2"] > 0
    convex = quadratic(6, 10, mu=0.0, L=10.0, delta_A=0.5, zeta2=1.0, seed=1)
    assert convex.certificate.mu == 0.0
    gc = general_convex_quadratic(5, 6, L=2.0, delta_B=0.5, zeta2=1.0, seed=1).certificate
    assert gc.mu == 0.0 and gc.mu_f == 0.0
    lp = logistic_perturbed(n_clients=3, dim=6, reg=1.0, delta_B=2.0, zeta2=0.0, seed=3).certificate
    assert lp.zeta2 == 0.0  # common optimum, certified by Newton to ~1e-16


def test_theory_functions_accept_what_certificates_produce():
    # the trial that found the issue: DANE's gap bound on a mu = 0 request raised on a rounding-level -1.9e-15
    c = quadratic(6, 8, mu=0.0, L=10.0, delta_A=0.5, zeta2=1.0, seed=1).certificate
    assert th.dane_gap_bound(c.mu, 0.5, 1.0, 3) > 0


def test_compare_separates_rounding_residue_from_moved_numbers():
    """verify --compare: a verdict change is a difference; an identity error of 1e-16 against 0 is rounding
    residue (counted, not listed); a measurement of size 0.5 that moves by 1e-3 is listed."""
    from fedtheory.report import compare_runs

    def record(measured, holds=True):
        return [{"id": "c", "status": "holds", "evidence": [
            {"instance": "a", "measured": measured[0], "theory": 1e-9, "holds": holds},
            {"instance": "b", "measured": measured[1], "theory": 1.0, "holds": True}]}]

    diffs, moved = compare_runs(record((1e-16, 0.5)), record((0.0, 0.5005)))
    assert diffs == []
    flags = {where.split(" ")[1]: rounding for _, where, rounding in moved}
    assert flags == {"[a]": True, "[b]": False}
    diffs, _ = compare_runs(record((1e-16, 0.5), holds=False), record((1e-16, 0.5)))
    assert len(diffs) == 1
