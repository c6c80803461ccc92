"""EFL, Algorithm 2's compressor (fedtheory/claims/efl/algorithms.py) on hypothesis-drawn rows."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY


@given(st.integers(1, 60), st.floats(1e-3, 1.0), st.integers(0, 2**31 - 1))
def test_st_claims_on_drawn_rows(n, q, seed):
    inst = dict(n=n, q=q, seed=seed)
    assert REGISTRY["efl.st.format"].check(inst).holds
    assert REGISTRY["efl.st.contraction.derived"].check(inst).holds
