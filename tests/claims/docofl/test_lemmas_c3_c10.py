"""Lemmas C.7-C.9 (fedtheory/claims/docofl/lemmas_c3_c10.py): each check passes on its default instances and fails
when a transcribed constant is changed; Lemma C.7 is false as printed and holds corrected."""
from __future__ import annotations

import math

import numpy as np
import pytest

from fedtheory.claims import REGISTRY
from fedtheory.claims.docofl import lemmas_c3_c10


def test_lemma_c9_constant_change_is_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    claim = REGISTRY["docofl.appendix.lemma_c9"]
    worst = {"gamma": 1.0, "theta": 1.0, "beta": 1.0, "eta_fraction": 1.0}
    ev = claim.check(worst)
    assert ev.holds and math.isclose(ev.measured, 44 / 45, rel_tol=1e-12)
    # a step limit 1/(20 gamma beta theta) instead of the printed 1/(30 ...) breaks the lemma: 8/20 + 640/400 = 2
    monkeypatch.setitem(lemmas_c3_c10.C9_CONSTANTS, "step", 20.0)
    ev = claim.check(worst)
    assert not ev.holds and math.isclose(ev.measured, 2.0, rel_tol=1e-12)


def test_lemma_c7_false_as_printed_and_corrected() -> None:
    assert not REGISTRY["docofl.appendix.lemma_c7"].check({"a": -1.0}).holds
    ev = REGISTRY["docofl.appendix.lemma_c7.corrected"].check({"a": 0.5})
    assert ev.holds and math.isclose(ev.theory, 2.0)


def test_lemma_c8_direct_matches_the_ceiling_formula() -> None:
    x = np.array([0.3, 1.0, 0.0, 2.5, 0.7])
    a, Tt = 0.4, 2
    brute = sum(a ** math.ceil((t - k) / Tt) * x[k] for t in range(1, 6) for k in range(t))
    lhs, rhs = lemmas_c3_c10.lemma_c8_direct(x, a, Tt)
    assert math.isclose(lhs, brute, rel_tol=1e-14) and math.isclose(rhs, Tt * a / (1 - a) * x.sum())
