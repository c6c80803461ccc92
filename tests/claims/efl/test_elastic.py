"""EFL, the elastic term (fedtheory/claims/efl/elastic.py) on hypothesis-drawn instances."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY


@given(st.integers(1, 8), st.integers(1, 8), st.floats(0.0, 5.0), st.integers(0, 2**31 - 1))
@settings(max_examples=10)
def test_elastic_algebra_on_drawn_instances(N, d, lam, seed):
    assert REGISTRY["efl.elastic.algebra"].check(dict(N=N, d=d, lam=lam, seed=seed)).holds
