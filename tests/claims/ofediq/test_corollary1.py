"""OFedIQ, Corollary 1's algebra (fedtheory/claims/ofediq/corollary1.py) on drawn constants."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY

pos = st.floats(1e-3, 1e3)


@given(K=st.integers(1, 5000), w2=pos, sigma2=pos, T=st.integers(1, 10**6), p=st.floats(1e-3, 1.0),
       L=st.integers(1, 20), M=st.floats(1.0, 100.0), beta=pos)
def test_corollary1_algebra(K, w2, sigma2, T, p, L, M, beta):
    ev = REGISTRY["ofediq.cor1.algebra"].check(dict(K=K, w2=w2, sigma2=sigma2, T=T, p=p, L=L, M=M, beta=beta))
    assert ev.holds, ev
