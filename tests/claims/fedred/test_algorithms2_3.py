"""Algorithm 3's closed form and reductions (fedtheory/claims/fedred/algorithms2_3.py) on hypothesis-drawn
quadratics (the claim declares default instances only)."""
from __future__ import annotations

from hypothesis import assume, given

from fedtheory.claims import REGISTRY
from fedtheory.strategies import quadratic_params


@given(quadratic_params(max_clients=6, max_dim=5, dissimilarity="delta_A"))
def test_fedred_gd_closed_form_and_reductions(kw):
    assume(kw["delta_A"] > 0)
    ev = REGISTRY["fedred.fedred_gd.closed_form"].check(kw)
    assert ev.holds, (ev.instance, ev.measured, dict(ev.details))
