"""Sparsifiers: scaled rand-k (unbiased), top-k and thresholding (biased, deterministic).

Bits are counted as (index, value) pairs: nnz (ceil(log2 d) + 64) per row (Stich et al. 2018; the DoCoFL
paper compares against Rand-K/Top-K in Fig. 7 without counting rules, so we state ours).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..validation import check_int, check_nonnegative
from .base import as_rows, register_compressor, require_rng
from .entropy import FLOAT64_BITS, sparse_bits

__all__ = ["RandK", "TopK", "Threshold"]


def _check_k(k: int, d: int) -> None:
    if k > d:
        raise ValueError(f"k must be in [1, d] = [1, {d}], got k={k}")


def _row_mask(idx: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    mask = np.zeros(shape, dtype=bool)
    np.put_along_axis(mask, idx, True, axis=1)
    return mask


@register_compressor
@dataclass(frozen=True)
class RandK:
    """C(x) = (d/k) x restricted to k coordinates drawn uniformly without replacement (per row).

    Unbiased; E||C(x) - x||^2 = (d/k - 1) ||x||^2 exactly, so omega(d) = d/k - 1 (Stich et al. 2018; in the
    notation of Dorfman et al. 2023, Assumption 3.3, omega^2 = d/k - 1).
    """

    k: int = 1
    name: ClassVar[str] = "rand_k"
    unbiased: ClassVar[bool] = True
    deterministic: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_int("k", self.k, low=1))

    @classmethod
    def example(cls) -> "RandK":
        return cls(k=1)

    def omega(self, d: int) -> float:
        d = check_int("d", d, low=1)
        _check_k(self.k, d)
        return d / self.k - 1.0

    def alpha(self, d: int) -> float:
        raise NotImplementedError("scaled rand-k is unbiased, not contractive; use omega(d)")

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        rng = require_rng(rng, self.name)
        X = as_rows(X)
        m, d = X.shape
        _check_k(self.k, d)
        # k smallest of d iid uniforms per row = a uniform k-subset, drawn for all rows at once
        idx = np.argpartition(rng.random((m, d)), self.k - 1, axis=1)[:, : self.k]
        out = np.where(_row_mask(idx, (m, d)), X * (d / self.k), 0.0)
        return out, np.full(m, float(sparse_bits(self.k, d, FLOAT64_BITS)))

    def marginals(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X = as_rows(X)
        d = X.shape[1]
        _check_k(self.k, d)
        vals = np.stack([X * (d / self.k), np.zeros_like(X)], axis=-1)
        probs = np.stack([np.full(X.shape, self.k / d), np.full(X.shape, 1.0 - self.k / d)], axis=-1)
        return vals, probs


@register_compressor
@dataclass(frozen=True)
class TopK:
    """Keep the k largest-magnitude coordinates of each row (ties: numpy's argpartition order).

    Deterministic, biased; ||C(x) - x||^2 <= (1 - k/d) ||x||^2 (Stich et al. 2018, Lemma A.1): alpha = k/d.
    """

    k: int = 1
    name: ClassVar[str] = "top_k"
    unbiased: ClassVar[bool] = False
    deterministic: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_int("k", self.k, low=1))

    @classmethod
    def example(cls) -> "TopK":
        return cls(k=1)

    def omega(self, d: int) -> float:
        raise NotImplementedError("top-k is biased; use alpha(d)")

    def alpha(self, d: int) -> float:
        d = check_int("d", d, low=1)
        _check_k(self.k, d)
        return self.k / d

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        X = as_rows(X)
        m, d = X.shape
        _check_k(self.k, d)
        idx = np.argpartition(-np.abs(X), self.k - 1, axis=1)[:, : self.k]
        out = np.where(_row_mask(idx, (m, d)), X, 0.0)
        return out, np.full(m, float(sparse_bits(self.k, d, FLOAT64_BITS)))


@register_compressor
@dataclass(frozen=True)
class Threshold:
    """Hard thresholding: C(x)_j = x_j if |x_j| >= tau else 0 (deterministic, biased, data-dependent nnz).

    ||C(x) - x||^2 <= ||x||^2 is the only input-independent guarantee (all coordinates may fall below tau),
    so alpha(d) = 0: not contractive in the usual alpha > 0 sense.
    """

    tau: float = 0.1
    name: ClassVar[str] = "threshold"
    unbiased: ClassVar[bool] = False
    deterministic: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "tau", check_nonnegative("tau", self.tau))

    @classmethod
    def example(cls) -> "Threshold":
        return cls(tau=0.1)

    def omega(self, d: int) -> float:
        raise NotImplementedError("thresholding is biased; use alpha(d)")

    def alpha(self, d: int) -> float:
        check_int("d", d, low=1)
        return 0.0

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        X = as_rows(X)
        keep = np.abs(X) >= self.tau
        nnz = keep.sum(axis=1)
        return np.where(keep, X, 0.0), sparse_bits(nnz, X.shape[1], FLOAT64_BITS).astype(np.float64)
