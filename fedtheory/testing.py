"""Assertions for testing federated problems (yours or fedtheory's) against their definitions."""
from __future__ import annotations

import numpy as np

from .problems.base import Problem


def assert_oracles_match_finite_differences(problem: Problem, X: np.ndarray, *, step: float = 1e-6,
                                            check_hessians: bool = False) -> None:
    """Central differences of ``values`` (and of ``grads`` when ``check_hessians``) match the stacked oracles.

    ``X`` has shape ``(n, d)``; every client is differenced at once along each coordinate. Tolerances are
    those of a central difference with step 1e-6 on smooth functions: 1e-6 relative for gradients, 1e-5 for
    Hessians (``problem.hessians(X)``, shape ``(n, d, d)``).
    """
    G = problem.grads(X)
    H = problem.hessians(X) if check_hessians else None
    for j in range(problem.dim):
        E = np.zeros_like(X)
        E[:, j] = step
        fd = (problem.values(X + E) - problem.values(X - E)) / (2 * step)
        np.testing.assert_allclose(fd, G[:, j], rtol=1e-6, atol=1e-6 * (1 + np.abs(G).max()))
        if H is not None:
            fdg = (problem.grads(X + E) - problem.grads(X - E)) / (2 * step)
            np.testing.assert_allclose(fdg, H[:, :, j], rtol=1e-5, atol=1e-6 * (1 + np.abs(H).max()))
