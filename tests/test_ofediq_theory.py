"""OFedIQ theory (fedtheory.theory.ofediq) on hypothesis-drawn instances: bad input, Algorithm 3 and eq. (15)
over their ranges, Lemma 1 over its full range, Theorem 2's labels and Table I's numbers. The claims' own tests
are in tests/claims/ofediq/."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, find, given, settings
from hypothesis import strategies as st

from fedtheory.theory import ofediq as th

pos = st.floats(1e-3, 1e3)


# ----------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("gamma", [0.0, -0.1, 1.0000001, 2.0, float("nan")])
def test_algorithm3_gamma_outside_unit_interval(gamma):
    for fn in (th.algorithm3, th.algorithm3_corrected, th.algorithm3_raw):
        with pytest.raises(ValueError, match="gamma"):
            fn(gamma, 34826)


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="T must be a multiple of L"):
        th.theorem2_bound(3, 1.0, 0.1, 10, 1.0, 0.5, sigma_q2=0.1, L=3)
    with pytest.raises(ValueError, match="eta"):
        th.theorem1_bound(3, 1.0, 0.0, 10, 1.0)
    with pytest.raises(ValueError, match="eta"):
        th.theorem2_bound(3, 1.0, -1.0, 10, 1.0, 0.5, sigma_q2=0.1)
    with pytest.raises(ValueError, match="p_k"):
        th.theorem2_bound(2, 1.0, 0.1, 10, 1.0, (0.5, 1.5), sigma_q2=0.1)
    with pytest.raises(ValueError, match="p_k"):
        th.step_bound(1.0, (0.0, 0.5))
    with pytest.raises(ValueError, match="p_min"):
        th.theorem1_bound(3, 1.0, 0.1, 10, 1.0, p_min=1.2)
    with pytest.raises(ValueError, match="b must be"):
        th.table1_bits("ofediq", K=1, D=10, p=0.5, s=2, b=11)
    with pytest.raises(ValueError, match="s must be"):
        th.corollary_m(0.5, 1, 10, 0, 1, 10)
    with pytest.raises(ValueError, match="b must be"):
        th.quantizer_sigma2(10, 2, 0)
    with pytest.raises(ValueError, match="method"):
        th.table1_alpha("fedsgd")


def test_algorithm3_printed_refuses_invalid_outputs():
    with pytest.raises(ValueError, match="p = .* > 1"):
        th.algorithm3(0.5, 34826)
    with pytest.raises(ValueError, match="b = floor"):
        th.algorithm3(0.01, 31)


# ----------------------------------------------------------------------------------------------- Algorithm 3
@given(gamma=st.floats(1e-12, 1.0, exclude_min=False), D=st.integers(1, 10**6))
def test_algorithm3_never_returns_an_invalid_configuration(gamma, D):
    try:
        cfg = th.algorithm3(gamma, D)
    except ValueError:
        raw = th.algorithm3_raw(gamma, D)
        assert not raw.valid  # refused exactly when the printed arithmetic is invalid
    else:
        assert cfg.valid and gamma - cfg.p / D <= cfg.gamma_actual <= gamma
    fixed = th.algorithm3_corrected(gamma, D)
    assert fixed.valid and 0 < fixed.p <= 1 and 1 <= fixed.b <= D


@given(gamma=st.floats(1e-3, 0.2))
def test_alpha_iq_beats_ofedavg(gamma):
    cfg = th.algorithm3(gamma, 34826)
    assert th.alpha_ofediq_factor2(cfg.p, 34826, cfg.s, cfg.b, 1000) < 2 / gamma
    assert th.table1_alpha("ofediq", p=cfg.p, D=34826, s=cfg.s, b=cfg.b, K=1000) < 2 / gamma


def test_algorithm3_search_is_certified():
    # eq. (20) grows like log2(s)/16: the certified cap makes a larger s_max unnecessary
    for g in (1.0, 0.3, 1e-3):
        assert th.algorithm3_raw(g, 10**5).s == th.algorithm3_raw(g, 10**5, s_max=50_000).s


# ----------------------------------------------------------------------------------------------- Section 4.2
@given(L=st.integers(1, 60), p=st.floats(1e-4, 1.0), s=st.integers(1, 200), D=st.integers(1, 10**5),
       K=st.integers(1, 10**4), data=st.data())
def test_periodic_transmission_never_better(L, p, s, D, K, data):
    b = data.draw(st.integers(1, D))
    a1, aL = th.periodic_vs_subsampling(L, p, D, s, b, K)
    assert a1 <= aL * (1 + 1e-12)
    if L == 1:
        assert a1 == aL


@given(p=st.floats(1e-6, 0.12), K=st.integers(1, 10**6))
def test_eq15_on_its_range(p, K):
    assume(K >= 1000)  # (a) of eq. (15) assumes K >> 1/p'
    a, pp, s = th.eq15_alpha(p, K)
    assert pp <= 1 and a < 1.357 / p


def test_eq15_counterexample_is_found():
    p = find(st.floats(0.0, 1.0, exclude_min=True, exclude_max=True), lambda x: th.eq15_alpha(x, 1000)[1] > 1,
             settings=settings(max_examples=2000, derandomize=True, database=None))
    assert p > 0.12


# ----------------------------------------------------------------------------------------------- Lemma 1
@given(vi=st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3),
       vj=st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3), a=st.floats(1e-6, 1e6))
def test_lemma1_full_range(vi, vj, a):
    vi, vj = np.array(vi), np.array(vj)
    lhs = float((vi + vj) @ (vi + vj))
    assert lhs <= th.lemma1_rhs(vi, vj, a) * (1 + 1e-12) + 1e-9


# ----------------------------------------------------------------------------------------------- theorems
def test_theorem2_bound_labels_and_reduction():
    b1 = th.theorem2_bound(4, 2.0, 0.1, 12, 0.5, 0.5, sigma_q2=0.0, L=1, beta=1.0)
    assert b1.rigorous and b1.drift == 0
    # sigma_q = 0, L = 1, p = 1: twice Theorem 1's second term (the paper's acknowledged artifact)
    b = th.theorem2_bound(4, 2.0, 0.1, 12, 0.5, 1.0, sigma_q2=0.0)
    t1 = th.theorem1_bound(4, 2.0, 0.1, 12, 0.5)
    assert b.variance == pytest.approx(2 * (t1 - b.initial), rel=1e-14)
    bL = th.theorem2_bound(4, 2.0, 0.1, 12, 0.5, 0.5, sigma_q2=0.1, L=3, beta=1.0)
    assert not bL.rigorous and "approximate" in bL.label


def test_psi_and_transmission_times():
    assert [th.psi(t, 3) for t in range(1, 8)] == [1, 1, 1, 4, 4, 4, 7]
    assert th.transmission_times(10, 3).tolist() == [3, 6, 9]
    with pytest.raises(ValueError):
        th.psi(0, 3)


def test_table1_and_gamma_reproduce_paper_numbers():
    assert th.table1_bits("ofediq", K=1, D=34826, p=1.0, s=3, b=777) == 129342.0
    assert th.ofediq_gamma(0.086, 7, 1, 34826) == pytest.approx(0.086 * (32 / 34826 + 4) / 32, rel=1e-12)
    assert th.ccr(0.01) == pytest.approx(99.0)
    cfg = th.algorithm3(0.1, 34826)
    assert th.alpha_ofediq_factor2(cfg.p, 34826, cfg.s, cfg.b, 1000) == pytest.approx(4.536, abs=2e-3)
    assert 1.3570 == pytest.approx((1.32 + math.log2(21)) / 16 + 1, abs=1e-4)
