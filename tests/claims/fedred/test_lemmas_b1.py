"""Mutation tests of DANE+'s convex proof chain (fedtheory/claims/fedred/lemmas_b1.py): a changed constant in an
expected side must turn the claim's verdict to violated on its default instances."""
from __future__ import annotations

import math

import numpy as np

from fedtheory.claims import REGISTRY
from fedtheory.claims.fedred import lemmas_b1 as B1


def _defaults_hold(claim_id: str) -> bool:
    claim = REGISTRY[claim_id]
    return all(claim.check(dict(point)).holds for point in claim.space.defaults)


def test_one_round_lemma_detects_lam_over_2(monkeypatch):
    """Lemma 20 with lam/2 instead of lam/4 on mean_i ||x_{i,r+1} - x^r||^2 is not what the proof gives."""
    original = B1.lemma20_sides

    def mutated(problem, lam, rec, x):
        lhs, rhs, scale = original(problem, lam, rec, x)
        extra = 0.25 * lam * float(problem.weights @ np.sum((rec["X"] - rec["x"]) ** 2, axis=1))
        return lhs + extra, rhs, scale

    monkeypatch.setattr(B1, "lemma20_sides", mutated)
    assert not _defaults_hold("fedred.appendix.daneplus_one_round.derived")


def test_local_step_count_detects_a_halved_count(monkeypatch):
    """Corollary 25's count with log((L+lam+e)/e) halved is exceeded by local GD."""
    original = B1.gd_steps_relative_rule
    monkeypatch.setattr(B1, "gd_steps_relative_rule", lambda mu, L, lam, e: max(1, original(mu, L, lam, e) // 2))
    assert not _defaults_hold("fedred.appendix.daneplus_gd_local_steps.derived")


def test_gd_count_is_finite_and_monotone():
    assert B1.gd_steps_relative_rule(1.0, 100.0, 2.0, 1.0) <= B1.gd_steps_relative_rule(1.0, 100.0, 2.0, 0.1)
    assert math.isfinite(B1.gd_steps_relative_rule(0.0, 10.0, 1.0, 0.5))
