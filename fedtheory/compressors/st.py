"""Sparse ternary compression ST (Ma et al., "Towards Heterogeneous Clients with Elastic Federated Learning",
Alg. 2; the same operator as Sattler et al. 2019's STC).

For a row T in R^d and sparsity q in (0, 1]:

    k = max(floor(d q), 1)
    S = indices of the k largest |T_i|          (exactly k of them; ties broken by index order)
    mu = (1/k) sum_{i in S} |T_i|               (the mean kept magnitude)
    ST(T)_i = mu sign(T_i) for i in S, 0 otherwise.

Two deviations from the printed Alg. 2, both forced by its text (fedtheory's reading):
``k = max(nq, 1)`` need not be an integer, so we floor it; and the printed ``mask = |T| >= e`` keeps every
tied entry while still dividing by k (for T = 1_n and k = 1 it returns n 1_n), so we keep exactly k indices.

Properties (derived by fedtheory, not stated in the paper, and tested as claims ``efl.st.*``): ST is
deterministic and biased; when the kept entries are non-zero it is the orthogonal projection of T onto span(s),
s = sign(T) on S, so <T - ST(T), ST(T)> = 0 and ||T - ST(T)||^2 = ||T||^2 - ||top_k(T)||_1^2 / k <= (1 - 1/d) ||T||^2,
i.e. it is contractive with alpha(d) = 1/d (attained up to k/d by constant-magnitude rows). ``q = 1`` is *not*
the identity: ST(T) = mean(|T|) sign(T).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..validation import check_int, check_probability
from .base import as_rows, register_compressor

__all__ = ["SparseTernary", "st_bits"]

#: Bits of the one float (mu) sent per compressed row.
_MU_BITS = 64


def st_bits(d: int, k: int) -> float:
    """Bits to send one ST row of length d with k non-zeros: k positions (ceil(log2 d) bits each), k signs
    and the float mu. The paper leaves the encoding unspecified (Ma et al., Alg. 2); this is the plain count."""
    d = check_int("d", d, low=1)
    k = check_int("k", k, low=0, high=d)
    return float(k * (math.ceil(math.log2(d)) + 1) + _MU_BITS) if d > 1 else float(k + _MU_BITS)


@register_compressor
@dataclass(frozen=True)
class SparseTernary:
    """ST(T) = mu sign(T) on the k = max(floor(d q), 1) largest-magnitude entries (EFL Alg. 2).

    ``q`` is the sparsity (fraction of entries kept), in (0, 1].
    """

    q: float = 0.1
    name: ClassVar[str] = "st"
    unbiased: ClassVar[bool] = False
    deterministic: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "q", check_probability("q", self.q))

    @classmethod
    def example(cls) -> "SparseTernary":
        return cls(q=0.25)

    def k(self, d: int) -> int:
        """Number of kept entries, max(floor(d q), 1) (Alg. 2 prints max(d q, 1), which need not be an integer)."""
        d = check_int("d", d, low=1)
        # The 1e-12 guards floor(d q) against q d landing a hair below an integer (q = 0.3, d = 10).
        return max(int(math.floor(d * self.q + 1e-12)), 1)

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Return (ST(X_i) for every row, bits per row); ``rng`` is ignored (ST is deterministic)."""
        X = as_rows(X)
        m, d = X.shape
        k = self.k(d)
        mag = np.abs(X)
        if k == d:
            idx = np.broadcast_to(np.arange(d), (m, d))
        else:
            # argpartition with kind="introselect" is deterministic: same input, same kept set.
            idx = np.argpartition(-mag, k - 1, axis=1)[:, :k]
        kept = np.take_along_axis(X, idx, axis=1)
        mu = np.abs(kept).mean(axis=1, keepdims=True)
        out = np.zeros_like(X)
        np.put_along_axis(out, idx, mu * np.sign(kept), axis=1)
        nnz = np.count_nonzero(out, axis=1)
        per_entry = (math.ceil(math.log2(d)) + 1) if d > 1 else 1
        bits = (nnz * per_entry + _MU_BITS).astype(np.float64)  # st_bits, vectorised over rows
        return out, bits

    def omega(self, d: int) -> float:
        raise NotImplementedError("ST is biased (deterministic, not unbiased): it has no variance constant omega")

    def alpha(self, d: int) -> float:
        """Contraction constant: ||ST(T) - T||^2 <= (1 - 1/d) ||T||^2 for every T in R^d (derived by fedtheory,
        not stated in the paper; tested as the claim ``efl.st.contraction.derived``).

        The bound does not improve with q in the worst case beyond 1 - k/d (constant-magnitude rows attain
        1 - k/d), and a single spike row attains ||T - ST(T)||^2 = 0; 1/d is the q-free constant, valid for
        every q.
        """
        d = check_int("d", d, low=1)
        return 1.0 / d
