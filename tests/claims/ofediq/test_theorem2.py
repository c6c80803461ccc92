"""OFedIQ, Theorem 2 (fedtheory/claims/ofediq/theorem2.py): the unbiased aggregation and the stated step on
drawn streams."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY


@settings(max_examples=10)
@given(K=st.integers(1, 3), D=st.integers(1, 3), L=st.integers(1, 3), s=st.integers(1, 4),
       p=st.lists(st.floats(0.05, 1.0), min_size=3, max_size=3), seed=st.integers(0, 10**6), data=st.data())
def test_aggregation_unbiased_drawn(K, D, L, s, p, seed, data):
    b = data.draw(st.integers(1, D))
    assert REGISTRY["ofediq.aggregation.unbiased"].check(dict(K=K, D=D, L=L, s=s, b=b, p=tuple(p[:K]), seed=seed)).holds


@given(K=st.integers(1, 5), D=st.integers(1, 3), L=st.sampled_from([2, 3, 4, 8, 16]), periods=st.integers(1, 12),
       frac=st.floats(0.01, 0.999), het=st.floats(0, 4), drift=st.floats(0, 3), seed=st.integers(0, 10**6),
       loss=st.sampled_from(["ridge", "logistic"]))
def test_theorem2_stated_step_search(K, D, L, periods, frac, het, drift, seed, loss):
    inst = dict(K=K, T=L * periods, D=D, L=L, frac=frac, heterogeneity=het, drift=drift, seed=seed, loss=loss)
    assert REGISTRY["ofediq.thm2.L_gt_1.stated_step"].check(inst).holds
    assert REGISTRY["ofediq.thm2.remark_no_quantization"].check(inst).holds
