"""ECUQ: Entropy-Constrained Uniform Quantization (Dorfman et al. 2023, DoCoFL App. D, Alg. 4).

For a row x with range [x_min, x_max] and K levels, Delta = (x_max - x_min)/K and the quantization values are
the bin centres Q_K = {x_min + (k + 1/2) Delta : k = 0..K-1}; x_hat(i) is the nearest centre (deterministic).
Starting from K0 = floor(2^b) (the paper's 2^b, floored so a non-integer budget such as b = 1.5 works), if the
empirical entropy H(x_hat) < b - eps, a double binary search (exponential growth K0 + 2^p, then bisection)
looks for K with b - eps <= H <= b. The result is Huffman coded.

Edge cases the paper leaves open (Dorfman et al. 2023, App. D, Alg. 4), resolved here by fedtheory:
* a constant row (Delta = 0) is sent exactly (one value, H = 0);
* the entropy cannot exceed that of the row's distinct values, reached once Delta is below the smallest gap
  between distinct values (K_cap = floor(range / gap) + 1 bins); the exponential phase is capped there, so
  the search always terminates. If even K_cap gives H < b - eps the budget is not achievable: ``strict=True``
  raises ValueError, the default returns the K_cap quantization (H <= b still holds);
* K is also capped where Delta would fall below 64 ulps of max|x| (finer bins are not representable), so
  the error bound reads |x_hat - x| <= Delta/2 + a few ulps of max|x| in floating point;
* entropy is not exactly monotone in K, so bisection can end without hitting [b - eps, b]; we then return
  the largest K seen with H <= b (fedtheory's fallback).

Invariants (tested): values on the grid Q_K, |x_hat(i) - x(i)| <= Delta/2, K >= floor(2^b), H <= b, and the
Huffman length L satisfies H <= L < H + 1. All rows are searched simultaneously (vectorised over rows).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from ..validation import check_int, check_real
from .base import as_rows, register_compressor
from .entropy import FLOAT64_BITS, empirical_entropy, huffman_average_length
from .quantizers import rescale_extreme_rows

__all__ = ["ECUQ", "ECUQResult", "ecuq_quantize"]

#: Side information per row: x_min and Delta as float64 plus K as a 32-bit integer (the paper ignores it).
ECUQ_HEADER_BITS = 2 * FLOAT64_BITS + 32


class ECUQResult(NamedTuple):
    """Per-row outcome of the level search (all arrays of shape (m,))."""

    x_hat: np.ndarray        # (m, d) quantized rows
    index: np.ndarray        # (m, d) bin index in [0, K-1]
    levels: np.ndarray       # K per row
    delta: np.ndarray        # bin width per row
    entropy: np.ndarray      # empirical entropy (bits/coordinate) of the output
    in_window: np.ndarray    # True when b - eps <= H <= b
    iterations: np.ndarray   # entropy evaluations performed by the search


def ecuq_quantize(X: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nearest-centre quantization of each row to K[r] uniform bins: returns (x_hat, index, delta)."""
    X, c = rescale_extreme_rows(as_rows(X))   # homogeneous: rows near the float limits at unit scale
    K = np.asarray(K, dtype=np.int64).reshape(-1, 1)
    lo = X.min(axis=1, keepdims=True)
    width = X.max(axis=1, keepdims=True) - lo
    delta = width / K
    # the bin containing x is the nearest bin centre; x_max falls in the last bin (same formula as the search)
    index = _bin_index(X, lo, width, K)
    x_hat = np.where(delta > 0, lo + (index + 0.5) * delta, X)
    return c * x_hat, index, (c * delta)[:, 0]


def _bin_index(X: np.ndarray, lo: np.ndarray, width: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Bin index in [0, K-1] of every value (the search needs only this, not x_hat); rows with zero range -> 0."""
    # divide by the width first: 1/width overflows for subnormal ranges
    t = np.where(width > 0, (X - lo) / np.where(width > 0, width, 1.0), 0.0)
    index = np.floor(t * K.reshape(-1, 1)).astype(np.int64)
    np.minimum(index, K.reshape(-1, 1) - 1, out=index)
    np.maximum(index, 0, out=index)
    return index


def _level_cap(X: np.ndarray) -> np.ndarray:
    """Smallest K per row at which every distinct value has its own bin (1 for constant rows)."""
    S = np.sort(X, axis=1)
    gaps = np.diff(S, axis=1)
    gaps = np.where(gaps > 0, gaps, np.inf)
    gap = gaps.min(axis=1) if X.shape[1] > 1 else np.full(X.shape[0], np.inf)
    rng = S[:, -1] - S[:, 0]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        cap = np.where(np.isfinite(gap), np.floor(rng / np.where(np.isfinite(gap), gap, 1.0)) + 1, 1)
    # bins narrower than ~64 ulps of the largest magnitude are not representable: their centres would round
    # by more than Delta/2, so the search never goes finer than that
    maxabs = np.max(np.abs(S), axis=1)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        fp_cap = np.where(maxabs > 0, np.floor(rng / (64 * np.spacing(np.where(maxabs > 0, maxabs, 1.0)))), 1)
    cap = np.minimum(np.minimum(cap, np.maximum(fp_cap, 1)), 2.0**62)
    return np.minimum(cap, 2.0**62).astype(np.int64)


def _index_entropy(index: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Empirical entropy (bits) of each row's bin indices in [0, K_r): O(d) bincount when the K's are small
    enough to allocate, else the sort-based :func:`empirical_entropy`."""
    m, d = index.shape
    K = np.asarray(K, dtype=np.int64).reshape(-1)
    if int(K.sum()) > 4 * m * d + 1024:
        return empirical_entropy(index)
    offsets = np.concatenate(([0], np.cumsum(K)[:-1]))
    counts = np.bincount((index + offsets[:, None]).ravel(), minlength=int(K.sum()))
    rows = np.repeat(np.arange(m), K)
    nz = counts > 0
    p = counts[nz] / d
    return np.maximum(-np.bincount(rows[nz], weights=p * np.log2(p), minlength=m), 0.0)


@register_compressor
@dataclass(frozen=True)
class ECUQ:
    """Entropy-constrained uniform quantization with a budget of ``b`` bits per coordinate (Alg. 4).

    Deterministic and biased. ``coding="huffman"`` counts d L bits (L = Huffman average length, as the paper
    encodes); ``"entropy"`` counts the ideal d H. Both add ``ECUQ_HEADER_BITS`` per row.
    """

    b: float = 2.0
    eps: float = 0.1
    strict: bool = False
    coding: str = "huffman"
    name: ClassVar[str] = "ecuq"
    unbiased: ClassVar[bool] = False
    deterministic: ClassVar[bool] = True

    def __post_init__(self) -> None:
        b = check_real("b", self.b, low=0.0, low_open=True, high=60.0)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=0.0, high=b))
        if not isinstance(self.strict, (bool, np.bool_)):
            raise TypeError("strict must be a bool")
        if self.coding not in ("huffman", "entropy"):
            raise ValueError(f"coding must be 'huffman' or 'entropy', got {self.coding!r}")

    @classmethod
    def example(cls) -> "ECUQ":
        return cls(b=2.0)

    @property
    def initial_levels(self) -> int:
        """K0 = floor(2^b) >= 1."""
        return max(1, int(math.floor(2.0**self.b)))

    def omega(self, d: int) -> float:
        raise NotImplementedError("ECUQ is deterministic and biased; use alpha(d)")

    def alpha(self, d: int) -> float:
        """|error| <= Delta/2 <= range/(2 K0) per coordinate and range^2 <= 2||x||^2, so
        ||C(x) - x||^2 <= d/(2 K0^2) ||x||^2; contractive when that constant is < 1."""
        d = check_int("d", d, low=1)
        c = d / (2.0 * self.initial_levels**2)
        if c >= 1.0:
            raise NotImplementedError(f"no contraction guarantee for d={d}, b={self.b}: d/(2 K0^2) >= 1")
        return 1.0 - c

    def search(self, X: np.ndarray) -> ECUQResult:
        """Alg. 4 with its DOUBLE_BINARY_SEARCH_NUM_QUANTIZATION_LEVELS, run on all rows at once."""
        # ECUQ is positively homogeneous: rows near the float limits are searched at unit scale
        X, c = rescale_extreme_rows(as_rows(X))
        res = self._search(X)
        if np.all(c == 1.0):
            return res
        return res._replace(x_hat=c * res.x_hat, delta=c[:, 0] * res.delta)

    def _search(self, X: np.ndarray) -> ECUQResult:
        m = X.shape[0]
        b, eps = self.b, self.eps
        K0 = self.initial_levels
        cap = _level_cap(X)
        lo = X.min(axis=1, keepdims=True)
        width = X.max(axis=1, keepdims=True) - lo
        H0 = _index_entropy(_bin_index(X, lo, width, np.full(m, K0)), np.full(m, K0))
        iterations = np.ones(m, dtype=np.int64)
        K = np.full(m, K0, dtype=np.int64)          # result (returned or fallback)
        best = np.full(m, K0, dtype=np.int64)       # largest K seen with H <= b (H(K0) <= log2 K0 <= b)
        in_window = H0 >= b - eps
        active = (~in_window) & (cap > K0)
        low = np.full(m, K0, dtype=np.int64)
        high = np.full(m, -1, dtype=np.int64)       # -1 encodes high = infinity
        p = np.full(m, -1, dtype=np.int64)
        while np.any(active):
            rows = np.flatnonzero(active)
            growing = high[rows] < 0
            p[rows] += growing
            expo = np.minimum(K0 + np.left_shift(np.int64(1), np.minimum(p[rows], 62)), cap[rows])
            mid = np.where(growing, expo, (low[rows] + high[rows]) // 2)
            H = _index_entropy(_bin_index(X[rows], lo[rows], width[rows], mid), mid)
            iterations[rows] += 1
            ok = H <= b
            best[rows] = np.where(ok & (mid > best[rows]), mid, best[rows])
            too_high = H > b
            too_low = H < b - eps
            hit = ~too_high & ~too_low
            high[rows] = np.where(too_high, mid - 1, high[rows])
            low[rows] = np.where(too_low, mid + 1, low[rows])
            K[rows] = np.where(hit, mid, K[rows])
            in_window[rows] |= hit
            # all distinct values separated and still below b - eps: nothing larger can help
            exhausted = too_low & growing & (mid >= cap[rows])
            crossed = (high[rows] >= 0) & (low[rows] > high[rows])
            active[rows] = ~(hit | exhausted | crossed)
        K = np.where(in_window, K, best)
        x_hat, index, delta = ecuq_quantize(X, K)
        H = _index_entropy(index, K)
        if self.strict and np.any(H < b - eps):
            r = int(np.flatnonzero(H < b - eps)[0])
            raise ValueError(f"b={b} not achievable for row {r}: its maximal empirical entropy is {H[r]:.4f} "
                             f"< b - eps = {b - eps} (use strict=False to accept the lower-entropy result)")
        return ECUQResult(x_hat, index, K, delta, H, (H >= b - eps) & (H <= b), iterations)

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        res = self.search(X)
        d = res.x_hat.shape[1]
        per_coord = huffman_average_length(res.index) if self.coding == "huffman" else res.entropy
        return res.x_hat, d * per_coord + ECUQ_HEADER_BITS
