"""Generic conformance suite over every registered compressor (fedtheory.compressors.COMPRESSORS), plus the
entropy / bit-accounting utilities and ECUQ.

Unbiasedness and variance constants are checked exactly from per-coordinate marginals where the output law is
finite; the marginals themselves are validated against the sampler by Monte Carlo (z <= 5).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fedtheory.claims.docofl import (
    adversarial_inputs,
    check_compressor_support,
    check_compressor_unbiased,
    check_compressor_variance,
    check_ecuq_invariants,
    compressor_applies,
    exact_moments,
)
from fedtheory.compressors import COMPRESSORS
from fedtheory.compressors.ecuq import ECUQ, ecuq_quantize
from fedtheory.compressors.entropy import (
    bin_values,
    binned_entropy,
    elias_gamma_bits,
    empirical_entropy,
    entropy_from_counts,
    huffman_average_length,
    huffman_lengths,
    index_bits,
    sparse_bits,
    symbol_counts,
)
from fedtheory.compressors.noise import Identity, ScaledRademacher, Zero, nmse_constant
from fedtheory.compressors.quantizers import QSGD, DeterministicUniformQuantizer, StochasticUniformQuantizer
from fedtheory.compressors.sb_quantizer import SBQuantizer
from fedtheory.compressors.sparsifiers import RandK, Threshold, TopK

NAMES = sorted(COMPRESSORS)
Z = 5.0

rows_strategy = st.integers(1, 4).flatmap(lambda m: st.integers(1, 12).flatmap(
    lambda d: hnp.arrays(np.float64, (m, d), elements=st.one_of(
        st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), st.just(0.0), st.just(1.0), st.just(-1.0)))))


# ------------------------------------------------------------------ generic contract

@pytest.mark.parametrize("name", NAMES)
def test_registry_contract(name):
    cls = COMPRESSORS[name]
    comp = cls.example()
    assert comp.name == name
    assert isinstance(cls.unbiased, bool) and isinstance(cls.deterministic, bool)
    # at least one constant is declared (or explicitly refused with NotImplementedError)
    declared = 0
    for fn in (comp.omega, comp.alpha):
        try:
            v = fn(16)
            assert math.isfinite(v) and v >= 0
            declared += 1
        except NotImplementedError:
            pass
    assert declared >= 1 or name in ("uniform_deterministic", "ecuq", "st")


@pytest.mark.parametrize("name", NAMES)
@given(X=rows_strategy)
def test_unbiased_and_variance_on_drawn_inputs(name, X):
    comp = COMPRESSORS[name].example()
    d = X.shape[1]
    try:
        ex = exact_moments(comp, X)
    except ValueError:
        # an example's parameter may not fit this d (e.g. a block count > d): that must be a ValueError
        return
    if ex is None:
        return  # randomised without a finite law: covered by the Monte Carlo path of the claims
    mean, mse = ex
    n2 = np.sum(X * X, axis=1)
    scale = np.max(np.abs(X), axis=1, keepdims=True) + 1e-300
    if comp.unbiased:
        assert np.all(np.abs(mean - X) <= 1e-12 * scale)
        try:
            c = comp.omega(d)
        except ValueError:
            return
    else:
        try:
            c = 1.0 - comp.alpha(d)
        except NotImplementedError:
            return
    # squares below ~1e-308 are subnormal: an absolute floor of 64 tiny covers their lost precision
    assert np.all(mse <= c * n2 * (1 + 1e-9) + 64 * np.finfo(float).tiny)
    assert np.all(mse[n2 == 0] == 0)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("d", [1, 2, 5, 33])
def test_claim_checks_hold_at_other_dims(name, d):
    inst = {"name": name, "d": d, "seed": 3}
    checks = {"unbiased": check_compressor_unbiased, "variance": check_compressor_variance,
              "support": check_compressor_support}
    for kind, check in checks.items():
        if compressor_applies(inst, kind):
            ev = check(inst)
            assert ev.holds, (check.__name__, ev)
        else:  # a check run outside its claim's scope refuses instead of reporting vacuous evidence
            with pytest.raises(ValueError):
                check(inst)


def test_every_compressor_is_an_instance_of_some_conformance_claim():
    for name in NAMES:
        assert any(compressor_applies({"name": name, "d": 16}, kind) for kind in ("unbiased", "variance", "support")) \
            or name == "st", name  # ST's properties are claims of the EFL paper (fedtheory/claims/efl.py)


@pytest.mark.parametrize("name", NAMES)
def test_bad_inputs_raise(name):
    comp = COMPRESSORS[name].example()
    rng = np.random.default_rng(0)
    for bad in (np.zeros((0, 3)), np.zeros((2, 0)), np.array([[1.0, np.nan]]), np.array([[np.inf, 1.0]]),
                np.zeros((2, 2, 2))):
        with pytest.raises(ValueError):
            comp.compress(bad, rng)


@pytest.mark.parametrize("name", [n for n in NAMES if not COMPRESSORS[n].deterministic])
def test_randomised_need_generator(name):
    with pytest.raises(ValueError):
        COMPRESSORS[name].example().compress(np.ones((1, 4)), None)


@pytest.mark.parametrize("name", NAMES)
def test_rows_are_independent_calls(name):
    """Vectorised rows: each row's output equals compressing it alone (deterministic) and shapes match."""
    comp = COMPRESSORS[name].example()
    X = adversarial_inputs(8, seed=1)
    Y, bits = comp.compress(X, np.random.default_rng(0))
    assert Y.shape == X.shape and bits.shape == (X.shape[0],)
    if comp.deterministic:
        for i in range(X.shape[0]):
            Yi, bi = comp.compress(X[i], None)
            np.testing.assert_array_equal(Yi[0], Y[i])
            assert bi[0] == bits[i]


@pytest.mark.parametrize("comp", [QSGD(s=2), StochasticUniformQuantizer(levels=3), RandK(k=2),
                                  ScaledRademacher(scale=0.6), ScaledRademacher(scale=0.3, per_coordinate=True)])
def test_marginals_match_the_sampler(comp):
    """The exact marginals used by every exact check describe what compress() really samples (MC, z <= 5)."""
    X = np.array([[0.3, -1.2, 2.0, 0.0, 0.7], [1.0, 1.0, 1.0, 1.0, -4.0]])
    R = 20000
    Y, _ = comp.compress(np.tile(X, (R, 1)), np.random.default_rng(11))
    Y = Y.reshape(R, *X.shape)
    vals, probs = comp.marginals(X)
    # frequency of each outcome per coordinate
    for j in range(vals.shape[-1]):
        hit = np.isclose(Y, vals[..., j][None], rtol=1e-12, atol=0)
        p = probs[..., j]
        distinct = np.ones_like(p, dtype=bool)
        for k in range(vals.shape[-1]):
            if k != j:
                distinct &= ~np.isclose(vals[..., k], vals[..., j], rtol=1e-12, atol=0)
        freq = hit.mean(0)
        se = np.sqrt(np.maximum(p * (1 - p), 1e-12) / R)
        assert np.all(np.abs(freq - p)[distinct] <= Z * se[distinct] + 1e-12)
    # and every sample is one of the listed outcomes
    anyhit = np.zeros(Y.shape, dtype=bool)
    for j in range(vals.shape[-1]):
        anyhit |= np.isclose(Y, vals[..., j][None], rtol=1e-12, atol=1e-300)
    assert anyhit.all()


def test_sb_quantizer_b1_is_qsgd_in_law():
    X = np.random.default_rng(2).normal(size=(3, 9))
    m1 = exact_moments(QSGD(s=3), X)
    m2 = exact_moments(SBQuantizer(s=3, b=1), X)
    np.testing.assert_allclose(m1[0], m2[0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(m1[1], m2[1], rtol=1e-13)
    np.testing.assert_allclose(QSGD(s=3).variance(X), m1[1], rtol=1e-12)


def test_monte_carlo_fallback_path():
    """Without marginals the claims fall back to Monte Carlo; on well-conditioned rows it must pass."""

    class Hidden:
        name, unbiased, deterministic = "hidden_qsgd", True, False
        inner = QSGD(s=2)

        def compress(self, X, rng=None):
            return self.inner.compress(X, rng)

        def omega(self, d):
            return self.inner.omega(d)

    ev = check_compressor_unbiased({"compressor": Hidden(), "d": 6, "draws": 3000})
    assert ev.details["method"] == "monte carlo"
    ev2 = check_compressor_variance({"compressor": Hidden(), "d": 6, "draws": 3000})
    assert ev2.holds and "monte carlo" in ev2.instance


# ------------------------------------------------------------------ parameters

@pytest.mark.parametrize("factory", [
    lambda: QSGD(s=0), lambda: QSGD(s=-3), lambda: RandK(k=0), lambda: TopK(k=0), lambda: Threshold(tau=-1.0),
    lambda: StochasticUniformQuantizer(levels=1), lambda: DeterministicUniformQuantizer(levels=0),
    lambda: ScaledRademacher(scale=-0.1), lambda: ECUQ(b=0.0), lambda: ECUQ(b=-1.0), lambda: ECUQ(b=2.0, eps=3.0),
    lambda: ECUQ(b=2.0, coding="zip"), lambda: SBQuantizer(s=0), lambda: ECUQ(b=float("nan"))])
def test_bad_parameters_raise_value_error(factory):
    with pytest.raises(ValueError):
        factory()


@pytest.mark.parametrize("factory", [lambda: QSGD(s=2.5), lambda: RandK(k="3"), lambda: ECUQ(b="2"),
                                     lambda: ScaledRademacher(scale=0.1, per_coordinate="yes")])
def test_bad_parameter_types_raise_type_error(factory):
    with pytest.raises(TypeError):
        factory()


def test_k_larger_than_d_and_blocks_larger_than_d():
    rng = np.random.default_rng(0)
    for comp in (RandK(k=5), TopK(k=5)):
        with pytest.raises(ValueError, match="k must be in"):
            comp.compress(np.ones((2, 4)), rng)
    with pytest.raises(ValueError):
        RandK(k=5).omega(4)
    with pytest.raises(ValueError):
        SBQuantizer(s=2, b=5).compress(np.ones((1, 4)), rng)


def test_ecuq_budget_not_achievable_strict():
    x = np.array([[0.0, 1.0, 2.0, 0.0]])   # at most log2(3) = 1.58 bits of entropy
    with pytest.raises(ValueError, match="not achievable"):
        ECUQ(b=3.0, strict=True).compress(x)
    res = ECUQ(b=3.0).search(x)             # default: the best attainable, still within the budget
    assert res.entropy[0] <= 3.0 and not res.in_window[0]
    np.testing.assert_allclose(res.x_hat, x, atol=res.delta[0] / 2 + 1e-15)


# ------------------------------------------------------------------ constants: exactness and tightness

@given(d=st.integers(1, 50), k=st.integers(1, 50), seed=st.integers(0, 1000))
def test_randk_variance_is_exact(d, k, seed):
    if k > d:
        return
    x = np.random.default_rng(seed).normal(size=(1, d))
    _, mse = exact_moments(RandK(k=k), x)
    assert mse[0] == pytest.approx((d / k - 1) * float(np.sum(x * x)), rel=1e-12, abs=1e-300)


@given(scale=st.one_of(st.just(0.0), st.floats(1e-6, 3.0)), seed=st.integers(0, 1000), per=st.booleans())
def test_scaled_rademacher_variance_is_exact(scale, seed, per):
    x = np.random.default_rng(seed).normal(size=(2, 7))
    comp = ScaledRademacher(scale=scale, per_coordinate=per)
    _, mse = exact_moments(comp, x)
    # x (1 +- scale) - x carries a relative rounding error ~ eps / scale (1 + 1e-20 == 1 in float64)
    rtol = 1e-12 + (8 * np.finfo(float).eps / scale if scale > 0 else 0.0)
    np.testing.assert_allclose(mse, scale**2 * np.sum(x * x, axis=1), rtol=rtol)
    assert nmse_constant(comp, 7) == scale**2


def test_topk_contraction_attained_and_threshold_alpha_zero():
    x = np.ones((1, 10))
    y, _ = TopK(k=3).compress(x)
    assert np.sum((y - x) ** 2) == pytest.approx((1 - 3 / 10) * 10)   # equality for constant vectors
    y, _ = Threshold(tau=2.0).compress(x)
    assert np.sum((y - x) ** 2) == pytest.approx(10.0)                # alpha = 0 is attained
    assert Threshold(tau=2.0).alpha(10) == 0.0 and nmse_constant(Zero(), 3) == 1.0


def test_deterministic_uniform_not_contractive_counterexample():
    """x = (-1, 1, 0, ..., 0), L = 2: error d - 2 > ||x||^2 = 2 (documented reason alpha is refused)."""
    d = 6
    x = np.zeros((1, d)); x[0, 0], x[0, -1] = -1.0, 1.0
    y, _ = DeterministicUniformQuantizer(levels=2).compress(x)
    assert np.sum((y - x) ** 2) == pytest.approx(d - 2)
    with pytest.raises(NotImplementedError):
        DeterministicUniformQuantizer(levels=2).alpha(d)


def test_qsgd_variance_bound_attained_order():
    """QSGD's min(d/s^2, sqrt(d)/s) is within a factor ~4 of the worst case at x = ones (s = 1)."""
    d = 64
    _, mse = exact_moments(QSGD(s=1), np.ones((1, d)))
    ratio = mse[0] / d / QSGD(s=1).omega(d)
    assert 0.2 < ratio <= 1.0


def test_bit_counts():
    assert QSGD(s=3).bits(10) == 64 + 10 * 3
    assert StochasticUniformQuantizer(levels=4).bits(10) == 128 + 20
    _, b = RandK(k=2).compress(np.ones((3, 16)), np.random.default_rng(0))
    np.testing.assert_array_equal(b, 2 * (4 + 64))
    _, b = Threshold(tau=0.5).compress(np.array([[1.0, 0.1, -2.0, 0.0]]))
    assert b[0] == 2 * (2 + 64)
    _, b = Identity().compress(np.ones((2, 5)))
    np.testing.assert_array_equal(b, 320)
    _, b = Zero().compress(np.ones((2, 5)))
    np.testing.assert_array_equal(b, 0)


# ------------------------------------------------------------------ entropy utilities

def test_entropy_known_values():
    X = np.array([[1, 1, 2, 2], [1, 2, 3, 4], [5, 5, 5, 5], [0, 0, 0, 1.0]])
    np.testing.assert_allclose(empirical_entropy(X), [1, 2, 0, -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))])
    np.testing.assert_allclose(huffman_average_length(X), [1, 2, 0, 1])
    assert entropy_from_counts(np.array([1, 1, 2])) == pytest.approx(1.5)
    rows, vals, counts = symbol_counts(X[:1])
    np.testing.assert_array_equal(counts, [2, 2]) and np.testing.assert_array_equal(vals, [1, 2])


@given(counts=st.lists(st.integers(1, 1000), min_size=1, max_size=40))
def test_huffman_properties(counts):
    c = np.array(counts, dtype=float)
    lengths = huffman_lengths(c)
    p = c / c.sum()
    H = entropy_from_counts(c)
    L = float(p @ lengths)
    assert H <= L + 1e-12 and L < H + 1
    if len(counts) > 1:
        assert sum(2.0 ** -lengths) == pytest.approx(1.0)     # a full binary tree: Kraft equality
    # the heap-cost shortcut used per row equals the explicit code lengths
    x = np.repeat(np.arange(len(counts)), counts).astype(float)
    assert huffman_average_length(x)[0] == pytest.approx(L, rel=1e-12)


@given(X=rows_strategy)
def test_entropy_bounds(X):
    H = empirical_entropy(X)
    distinct = np.array([np.unique(r).size for r in X])
    assert np.all(H >= 0) and np.all(H <= np.log2(distinct) + 1e-12)


def test_binned_entropy_fedelasticnet_reading():
    """0.01 bins, Gaussian sigma >> 0.01: H ~ 1/2 log2(2 pi e sigma^2) + log2(100) (Cover & Thomas 2006, Thm. 8.3.1)."""
    v = np.random.default_rng(0).normal(0, 1, size=(1, 200000))
    H = binned_entropy(v, 0.01)[0]
    assert abs(H - (0.5 * math.log2(2 * math.pi * math.e) + math.log2(100))) < 0.02
    np.testing.assert_array_equal(bin_values(np.array([[0.004, 0.006, -0.006]]), 0.01, "round"), [[0, 1, -1]])
    np.testing.assert_array_equal(bin_values(np.array([[0.004, 0.006, -0.006]]), 0.01, "floor"), [[0, 0, -1]])
    with pytest.raises(ValueError):
        bin_values(np.ones((1, 2)), 0.01, "ceil")
    with pytest.raises(ValueError):
        binned_entropy(np.ones((1, 2)), 0.0)


def test_bit_helpers():
    assert index_bits(1) == 0 and index_bits(2) == 1 and index_bits(1000) == 10
    np.testing.assert_array_equal(elias_gamma_bits(np.array([1, 2, 3, 4, 1000])), [1, 3, 3, 5, 19])
    with pytest.raises(ValueError):
        elias_gamma_bits(0)
    with pytest.raises(ValueError):
        sparse_bits(5, 4)
    with pytest.raises(ValueError):
        huffman_lengths(np.array([1.0, 0.0]))


# ------------------------------------------------------------------ ECUQ

@given(dist=st.sampled_from(["lognormal", "normal", "normal_narrow"]), b=st.sampled_from([1.0, 1.5, 2.0, 3.0, 4.5]),
       seed=st.integers(0, 10**6), logd=st.integers(6, 11))
def test_ecuq_invariants_drawn(dist, b, seed, logd):
    ev = check_ecuq_invariants({"dist": dist, "b": b, "d": 2**logd, "seed": seed})
    assert ev.holds, ev.details


@given(X=rows_strategy, b=st.floats(0.5, 6.0))
def test_ecuq_on_arbitrary_rows(X, b):
    res = ECUQ(b=b).search(X)
    assert np.all(res.entropy <= b + 1e-12)
    assert np.all(res.levels >= ECUQ(b=b).initial_levels)
    # exact-arithmetic bound plus the floating-point floor of forming lo + (k + 1/2) Delta
    fp = 8 * np.spacing(np.max(np.abs(X), axis=1, keepdims=True))
    assert np.all(np.abs(res.x_hat - X) <= res.delta[:, None] / 2 * (1 + 1e-9) + fp)
    x_hat, _, _ = ecuq_quantize(X, res.levels)
    np.testing.assert_array_equal(x_hat, res.x_hat)


def test_ecuq_edge_cases():
    Y, bits = ECUQ(b=2.0).compress(np.full((2, 5), 3.5))
    np.testing.assert_array_equal(Y, 3.5)                      # constant rows are exact
    Y, _ = ECUQ(b=2.0).compress(np.array([[7.0]]))
    assert Y[0, 0] == 7.0
    res = ECUQ(b=1.5).search(np.random.default_rng(0).lognormal(size=(1, 4096)))
    assert res.levels[0] >= 2 and res.in_window[0]             # non-integer budget: K0 = floor(2^1.5) = 2
    b_e = ECUQ(b=3.0, coding="entropy").compress(np.random.default_rng(1).normal(size=(1, 1000)))[1]
    b_h = ECUQ(b=3.0).compress(np.random.default_rng(1).normal(size=(1, 1000)))[1]
    assert b_e[0] <= b_h[0] < b_e[0] + 1000


@pytest.mark.parametrize("name", NAMES)
def test_extreme_magnitudes(name):
    """Rows near the float limits (squares over/underflow; a 2e308 range overflows): finite outputs, no
    floating-point warnings inside compress, and unbiased compressors stay exactly unbiased relative to the
    row's scale. Compressors that scale values up (rand-k by d/k, scaled Rademacher by 1 + scale) cannot
    represent C(x) for |x| ~ 1e308 and get the 1e300 row only; so does the (s,b) quantizer, whose
    norm * (m + 1) is formed before the division by s (an intermediate overflow, reported to its owner)."""
    comp = COMPRESSORS[name].example()
    rows = [[-1e300, 1e300, 0.0, 3.0], [2.2e-313, 0.0, 1e-320, -4e-315], [1e-200, -3e-200, 2e-200, 0.0]]
    if name not in ("rand_k", "scaled_rademacher", "sb_quantizer"):
        rows.append([-1e308, 1e308, 0.0, 3.0])
    X = np.array(rows)
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
            Y, bits = comp.compress(X, np.random.default_rng(0))
    except ValueError:
        return   # the example's parameters do not fit d = 4
    assert np.all(np.isfinite(Y)) and np.all(np.isfinite(bits))
    with np.errstate(over="ignore", invalid="ignore"):   # the test's own squares may overflow
        ex = exact_moments(comp, X)
    if comp.unbiased and ex is not None:
        scale = np.max(np.abs(X), axis=1, keepdims=True)
        assert np.all(np.abs(ex[0] - X) <= 1e-12 * scale + 8 * np.spacing(scale))
