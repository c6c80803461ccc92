"""Lemma C.2's claim (fedtheory/claims/docofl/lemmas_c1_c2.py) must be able to fail (also on clients that skip
the online correction), and the inventory's proof chain of Theorem 3.4 reaches it."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fedtheory.algorithms.docofl import DoCoFL
from fedtheory.claims import REGISTRY
from fedtheory.claims.docofl import lemmas_c1_c2
from fedtheory.papers import paper


def test_lemma_c2_check_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    claim = REGISTRY["docofl.appendix.lemma_c2"]
    inst = dict(next(iter(claim.instances(False))), runs=10, rounds=12)
    ev = claim.check(inst)
    assert ev.holds and 0 < ev.tightness < 1
    # with the printed constants zeroed the right-hand side is 0 while the estimation error is not
    monkeypatch.setitem(lemmas_c1_c2.C2_CONSTANTS, "alpha", 0.0)
    monkeypatch.setitem(lemmas_c1_c2.C2_CONSTANTS, "grad_factor", 0.0)
    assert not claim.check(inst).holds


def test_docofl_inventory_is_filled_and_chains_reach_lemma_c2() -> None:
    P = paper("docofl")
    assert all(s.where and s.summary for s in P.statements)
    chain = P.proof_chain("Theorem 3.4")
    assert chain.index("Lemma C.1") < chain.index("Lemma C.2") < chain.index("Theorem 1")


class _NoCorrection:
    """A correction compressor that sends nothing: clients use the stale compressed anchor, w_hat = y."""

    def compress(self, X: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = np.atleast_2d(X)
        return np.zeros_like(X), np.zeros(X.shape[0])


def test_lemma_c2_rejects_clients_that_skip_the_correction(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the last default (a precise correction, omega = 0.1, away from x*) DoCoFL keeps the lemma and the
    same run with the online correction dropped breaks it: the lemma is about the clients' estimator."""
    claim = REGISTRY["docofl.appendix.lemma_c2"]
    inst = claim.space.defaults[-1]
    assert inst["scale"] == 0.1 and claim.check(inst).holds
    round_given = DoCoFL.round_given
    monkeypatch.setattr(DoCoFL, "round_given", lambda self, problem, state, draw: round_given(
        replace(self, correction_compressor=_NoCorrection()), problem, state, draw))
    ev = claim.check(inst)
    assert not ev.holds and ev.tightness > 1.5
