"""Closed forms for the classic federated algorithms on quadratics, and ProxSkip's Lyapunov contraction.

Quadratic clients f_i(x) = 1/2 x^T A_i x - b_i^T x (dense ``(n, d, d)`` or diagonal ``(n, d)`` Hessians) with
server weights a_i (summing to one; the problem's weights by default). The fixed points and biases below are
derived by fedtheory (not stated in the papers, which say only that FedAvg and FedProx drift; docs/classic.md).

* :func:`fedavg_fixed_point` -- K-step FedAvg with local step eta (McMahan et al. 2017, Alg. 1):
  y_K - x_i* = (I - eta A_i)^K (x - x_i*), so the server map is x -> x + eta_g sum_i a_i M_i (x_i* - x) with
  M_i = I - (I - eta A_i)^K, and its fixed point is (sum_i a_i M_i)^{-1} sum_i a_i M_i x_i*. We evaluate it as
  x* + (sum_i a_i N_i A_i)^{-1} sum_i a_i N_i r_i with N_i = eta sum_{j<K} (I - eta A_i)^j (M_i = N_i A_i) and
  r_i = -grad f_i(x*), which needs no A_i^{-1} (singular client Hessians are fine) and resolves small biases
  without cancellation. The bias functions are relative to the certificate's x* (the problem's weights).
* :func:`fedprox_fixed_point` -- exact-prox FedProx (Li et al. 2020, eq. (2)):
  [sum_i a_i (A_i + lam I)^{-1} A_i]^{-1} sum_i a_i (A_i + lam I)^{-1} b_i.
* :func:`fedavg_map` / :func:`fedprox_map` -- the affine server maps themselves (x -> T x + t), used to
  check one round exactly.
* :func:`proxskip_contraction`, :func:`proxskip_lyapunov` -- Mishchenko et al. 2022, Thm 3.6 (ProxSkip) in
  its federated form (Scaffnew on the lifted problem): for mu-strongly convex, L-smooth f_i,
  0 < gamma <= 1/L and 0 < p <= 1,  E Psi_{t+1} <= (1 - zeta) Psi_t with zeta = min{gamma mu, p^2} and
  Psi = sum_i w_i ||x_i - x*||^2 + (gamma^2 / p^2) sum_i w_i ||h_i - grad f_i(x*)||^2. The paper sums over
  clients with no weights; with uniform w_i = 1/n our Psi is that sum divided by n, so the contraction
  factor is identical. The per-step statement is what the proof shows (the T-step bound follows by
  induction and the tower rule).
"""
from __future__ import annotations

import numpy as np

from ..validation import check_finite_array, check_int, check_nonnegative, check_positive, check_probability

__all__ = ["dense_hessians", "drift_vector", "fedavg_map", "fedavg_fixed_point", "fedprox_map", "fedprox_fixed_point",
           "proxskip_contraction", "proxskip_lyapunov", "fedavg_bias", "fedprox_bias"]


def dense_hessians(problem) -> np.ndarray:
    """The client Hessians as a dense ``(n, d, d)`` stack (diagonal problems are expanded)."""
    if not hasattr(problem, "A"):  # the closed forms of this module hold for quadratics only
        raise TypeError(f"problem must be a QuadraticProblem (with Hessians A), got {type(problem).__name__}")
    A = np.asarray(problem.A, dtype=np.float64)
    if A.ndim == 2:
        return np.einsum("nd,de->nde", A, np.eye(A.shape[1]))
    return A


def drift_vector(problem) -> np.ndarray:
    """v = Abar^{-1} sum_i w_i A_i grad f_i(x*): the first-order client drift on quadratics.

    Expanding (A_i + lam I)^{-1} and (I - eta A_i)^K to first order gives the fixed points
    x_FedProx - x* = v / lam + O(1/lam^2) and x_FedAvg(K) - x* = eta (K - 1)/2 v + O(eta^2) (derived by
    fedtheory, not stated in the papers).
    """
    A = dense_hessians(problem)
    w = problem.weights
    g = problem.grads(problem.broadcast(problem.certificate.x_star))
    return np.linalg.solve(np.einsum("n,nij->ij", w, A), np.einsum("n,nij,nj->i", w, A, g))


def _weights(problem, weights: np.ndarray | None) -> np.ndarray:
    w = np.asarray(problem.weights if weights is None else weights, dtype=np.float64)
    if w.shape != (problem.n_clients,) or np.any(w < 0) or not np.isclose(w.sum(), 1.0):
        raise ValueError("weights must be non-negative, of shape (n_clients,), summing to one")
    return w


def _local_gd_operators(A: np.ndarray, local_steps: int, local_step: float) -> tuple[np.ndarray, np.ndarray]:
    """(P_i, N_i) with P_i = (I - eta A_i)^K and N_i = eta sum_{j<K} (I - eta A_i)^j (so I - P_i = N_i A_i)."""
    n, d, _ = A.shape
    eye = np.eye(d)
    step_op = eye - local_step * A
    P = np.broadcast_to(eye, A.shape).copy()
    N = np.zeros_like(A)
    for _ in range(local_steps):  # K is small; the loop is over steps, every product is batched over clients
        N = N + local_step * P
        P = step_op @ P
    return P, N


def fedavg_map(problem, local_steps: int, local_step: float, server_step: float = 1.0,
               weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(T, t) with x+ = T x + t for one full-participation round of K-step FedAvg (local GD)."""
    K = check_int("local_steps", local_steps, low=1)
    eta = check_positive("local_step", local_step)
    eta_g = check_positive("server_step", server_step)
    w = _weights(problem, weights)
    A = dense_hessians(problem)
    _, N = _local_gd_operators(A, K, eta)
    # y_i - x = N_i (b_i - A_i x)
    NA = np.einsum("n,nij,njk->ik", w, N, A)
    Nb = np.einsum("n,nij,nj->i", w, N, problem.b)
    d = problem.dim
    return np.eye(d) - eta_g * NA, eta_g * Nb


def _offset(problem, P: np.ndarray, w: np.ndarray) -> np.ndarray:
    """e = (sum_i w_i P_i A_i)^{-1} sum_i w_i P_i r_i with r_i = b_i - A_i x* = -grad f_i(x*).

    The fixed point is x* + e. Solving for the offset from x* (instead of for the fixed point itself)
    avoids the cancellation that would otherwise swamp a small bias (e.g. FedProx at large lambda).
    """
    A = dense_hessians(problem)
    xs = problem.certificate.x_star
    r = -problem.grads(problem.broadcast(xs))
    PA = np.einsum("n,nij,njk->ik", w, P, A)
    Pr = np.einsum("n,nij,nj->i", w, P, r)
    return np.linalg.solve(PA, Pr)


def fedavg_fixed_point(problem, local_steps: int, local_step: float, weights: np.ndarray | None = None) -> np.ndarray:
    """(sum_i a_i M_i)^{-1} sum_i a_i M_i x_i*, M_i = I - (I - eta A_i)^K (derived by fedtheory; module docstring)."""
    return problem.certificate.x_star + _fedavg_offset(problem, local_steps, local_step, weights)


def _fedavg_offset(problem, local_steps: int, local_step: float, weights: np.ndarray | None) -> np.ndarray:
    K = check_int("local_steps", local_steps, low=1)
    eta = check_positive("local_step", local_step)
    _, N = _local_gd_operators(dense_hessians(problem), K, eta)
    return _offset(problem, N, _weights(problem, weights))


def fedprox_map(problem, prox: float, server_step: float = 1.0,
                weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(T, t) with x+ = T x + t for one full-participation round of exact FedProx (lambda1 = 0)."""
    lam = check_nonnegative("prox", prox)
    eta_g = check_positive("server_step", server_step)
    w = _weights(problem, weights)
    A = dense_hessians(problem)
    R = np.linalg.inv(A + lam * np.eye(problem.dim))  # (A_i + lam I)^{-1}
    # y_i - x = R_i (b_i - A_i x)
    RA = np.einsum("n,nij,njk->ik", w, R, A)
    Rb = np.einsum("n,nij,nj->i", w, R, problem.b)
    return np.eye(problem.dim) - eta_g * RA, eta_g * Rb


def fedprox_fixed_point(problem, prox: float, weights: np.ndarray | None = None) -> np.ndarray:
    """[sum_i a_i (A_i + lam I)^{-1} A_i]^{-1} sum_i a_i (A_i + lam I)^{-1} b_i (derived by fedtheory; module
    docstring)."""
    return problem.certificate.x_star + _fedprox_offset(problem, prox, weights)


def _fedprox_offset(problem, prox: float, weights: np.ndarray | None) -> np.ndarray:
    lam = check_nonnegative("prox", prox)
    R = np.linalg.inv(dense_hessians(problem) + lam * np.eye(problem.dim))
    return _offset(problem, R, _weights(problem, weights))


def fedavg_bias(problem, local_steps: int, local_step: float, weights: np.ndarray | None = None) -> float:
    """||x_FedAvg - x*|| for the closed-form fixed point (x* of the problem's own weights)."""
    return float(np.linalg.norm(_fedavg_offset(problem, local_steps, local_step, weights)))


def fedprox_bias(problem, prox: float, weights: np.ndarray | None = None) -> float:
    """||x_FedProx - x*|| for the closed-form fixed point."""
    return float(np.linalg.norm(_fedprox_offset(problem, prox, weights)))


def proxskip_contraction(mu: float, L: float, step: float, p: float) -> float:
    """1 - zeta, zeta = min{gamma mu, p^2} (Mishchenko et al. 2022, Thm 3.6); requires 0 < gamma <= 1/L."""
    mu = check_positive("mu", mu)
    L = check_positive("L", L)
    step = check_positive("step", step)
    p = check_probability("p", p)
    if step > 1.0 / L * (1.0 + 1e-12):
        raise ValueError(f"step must be in (0, 1/L] = (0, {1.0 / L:g}] for Thm 3.6, got {step:g}")
    return 1.0 - min(step * mu, p * p)


def proxskip_lyapunov(X: np.ndarray, H: np.ndarray, x_star: np.ndarray, H_star: np.ndarray, step: float, p: float,
                      weights: np.ndarray) -> float:
    """Psi = sum_i w_i ||x_i - x*||^2 + (gamma/p)^2 sum_i w_i ||h_i - h_i*||^2 (h_i* = grad f_i(x*))."""
    step, p = check_positive("step", step), check_probability("p", p)
    X, H = check_finite_array("X", X, shape=(None, None)), check_finite_array("H", H, shape=X.shape)
    x_star = check_finite_array("x_star", x_star, shape=(X.shape[1],))
    H_star = check_finite_array("H_star", H_star, shape=X.shape)
    weights = check_finite_array("weights", weights, shape=(X.shape[0],))
    dx = X - x_star
    dh = H - H_star
    return float(weights @ np.einsum("ij,ij->i", dx, dx) + (step / p) ** 2 * (weights @ np.einsum("ij,ij->i", dh, dh)))
