"""The claims on DoCoFL's Algorithms 1-2 (fedtheory/claims/docofl/algorithms1_2.py) on hypothesis-drawn instances
(they declare default instances only), and a mutation of the algorithm the printed-steps claim must catch."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fedtheory.algorithms.docofl as docofl_alg
from fedtheory.claims import REGISTRY
from fedtheory.compressors.ecuq import ECUQ
from fedtheory.compressors.noise import Identity, ScaledRademacher, Zero
from fedtheory.compressors.quantizers import QSGD
from fedtheory.compressors.sparsifiers import RandK


def _check(claim_id: str, instance: dict):
    return REGISTRY[claim_id].check(instance)


@given(K=st.integers(1, 6), V=st.integers(1, 4), seed=st.integers(0, 100))
def test_queue_invariants(K, V, seed):
    ev = _check("docofl.queue_invariants.derived", {"K": K, "V": V, "rounds": 3 * K * V + 4, "seed": seed})
    assert ev.holds, ev
    assert ev.measured == K * V - 1   # the staleness bound KV - 1 is attained with lead K(V-1)


@given(seed=st.integers(0, 1000), anchor=st.sampled_from([Identity(), ECUQ(b=2.0), ECUQ(b=1.5), Zero()]),
       K=st.integers(1, 4), V=st.integers(1, 3), reference=st.sampled_from(["fedavg", "sgd"]))
def test_identity_compressors_are_sgd(seed, anchor, K, V, reference):
    ev = _check("docofl.identity_is_sgd", {"anchor": anchor, "seed": seed, "n": 8, "S": 4, "d": 5, "K": K, "V": V,
                                           "rounds": 15, "reference": reference})
    assert ev.holds, ev


@given(seed=st.integers(0, 1000), comp=st.sampled_from([ScaledRademacher(scale=0.9), RandK(k=3), QSGD(s=1)]))
def test_unbiased_estimate_and_eq23(seed, comp):
    inst = {"correction": comp, "d": 6, "seed": seed, "draws": 2000}
    assert _check("docofl.unbiased_estimate", inst).holds
    assert _check("docofl.eq23_correction_error", inst).holds


def test_algorithm2_reference_detects_anchor_taken_at_participation(monkeypatch: pytest.MonkeyPatch) -> None:
    claim = REGISTRY["docofl.appendix.algorithm2"]
    inst = next(iter(claim.instances(False)))
    assert claim.check(inst).holds
    # a DoCoFL whose clients take the latest anchor at the participation round (ignoring the notification lead)
    real = docofl_alg.anchor_round
    monkeypatch.setattr(docofl_alg, "anchor_round", lambda t, leads, period: real(t, np.zeros_like(leads), period))
    assert not claim.check(inst).holds


def test_identity_at_the_classes_defaults_rejects_a_default_step_slip(monkeypatch) -> None:
    # Corollary 3.5 at both classes' defaults: DoCoFL's default step 1/L_f against FedAvg's 1/L (equal on the
    # shared Hessian); a DoCoFL whose default step is anything else leaves FedAvg's path
    from fedtheory.algorithms.docofl import DoCoFL
    from fedtheory.claims import REGISTRY

    claim = REGISTRY["docofl.identity_is_sgd"]
    inst = next(pt for pt in claim.instances(False) if pt["reference"] == "defaults")
    assert claim.check(inst).holds
    monkeypatch.setattr(DoCoFL, "step_size", lambda self, problem: 0.5 / problem.certificate.L_f)
    assert not claim.check(inst).holds
