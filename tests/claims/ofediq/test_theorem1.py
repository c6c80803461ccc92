"""OFedIQ, Theorem 1 (fedtheory/claims/ofediq/theorem1.py): FedOGD's regret on drawn streams."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY


@given(K=st.integers(1, 8), T=st.integers(1, 80), D=st.integers(1, 4), frac=st.floats(0.01, 0.999),
       het=st.floats(0, 3), drift=st.floats(0, 2), seed=st.integers(0, 10**6),
       loss=st.sampled_from(["ridge", "logistic"]))
def test_fedogd_regret_every_prefix_drawn(K, T, D, frac, het, drift, seed, loss):
    inst = dict(K=K, T=T, D=D, frac=frac, heterogeneity=het, drift=drift, seed=seed, loss=loss)
    assert REGISTRY["ofediq.thm1.fedogd"].check(inst).holds
    assert REGISTRY["ofediq.thm1.per_step.derived"].check(inst).holds
