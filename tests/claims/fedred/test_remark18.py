"""The dissimilarity constants (fedtheory/claims/fedred/remark18.py) on hypothesis-drawn quadratics of either
dissimilarity (the claim declares default instances only)."""
from __future__ import annotations

from hypothesis import assume, given

from fedtheory.claims import REGISTRY
from fedtheory.strategies import quadratic_params


@given(quadratic_params(min_clients=2, max_clients=6, max_dim=5))
def test_dissimilarity_constants(kw):
    # delta at rounding level of L (e.g. L - mu = 2e-16) is not a dissimilarity any construction can resolve
    assume(max(kw.get("delta_A", 0), kw.get("delta_B", 0)) > 1e-8 * kw["L"])
    ev = REGISTRY["fedred.dissimilarity.constants"].check(kw)
    assert ev.holds, (ev.instance, ev.measured, dict(ev.details))
