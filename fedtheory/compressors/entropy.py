"""Entropy and bit accounting shared by the compressors, DoCoFL (ECUQ) and FedElasticNet.

* :func:`symbol_counts` / :func:`empirical_entropy`: the empirical (plug-in) Shannon entropy, in bits per
  element, of the values of each row of a stacked array, H(x) = -sum_q p(q) log2 p(q) with
  p(q) = #{j : x_j = q} / d (DoCoFL App. D, Alg. 4 line 5-6; the paper's 1/N is a typo for 1/d).
* :func:`binned_entropy`: the entropy of values discretised with a bin size (FedElasticNet Sec. 5:
  "entropy of discretized values with the bin size of 0.01"); q_j = round(v_j / bin) (or floor).
* :func:`huffman_average_length`: the average code length L (bits per element) of a Huffman code built for
  each row's empirical distribution; H <= L < H + 1 (Cover & Thomas, Thm 5.4.1 and 5.8.1).
* Bit accounting helpers: dense float vectors, sparse (index, value) payloads, Elias-gamma integers.

All functions are vectorised over rows (no Python loop over rows) except the Huffman construction, whose
cost is O(K log K) per row in the number K of distinct symbols (a heap merge has no array form).
"""
from __future__ import annotations

import heapq
import math

import numpy as np

from ..validation import check_int, check_positive
from .base import as_rows

__all__ = [
    "FLOAT64_BITS", "FLOAT32_BITS", "symbol_counts", "empirical_entropy", "binned_entropy", "bin_values",
    "entropy_from_counts", "huffman_lengths", "huffman_average_length", "dense_bits", "sparse_bits",
    "index_bits", "elias_gamma_bits",
]

FLOAT64_BITS = 64
FLOAT32_BITS = 32


def symbol_counts(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts of the distinct values of every row, vectorised.

    Returns ``(row, value, count)``: flat arrays over all (row, distinct value) pairs, sorted by row then
    value. Values are compared exactly (quantised data has exact repeats).
    """
    S = np.sort(as_rows(X), axis=1)
    m, d = S.shape
    new = np.ones((m, d), dtype=bool)
    new[:, 1:] = S[:, 1:] != S[:, :-1]
    flat_new = new.ravel()
    starts = np.flatnonzero(flat_new)
    counts = np.diff(np.append(starts, m * d))
    return starts // d, S.ravel()[starts], counts


def entropy_from_counts(counts: np.ndarray) -> float:
    """Entropy (bits) of the distribution proportional to ``counts`` (non-negative, not all zero)."""
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 1 or c.size == 0 or np.any(c < 0) or c.sum() <= 0:
        raise ValueError("counts must be a non-empty 1-D array of non-negative numbers with positive sum")
    p = c[c > 0] / c.sum()
    return float(max(0.0, -np.sum(p * np.log2(p))))


def empirical_entropy(X: np.ndarray) -> np.ndarray:
    """Plug-in entropy in bits per element of each row's values: shape ``(m,)`` (a 1-D input gives ``(1,)``).

    H(x) = -sum_q p(q) log2 p(q),  p(q) = #{j : x_j = q} / d.   (DoCoFL App. D, Alg. 4.)
    """
    arr = as_rows(X)
    m, d = arr.shape
    rows, _, counts = symbol_counts(arr)
    p = counts / d
    H = -np.bincount(rows, weights=p * np.log2(p), minlength=m)
    # -sum p log p of a single symbol is exactly 0, but rounding can give -0.0 / tiny negatives
    return np.maximum(H, 0.0)


def bin_values(X: np.ndarray, bin_size: float = 0.01, rounding: str = "round") -> np.ndarray:
    """Integer bin index of every value: round(v / bin_size) (``rounding="round"``) or floor(v / bin_size).

    FedElasticNet (Kim et al., Section 4) bins transmitted values at 0.01 only to measure entropy; round vs
    floor is not stated in the paper, hence the option.
    """
    bin_size = check_positive("bin_size", bin_size)
    arr = as_rows(X)
    if rounding == "round":
        return np.rint(arr / bin_size)
    if rounding == "floor":
        return np.floor(arr / bin_size)
    raise ValueError(f"rounding must be 'round' or 'floor', got {rounding!r}")


def binned_entropy(X: np.ndarray, bin_size: float = 0.01, rounding: str = "round") -> np.ndarray:
    """Entropy in bits per element of each row after discretising at ``bin_size``: shape ``(m,)``.

    H = -sum_j p_j log2 p_j with p_j the frequency of bin j among the d entries (Kim et al., Section 4; per
    element and per vector is fedtheory's reading, the paper does not say). Pooling several clients = pass their
    concatenation as one row.
    """
    return empirical_entropy(bin_values(X, bin_size, rounding))


def huffman_lengths(counts: np.ndarray) -> np.ndarray:
    """Codeword lengths of a binary Huffman code for symbol frequencies ``counts`` (positive).

    A single symbol gets length 0: the decoder learns it from the code table (so that H <= L < H + 1
    holds with H = 0). Ties are broken by insertion order, so the result is deterministic.
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 1 or c.size == 0 or np.any(c <= 0) or not np.all(np.isfinite(c)):
        raise ValueError("counts must be a non-empty 1-D array of positive finite numbers")
    k = c.size
    lengths = np.zeros(k, dtype=np.int64)
    if k == 1:
        return lengths
    # heap items: (weight, tie-breaker, list of leaf indices below this node)
    heap = [(float(w), i, [i]) for i, w in enumerate(c)]
    heapq.heapify(heap)
    tie = k
    while len(heap) > 1:
        w1, _, l1 = heapq.heappop(heap)
        w2, _, l2 = heapq.heappop(heap)
        leaves = l1 + l2
        lengths[leaves] += 1
        heapq.heappush(heap, (w1 + w2, tie, leaves))
        tie += 1
    return lengths


def _huffman_cost(counts: np.ndarray) -> float:
    """Sum over merges of the merged weight = sum_q count(q) * length(q) (no tree needed)."""
    if counts.size <= 1:
        return 0.0
    heap = [int(c) for c in counts]
    heapq.heapify(heap)
    total = 0
    while len(heap) > 1:
        a = heapq.heappop(heap)
        b = heapq.heappop(heap)
        total += a + b
        heapq.heappush(heap, a + b)
    return float(total)


def huffman_average_length(X: np.ndarray) -> np.ndarray:
    """Average Huffman code length (bits per element) of each row's values under its empirical
    distribution: L = sum_q p(q) len(q); satisfies H <= L < H + 1. Shape ``(m,)``."""
    arr = as_rows(X)
    m, d = arr.shape
    rows, _, counts = symbol_counts(arr)
    bounds = np.searchsorted(rows, np.arange(m + 1))
    return np.array([_huffman_cost(counts[bounds[r]:bounds[r + 1]]) / d for r in range(m)])


def dense_bits(d: int, value_bits: int = FLOAT64_BITS) -> int:
    """Bits of a dense vector of ``d`` values at ``value_bits`` each."""
    return check_int("d", d, low=1) * check_int("value_bits", value_bits, low=1)


def index_bits(d: int) -> int:
    """Bits to name one coordinate out of d: ceil(log2 d) (0 when d = 1)."""
    d = check_int("d", d, low=1)
    return int(math.ceil(math.log2(d))) if d > 1 else 0


def sparse_bits(nnz: np.ndarray | int, d: int, value_bits: int = FLOAT64_BITS) -> np.ndarray:
    """Bits of (index, value) pairs: nnz * (ceil(log2 d) + value_bits), elementwise in ``nnz``."""
    nnz_arr = np.asarray(nnz)
    if np.any(nnz_arr < 0) or np.any(nnz_arr > d):
        raise ValueError(f"nnz must be in [0, d={d}]")
    return nnz_arr * (index_bits(d) + check_int("value_bits", value_bits, low=1))


def elias_gamma_bits(n: np.ndarray | int) -> np.ndarray:
    """Length of the Elias-gamma code of positive integers n: 2 floor(log2 n) + 1 (Elias 1975)."""
    arr = np.asarray(n)
    if np.any(arr < 1):
        raise ValueError("elias_gamma_bits needs integers n >= 1")
    return 2 * np.floor(np.log2(arr)).astype(np.int64) + 1
