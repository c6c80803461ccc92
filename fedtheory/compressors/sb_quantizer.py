"""The (s, b)-stochastic block quantizer of OFedIQ (Kwon, Park & Hong, Definition 2, eqs. (12)-(13)).

The index set {1, ..., D} is split into b contiguous blocks I_1, ..., I_b of near-equal size (``np.array_split``:
the first D mod b blocks hold ceil(D/b) coordinates, the rest floor(D/b)). For i in I_l, with r_i = |u_i| / ||u_{I_l}||
and m_i = min(floor(s r_i), s - 1) (eq. 12's integer with r_i in [m_i/s, (m_i+1)/s]),

    Q(u)_i = ||u_{I_l}|| sign(u_i) xi_i,   xi_i = (m_i + 1)/s  w.p. s r_i - m_i,   m_i/s otherwise,

independently over i; a block with zero norm maps to zero. b = 1 is s-level QSGD (Alistarh et al. 2017);
b = D is lossless. Bits per vector (eq. 13, log base 2): q = 32 b + D (1 + log2(s + 1)).

Exact variance (two-point xi_i with mean r_i):
    E||Q(u) - u||^2 = sum_l ||u_{I_l}||^2 sum_{i in I_l} (r_i - m_i/s) ((m_i + 1)/s - r_i),
bounded by the paper's sigma_q^2 ||u||^2 with sigma_q^2 = min(ceil(D/b)/s^2, sqrt(ceil(D/b))/s).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..validation import check_int
from .base import as_rows, register_compressor, require_rng

__all__ = ["SBQuantizer", "sb_bits", "sb_sigma2"]

#: The paper counts one real number as 32 bits (Section 3.2, Table I).
PAPER_FLOAT_BITS = 32


def _check_sb(s: int, b: int, D: int | None = None) -> tuple[int, int]:
    s = check_int("s", s, low=1)
    b = check_int("b", b, low=1)
    if D is not None:
        D = check_int("D", D, low=1)
        if b > D:
            raise ValueError(f"b must be in [1, D] = [1, {D}], got {b}")
    return s, b


def sb_bits(D: int, s: int, b: int) -> float:
    """Bits of one quantized D-vector, q = 32 b + D (1 + log2(s + 1)) (OFedIQ eq. (13), Table I)."""
    s, b = _check_sb(s, b, D)
    return float(PAPER_FLOAT_BITS * b + D * (1.0 + math.log2(s + 1)))


def sb_sigma2(D: int, s: int, b: int) -> float:
    """The paper's relative-variance constant sigma_q^2 = min(ceil(D/b)/s^2, sqrt(ceil(D/b))/s) (Sec. 3.3)."""
    s, b = _check_sb(s, b, D)
    n = -(-D // b)
    return float(min(n / s**2, math.sqrt(n) / s))


@register_compressor
@dataclass(frozen=True)
class SBQuantizer:
    """(s, b)-stochastic quantizer Q_{s,b} (OFedIQ Definition 2); unbiased, omega(D) = sigma_q^2.

    ``s`` is the number of levels per entry, ``b`` the number of blocks; b must lie in [1, D] for the
    dimension D of the rows it is applied to (checked in :meth:`compress` and :meth:`omega`).
    """

    s: int = 3
    b: int = 1
    name: ClassVar[str] = "sb_quantizer"
    unbiased: ClassVar[bool] = True
    deterministic: ClassVar[bool] = False

    def __post_init__(self) -> None:
        s, b = _check_sb(self.s, self.b)
        object.__setattr__(self, "s", s)
        object.__setattr__(self, "b", b)

    @classmethod
    def example(cls) -> "SBQuantizer":
        # b = 1 keeps the example valid for every dimension D >= 1 that generic tests may use.
        return cls(s=3, b=1)

    # ----- constants -----
    def omega(self, d: int) -> float:
        """sigma_q^2 = min(ceil(d/b)/s^2, sqrt(ceil(d/b))/s): E||Q(u)-u||^2 <= omega ||u||^2."""
        return sb_sigma2(check_int("d", d, low=1), self.s, self.b)

    def alpha(self, d: int) -> float:
        raise NotImplementedError("the (s,b) quantizer is unbiased, not contractive; use omega(d)")

    def bits(self, d: int) -> float:
        """q = 32 b + d (1 + log2(s + 1)) bits per quantized vector."""
        return sb_bits(d, self.s, self.b)

    # ----- the quantizer -----
    def _rows(self, X: np.ndarray) -> np.ndarray:
        arr = as_rows(X)
        if self.b > arr.shape[1]:
            raise ValueError(f"b must be in [1, D] = [1, {arr.shape[1]}], got {self.b}")
        return arr

    def blocks(self, D: int) -> np.ndarray:
        """Block index of every coordinate, shape (D,) (contiguous, sizes differ by at most one)."""
        sizes = np.full(self.b, D // self.b, dtype=np.int64)
        sizes[: D % self.b] += 1
        return np.repeat(np.arange(self.b), sizes)

    def decompose(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The deterministic part of eq. (12): (block_norm, r, m, p_up), each of shape (m_rows, D).

        Q(u)_i = block_norm_i sign(u_i) (m_i + B_i)/s with B_i ~ Bernoulli(p_up_i), p_up_i = s r_i - m_i.
        """
        X = self._rows(X)
        D = X.shape[1]
        block = self.blocks(D)
        starts = np.concatenate(([0], np.flatnonzero(np.diff(block)) + 1))
        # rows whose squares would under/overflow (|x| < 1e-150 or > 1e150) are rescaled by max|x| first;
        # other rows are computed exactly as before (bitwise unchanged)
        c = np.max(np.abs(X), axis=1, keepdims=True)
        c = np.where((c > 0) & ((c < 1e-150) | (c > 1e150)), c, 1.0)
        norms = c * np.sqrt(np.add.reduceat((X / c) ** 2, starts, axis=1))[:, block]
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.where(norms > 0, np.abs(X) / np.where(norms > 0, norms, 1.0), 0.0)
        r = np.minimum(r, 1.0)  # |u_i| <= ||u_I|| up to rounding
        m = np.minimum(np.floor(self.s * r), self.s - 1)
        p_up = np.clip(self.s * r - m, 0.0, 1.0)
        return norms, r, m, p_up

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Return (Q(X), bits) row-wise; one uniform draw per coordinate, all drawn before the update."""
        rng = require_rng(rng, self.name)
        X = self._rows(X)
        U = rng.random(X.shape)
        return self.apply(X, U), np.full(X.shape[0], self.bits(X.shape[1]))

    def apply(self, X: np.ndarray, U: np.ndarray) -> np.ndarray:
        """Deterministic quantization given uniforms U in [0,1) of X's shape (round up iff U < p_up)."""
        norms, _, m, p_up = self.decompose(X)
        X = self._rows(X)
        return norms * np.sign(X) * (m + (U < p_up)) / self.s

    def variance(self, X: np.ndarray) -> np.ndarray:
        """Exact E||Q(u) - u||^2 per row: sum_i ||u_I||^2 (r_i - m_i/s)((m_i+1)/s - r_i)."""
        norms, r, m, _ = self.decompose(X)
        terms = norms**2 * (r - m / self.s) * ((m + 1) / self.s - r)
        return np.maximum(terms, 0.0).sum(axis=1)
