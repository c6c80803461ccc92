"""What several modules of the FedRed claims share: the instance builders (docs/fedred.md), the strongly convex
instance space of the theorems, the start point, and exact GD iteration counts on quadratics.

Problem constructions (docs/fedred.md): exact quadratics from :func:`fedtheory.problems.quadratic`, "vary L at
fixed delta and mu" and the outlier client from :mod:`fedtheory.problems.constructions`, the non-convex family
from :mod:`fedtheory.problems.nonconvex`.
"""
from __future__ import annotations

import numpy as np

from ...problems.base import Problem
from ...problems.nonconvex import NonconvexProblem, nonconvex
from ...problems.quadratic import QuadraticProblem, quadratic
from ..space import quadratic_space

__all__ = ["quadratic_instance", "nonconvex_instance", "describe", "weighted_mean_sq", "start_point",
           "client_hessians", "gd_iterations_to_gap", "local_problem", "LOCAL_DELTA_A_FEASIBLE", "local_grad",
           "SC_DEFAULTS", "SC_THOROUGH", "SC_SPACE"]

def quadratic_instance(kw: dict) -> QuadraticProblem:
    """Strongly convex (or mu = 0) quadratic with exact constants, docs/fedred.md; ``weights`` (the clients'
    weights w_i in f = sum_i w_i f_i, equal unless given) enter the certificate's delta_A = sqrt(lambda_max(sum_i
    w_i E_i^2)), the weighted form of Definition 2 the theorems' proofs use with unequal weights."""
    keys = ("n_clients", "dim", "mu", "L", "delta_A", "delta_B", "zeta2", "hessians", "weights", "seed")
    return quadratic(**{k: kw[k] for k in keys if k in kw})


def nonconvex_instance(kw: dict) -> NonconvexProblem:
    """An instance of fedtheory's non-convex family with exact delta_B (see
    :func:`fedtheory.problems.nonconvex.nonconvex`); curvature ``c`` = 4 and ``nu`` = 0.1 unless given."""
    return nonconvex(int(kw["n_clients"]), int(kw["dim"]), curvature=float(kw.get("c", 4.0)),
                     nu=float(kw.get("nu", 0.1)), delta_B=float(kw["delta_B"]), zeta2=float(kw.get("zeta2", 1.0)),
                     mean_linear=float(kw.get("mean_linear", 1.0)), seed=int(kw.get("seed", 0)))


def describe(kw: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in kw.items())


def weighted_mean_sq(w: np.ndarray, D: np.ndarray) -> float:
    """sum_i w_i ||D_i||^2."""
    return float(w @ np.sum(D * D, axis=1))


def start_point(problem: Problem, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    """x* plus a standard normal offset drawn from ``seed``: the start of the claims' runs."""
    rng = np.random.default_rng(seed + 12345)
    return problem.certificate.x_star + scale * rng.standard_normal(problem.dim)


def client_hessians(problem: QuadraticProblem) -> np.ndarray:
    """The clients' Hessians A_i as (n, d, d) arrays (diagonal Hessians expanded)."""
    d = problem.dim
    return problem.A if problem.A.ndim == 3 else np.einsum("nd,de->nde", problem.A, np.eye(d))


def gd_iterations_to_gap(problem: QuadraticProblem, x0: np.ndarray, eps: float, step: float | None = None) -> int:
    """GD (step 1/L_f by default) iterations until 1/2 e^T Abar e <= eps, exactly in Abar's eigenbasis."""
    Abar = problem.A_bar
    s, V = np.linalg.eigh(Abar) if Abar.ndim == 2 else (Abar, None)
    step = 1.0 / problem.certificate.L_f if step is None else step
    e0 = x0 - problem.certificate.x_star
    coef2 = (V.T @ e0) ** 2 if V is not None else e0 ** 2
    log_f = np.log(np.abs(1.0 - step * s) + 1e-300)

    def gap(R: int) -> float:
        return float(0.5 * np.sum(s * coef2 * np.exp(2 * R * log_f)))

    lo, hi = 0, 1
    while gap(hi) > eps:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if gap(mid) > eps else (lo, mid)
    return hi


#: The largest delta_A the generator builds for every seed of :func:`local_problem`'s family:
#: 0.4 (L - mu) / sqrt(n) = 0.4 * 3.5 / 2 (fedtheory.strategies.quadratic_params). The default delta_A = 1 is
#: above it: it builds for seed 3 but not for every seed (e.g. not for seed 5 or 199).
LOCAL_DELTA_A_FEASIBLE = 0.7


def local_problem(seed: int = 3, delta_A: float = 1.0) -> QuadraticProblem:
    """4 clients in R^3 with unequal weights, mu = 0.5, L = 4, delta_A = 1 (or the given delta_A)."""
    return quadratic(n_clients=4, dim=3, mu=0.5, L=4.0, delta_A=delta_A, zeta2=1.0, weights=(0.1, 0.2, 0.3, 0.4),
                     seed=seed)



def local_grad(problem: QuadraticProblem, X: np.ndarray, h: np.ndarray, lam: float, C: np.ndarray) -> np.ndarray:
    """grad F_i(x_i) for F_i(x) = f_i(x) + <h_i, x> + lam/2 ||x - c_i||^2, from the raw A_i, b_i."""
    return np.einsum("nij,nj->ni", problem.A, X) - problem.b + h + lam * (X - C)


SC_DEFAULTS = (dict(n_clients=8, dim=10, mu=1.0, L=100.0, delta_A=1.0, zeta2=1.0, seed=0),
               dict(n_clients=8, dim=12, mu=0.1, L=100.0, delta_A=0.1 * 10, zeta2=2.0, seed=1),
               dict(n_clients=6, dim=8, mu=2.0, L=1000.0, delta_B=1.0, zeta2=1.0, hessians="diagonal", seed=2))
SC_THOROUGH = tuple(dict(n_clients=8, dim=d, mu=mu, L=L, delta_A=L / ratio, zeta2=1.0, seed=s)
                    for s, (d, mu, L, ratio) in enumerate([(10, 0.1, 100.0, 100.0), (20, 2.0, 1000.0, 1000.0),
                                                           (15, 0.5, 200.0, 100.0), (20, 1.0, 1000.0, 100.0)]))
#: The theorems' class for exact DANE: strongly convex quadratics with any (mu, L, delta_A, zeta2) (Cor. 21).
SC_SPACE = quadratic_space(defaults=SC_DEFAULTS, thorough=SC_THOROUGH)



