"""Rescaled clients: g_i = n w_i f_i averaged uniformly (the DANE+/FedRed authors' code convention).

The global objective is unchanged, sum_i (1/n) g_i = sum_i w_i f_i = f, so x*, f*, mu_f and L_f are the same;
the *local* functions are not: g_i is (n w_i) times f_i, so mu_i and L_i scale by n w_i and every method that
works on local functions (DANE+, FedRed, Scaffnew, FedProx, local GD) iterates differently when the weights
are unequal. This is what the authors' code of Jiang, Rodomanov & Stich (2024) computes (mlolab/S-DANE,
``src/optimizers/fedred.py``): each client's gradient is n m_i / M times its mean-loss gradient, the l2
regulariser included, and the server takes plain means. With equal client sizes (w_i = 1/n) the two
conventions coincide. See docs/fedred.md, "fedtheory vs the authors' code".
"""
from __future__ import annotations

import math

import numpy as np

from .base import Certificate, Problem
from .quadratic import QuadraticProblem

__all__ = ["RescaledClients", "rescaled_clients"]


def rescaled_clients(problem: Problem) -> Problem:
    """The problem with local functions g_i = n w_i f_i and uniform weights (same global f).

    A :class:`~fedtheory.problems.quadratic.QuadraticProblem` stays a quadratic (A_i, b_i scaled; its
    certificate, dissimilarities included, is recomputed exactly); any other problem is wrapped in
    :class:`RescaledClients`.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a fedtheory Problem, got {type(problem).__name__}")
    scale = problem.n_clients * problem.weights
    if isinstance(problem, QuadraticProblem):
        A = problem.A * (scale[:, None] if problem.hessians == "diagonal" else scale[:, None, None])
        return QuadraticProblem(A, problem.b * scale[:, None], None, sigma2=problem.sigma2)
    return RescaledClients(problem)


class RescaledClients(Problem):
    """g_i = s_i f_i with s_i = n w_i and weights 1/n, every oracle delegated to the wrapped problem.

    The exact local solve maps onto the wrapped one: argmin_x s_i f_i(x) + <lin_i, x> + lam/2 ||x - c_i||^2
    = argmin_x f_i(x) + <lin_i / s_i, x> + (lam / s_i)/2 ||x - c_i||^2 (per-client lam, which every problem's
    ``solve_local`` accepts). Certificate: mu_i, L_i times s_i; global constants unchanged; zeta2 recomputed
    at x*; the Hessian dissimilarities are not recomputed (NaN) for a non-quadratic problem.
    """

    def __init__(self, base: Problem) -> None:
        self.base = base
        self.n_clients, self.dim = base.n_clients, base.dim
        self.scale = base.n_clients * base.weights
        self.weights = np.full(self.n_clients, 1.0 / self.n_clients)
        self.sigma2 = base.sigma2
        c = base.certificate
        G = self.grads(self.broadcast(c.x_star))
        mu_i, L_i = self.scale * c.mu_i, self.scale * c.L_i
        self.certificate = Certificate(
            x_star=c.x_star, f_star=c.f_star, mu=float(np.min(mu_i)), L=float(np.max(L_i)), mu_f=c.mu_f,
            L_f=c.L_f, mu_i=mu_i, L_i=L_i, delta_A=math.nan, delta_B=math.nan,
            zeta2=float(np.mean(np.sum(G * G, axis=1))), weights=self.weights, kkt_residual=c.kkt_residual,
            sigma2=float(np.max(self.scale) ** 2 * c.sigma2),
            exact={**dict(c.exact), "delta_A": False, "delta_B": False},
            notes=f"clients rescaled by n w_i (authors' code convention) from: {c.notes}".rstrip(": "),
            gradient_error=float(np.max(self.scale)) * c.gradient_error)

    def _s(self, clients: np.ndarray | None) -> np.ndarray:
        return self.scale if clients is None else self.scale[clients]

    def values(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        return self._s(clients) * self.base.values(X, clients)

    def grads(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        return self._s(clients)[:, None] * self.base.grads(X, clients)

    def stochastic_grads(self, X: np.ndarray, rng: np.random.Generator,
                         clients: np.ndarray | None = None) -> np.ndarray:
        return self._s(clients)[:, None] * self.base.stochastic_grads(X, rng, clients)

    def solve_local(self, lin: np.ndarray, center: np.ndarray, lam: float | np.ndarray, l1: float = 0.0,
                    clients: np.ndarray | None = None) -> np.ndarray:
        s = self._s(clients)
        if l1 != 0.0 and not np.all(s == s[0]):
            raise ValueError("l1 > 0 is not supported on rescaled clients with unequal weights (the l1 weight "
                             "would become per-client, which solve_local does not take)")
        lam_arr = np.asarray(lam, dtype=np.float64)
        return self.base.solve_local(np.asarray(lin) / s[:, None], center, lam_arr / s, l1 / s[0], clients)

    # the global objective is the wrapped one's: delegate (exact gap, no cancellation)
    def value(self, x: np.ndarray) -> float:
        return self.base.value(x)

    def grad(self, x: np.ndarray) -> np.ndarray:
        return self.base.grad(x)

    def gap(self, x: np.ndarray) -> float:
        return self.base.gap(x)
