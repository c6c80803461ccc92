"""Offline federated classification data for the torch backend (nothing is downloaded).

* :func:`digits_federated` -- scikit-learn's bundled 8x8 digits (1 797 samples, 64 features scaled to [0, 1],
  10 classes), an optional stratified held-out test split, and the training part split across clients by
  :func:`fedtheory.problems.partition.partition` (``"iid"``, ``"dirichlet"`` label skew, ``"lognormal"`` sizes,
  ``"shards"``).
* :func:`synthetic_multinomial` -- FedProx's Synthetic(alpha, beta) in its original multinomial form (10 classes,
  60 features; :func:`fedtheory.problems.datasets.synthetic_fedprox`), with a per-client held-out fraction pooled
  into a test set.
* :func:`neural_problem` -- a one-call generator ``(**params, seed=seed) -> TorchProblem`` in the catalogue's
  generator convention, so a catalogue spec (and therefore ``fedtheory bench``) can name a neural instance with
  ``"generator": "fedtheory.torch.neural_problem"``.
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from ..problems.datasets import FederatedData, load_digits, synthetic_fedprox
from ..problems.partition import partition as _partition
from ..validation import check_int, check_positive, check_real, check_seed
from .models import cnn_digits, logistic_regression, mlp
from .problem import TorchProblem

__all__ = ["digits_federated", "synthetic_multinomial", "neural_problem"]


def _test_split(labels: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Stratified split: round(fraction * count) samples of every class go to the test set."""
    rng = np.random.default_rng([seed, 7])
    test = []
    for c in np.unique(labels):  # per class, construction time only
        idx = np.flatnonzero(labels == c)
        test.append(rng.permutation(idx)[:int(round(fraction * idx.size))])
    test_idx = np.sort(np.concatenate(test))
    train_idx = np.setdiff1d(np.arange(labels.size), test_idx)
    return train_idx, test_idx


def digits_federated(n_clients: int = 10, *, partition: Literal["iid", "dirichlet", "lognormal", "shards"] = "iid",
                     dirichlet_alpha: float = 0.5, sigma: float = 1.0, shards_per_client: int = 2,
                     test_fraction: float = 0.2, seed: int = 0
                     ) -> tuple[FederatedData, tuple[np.ndarray, np.ndarray]]:
    """(per-client training data with labels 0..9, pooled test (features, labels)).

    ``test_fraction`` in [0, 1) of every class is held out first (stratified, seeded); the rest is partitioned.
    """
    n = check_int("n_clients", n_clients, low=1)
    frac = check_real("test_fraction", test_fraction, low=0.0, high=1.0, high_open=True)
    seed = check_seed("seed", seed)
    dirichlet_alpha = check_positive("dirichlet_alpha", dirichlet_alpha)  # partition() would call it alpha
    x, _, digit = load_digits()
    train_idx, test_idx = _test_split(digit, frac, seed)
    xt, yt = x[train_idx], digit[train_idx]
    parts = _partition(partition, yt, n, seed=seed, alpha=dirichlet_alpha, sigma=sigma,
                       shards_per_client=shards_per_client)
    data = FederatedData([xt[p] for p in parts], [yt[p].astype(np.int64) for p in parts])
    return data, (x[test_idx], digit[test_idx].astype(np.int64))


def synthetic_multinomial(alpha: float = 1.0, beta: float = 1.0, n_clients: int = 30, *, dim: int = 60,
                          n_classes: int = 10, sizes: int | None = None, test_fraction: float = 0.2, seed: int = 0
                          ) -> tuple[FederatedData, tuple[np.ndarray, np.ndarray]]:
    """FedProx Synthetic(alpha, beta) with C classes; the last ``test_fraction`` of every device's samples is
    pooled into the test set (every device keeps at least one training sample)."""
    frac = check_real("test_fraction", test_fraction, low=0.0, high=1.0, high_open=True)
    raw = synthetic_fedprox(alpha, beta, n_clients, dim=dim, n_classes=n_classes, sizes=sizes, seed=seed)
    feats, labs, tx, ty = [], [], [], []
    for a, y in zip(raw.features, raw.labels):  # per device, construction time only
        k = min(int(round(frac * len(y))), len(y) - 1)
        feats.append(a[:len(y) - k])
        labs.append(y[:len(y) - k])
        tx.append(a[len(y) - k:])
        ty.append(y[len(y) - k:])
    return FederatedData(feats, labs), (np.concatenate(tx), np.concatenate(ty))


def neural_problem(source: Literal["digits", "synthetic"] = "digits", model: Literal["logistic", "mlp", "cnn"] = "mlp",
                   n_clients: int = 10, *, partition: Literal["iid", "dirichlet", "lognormal", "shards"] = "dirichlet",
                   dirichlet_alpha: float = 0.5, sigma: float = 1.0, alpha: float = 1.0, beta: float = 1.0,
                   samples: int | None = None, hidden: int | list[int] = 32, activation: str = "relu",
                   batch_size: int | None = 32, reg: float = 0.0, dtype: str = "float64",
                   test_fraction: float = 0.2, origin: str | None = "init", power_iters: int = 20,
                   seed: int = 0) -> TorchProblem:
    """A neural TorchProblem from offline data in one call (catalogue generator convention).

    ``source="digits"`` (64 features, partitioned by ``partition``) or ``"synthetic"`` (FedProx
    Synthetic(alpha, beta), 60 features, one device per client, ``samples`` per device or the paper's
    lognormal sizes); ``model`` the multinomial logistic regression, the MLP (``hidden``) or, for digits, the
    CNN. ``origin="init"`` (default) makes x = 0 the model's initialisation under ``seed`` (see
    :class:`TorchProblem`), so runs that start at zeros train from a proper initialisation.
    """
    if source == "digits":
        data, test = digits_federated(n_clients, partition=partition, dirichlet_alpha=dirichlet_alpha, sigma=sigma,
                                      test_fraction=test_fraction, seed=seed)
        d = 64
    elif source == "synthetic":
        data, test = synthetic_multinomial(alpha, beta, n_clients, sizes=samples, test_fraction=test_fraction,
                                           seed=seed)
        d = 60
    else:
        raise ValueError(f"source must be 'digits' or 'synthetic', got {source!r}")
    if model == "logistic":
        net = logistic_regression(d, 10)
    elif model == "mlp":
        net = mlp(d, 10, hidden=hidden if np.ndim(hidden) == 0 else tuple(hidden), activation=activation)
    elif model == "cnn":
        if source != "digits":
            raise ValueError("model='cnn' needs source='digits' (8x8 images)")
        net = cnn_digits(activation=activation)
    else:
        raise ValueError(f"model must be 'logistic', 'mlp' or 'cnn', got {model!r}")
    return TorchProblem(net, data, batch_size=batch_size, reg=reg, dtype=dtype, test=test if len(test[1]) else None,
                        origin=origin, init_seed=seed, power_iters=power_iters)
