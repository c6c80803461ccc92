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


def test_lemma_c1_noise_corner_attains_its_closed_form() -> None:
    # at x* with exact models and S = 1: E||g_hat||^2 = G^2 + sigma^2 against sigma^2 + 4 (1 - 1/N) G^2, G^2 the
    # clients' gradient spread at x* (recomputed here from the generator's problem)
    from fedtheory.problems.quadratic import quadratic

    claim = REGISTRY["docofl.lemma_c1"]
    inst = next(pt for pt in claim.space.defaults if pt.get("zeta2") == 0.05)
    p = quadratic(n_clients=inst["N"], dim=inst["d"], mu=0.2, L=3.0, delta_B=1.0, zeta2=0.05, seed=inst["seed"])
    G = p.grads(p.broadcast(p.certificate.x_star))
    G2 = float(np.mean(np.sum(G * G, axis=1)))
    s2, N = inst["sigma2"], inst["N"]
    ev = claim.check(inst)
    assert ev.holds
    assert ev.tightness == pytest.approx((G2 + s2) / (s2 + 4 * (1 - 1 / N) * G2), rel=1e-8)
    assert ev.tightness > 0.9


def test_lemma_c2_runs_every_client_without_noise_and_the_default_period() -> None:
    claim = REGISTRY["docofl.appendix.lemma_c2"]
    inst = next(pt for pt in claim.space.defaults if pt["S"] == pt["N"])
    assert inst["K"] == DoCoFL.__dataclass_fields__["period"].default and inst["sigma2"] == 0.0
    assert claim.check(dict(inst, runs=6)).holds
