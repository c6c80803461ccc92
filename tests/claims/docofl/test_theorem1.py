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


def test_theorem1_keys_its_details_by_each_steps_role_never_by_its_value() -> None:
    # Two problems (seeds) whose beta, hence whose steps, differ: the details keys must not change, as they must
    # not between two BLAS kernels that round the steps differently (verify --compare checks the keys).
    from fedtheory.report.compare import detail_keys

    claim = REGISTRY["docofl.theorem1"]
    base = dict(next(iter(claim.instances(False))), rounds=20, runs=3)  # short runs: only the keys matter here
    evidence = [claim.check({**base, "seed": seed}) for seed in (0, 1)]
    assert evidence[0].details["eta"] != evidence[1].details["eta"]
    keys = [set(detail_keys(e.details)) for e in evidence]
    assert keys[0] == keys[1]
    assert "eta=theorem1_step/avg_grad2" in keys[0]
    assert not any(k.startswith("eta=0") for k in keys[0])
