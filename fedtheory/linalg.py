"""Batched linear algebra over the client axis, with the kernel chosen by shape.

Measured on the reference 2-core machine: a stacked ``matmul`` over ``(n, d, d)`` is an order of magnitude
faster than a Python loop of BLAS calls when there are many small clients, but slower when there are a few
large ones (numpy's stacked matmul does not reach BLAS-3 efficiency there). So above a dimension threshold we
call BLAS once per client: with few large clients the loop overhead is negligible against the O(d^2) work.
See ``benchmarks/bench_oracles.py`` for the side-by-side measurement that sets the threshold.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg.blas import dsymv as _dsymv

#: Above this dimension, per-client BLAS calls beat numpy's stacked matmul (measured, see module docstring).
#: Re-measured with benchmarks/bench_oracles.py (kernel sweep, 2-core machine, numpy 2): stacked matmul is
#: 5x faster at d=20 (n=1000), 1.2x at d=100, 1.1x at d=128, 1.05x at d=200, and tied (+-2%) with
#: per-client BLAS at d=300-500 (n=10); so the switch moved from 128 to 256.
PER_CLIENT_BLAS_MIN_DIM = 256

_HAS_MATVEC = hasattr(np, "matvec") and hasattr(np, "vecmat")


def symmetric_matvec(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Return ``A @ x`` for one exactly symmetric ``(d, d)`` matrix through BLAS ``dsymv``.

    ``dsymv`` reads one triangle only: measured 3x faster than ``gemv`` at d=500 (and 1.6x at d=256) on the
    reference machine, because the product is memory-bound. ``A.T`` is the Fortran-ordered view scipy's
    wrapper takes without a copy, and equals ``A`` for a symmetric matrix. The result differs from
    ``gemv``'s by rounding only (a different summation order).
    """
    return _dsymv(1.0, A.T, x)


def batched_symmetric_matvec(A: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Return ``Y[i] = A[i] @ X[i]`` for exactly symmetric ``A[i]`` (e.g. the Hessians of a quadratic).

    Below :data:`PER_CLIENT_BLAS_MIN_DIM` this is :func:`batched_matvec` (bitwise); above it, one ``dsymv``
    per client (see :func:`symmetric_matvec`).
    """
    if A.shape[-1] < PER_CLIENT_BLAS_MIN_DIM:
        return batched_matvec(A, X)
    out = np.empty((A.shape[0], A.shape[1]), dtype=np.result_type(A, X))
    for i in range(A.shape[0]):  # few large clients: one BLAS symv each
        out[i] = _dsymv(1.0, A[i].T, X[i])
    return out


def batched_matvec(A: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Return ``Y[i] = A[i] @ X[i]`` for stacked ``A`` of shape ``(n, d, d)`` and ``X`` of shape ``(n, d)``."""
    if A.shape[-1] >= PER_CLIENT_BLAS_MIN_DIM:
        out = np.empty((A.shape[0], A.shape[1]), dtype=np.result_type(A, X))
        for i in range(A.shape[0]):  # few large clients: one BLAS gemv each
            np.dot(A[i], X[i], out=out[i])
        return out
    if _HAS_MATVEC:  # numpy >= 2.2: a dedicated gufunc, ~10% faster than matmul on a (d, 1) view
        return np.matvec(A, X)
    return np.matmul(A, X[..., None])[..., 0]


def batched_matvec_T(A: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Return ``Y[i] = A[i].T @ X[i]``."""
    if A.shape[-1] >= PER_CLIENT_BLAS_MIN_DIM:
        out = np.empty((A.shape[0], A.shape[2]), dtype=np.result_type(A, X))
        for i in range(A.shape[0]):
            np.dot(A[i].T, X[i], out=out[i])
        return out
    if _HAS_MATVEC:
        return np.vecmat(X, A)  # real arrays: no conjugation involved
    return np.matmul(X[:, None, :], A)[:, 0, :]


def sym_extreme_eigs(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest eigenvalue of each symmetric matrix in a stack ``(n, d, d)``."""
    ev = np.linalg.eigvalsh(A)
    return ev[..., 0], ev[..., -1]


def batched_spectral_apply(V: np.ndarray, scale: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Return ``Y[i] = V[i] @ (scale[i] * (V[i].T @ X[i]))`` (e.g. (A_i + lam I)^{-1} x_i from A_i's eigenpairs).

    Above the BLAS threshold both products run per client back to back, while V[i] is still in cache: two
    separate stacked passes stream every V[i] from memory twice and were measured 1.3x slower than a plain
    loop at n=10, d=500.
    """
    if V.shape[-1] >= PER_CLIENT_BLAS_MIN_DIM:
        out = np.empty(X.shape, dtype=np.result_type(V, X))
        for i in range(V.shape[0]):
            np.dot(V[i], scale[i] * np.dot(V[i].T, X[i]), out=out[i])
        return out
    T = batched_matvec_T(V, X)
    T *= scale  # a fresh array: scale in place (the same products as scale * T)
    return batched_matvec(V, T)
