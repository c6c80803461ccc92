"""The compressor contract.

A compressor maps stacked rows ``X`` of shape ``(m, d)`` (one row per client, or a single row) to
``(X_hat, bits)`` where ``bits`` has shape ``(m,)``: the number of bits needed to transmit each row as the
compressor's paper counts it. Randomised compressors take an explicit generator.

Declared properties are *claims*, verified by the tests, never trusted:

* ``unbiased``: E[C(x)] = x for every x;
* ``omega(d)``: for unbiased compressors, E||C(x) - x||^2 <= omega ||x||^2 for every x in R^d
  (DoCoFL writes this constant as omega^2; we always store the variance constant itself);
* ``alpha(d)``: for contractive (biased) compressors, ||C(x) - x||^2 <= (1 - alpha) ||x||^2
  (in expectation for randomised ones);
* ``deterministic``: C does not use the generator.
"""
from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

COMPRESSORS: dict[str, type] = {}


@runtime_checkable
class Compressor(Protocol):
    name: ClassVar[str]
    unbiased: ClassVar[bool]
    deterministic: ClassVar[bool]

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Return (X_hat, bits) for stacked rows X of shape (m, d)."""
        ...

    def omega(self, d: int) -> float:
        """Variance constant for unbiased compressors (raise NotImplementedError if biased)."""
        ...

    def alpha(self, d: int) -> float:
        """Contraction constant for biased compressors (raise NotImplementedError if not contractive)."""
        ...


def register_compressor(cls: type) -> type:
    """Class decorator adding a compressor to the registry that the generic compressor tests iterate over.

    The class must provide an ``example()`` classmethod returning a valid instance.
    """
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__} needs a class attribute `name`")
    if name in COMPRESSORS and COMPRESSORS[name] is not cls:
        raise ValueError(f"compressor name {name!r} registered twice")
    COMPRESSORS[name] = cls
    return cls


def require_rng(rng: np.random.Generator | None, name: str) -> np.random.Generator:
    """Randomised compressors need an explicit generator (same seed => same output)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{name} is randomised: pass rng=np.random.Generator, got {type(rng).__name__}")
    return rng


def as_rows(X: np.ndarray, name: str = "X") -> np.ndarray:
    """Validate the input of ``compress``: a finite, non-empty float array of shape (m, d) (a 1-D vector is
    treated as one row)."""
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real array of shape (m, d) or (d,), got {type(X).__name__}") from None
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"{name} must have shape (m, d) or (d,), got {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return arr
