"""Mutation test of Lemma 27 (fedtheory/claims/fedred/lemmas_b2.py): a halved dissimilarity in the sandwich must
turn the claim's verdict to violated on its default instances."""
from __future__ import annotations

from fedtheory.claims import REGISTRY
from fedtheory.claims.fedred import lemmas_b2 as B2


def test_model_sandwich_detects_a_halved_dissimilarity(monkeypatch):
    """Lemma 27 with delta_B/2 in place of delta_B: the local models use more than half of the margin."""
    monkeypatch.setattr(B2, "sandwich_coefficients", lambda lam, dB: (0.5 * (lam - dB / 2), 0.5 * (lam + dB / 2)))
    claim = REGISTRY["fedred.appendix.model_sandwich.derived"]
    assert not all(claim.check(dict(point)).holds for point in claim.space.defaults)
