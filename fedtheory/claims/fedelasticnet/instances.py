"""The problems and algorithm configurations the FedElasticNet claims run on (Kim, Woo, Seo & Kim).

Algorithms 1-3 are the elastic-net options of FedProx, SCAFFOLD and FedDyn (``fedtheory.algorithms``). Two
readings of Algorithm 3's sign at zero coordinates: "printed" (sign(0) = 0, reading (a), communication-faithful)
and "kkt" (the exact KKT sub-gradient s of eq. (11), reading (b), what the proofs use); docs/fedelasticnet.md.
"""
from __future__ import annotations

import numpy as np

from ...algorithms.feddyn import FedDyn
from ...participation import Full, UniformSubset
from ...problems.logistic import LogisticProblem
from ...problems.quadratic import QuadraticProblem

__all__ = ["spec_problem", "algorithm3", "scaled_two_client_problem", "monotonicity_counterexample",
           "linear_region_logistic"]


def spec_problem(m: int = 5, d: int = 4, seed: int = 0, scale: float = 1.0):
    """fedtheory's quadratic (docs/fedelasticnet.md appendix): A_k = M M^T/d + 0.3 I, b_k = 2 N(0,1)^d + k.

    Heterogeneous Hessians and linear terms, beta = max_k lambda_max(A_k); ``scale`` multiplies every b_k.
    """
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((m, d, d))
    A = M @ np.swapaxes(M, 1, 2) / d + 0.3 * np.eye(d)
    b = 2.0 * rng.standard_normal((m, d)) + np.arange(m)[:, None]
    return QuadraticProblem(A, scale * b)


def algorithm3(lambda2: float, lambda1: float, reading: str, P: int | None = None, eps: float = 0.0, **kw):
    kw.setdefault("participation", Full() if P is None else UniformSubset(P))
    return FedDyn(alpha=lambda2, l1=lambda1, sign_at_zero=reading, threshold=eps, **kw)


def scaled_two_client_problem(c: float, a=(1.0, 0.5)):
    """m = 2, d = 1: L_k(x) = a_k x^2/2 - b_k x with grad L_k(0) = +-c and theta* = 0 (heterogeneous a_k)."""
    A = np.array(a, dtype=np.float64)[:, None]
    return QuadraticProblem(A, np.array([[-c], [c]]))  # mean b = 0, so theta* = 0 and grad L_k(0) = -b_k


def monotonicity_counterexample():
    """m = 3, d = 1, a = (5, 6, 9), b = (5, -3, 5), uniform weights: found by a search over small integer
    instances; both the FedProx bias in lambda2 and the FedAvg bias in K are non-monotone there."""
    return QuadraticProblem(np.array([[[5.0]], [[6.0]], [[9.0]]]), np.array([[5.0], [-3.0], [5.0]]))


def linear_region_logistic(m: int = 2, reg: float = 1e-6, scale: float = 1.0):
    """m identical clients, d = 1: L_k(x) = (1/2)(log(1 + e^{-s x}) + log(1 + e^{s x})) + reg/2 x^2 (s = ``scale``),
    so theta* = 0 and beta = s^2/4 + reg; below, s = 1. Far from theta* each L_k is affine with slope 1/2 (to e^{-|x|}), the function class on which
    the proximal-point inequalities behind Theorems B.1 and B.6 are tight: a step of Alg. 3 moves gamma by exactly
    1/(2 lambda2) and the distance to theta* drops by 2 (R(gamma) - R*)/lambda2 up to O(1/lambda2^2), so started
    at |theta^0| >> 1 the gap nearly attains the bound (kappa0 lambda2/2 of it, which tends to 1 as lambda2/beta
    grows). On a quadratic the distance drops by (2/lambda2) x curvature x distance^2, twice the gap's share, so
    the same bounds are met with about half that tightness."""
    return LogisticProblem(np.array([[scale], [scale]]), np.array([1.0, -1.0]), reg=reg, n_clients=m)
