"""Test compressors with exactly known constants: identity, zero, and scaled Rademacher noise.

* :class:`Identity`: C(x) = x (omega = 0): DoCoFL with identity compressors is FedAvg/SGD (Cor. 3.5).
* :class:`Zero`: C(x) = 0, NMSE exactly 1 ("ignoring the correction", DoCoFL App. G.3).
* :class:`ScaledRademacher`: C(x) = x (1 + w s), s = +-1 uniform (one sign per row, or per coordinate):
  unbiased and E||C(x) - x||^2 = w^2 ||x||^2 with equality in Dorfman et al. 2023, Assumption 3.3 (a test
  compressor, not from the paper). ``scale`` is the paper's omega (amplitude); the registry's variance
  constant is omega(d) = scale^2.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..validation import check_bool, check_int, check_nonnegative
from .base import as_rows, register_compressor, require_rng
from .entropy import FLOAT64_BITS

__all__ = ["Identity", "Zero", "ScaledRademacher", "nmse_constant"]


def nmse_constant(compressor: object, d: int) -> float:
    """The constant c with E||C(x) - x||^2 <= c ||x||^2 (DoCoFL Assumption 3.3 reads c = omega_paper^2):
    omega(d) for unbiased compressors, 1 - alpha(d) for contractive ones."""
    if getattr(compressor, "unbiased", False):
        return float(compressor.omega(d))
    return 1.0 - float(compressor.alpha(d))


@register_compressor
@dataclass(frozen=True)
class Identity:
    """C(x) = x; sent as d float64 values."""

    name: ClassVar[str] = "identity"
    unbiased: ClassVar[bool] = True
    deterministic: ClassVar[bool] = True

    @classmethod
    def example(cls) -> "Identity":
        return cls()

    def omega(self, d: int) -> float:
        check_int("d", d, low=1)
        return 0.0

    def alpha(self, d: int) -> float:
        check_int("d", d, low=1)
        return 1.0

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        X = as_rows(X)
        return X.copy(), np.full(X.shape[0], float(FLOAT64_BITS * X.shape[1]))


@register_compressor
@dataclass(frozen=True)
class Zero:
    """C(x) = 0: biased, ||C(x) - x||^2 = ||x||^2 (alpha = 0), zero bits."""

    name: ClassVar[str] = "zero"
    unbiased: ClassVar[bool] = False
    deterministic: ClassVar[bool] = True

    @classmethod
    def example(cls) -> "Zero":
        return cls()

    def omega(self, d: int) -> float:
        raise NotImplementedError("the zero compressor is biased; use alpha(d)")

    def alpha(self, d: int) -> float:
        check_int("d", d, low=1)
        return 0.0

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        X = as_rows(X)
        return np.zeros_like(X), np.zeros(X.shape[0])


@register_compressor
@dataclass(frozen=True)
class ScaledRademacher:
    """C(x) = x (1 + scale s), s uniform on {-1, +1} (per row, or per coordinate if ``per_coordinate``).

    Unbiased; E||C(x) - x||^2 = scale^2 ||x||^2 exactly. Sent as d float64 values (it is a test device,
    not a practical compressor).
    """

    scale: float = 0.5
    per_coordinate: bool = False
    name: ClassVar[str] = "scaled_rademacher"
    unbiased: ClassVar[bool] = True
    deterministic: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_nonnegative("scale", self.scale))
        check_bool("per_coordinate", self.per_coordinate)

    @classmethod
    def example(cls) -> "ScaledRademacher":
        return cls(scale=0.5)

    def omega(self, d: int) -> float:
        check_int("d", d, low=1)
        return self.scale**2

    def alpha(self, d: int) -> float:
        raise NotImplementedError("scaled Rademacher noise is unbiased, not contractive; use omega(d)")

    def signs(self, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
        """The random signs, shape (m, 1) or (m, d)."""
        m, d = shape
        return rng.choice(np.array([-1.0, 1.0]), size=(m, d if self.per_coordinate else 1))

    def apply(self, X: np.ndarray, signs: np.ndarray) -> np.ndarray:
        """Deterministic part: X (1 + scale * signs)."""
        return as_rows(X) * (1.0 + self.scale * signs)

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        rng = require_rng(rng, self.name)
        X = as_rows(X)
        return self.apply(X, self.signs(X.shape, rng)), np.full(X.shape[0], float(FLOAT64_BITS * X.shape[1]))

    def marginals(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X = as_rows(X)
        vals = np.stack([X * (1.0 - self.scale), X * (1.0 + self.scale)], axis=-1)
        return vals, np.full(X.shape + (2,), 0.5)
