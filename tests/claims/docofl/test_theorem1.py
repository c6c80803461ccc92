"""Corollary 3.6 (fedtheory/claims/docofl/theorem1.py) must fail when a constant of Theorem 1's bound changes."""
from __future__ import annotations

import pytest

from fedtheory.claims import REGISTRY
from fedtheory.claims.docofl import theorem1


def test_theorem1_constant_change_breaks_corollary_3_6(monkeypatch: pytest.MonkeyPatch) -> None:
    claim = REGISTRY["docofl.appendix.corollary_3_6"]
    inst = next(iter(claim.instances(False)))
    assert claim.check(inst).holds
    monkeypatch.setitem(theorem1.THM1_CONSTANTS, "middle_inner", 6.0)
    assert not claim.check(inst).holds
