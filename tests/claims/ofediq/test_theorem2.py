"""OFedIQ, Theorem 2 (fedtheory/claims/ofediq/theorem2.py): the unbiased aggregation and the stated step on
drawn streams."""
from __future__ import annotations

import pytest
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


@given(K=st.integers(1, 6), p_min=st.floats(1e-3, 1.0), spread=st.floats(0.0, 1.0), D=st.integers(1, 16),
       s=st.integers(1, 8), b=st.integers(1, 16), flat=st.integers(0, 1), seed=st.integers(0, 10**6))
def test_aggregate_second_moment_never_passes_half_its_bound(K, p_min, spread, D, s, b, flat, seed):
    # the non_discriminating reason of ofediq.thm2.aggregate_second_moment: lhs <= rhs/2 on every instance
    c = REGISTRY["ofediq.thm2.aggregate_second_moment"]
    pt = dict(K=K, p_min=p_min, spread=spread, D=D, s=s, b=min(b, D), flat=flat, seed=seed)
    ev = c.check(c.space.build(pt))
    assert ev.holds and ev.tightness <= 0.5 * (1 + 1e-12)


def test_the_quantizers_flat_one_block_point_attains_its_closed_form():
    # b = 1 block of D = 100 equal entries, s = 1: E||Q(u) - u||^2 = (sqrt(D)/s - 1) ||u||^2 against sigma_q^2 =
    # sqrt(D)/s, so the tightness is 1 - s/sqrt(D) = 0.9
    c = REGISTRY["ofediq.quantizer.variance"]
    point = next(pt for pt in c.space.defaults if pt["D"] == 100 and pt["b"] == 1 and pt["s"] == 1)
    assert c.check(c.space.build(point)).tightness == pytest.approx(0.9, rel=1e-12)
