"""EFL, the reweighting of incomplete updates (fedtheory/claims/efl/reweighting.py) on drawn harnesses."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY


@given(st.integers(0, 10**6))
@settings(max_examples=3)
def test_first_order_reweighting_on_drawn_harness(seed):
    assert REGISTRY["efl.reweighting.first_order.derived"].check(seed).holds
