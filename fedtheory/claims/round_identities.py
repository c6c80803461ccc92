"""The reference instance and helpers of the one-round identities (``<paper>/rounds.py`` of every claims package).

A one-round identity runs one round of an algorithm from a state away from zero and compares it with the paper's
update written independently in plain NumPy; the instance is chosen to exercise what a single default instance
would miss: unequal client weights and heterogeneous Hessians. These helpers share nothing with
:mod:`fedtheory.algorithms`, so a bug in an algorithm's helper cannot hide in the expected side.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Any, Callable

import numpy as np

from ..problems.quadratic import QuadraticProblem

__all__ = ["reference_problem", "client_grads", "law_against_draws"]


def reference_problem() -> QuadraticProblem:
    """4 clients in R^3, unequal weights, heterogeneous well-conditioned SPD Hessians (eigs in [1, 4])."""
    rng = np.random.default_rng(20261124)
    n, d = 4, 3
    Q = np.linalg.qr(rng.standard_normal((n, d, d)))[0]
    eig = rng.uniform(1.0, 4.0, size=(n, d))
    A = np.einsum("nij,nj,nkj->nik", Q, eig, Q)
    A = 0.5 * (A + np.swapaxes(A, 1, 2))
    b = rng.standard_normal((n, d)) * np.array([[1.0], [3.0], [-2.0], [0.5]])
    return QuadraticProblem(A, b, weights=np.array([0.1, 0.2, 0.3, 0.4]))


def client_grads(problem: QuadraticProblem, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """grad f_i(X_i) = A_i X_i - b_i for the clients ``rows`` (one row of ``X`` per client)."""
    return np.einsum("nij,nj->ni", problem.A[rows], X) - problem.b[rows]


def law_against_draws(alg: Any, problem: Any, state: Any, key: Callable[[Any], Any], n_draws: int = 4000,
                      seed: int = 11) -> tuple[dict, float, list]:
    """(law, worst z, drawn keys not enumerated): ``outcomes()``'s law by ``key(draw)`` against the frequencies
    of ``n_draws`` calls of ``draw()`` (z = |frequency - probability| / its standard error)."""
    law: dict = {}
    for d, p in alg.outcomes(problem, state):
        law[key(d)] = law.get(key(d), 0.0) + p
    rng = np.random.default_rng(seed)
    counts = Counter(key(alg.draw(problem, state, rng)) for _ in range(n_draws))
    worst_z = max(abs(counts.get(k, 0) / n_draws - p) / math.sqrt(max(p * (1.0 - p), 1e-12) / n_draws)
                  for k, p in law.items())
    return law, worst_z, [k for k in counts if k not in law]

