"""Scalar quantizers: s-level QSGD (l2-norm scaled) and uniform grids on [min x, max x].

* :class:`QSGD` (Alistarh et al. 2017, eq. (2)-(3); Lemma 3.1): C(x)_j = ||x|| sign(x_j) xi_j with
  xi_j in {m_j/s, (m_j+1)/s}, m_j = min(floor(s |x_j|/||x||), s-1), rounding up with probability
  s |x_j|/||x|| - m_j. Unbiased; E||C(x)-x||^2 <= min(d/s^2, sqrt(d)/s) ||x||^2. It is the b = 1 case of the
  OFedIQ (s,b) block quantizer (:mod:`fedtheory.compressors.sb_quantizer`), whose code it reuses.
* :class:`StochasticUniformQuantizer` / :class:`DeterministicUniformQuantizer`: L levels
  lo + k Delta, k = 0..L-1, Delta = (max x - min x)/(L-1), per row; stochastic (unbiased) rounding or
  nearest-level rounding. Standard test quantizers with known error constants (not defined in the papers).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..validation import check_int
from .base import as_rows, register_compressor, require_rng
from .entropy import FLOAT64_BITS
from .sb_quantizer import SBQuantizer

__all__ = ["QSGD", "StochasticUniformQuantizer", "DeterministicUniformQuantizer", "require_rng",
           "rescale_extreme_rows"]


def rescale_extreme_rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(X / c, c) per row with c = max|x| for rows beyond 1e-300..1e300 in magnitude (their ranges or squares
    over/underflow), c = 1 otherwise (those rows stay bitwise unchanged). Valid for positively homogeneous
    compressors, C(c x) = c C(x), such as uniform grids on [min x, max x] and ECUQ."""
    c = np.max(np.abs(X), axis=1, keepdims=True)
    c = np.where((c > 0) & ((c < 1e-300) | (c > 1e300)), c, 1.0)
    return X / c, c


@register_compressor
@dataclass(frozen=True)
class QSGD:
    """s-level QSGD with l2-norm scaling (Alistarh et al. 2017), unbiased.

    Bits per vector (fixed-length code, Alistarh et al. Sec. 3.1 without Elias coding):
    64 (the norm) + d (1 + ceil(log2(s + 1))) (a sign bit and the level in {0..s} per coordinate).
    """

    s: int = 4
    name: ClassVar[str] = "qsgd"
    unbiased: ClassVar[bool] = True
    deterministic: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "s", check_int("s", self.s, low=1))

    @classmethod
    def example(cls) -> "QSGD":
        return cls(s=4)

    @property
    def _block(self) -> SBQuantizer:
        return SBQuantizer(s=self.s, b=1)

    def omega(self, d: int) -> float:
        """min(d/s^2, sqrt(d)/s) (Alistarh et al. 2017, Lemma 3.1)."""
        d = check_int("d", d, low=1)
        return float(min(d / self.s**2, math.sqrt(d) / self.s))

    def alpha(self, d: int) -> float:
        raise NotImplementedError("QSGD is unbiased, not contractive; use omega(d)")

    def bits(self, d: int) -> float:
        return float(FLOAT64_BITS + check_int("d", d, low=1) * (1 + math.ceil(math.log2(self.s + 1))))

    @staticmethod
    def _scaled(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(X / c, c) with c = max_j |x_j| per row: C(c x) = c C(x), and ||x||^2 of a subnormal or a 1e200
        row would under/overflow without the rescaling."""
        c = np.max(np.abs(X), axis=1, keepdims=True)
        c = np.where(c > 0, c, 1.0)
        return X / c, c

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        rng = require_rng(rng, self.name)
        X = as_rows(X)
        U = rng.random(X.shape)
        Xs, c = self._scaled(X)
        return c * self._block.apply(Xs, U), np.full(X.shape[0], self.bits(X.shape[1]))

    def marginals(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-coordinate outcome values and probabilities, shapes (m, d, 2) (coordinates independent)."""
        Xs, c = self._scaled(as_rows(X))
        norms, _, m, p_up = self._block.decompose(Xs)
        sign = np.sign(Xs)
        vals = np.stack([c * (norms * sign * m / self.s), c * (norms * sign * (m + 1) / self.s)], axis=-1)
        return vals, np.stack([1.0 - p_up, p_up], axis=-1)

    def variance(self, X: np.ndarray) -> np.ndarray:
        """Exact E||C(x) - x||^2 per row."""
        Xs, c = self._scaled(as_rows(X))
        return c[:, 0] ** 2 * self._block.variance(Xs)


class _UniformGrid:
    """Shared implementation of the two uniform-grid quantizers (L levels spanning [min x, max x])."""

    levels: int

    def _check(self) -> None:
        object.__setattr__(self, "levels", check_int("levels", self.levels, low=2))

    def _grid(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(lo, delta, m, frac): x = lo + (m + frac) delta with m in [0, L-2], frac in [0, 1]."""
        lo = X.min(axis=1, keepdims=True)
        delta = (X.max(axis=1, keepdims=True) - lo) / (self.levels - 1)
        safe = np.where(delta > 0, delta, 1.0)
        hi = X.max(axis=1, keepdims=True)
        # snap the maximum onto the last level exactly: lo + (L-1) delta need not round back to hi
        t = np.where(delta > 0, np.where(X == hi, self.levels - 1.0, (X - lo) / safe), 0.0)
        m = np.clip(np.floor(t), 0, self.levels - 2)
        frac = np.clip(t - m, 0.0, 1.0)
        return lo, delta, m, frac

    def _omega_constant(self, d: int) -> float:
        # Only interior coordinates err (min and max are grid points), each by at most delta/2 (deterministic)
        # or with variance at most delta^2/4 (stochastic); (max-min)^2 <= 2(max^2 + min^2) <= 2||x||^2.
        d = check_int("d", d, low=1)
        return max(d - 2, 0) / (2.0 * (self.levels - 1) ** 2)

    def bits(self, d: int) -> float:
        """2 x 64 bits for (min, max) + d ceil(log2 L) bits for the level indices."""
        return float(2 * FLOAT64_BITS + check_int("d", d, low=1) * math.ceil(math.log2(self.levels)))

    def _finish(self, X: np.ndarray, lo: np.ndarray, delta: np.ndarray, level: np.ndarray) -> np.ndarray:
        # a constant row (delta = 0) is transmitted exactly by its one value; the top level is max x itself
        hi = X.max(axis=1, keepdims=True)
        return np.where(delta > 0, np.where(level >= self.levels - 1, hi, lo + level * delta), X)


@register_compressor
@dataclass(frozen=True)
class StochasticUniformQuantizer(_UniformGrid):
    """Unbiased stochastic rounding to L uniform levels on [min x, max x] (per row).

    C(x)_j = lo + (m_j + B_j) Delta, B_j ~ Bernoulli(frac_j): E C(x) = x and
    E||C(x) - x||^2 = Delta^2 sum_j frac_j (1 - frac_j) <= (d - 2)/(2 (L-1)^2) ||x||^2 =: omega(d) ||x||^2.
    """

    levels: int = 4
    name: ClassVar[str] = "uniform_stochastic"
    unbiased: ClassVar[bool] = True
    deterministic: ClassVar[bool] = False

    def __post_init__(self) -> None:
        self._check()

    @classmethod
    def example(cls) -> "StochasticUniformQuantizer":
        return cls(levels=4)

    def omega(self, d: int) -> float:
        return self._omega_constant(d)

    def alpha(self, d: int) -> float:
        raise NotImplementedError("stochastic uniform quantization is unbiased, not contractive; use omega(d)")

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        rng = require_rng(rng, self.name)
        X0 = as_rows(X)
        U = rng.random(X0.shape)
        X, c = rescale_extreme_rows(X0)
        lo, delta, m, frac = self._grid(X)
        return c * self._finish(X, lo, delta, m + (U < frac)), np.full(X.shape[0], self.bits(X.shape[1]))

    def marginals(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X, c = rescale_extreme_rows(as_rows(X))
        lo, delta, m, frac = self._grid(X)
        vals = np.stack([c * self._finish(X, lo, delta, m), c * self._finish(X, lo, delta, m + 1)], axis=-1)
        return vals, np.stack([1.0 - frac, frac], axis=-1)

    def variance(self, X: np.ndarray) -> np.ndarray:
        X, c = rescale_extreme_rows(as_rows(X))
        _, delta, _, frac = self._grid(X)
        return c[:, 0] ** 2 * (delta[:, 0] ** 2) * np.sum(frac * (1.0 - frac), axis=1)


@register_compressor
@dataclass(frozen=True)
class DeterministicUniformQuantizer(_UniformGrid):
    """Nearest-level rounding to L uniform levels on [min x, max x] (per row); biased, deterministic.

    |C(x)_j - x_j| <= Delta/2, hence ||C(x) - x||^2 <= c ||x||^2 with c = (d - 2)/(2 (L-1)^2); contractive with
    alpha = 1 - c only when c < 1 (otherwise e.g. x = (-1, 1, 0, ..., 0) with L = 2 has error d - 2 > ||x||^2).
    """

    levels: int = 16
    name: ClassVar[str] = "uniform_deterministic"
    unbiased: ClassVar[bool] = False
    deterministic: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self._check()

    @classmethod
    def example(cls) -> "DeterministicUniformQuantizer":
        return cls(levels=16)

    def omega(self, d: int) -> float:
        raise NotImplementedError("deterministic uniform quantization is biased; use alpha(d)")

    def alpha(self, d: int) -> float:
        c = self._omega_constant(d)
        if c >= 1.0:
            raise NotImplementedError(f"not contractive for d={d}, levels={self.levels}: (d-2)/(2(L-1)^2) >= 1")
        return 1.0 - c

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        X, c = rescale_extreme_rows(as_rows(X))
        lo, delta, m, frac = self._grid(X)
        return c * self._finish(X, lo, delta, m + (frac >= 0.5)), np.full(X.shape[0], self.bits(X.shape[1]))
