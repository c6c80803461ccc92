"""Mutation test of Theorem 37's pathwise constant (fedtheory/claims/fedred/theorems34_36_37.py)."""
from __future__ import annotations

from fedtheory.claims import REGISTRY
from fedtheory.claims.fedred import theorems34_36_37 as T


def test_fedred_gd_epoch_bound_detects_a_smaller_constant(monkeypatch):
    """Theorem 37's pathwise constant C(m) divided by 4: some epoch of the defaults exceeds it."""
    original = T.fedred_gd_epoch_constant
    monkeypatch.setattr(T, "fedred_gd_epoch_constant", lambda m, **kw: original(m, **kw) / 4)
    claim = REGISTRY["fedred.appendix.fedred_gd_nonconvex_pathwise.derived"]
    assert not all(claim.check(dict(point)).holds for point in claim.space.defaults)
