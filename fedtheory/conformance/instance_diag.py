"""Separable instances for the l1 properties: clients with diagonal Hessians A_i = diag(s_i).

The exact elastic-net local problem of FedElasticNet (Kim et al., eqs. (4), (10)) has no closed form for a
general quadratic, but for a diagonal one it is a coordinate-wise soft-threshold. The data are built as in
:func:`fedtheory.conformance.instance.make_instance` (Z_i = sqrt(m_i) Q_i diag(sqrt(s_i)), y_i = Z_i s_i^{-1} b_i
with Q_i orthonormal columns), and (A_i, b_i) are recomputed from the data; the off-diagonal rounding
(~1e-16 relative) is far below the kit's tolerance.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .instance import Client, Instance, ids_of

__all__ = ["make_diagonal_instance", "diagonal_of"]


def make_diagonal_instance(params: Mapping[str, Any]) -> Instance:
    """Keys as :func:`~fedtheory.conformance.instance.make_instance` (n, d, mu, L, sizes, weighting, seed; zeta2
    scales the spread of the b_i)."""
    n, d = int(params["n"]), int(params["d"])
    sizes = np.asarray(params["sizes"], dtype=np.int64)
    if sizes.shape != (n,) or np.any(sizes < d):
        raise ValueError(f"sizes must be n = {n} integers >= d = {d}, got {params['sizes']!r}")
    w = sizes / sizes.sum() if params["weighting"] == "num_examples" else np.full(n, 1.0 / n)
    mu, L = float(params["mu"]), float(params["L"])
    rng = np.random.default_rng(int(params["seed"]))
    ids = ids_of(params, n)
    s = mu + (L - mu) * rng.random((n, d))
    s.flat[0], s.flat[-1] = mu, L
    b = rng.standard_normal(d)[None] + np.sqrt(float(params.get("zeta2", 1.0))) * rng.standard_normal((n, d))
    clients = []
    for i in range(n):  # construction only: one factorisation per client
        Q, _ = np.linalg.qr(rng.standard_normal((int(sizes[i]), d)))
        Z = np.sqrt(sizes[i]) * Q * np.sqrt(s[i])
        clients.append(Client(ids[i], Z, Z @ (b[i] / s[i])))
    A = np.stack([c.features.T @ c.features / c.num_examples for c in clients])
    A = 0.5 * (A + np.swapaxes(A, 1, 2))
    b_data = np.stack([c.features.T @ c.targets / c.num_examples for c in clients])
    x_star = np.linalg.solve(np.einsum("n,nij->ij", w, A), w @ b_data)
    x0 = x_star + rng.standard_normal(d) * max(1.0, float(np.linalg.norm(x_star)))
    return Instance(params=dict(params), clients=tuple(clients), A=A, b=b_data, sizes=sizes, weights=w,
                    x_star=x_star, x0=x0, constants={"mu": mu, "L": L})


def diagonal_of(inst: Instance) -> np.ndarray:
    """(n, d): the diagonals s_i of the (diagonal up to rounding) Hessians."""
    return np.diagonal(inst.A, axis1=1, axis2=2).copy()
