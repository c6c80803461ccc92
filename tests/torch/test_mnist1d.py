"""MNIST-1D is generated on this machine, never downloaded, and split across clients exactly."""
from __future__ import annotations

import random
import socket

import numpy as np
import pytest

pytest.importorskip("mnist1d", reason="the experiments extra (mnist1d) is not installed")

from fedtheory.torch.mnist1d import MNIST1D_LENGTH, mnist1d_arrays, mnist1d_federated


@pytest.fixture
def no_network(monkeypatch):
    """Any socket connection raises: generating the data must not touch the network."""
    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_the_published_set_is_generated_offline_and_leaves_global_randomness_alone(no_network) -> None:
    from fedtheory.torch import mnist1d as module

    module._generate.cache_clear()  # generate here, under the guard
    np_state, py_state = np.random.get_state(), random.getstate()
    x, y, xt, yt = mnist1d_arrays()
    assert x.shape == (4000, MNIST1D_LENGTH) and xt.shape == (1000, MNIST1D_LENGTH)
    assert sorted(np.unique(y)) == list(range(10)) and y.dtype == np.int64
    assert np.bincount(np.concatenate([y, yt])).tolist() == [500] * 10  # 5,000 samples, balanced
    both = np.concatenate([x, xt])
    assert abs(both.mean()) < 1e-9 and abs(both.std() - 1.0) < 1e-9  # standardised over the whole set
    assert np.array_equal(np.random.get_state()[1], np_state[1]) and random.getstate() == py_state


@pytest.mark.parametrize("partition", ["iid", "dirichlet", "shards"])
def test_every_training_sample_goes_to_exactly_one_client(partition: str) -> None:
    data, (_, yt) = mnist1d_federated(10, partition=partition, seed=3)
    x, y, _, _ = mnist1d_arrays()
    assert sum(len(lab) for lab in data.labels) == len(y) and len(yt) == 1000
    rows = np.concatenate(data.features)
    # the multiset of rows equals the training set: sort both lexicographically
    assert np.array_equal(rows[np.lexsort(rows.T)], x[np.lexsort(x.T)])
    if partition == "shards":  # two shards of one label each: at most 2 labels per client (plus a boundary)
        assert max(len(np.unique(lab)) for lab in data.labels) <= 4


def test_bad_input_names_the_parameter() -> None:
    with pytest.raises(ValueError, match="partition"):
        mnist1d_federated(4, partition="lognormal")
    with pytest.raises(ValueError, match="n_clients"):
        mnist1d_federated(0)
    with pytest.raises(ValueError, match="dirichlet_alpha"):
        mnist1d_federated(4, dirichlet_alpha=0.0)
