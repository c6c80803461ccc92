"""Helpers shared by the textbook implementations of the power set (``families/<family>/variants.py``).

Those implementations are written the way client/server code is written in frameworks -- a loop over client
objects, each training on its own data -- because that is what the kit is for; these helpers read a client's
data in a chosen floating-point ``dtype`` and solve its proximal problem.
"""
from __future__ import annotations

import numpy as np

__all__ = ["client_data", "client_weights", "prox_solve", "require_uniform"]


def prox_solve(c, x: np.ndarray, lin: np.ndarray, lam: float) -> np.ndarray:
    """argmin f_i(y) - <lin, y> + lam/2 ||y - x||^2 from the client's data: (Z^T Z/m + lam I) y = Z^T t/m + lin + lam x."""
    Z, t, m = c.features, c.targets, c.num_examples
    return np.linalg.solve(Z.T @ Z / m + lam * np.eye(x.size), Z.T @ t / m + lin + lam * x)


def require_uniform(weighting: str, name: str) -> None:
    if weighting != "uniform":
        raise ValueError(f"the reference {name} implements the paper's uniform weighting, got weighting={weighting!r}")


def client_data(c, dtype):
    """(Z, t, A = Z^T Z / m, b = Z^T t / m) of a client in ``dtype``."""
    Z, t = c.features.astype(dtype), c.targets.astype(dtype)
    return Z, t, Z.T @ Z / dtype(c.num_examples), Z.T @ t / dtype(c.num_examples)


def client_weights(clients, weighting, dtype):
    """num_examples / total, or uniform, in ``dtype``."""
    m = np.array([c.num_examples for c in clients], dtype=dtype) if weighting == "num_examples" else \
        np.ones(len(clients), dtype=dtype)
    return m / m.sum()
