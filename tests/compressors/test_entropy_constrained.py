"""ECQ and ECK-Means (fedtheory.compressors.entropy_constrained) against independent expectations."""
from __future__ import annotations

import math

import numpy as np
import pytest

from fedtheory.compressors.entropy_constrained import eck_means, ecq, ecq_lloyd, kmeans_1d


def _lloyd_bruteforce(x, c, lam=0.0, iters=1000):
    """Generalised Lloyd by a full (d, N) cost matrix and Python loops: independent of the interval trick."""
    c = np.sort(np.asarray(c, dtype=float))
    lengths = np.full(c.size, math.log2(c.size))
    index = None
    for _ in range(iters):
        cost = (x[:, None] - c[None, :]) ** 2 + lam * lengths[None, :]
        new = np.argmin(cost, axis=1)
        if index is not None and np.array_equal(c[new], c[index]):
            break
        used = np.unique(new)
        c = np.array([x[new == k].mean() for k in used])
        lengths = np.array([-math.log2(np.mean(new == k)) for k in used])
        index = np.searchsorted(used, new)
    return c, index


def _entropy(index):
    p = np.bincount(index) / index.size
    p = p[p > 0]
    return float(-np.sum(p * np.log2(p)))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_kmeans_is_lloyds_fixed_point(seed, k):
    x = np.random.default_rng(seed).lognormal(size=40)
    c, index = kmeans_1d(x, k)
    # a fixed point of Lloyd: each centre is its cell's mean, each point at its nearest centre
    assert np.allclose(c, [x[index == j].mean() for j in range(c.size)], rtol=1e-12)
    assert np.array_equal(np.argmin((x[:, None] - c[None, :]) ** 2, axis=1), index)
    # and the same fixed point as brute-force Lloyd from the same start
    init = np.sort(x)[((np.arange(k) + 0.5) * x.size / k).astype(int)]
    c2, index2 = _lloyd_bruteforce(x, init)
    assert np.allclose(c, c2, rtol=1e-12) and np.array_equal(index, index2)


def test_kmeans_two_levels_by_hand():
    x = np.array([0.0, 1.0, 10.0, 11.0, 12.0])
    c, index = kmeans_1d(x, 2)
    assert np.allclose(c, [0.5, 11.0]) and index.tolist() == [0, 0, 1, 1, 1]


@pytest.mark.parametrize("seed", [0, 1])
def test_ecq_lambda_zero_is_kmeans(seed):
    x = np.random.default_rng(seed).normal(size=60)
    init = np.linspace(x.min(), x.max(), 7)
    c, index, _ = ecq_lloyd(x, init, 0.0)
    c2, index2 = _lloyd_bruteforce(x, init)
    assert np.allclose(c, c2, rtol=1e-12) and np.array_equal(index, index2)


@pytest.mark.parametrize("lam", [0.05, 0.3, 1.0])
def test_ecq_positive_lambda_matches_bruteforce(lam):
    x = np.random.default_rng(3).normal(size=80)
    init = np.linspace(x.min(), x.max(), 9)
    c, index, _ = ecq_lloyd(x, init, lam)
    c2, index2 = _lloyd_bruteforce(x, init, lam)
    assert np.allclose(c, c2, rtol=1e-12) and np.array_equal(index, index2)
    # a larger lambda never has a larger entropy here (rate traded for distortion)
    assert _entropy(index) <= _entropy(ecq_lloyd(x, init, 0.0)[1]) + 1e-12


@pytest.mark.parametrize("dist", ["lognormal", "normal"])
@pytest.mark.parametrize("b", [1.0, 2.0, 3.5])
def test_budget_met_and_output_consistent(dist, b):
    rng = np.random.default_rng(7)
    x = rng.lognormal(size=500) if dist == "lognormal" else rng.normal(size=500)
    for res in (eck_means(x, b), ecq(x, b)):
        assert res.entropy <= b + 1e-12
        assert abs(res.entropy - _entropy(res.index)) < 1e-12
        assert np.array_equal(res.x_hat, res.centers[res.index])
        assert np.all(np.diff(res.centers) > 0) and res.levels == res.centers.size
        assert np.all(np.bincount(res.index, minlength=res.levels) > 0)


def test_eck_means_is_the_largest_feasible_k_it_tried():
    x = np.random.default_rng(0).normal(size=300)
    res = eck_means(x, 2.0)
    assert res.levels >= 4                                  # K0 = 4 has entropy <= 2
    assert _entropy(kmeans_1d(x, res.levels + 1)[1]) > 2.0  # the next K exceeds the budget
    assert np.isnan(res.lam)


def test_deterministic_and_degenerate_inputs():
    x = np.random.default_rng(1).normal(size=200)
    assert np.array_equal(ecq(x, 2.0).x_hat, ecq(x, 2.0).x_hat)
    assert np.array_equal(eck_means(x, 2.0).x_hat, eck_means(x, 2.0).x_hat)
    const = np.full(10, 3.0)
    for res in (ecq(const, 2.0), eck_means(const, 2.0)):
        assert np.array_equal(res.x_hat, const) and res.entropy == 0.0 and res.levels == 1


@pytest.mark.parametrize("call, name", [
    (lambda: ecq(np.array([1.0, np.nan]), 2.0), "x"),
    (lambda: eck_means(np.ones((2, 2)), 2.0), "x"),
    (lambda: eck_means(np.array([]), 2.0), "x"),
    (lambda: ecq(np.ones(4), 0.0), "b"),
    (lambda: eck_means(np.ones(4), float("nan")), "b"),
    (lambda: ecq(np.ones(4), 2.0, codewords=0), "codewords"),
    (lambda: ecq(np.ones(4), 2.0, lambdas=[-1.0]), "lambdas"),
    (lambda: ecq_lloyd(np.ones(4), [0.0, 1.0], -0.5), "lam"),
    (lambda: ecq_lloyd(np.ones(4), [np.inf], 0.0), "init"),
    (lambda: kmeans_1d(np.ones(4), 0), "k"),
    (lambda: eck_means(np.ones(4), 2.0, max_iter=0), "max_iter"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


def test_bad_input_types():
    with pytest.raises(TypeError, match=r"\bb\b"):
        ecq(np.ones(4), "2")
    with pytest.raises(TypeError, match=r"\bk\b"):
        kmeans_1d(np.ones(4), 2.5)


@pytest.mark.parametrize("dist", ["lognormal", "normal"])
def test_ecq_refinement_and_codebook_growth_only_add_candidates(dist):
    rng = np.random.default_rng(11)
    x = rng.lognormal(size=1000) if dist == "lognormal" else rng.normal(size=1000)
    full = ecq(x, 4.0)
    grid_only = ecq(x, 4.0, refine=0, codewords=2**7)
    err = lambda r: float(np.sum((r.x_hat - x) ** 2))  # noqa: E731
    assert err(full) <= err(grid_only) * (1 + 1e-12)
    assert full.evaluations > grid_only.evaluations
    assert 4.0 - 0.25 <= full.entropy <= 4.0           # the refined lambda uses most of the budget


def test_ecq_bad_refine():
    with pytest.raises(ValueError, match=r"\brefine\b"):
        ecq(np.ones(4), 2.0, refine=-1)
