"""What several modules of the DoCoFL claims share: running an algorithm keeping every iterate, the separable and
shared-Hessian quadratics, and compressors' exact moments from their marginals.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...problems.base import Problem
from ...problems.quadratic import QuadraticProblem

__all__ = ["run_iterates", "separable_quadratic", "shared_hessian_problem", "exact_moments"]


def separable_quadratic(a: float, w_star: float, dim: int, sigma2_per_path: float = 0.0) -> QuadraticProblem:
    """One client, f(w) = sum_j a/2 (w_j - w*)^2 (+const): ``dim`` independent scalar paths. The problem's
    noise N(0, sigma2/dim I) gives each path variance ``sigma2_per_path``."""
    A = np.full((1, dim), float(a))
    return QuadraticProblem(A, A * w_star, sigma2=sigma2_per_path * dim)


def run_iterates(alg: Any, problem: Problem, rounds: int, seed: int, x0: np.ndarray
                ) -> tuple[np.ndarray, list]:
    """Iterates (rounds+1, d) and round logs of ``alg`` (the run loop, keeping every iterate)."""
    rng = np.random.default_rng(seed)
    state = alg.init(problem, x0)
    xs, logs = [state.x], []
    for _ in range(rounds):
        state, log = alg.round(problem, state, rng)
        xs.append(state.x)
        logs.append(log)
    return np.array(xs), logs


def shared_hessian_problem(N: int, d: int, seed: int, sigma2: float) -> tuple[QuadraticProblem, float]:
    """f_i(w) = 1/2 (w - a_i)^T A (w - a_i) with a shared A: B = 1 and G^2 = (1/N) sum ||A(a_i - abar)||^2
    exactly (docs/docofl.md). Returns (problem, G2)."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    A = Q @ np.diag(np.linspace(0.5, 2.0, d)) @ Q.T
    A = 0.5 * (A + A.T)
    centres = rng.normal(size=(N, d))
    prob = QuadraticProblem(np.broadcast_to(A, (N, d, d)).copy(), centres @ A, sigma2=sigma2)
    diff = (centres - centres.mean(0)) @ A
    return prob, float(np.mean(np.sum(diff * diff, axis=1)))


def exact_moments(comp: Any, X: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(E C(X), E||C(X) - X||^2 per row) computed exactly, or None when the compressor exposes neither
    ``marginals`` nor is deterministic. Per-coordinate marginals suffice for both (linearity)."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    if comp.deterministic:
        Y, _ = comp.compress(X, None)
        return Y, np.sum((Y - X) ** 2, axis=1)
    marg = getattr(comp, "marginals", None)
    if marg is None and hasattr(comp, "decompose") and hasattr(comp, "s"):
        # the OFedIQ (s,b) quantizer exposes its two-point law through decompose(): Q_i = norm sign (m + B)/s
        def marg(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            norms, _, m, p_up = comp.decompose(X)
            sign = np.sign(X)
            return (np.stack([norms * sign * m / comp.s, norms * sign * (m + 1) / comp.s], axis=-1),
                    np.stack([1.0 - p_up, p_up], axis=-1))
    if marg is not None:
        vals, probs = marg(X)
        mean = np.sum(vals * probs, axis=-1)
        mse = np.sum(probs * (vals - X[..., None]) ** 2, axis=(1, 2))
        return mean, mse
    return None
