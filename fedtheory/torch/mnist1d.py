"""MNIST-1D, generated on this machine (never downloaded), split across clients.

MNIST-1D (Greydanus & Kobak, "Scaling down deep learning with MNIST-1D", ICML 2024) turns ten 12-point digit
templates into 40-point signals by padding, random translation, scaling, shear and correlated plus i.i.d. noise:
5,000 samples, 10 balanced classes, 4,000 for training and 1,000 for testing with the package's default
arguments. The package's ``get_dataset`` downloads a pickle of the same set; :func:`mnist1d_arrays` calls only
its procedural generator ``make_dataset`` with the default arguments and the templates shipped in the package,
so nothing touches the network (``tests/torch/test_mnist1d.py`` runs it under a socket guard).

Optional dependency: ``mnist1d`` (extra ``fedtheory[experiments]``), imported lazily through
:func:`fedtheory.optional.require`.
"""
from __future__ import annotations

import random
from functools import lru_cache
from typing import Literal

import numpy as np

from ..optional import require
from ..problems.datasets import FederatedData
from ..problems.partition import partition as _partition
from ..validation import check_int, check_positive, check_seed

__all__ = ["MNIST1D_LENGTH", "mnist1d_arrays", "mnist1d_federated"]

#: The signal length of MNIST-1D with the package's default arguments (``final_seq_length``).
MNIST1D_LENGTH = 40


@lru_cache(maxsize=4)
def _generate(num_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    data = require("mnist1d.data", "MNIST-1D (fedtheory.torch.mnist1d)")
    args = data.get_dataset_args()  # the published defaults (an ObjectView); only these two are changed
    args.num_samples = num_samples
    args.seed = seed
    # make_dataset seeds NumPy's and Python's global generators; restore them so that generating data leaves
    # no trace on anyone else's randomness
    np_state, py_state = np.random.get_state(), random.getstate()
    try:
        d = data.make_dataset(args)
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)
    return (np.asarray(d["x"], dtype=np.float64), np.asarray(d["y"], dtype=np.int64),
            np.asarray(d["x_test"], dtype=np.float64), np.asarray(d["y_test"], dtype=np.int64))


def mnist1d_arrays(num_samples: int = 5000, seed: int = 42) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x_train, y_train, x_test, y_test) of MNIST-1D from the package's generator: 80/20 split, signals of
    length 40 standardised over the whole set. ``seed=42`` and ``num_samples=5000`` are the published defaults
    (the set the paper's pickle holds). Cached per process; copies are returned."""
    n = check_int("num_samples", num_samples, low=100)
    s = check_seed("seed", seed)
    return tuple(a.copy() for a in _generate(n, s))  # type: ignore[return-value]


def mnist1d_federated(n_clients: int = 20, *, partition: Literal["iid", "dirichlet", "shards"] = "dirichlet",
                      dirichlet_alpha: float = 0.3, shards_per_client: int = 2, num_samples: int = 5000,
                      data_seed: int = 42, seed: int = 0
                      ) -> tuple[FederatedData, tuple[np.ndarray, np.ndarray]]:
    """(MNIST-1D's training set split across ``n_clients``, the pooled test set (x, y)).

    ``partition="dirichlet"``: each client's label proportions ~ Dir(``dirichlet_alpha``) (FedElasticNet,
    FedDyn's non-IID setting); ``"shards"``: sort by label, cut into ``shards_per_client * n_clients`` shards and
    deal ``shards_per_client`` to each client (McMahan et al.'s pathological split); ``"iid"``: uniform. The
    data set itself is fixed by ``data_seed``; ``seed`` draws the split.
    """
    n = check_int("n_clients", n_clients, low=1)
    if partition not in ("iid", "dirichlet", "shards"):
        raise ValueError(f"partition must be 'iid', 'dirichlet' or 'shards', got {partition!r}")
    alpha = check_positive("dirichlet_alpha", dirichlet_alpha)
    x, y, xt, yt = mnist1d_arrays(num_samples, data_seed)
    if n > len(y):
        raise ValueError(f"n_clients must be at most the {len(y)} training samples, got {n}")
    parts = _partition(partition, y, n, seed=check_seed("seed", seed), alpha=alpha,
                       shards_per_client=shards_per_client)
    return FederatedData([x[p] for p in parts], [y[p] for p in parts]), (xt, yt)
