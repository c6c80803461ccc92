"""The appendix claims of Jiang, Rodomanov & Stich (2024) (fedtheory/claims/fedred_appendix.py): a few
hypothesis draws of the generic inequalities, and mutation tests: a transcription error in a checked
constant (a constant changed in the expected side) must turn the claim's verdict to violated on its
default instances."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings

from fedtheory.claims import fedred_appendix as A


def _defaults_hold(check) -> bool:
    return all(check(dict(point)).holds for point in check.space.defaults)


@settings(max_examples=25, deadline=None)
@given(A._VEC_SPACE.strategy())
def test_young_on_drawn_vectors(kw):
    assert A.check_young(kw).holds


@settings(max_examples=25, deadline=None)
@given(A._SEQ_SPACE.strategy())
def test_sqrt_recursion_on_drawn_sequences(kw):
    assert A.check_sqrt_recursion(kw).holds


@settings(max_examples=25, deadline=None)
@given(A._LEMMA13_SPACE.strategy())
def test_weighted_sum_on_drawn_sequences(kw):
    assert A.check_weighted_sum(kw).holds


@settings(max_examples=8, deadline=None)
@given(A._L20_SPACE.strategy())
def test_one_round_lemma_on_drawn_quadratics(kw):
    assert A.check_daneplus_one_round(A._L20_SPACE.build(kw)).holds


@settings(max_examples=8, deadline=None)
@given(A._NC_SPACE.strategy())
def test_model_sandwich_on_drawn_nonconvex_instances(kw):
    assert A.check_model_sandwich(A._NC_SPACE.build(kw)).holds


def test_young_detects_a_changed_constant():
    """(1 + 1/alpha) printed as 1/alpha in (A.4): the equality case b = alpha a then violates it."""
    a = np.ones((1, 3))
    alpha = 0.5
    s = np.sum((a + alpha * a) ** 2)
    assert s > (1 + alpha) * np.sum(a * a) + (1 / alpha) * np.sum((alpha * a) ** 2)
    g1, g2 = A.young_gap(a, alpha * a, alpha)
    assert abs(g1[0]) < 1e-15 and abs(g2[0]) < 1e-15


def test_sqrt_recursion_detects_a_smaller_bound(monkeypatch):
    """a_R <= a_0 + 0.95 sum c_r is false on the hypothesis' boundary: the check must say so."""
    original = A.sqrt_recursion_gap
    monkeypatch.setattr(A, "sqrt_recursion_gap", lambda a0, c, a: original(a0, 0.95 * c, a))
    assert not A.check_sqrt_recursion(dict(R=50, a0=0.0, c_scale=0.1, slack=0.0, seed=0)).holds


def test_weighted_sum_detects_a_changed_weight(monkeypatch):
    """(A.11) with 0.9 c in place of c: the sequences on the hypothesis' boundary violate it."""
    original = A.weighted_sum_gap
    monkeypatch.setattr(A, "weighted_sum_gap", lambda q, a, b, c: original(q, a, b, 0.9 * c))
    assert not _defaults_hold(A.check_weighted_sum)


def test_coercivity_detects_a_changed_constant(monkeypatch):
    """2/(mu + L) instead of 1/(mu + L) in Lemma 16: the equality directions violate it."""
    monkeypatch.setattr(A, "coercivity_lower_bound",
                        lambda mu, L, D, G: mu * L / (mu + L) * np.sum(D * D, axis=1) + 2 * np.sum(G * G, axis=1) / (mu + L))
    assert not _defaults_hold(A.check_coercivity)


def test_one_round_lemma_detects_lam_over_2(monkeypatch):
    """Lemma 20 with lam/2 instead of lam/4 on mean_i ||x_{i,r+1} - x^r||^2 is not what the proof gives."""
    original = A.lemma20_sides

    def mutated(problem, lam, rec, x):
        lhs, rhs, scale = original(problem, lam, rec, x)
        extra = 0.25 * lam * float(problem.weights @ np.sum((rec["X"] - rec["x"]) ** 2, axis=1))
        return lhs + extra, rhs, scale

    monkeypatch.setattr(A, "lemma20_sides", mutated)
    assert not _defaults_hold(A.check_daneplus_one_round)


def test_local_step_count_detects_a_halved_count(monkeypatch):
    """Corollary 25's count with log((L+lam+e)/e) halved is exceeded by local GD."""
    original = A.gd_steps_relative_rule
    monkeypatch.setattr(A, "gd_steps_relative_rule", lambda mu, L, lam, e: max(1, original(mu, L, lam, e) // 2))
    assert not _defaults_hold(A.check_daneplus_gd_local_steps)


def test_model_sandwich_detects_a_halved_dissimilarity(monkeypatch):
    """Lemma 27 with delta_B/2 in place of delta_B: the local models use more than half of the margin."""
    monkeypatch.setattr(A, "sandwich_coefficients", lambda lam, dB: (0.5 * (lam - dB / 2), 0.5 * (lam + dB / 2)))
    assert not _defaults_hold(A.check_model_sandwich)


def test_fedred_gd_epoch_bound_detects_a_smaller_constant(monkeypatch):
    """Theorem 37's pathwise constant C(m) divided by 4: some epoch of the defaults exceeds it."""
    original = A.fedred_gd_epoch_constant
    monkeypatch.setattr(A, "fedred_gd_epoch_constant", lambda m, **kw: original(m, **kw) / 4)
    assert not _defaults_hold(A.check_fedred_gd_nonconvex_pathwise)


def test_hessian_sup_is_attained_at_a_vertex():
    """Lemma 17's delta^2 is a sup over the box of phi'' values: no interior sample exceeds the vertex max."""
    rng = np.random.default_rng(0)
    n, d = 4, 3
    w = np.full(n, 1 / n)
    E = rng.standard_normal((n, d, d))
    E = (E + np.swapaxes(E, 1, 2)) / 2
    E -= E.mean(axis=0)
    C = rng.standard_normal((n, d))
    sup, _ = A.separable_hessian_dissimilarity(E, C, w)
    M0 = C - w @ C
    for _ in range(200):
        s = rng.uniform(-0.25, 2.0, d)
        M = E + np.einsum("ij,j,jk->ijk", M0, s, np.eye(d))
        val = float(w @ (np.max(np.abs(np.linalg.eigvalsh(M)), axis=-1) ** 2))
        assert val <= sup * (1 + 1e-12)


def test_gd_count_is_finite_and_monotone():
    assert A.gd_steps_relative_rule(1.0, 100.0, 2.0, 1.0) <= A.gd_steps_relative_rule(1.0, 100.0, 2.0, 0.1)
    assert math.isfinite(A.gd_steps_relative_rule(0.0, 10.0, 1.0, 0.5))
