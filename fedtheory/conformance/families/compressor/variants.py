"""Compressors through the contract (fedtheory's QSGD, rand-k, top-k behind one object) with ``slip`` options
that break the scaling or the declarations."""
from __future__ import annotations

import numpy as np

from ....compressors import QSGD, RandK, TopK
from ...kit import Variant

__all__ = ["Compressor", "TEXTBOOK", "WRONG", "CORRECT"]


class Compressor:
    """A compressor through the contract: wraps fedtheory's QSGD / rand-k / top-k (rows -> one vector) and
    declares omega, unbiasedness and bits; the slips break the scaling or the declarations."""

    def __init__(self, kind: str = "qsgd", *, s: int = 4, k_frac: float = 0.5, slip: str | None = None) -> None:
        self.kind, self.s, self.k_frac, self.slip = kind, s, k_frac, slip
        self.unbiased = kind != "topk" or slip == "topk_claims_unbiased"

    def _impl(self, d: int):
        k = max(1, int(round(self.k_frac * d)))
        return {"qsgd": QSGD(s=self.s), "randk": RandK(k=k), "topk": TopK(k=k)}[self.kind]

    def omega(self, d: int) -> float:
        if self.kind == "topk":
            return 0.0
        w = self._impl(d).omega(d)
        return w / 2 if self.slip == "omega_halved" else w

    def compress(self, x: np.ndarray, rng: np.random.Generator):
        d = x.size
        impl = self._impl(d)
        if self.slip == "qsgd_no_norm":  # levels of x/||x|| sent without multiplying back by ||x||
            nrm = np.linalg.norm(x)
            y, bits = impl.compress((x / nrm if nrm > 0 else x)[None, :], rng)
            return y[0], float(bits[0])
        y, bits = impl.compress(x[None, :], rng)
        y = y[0]
        if self.slip == "randk_unscaled":
            k = max(1, int(round(self.k_frac * d)))
            y = y * k / d
        if self.slip == "bits_nnz":  # one bit per non-zero: forgets the norm and the levels
            return y, float(np.count_nonzero(y))
        return y, float(bits[0])


TEXTBOOK = Compressor("qsgd")
WRONG: list[Variant] = [
    Variant("compressor", "qsgd_no_norm", Compressor("qsgd", slip="qsgd_no_norm")),
    Variant("compressor", "randk_unscaled", Compressor("randk", slip="randk_unscaled")),
    Variant("compressor", "omega_halved", Compressor("randk", slip="omega_halved")),
    Variant("compressor", "topk_claims_unbiased", Compressor("topk", slip="topk_claims_unbiased")),
    Variant("compressor", "bits_nnz", Compressor("qsgd", slip="bits_nnz")),
]
#: fedtheory's QSGD is the accepted side (``native.py``); the power set adds no other correct compressor.
CORRECT: list[Variant] = []
