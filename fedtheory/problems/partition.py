"""Partition a labelled dataset across clients: iid, Dirichlet label skew, lognormal sizes, label shards.

Every partitioner returns a list of ``n_clients`` integer index arrays (disjoint, covering every sample,
each non-empty, sorted) and is deterministic given ``seed``. These are the splits used in the federated
literature:

* :func:`iid_partition`: a uniform random permutation cut into near-equal parts.
* :func:`dirichlet_partition`: label skew of Hsu, Qi & Brown (2019): for every class c, the class's samples
  are split with proportions p_c ~ Dirichlet(alpha 1_n). Small alpha = each client sees few classes.
* :func:`lognormal_partition`: iid labels, client sizes m_i proportional to exp(N(0, sigma^2)) (as in
  FedProx's Synthetic data and LEAF). sigma = 0 gives equal sizes.
* :func:`shard_partition`: McMahan et al. (2017): sort by label, cut into ``n_clients * shards_per_client``
  shards and give every client ``shards_per_client`` random shards.
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from ..validation import check_int, check_nonnegative, check_positive, check_seed

__all__ = ["iid_partition", "dirichlet_partition", "lognormal_partition", "shard_partition", "partition",
           "PartitionKind"]

PartitionKind = Literal["iid", "dirichlet", "lognormal", "shards"]


def _check_common(n_samples: int, n_clients: int) -> tuple[int, int]:
    n_samples = check_int("n_samples", n_samples, low=1)
    n_clients = check_int("n_clients", n_clients, low=1)
    if n_clients > n_samples:
        raise ValueError(f"n_clients must be in [1, n_samples] = [1, {n_samples}] so that every client has "
                         f"data, got {n_clients}")
    return n_samples, n_clients


def _check_labels(labels: np.ndarray) -> np.ndarray:
    """Class labels: a 1-D array of any values that compare equal per class (NaN is no class)."""
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be one-dimensional, got shape {labels.shape}")
    if labels.dtype.kind in "fc" and not np.all(np.isfinite(labels)):
        raise ValueError("labels must be finite (a NaN label belongs to no class)")
    return labels


def _finish(parts: list[np.ndarray]) -> list[np.ndarray]:
    return [np.sort(np.asarray(p, dtype=np.int64)) for p in parts]


def iid_partition(n_samples: int, n_clients: int, *, seed: int = 0) -> list[np.ndarray]:
    """Uniformly random near-equal split of ``range(n_samples)``."""
    n_samples, n_clients = _check_common(n_samples, n_clients)
    perm = np.random.default_rng(check_seed("seed", seed)).permutation(n_samples)
    return _finish(np.array_split(perm, n_clients))


def lognormal_partition(n_samples: int, n_clients: int, *, sigma: float, seed: int = 0) -> list[np.ndarray]:
    """iid split with client sizes proportional to lognormal(0, sigma^2) draws (every client >= 1 sample)."""
    n_samples, n_clients = _check_common(n_samples, n_clients)
    sigma = check_nonnegative("sigma", sigma)
    rng = np.random.default_rng(check_seed("seed", seed))
    raw = np.exp(sigma * rng.standard_normal(n_clients))
    # one sample guaranteed per client, the rest split by largest remainders so sizes sum exactly
    spare = n_samples - n_clients
    quota = spare * raw / raw.sum()
    sizes = np.floor(quota).astype(np.int64)
    leftover = spare - sizes.sum()
    sizes[np.argsort(-(quota - sizes), kind="stable")[:leftover]] += 1
    sizes += 1
    perm = rng.permutation(n_samples)
    return _finish(np.split(perm, np.cumsum(sizes)[:-1]))


def dirichlet_partition(labels: np.ndarray, n_clients: int, *, alpha: float, seed: int = 0,
                        max_tries: int = 100) -> list[np.ndarray]:
    """Label-skewed split: class c's samples go to clients with proportions ~ Dirichlet(alpha 1_n).

    Redraws (up to ``max_tries`` times) until every client has at least one sample; raises ValueError
    naming ``alpha`` if that fails (alpha too small for this many clients and samples).
    """
    labels = _check_labels(labels)
    n_samples, n_clients = _check_common(len(labels), n_clients)
    alpha = check_positive("alpha", alpha)
    rng = np.random.default_rng(check_seed("seed", seed))
    classes = np.unique(labels)
    for _ in range(max_tries):
        owner = np.empty(n_samples, dtype=np.int64)
        for c in classes:  # loop over classes (construction time, not a per-client hot path)
            idx = np.nonzero(labels == c)[0]
            idx = idx[rng.permutation(len(idx))]
            p = rng.dirichlet(np.full(n_clients, alpha))
            cuts = np.floor(np.cumsum(p)[:-1] * len(idx)).astype(np.int64)
            owner[idx] = np.repeat(np.arange(n_clients), np.diff(np.concatenate([[0], cuts, [len(idx)]])))
        counts = np.bincount(owner, minlength=n_clients)
        if counts.min() > 0:
            order = np.argsort(owner, kind="stable")
            return _finish(np.split(order, np.cumsum(counts)[:-1]))
    raise ValueError(f"alpha={alpha:g} left some client without data in {max_tries} draws for "
                     f"{n_clients} clients and {n_samples} samples; use a larger alpha or fewer clients")


def shard_partition(labels: np.ndarray, n_clients: int, *, shards_per_client: int = 2,
                    seed: int = 0) -> list[np.ndarray]:
    """Sort by label, cut into ``n_clients * shards_per_client`` equal shards, deal them out at random."""
    labels = _check_labels(labels)
    n_samples, n_clients = _check_common(len(labels), n_clients)
    s = check_int("shards_per_client", shards_per_client, low=1)
    if n_clients * s > n_samples:
        raise ValueError(f"shards_per_client must be in [1, n_samples // n_clients] = "
                         f"[1, {n_samples // n_clients}], got {s}")
    rng = np.random.default_rng(check_seed("seed", seed))
    # ties broken at random so that equal labels do not keep their file order
    order = np.lexsort((rng.random(n_samples), labels))
    shards = np.array_split(order, n_clients * s)
    deal = rng.permutation(n_clients * s).reshape(n_clients, s)
    return _finish([np.concatenate([shards[j] for j in row]) for row in deal])


def partition(kind: PartitionKind, labels: np.ndarray, n_clients: int, *, seed: int = 0,
              alpha: float = 0.5, sigma: float = 1.0, shards_per_client: int = 2) -> list[np.ndarray]:
    """Dispatch to one of the partitioners by name (``"iid" | "dirichlet" | "lognormal" | "shards"``).

    Every option is validated, used or not, so that a bad value never passes silently."""
    if kind not in ("iid", "dirichlet", "lognormal", "shards"):
        raise ValueError(f"kind must be one of 'iid', 'dirichlet', 'lognormal', 'shards', got {kind!r}")
    labels = _check_labels(labels)
    check_positive("alpha", alpha)
    check_nonnegative("sigma", sigma)
    check_int("shards_per_client", shards_per_client, low=1)
    if kind == "iid":
        return iid_partition(len(labels), n_clients, seed=seed)
    if kind == "dirichlet":
        return dirichlet_partition(labels, n_clients, alpha=alpha, seed=seed)
    if kind == "lognormal":
        return lognormal_partition(len(labels), n_clients, sigma=sigma, seed=seed)
    return shard_partition(labels, n_clients, shards_per_client=shards_per_client, seed=seed)
