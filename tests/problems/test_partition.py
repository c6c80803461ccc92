"""Partitioners and bundled datasets: exact covers, determinism, validation."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.problems import (
    dirichlet_partition,
    iid_partition,
    load_breast_cancer,
    load_digits,
    lognormal_partition,
    partition,
    shard_partition,
    synthetic_fedprox,
)


def _assert_cover(parts, n_samples, n_clients):
    assert len(parts) == n_clients
    assert all(len(p) > 0 for p in parts)
    allidx = np.concatenate(parts)
    np.testing.assert_array_equal(np.sort(allidx), np.arange(n_samples))


@given(st.integers(1, 300), st.integers(1, 20), st.integers(0, 10**6), st.floats(0.0, 3.0))
def test_iid_and_lognormal_are_exact_covers(m, n, seed, sigma):
    n = min(n, m)
    parts = iid_partition(m, n, seed=seed)
    _assert_cover(parts, m, n)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    parts = lognormal_partition(m, n, sigma=sigma, seed=seed)
    _assert_cover(parts, m, n)
    if sigma == 0.0:
        assert max(map(len, parts)) - min(map(len, parts)) <= 1


@given(st.integers(20, 300), st.integers(1, 8), st.integers(2, 5), st.floats(0.5, 100.0), st.integers(0, 10**6))
def test_dirichlet_and_shards_are_exact_covers(m, n, classes, alpha, seed):
    labels = np.random.default_rng(seed).integers(0, classes, m)
    parts = dirichlet_partition(labels, n, alpha=alpha, seed=seed)
    _assert_cover(parts, m, n)
    s = max(1, min(2, m // n))
    parts = shard_partition(labels, n, shards_per_client=s, seed=seed)
    _assert_cover(parts, m, n)


def test_shards_give_few_labels_per_client_and_dirichlet_skews():
    labels = np.repeat(np.arange(10), 100)
    parts = shard_partition(labels, 20, shards_per_client=2, seed=0)
    # 40 shards of 25 sorted labels: a shard never straddles two labels, so <= 2 labels per client
    assert max(len(np.unique(labels[p])) for p in parts) <= 2
    skewed = dirichlet_partition(labels, 10, alpha=0.05, seed=0)
    flat = dirichlet_partition(labels, 10, alpha=1e4, seed=0)
    top_share = lambda parts: np.mean([np.bincount(labels[p]).max() / len(p) for p in parts])  # noqa: E731
    assert top_share(skewed) > 0.6 > 0.2 > top_share(flat)


def test_partitions_are_deterministic():
    labels = np.random.default_rng(0).integers(0, 3, 100)
    for kind in ("iid", "dirichlet", "lognormal", "shards"):
        a = partition(kind, labels, 5, seed=4)
        b = partition(kind, labels, 5, seed=4)
        assert all(np.array_equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("call, name", [
    (lambda: iid_partition(3, 5), "n_clients"),
    (lambda: lognormal_partition(10, 2, sigma=-1.0), "sigma"),
    (lambda: dirichlet_partition(np.zeros(10), 2, alpha=0.0), "alpha"),
    (lambda: dirichlet_partition(np.zeros(5), 3, alpha=1e-3, max_tries=3), "alpha"),
    (lambda: shard_partition(np.zeros(10), 4, shards_per_client=3), "shards_per_client"),
    (lambda: partition("random", np.zeros(10), 2), "kind"),  # the parameter of partition() is `kind`
    (lambda: synthetic_fedprox(-1.0, 0.0), "alpha"),
    (lambda: synthetic_fedprox(1.0, 1.0, 2, sizes=[3]), "sizes"),
    (lambda: load_digits("three_class"), "mode"),
])
def test_invalid_parameters_raise(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


def test_synthetic_fedprox_shapes_labels_and_determinism():
    data = synthetic_fedprox(1.0, 1.0, 5, seed=0)
    assert data.n_clients == 5 and all(x.shape == (len(y), 60) for x, y in zip(data.features, data.labels))
    assert data.sizes.min() >= 50  # floor(lognormal(4, 2)) + 50
    assert all(set(np.unique(y)) <= set(range(10)) for y in data.labels)
    binary = synthetic_fedprox(0.5, 0.5, 3, dim=7, n_classes=2, sizes=11, seed=1)
    assert all(set(np.unique(y)) <= {-1.0, 1.0} for y in binary.labels)
    again = synthetic_fedprox(0.5, 0.5, 3, dim=7, n_classes=2, sizes=11, seed=1)
    assert all(np.array_equal(a, b) for a, b in zip(binary.features, again.features))


def test_sklearn_datasets_are_bundled():
    x, y = load_breast_cancer()
    assert x.shape == (569, 30) and set(np.unique(y)) == {-1.0, 1.0}
    np.testing.assert_allclose(x.mean(axis=0), 0.0, atol=1e-12)
    x, y, digit = load_digits("two_class", positive=3, negative=8)
    assert set(np.unique(digit)) == {3, 8} and np.all((y == 1) == (digit == 3)) and x.max() <= 1.0
    x, y, digit = load_digits("one_vs_rest", positive=0)
    assert x.shape == (1797, 64) and np.all((y == 1) == (digit == 0))
