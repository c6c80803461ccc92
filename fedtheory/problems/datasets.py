"""Datasets for the logistic family: FedProx's Synthetic(alpha, beta) and scikit-learn's bundled sets.

Nothing here downloads anything: Synthetic(alpha, beta) is generated, and breast cancer / digits ship inside
scikit-learn (``sklearn.datasets.load_breast_cancer`` / ``load_digits`` read files in the wheel).

Synthetic(alpha, beta) follows Li et al. (2020, "Federated Optimization in Heterogeneous Networks",
Section 5.1 and the authors' ``data/synthetic_*/generate_niid.py``) exactly, for device k:

    u_k ~ N(0, alpha),  B_k ~ N(0, beta),  W_k[j, c] ~ N(u_k, 1),  b_k[c] ~ N(u_k, 1),
    v_k[j] ~ N(B_k, 1),  x ~ N(v_k, Sigma) with Sigma = diag(j^{-1.2}),  y = argmax softmax(W_k^T x + b_k),

with d = 60, C = 10 and sizes m_k = floor(lognormal(4, 2)) + 50 by default. As in the authors' code the
second argument of N(., .) is used as a standard deviation (numpy's ``scale``). alpha controls how much
the local models differ, beta how much the local feature distributions differ.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Sequence

import numpy as np

from ..validation import check_int, check_nonnegative, check_seed

__all__ = ["FederatedData", "synthetic_fedprox", "load_breast_cancer", "load_digits"]


@dataclass(frozen=True)
class FederatedData:
    """Per-client features and labels (lists of arrays, one entry per client)."""

    features: list[np.ndarray]
    labels: list[np.ndarray]

    @property
    def n_clients(self) -> int:
        return len(self.features)

    @property
    def sizes(self) -> np.ndarray:
        return np.array([len(y) for y in self.labels])


def check_sizes(name: str, sizes: int | Sequence[int], n_clients: int) -> np.ndarray:
    """Samples per device: a positive int (the same for every device) or ``n_clients`` positive ints."""
    if np.ndim(sizes) == 0:
        return np.full(n_clients, check_int(name, sizes, low=1))
    m = np.asarray(sizes)
    if m.shape != (n_clients,) or not np.issubdtype(m.dtype, np.integer) or np.any(m < 1):
        raise ValueError(f"{name} must be None, a positive int or {n_clients} positive ints, got {sizes!r}")
    return m


def synthetic_fedprox(alpha: float, beta: float, n_clients: int = 30, *, dim: int = 60, n_classes: int = 10,
                      sizes: int | Sequence[int] | None = None, seed: int = 0) -> FederatedData:
    """FedProx's Synthetic(alpha, beta) data (Li et al. 2020, Sec. 5.1), already split by device.

    Parameters
    ----------
    alpha, beta:
        Heterogeneity of the local models and of the local features (standard deviations, as in the
        authors' code). Synthetic(0, 0) still has device-specific draws; Synthetic(1, 1) is the paper's
        most heterogeneous setting.
    n_classes:
        Number of classes C. ``n_classes=2`` gives the binary version used by :func:`fedtheory.problems.logistic`
        (labels in {-1, +1}: +1 when class 1 wins the argmax); otherwise labels are 0..C-1 (multinomial).
    sizes:
        Samples per device: None for the paper's floor(lognormal(4, 2)) + 50, an int for equal sizes, or a
        sequence of ``n_clients`` ints.
    """
    alpha = check_nonnegative("alpha", alpha)
    beta = check_nonnegative("beta", beta)
    n = check_int("n_clients", n_clients, low=1)
    d = check_int("dim", dim, low=1)
    C = check_int("n_classes", n_classes, low=2)
    rng = np.random.default_rng(check_seed("seed", seed))
    m = rng.lognormal(4, 2, n).astype(np.int64) + 50 if sizes is None else check_sizes("sizes", sizes, n)
    u = rng.normal(0.0, alpha, n)  # mean of W_k and b_k
    B = rng.normal(0.0, beta, n)
    v = rng.normal(B[:, None], 1.0, (n, d))
    sd = np.arange(1, d + 1, dtype=np.float64) ** (-1.2 / 2)  # Sigma = diag(j^{-1.2}): std is its root
    feats, labs = [], []
    for k in range(n):  # data generation, once per instance: a loop over devices is the definition
        W = rng.normal(u[k], 1.0, (d, C))
        b = rng.normal(u[k], 1.0, C)
        x = v[k] + sd * rng.standard_normal((int(m[k]), d))
        y = np.argmax(x @ W + b, axis=1)  # argmax of softmax = argmax of the logits
        feats.append(x)
        labs.append(np.where(y == 1, 1.0, -1.0) if C == 2 else y.astype(np.int64))
    return FederatedData(feats, labs)


@lru_cache(maxsize=None)
def _sklearn_raw(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The bundled arrays, parsed once per process (read-only; callers copy)."""
    from sklearn import datasets  # here, not at the top: scikit-learn (1.7 s)

    data = getattr(datasets, f"load_{name}")()
    x, y = np.asarray(data.data, dtype=np.float64), np.asarray(data.target)
    x.flags.writeable = False
    y.flags.writeable = False
    return x, y


def _standardise(x: np.ndarray) -> np.ndarray:
    sd = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def load_breast_cancer(*, standardise: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled Wisconsin breast cancer data: (569, 30) features, labels in {-1, +1}."""
    x, target = _sklearn_raw("breast_cancer")
    return (_standardise(x) if standardise else x.copy()), np.where(target == 1, 1.0, -1.0)


def load_digits(mode: Literal["one_vs_rest", "two_class"] = "one_vs_rest", *, positive: int = 0,
                negative: int = 1, scale: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8x8 digits as a binary problem.

    ``mode="one_vs_rest"``: label +1 for digit ``positive``, -1 for every other digit (1797 samples).
    ``mode="two_class"``: only digits ``positive`` (+1) and ``negative`` (-1).
    Returns (features (m, 64) scaled to [0, 1], labels in {-1, +1}, original digit of each sample); the
    original digits are what label-based partitions (Dirichlet, shards) split on.
    """
    positive = check_int("positive", positive, low=0, high=9)
    raw, digit = _sklearn_raw("digits")
    x = raw / (16.0 if scale else 1.0)
    digit = digit.copy()
    if mode == "one_vs_rest":
        return x, np.where(digit == positive, 1.0, -1.0), digit
    if mode == "two_class":
        negative = check_int("negative", negative, low=0, high=9)
        if negative == positive:
            raise ValueError(f"negative must differ from positive={positive}, got {negative}")
        keep = (digit == positive) | (digit == negative)
        return x[keep], np.where(digit[keep] == positive, 1.0, -1.0), digit[keep]
    raise ValueError(f"mode must be 'one_vs_rest' or 'two_class', got {mode!r}")
