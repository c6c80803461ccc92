"""Mutation tests of the App. A.2 lemmas (fedtheory/claims/fedred/lemmas_a2.py): a transcription error in a checked
constant (a constant changed in the expected side) must turn the claim's verdict to violated on its default
instances. Drawn instances of these claims' spaces run in the parametrised property test of every claim."""
from __future__ import annotations

import numpy as np

from fedtheory.claims import REGISTRY
from fedtheory.claims.fedred import lemmas_a2 as A


def _defaults_hold(claim_id: str) -> bool:
    claim = REGISTRY[claim_id]
    return all(claim.check(dict(point)).holds for point in claim.space.defaults)


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
    claim = REGISTRY["fedred.appendix.sqrt_recursion.derived"]
    assert not claim.check(dict(R=50, a0=0.0, c_scale=0.1, slack=0.0, seed=0)).holds


def test_weighted_sum_detects_a_changed_weight(monkeypatch):
    """(A.11) with 0.9 c in place of c: the sequences on the hypothesis' boundary violate it."""
    original = A.weighted_sum_gap
    monkeypatch.setattr(A, "weighted_sum_gap", lambda q, a, b, c: original(q, a, b, 0.9 * c))
    assert not _defaults_hold("fedred.appendix.weighted_sum.derived")


def test_coercivity_detects_a_changed_constant(monkeypatch):
    """2/(mu + L) instead of 1/(mu + L) in Lemma 16: the equality directions violate it."""
    monkeypatch.setattr(A, "coercivity_lower_bound",
                        lambda mu, L, D, G: mu * L / (mu + L) * np.sum(D * D, axis=1) + 2 * np.sum(G * G, axis=1) / (mu + L))
    assert not _defaults_hold("fedred.appendix.coercivity")


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
