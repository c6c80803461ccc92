"""The kit's exact elastic-net solve (fedtheory/conformance/expected_elasticnet.py), against a long run of ISTA
written here and against the soft-threshold closed form on diagonal Hessians."""
from __future__ import annotations

import numpy as np
import pytest

from fedtheory.conformance.expected_elasticnet import _lasso


def _ista(Q: np.ndarray, q: np.ndarray, t: float, iters: int = 20000) -> np.ndarray:
    step = 1.0 / np.linalg.eigvalsh(Q)[-1]
    u = np.zeros_like(q)
    for _ in range(iters):
        z = u - step * (Q @ u + q)
        u = np.sign(z) * np.maximum(np.abs(z) - step * t, 0.0)
    return u


@pytest.mark.parametrize("seed", range(40))
def test_the_exact_solve_matches_ista_and_its_kkt_conditions(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 13))
    M = rng.standard_normal((d, d))
    Q = M @ M.T / d + rng.uniform(0.05, 2.0) * np.eye(d)
    q, t = rng.standard_normal(d) * rng.uniform(0.1, 3.0), float(rng.uniform(0.01, 1.0))
    u, margin = _lasso(Q, q, t)
    v = _ista(Q, q, t)
    assert np.linalg.norm(u - v) <= 1e-12 * max(1.0, np.linalg.norm(v))
    g = Q @ u + q
    on = u != 0
    assert np.allclose(g[on], -t * np.sign(u[on]), rtol=0, atol=1e-12 * max(1.0, t))
    assert np.all(np.abs(g[~on]) <= t * (1 + 1e-12))
    assert margin >= 0


def test_on_a_diagonal_hessian_it_is_the_soft_threshold() -> None:
    rng = np.random.default_rng(1)
    s, q, t = rng.uniform(0.1, 5.0, 9), rng.standard_normal(9), 0.4
    u, _ = _lasso(np.diag(s), q, t)
    want = -np.sign(q) * np.maximum(np.abs(q) - t, 0.0) / s
    assert np.allclose(u, want, rtol=1e-14, atol=0) and np.all((u == 0) == (np.abs(q) <= t))
