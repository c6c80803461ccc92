"""The expected side of every conformance property: closed forms on quadratics by direct linear algebra.

Nothing here runs an algorithm's iteration. K steps of local gradient descent with step eta on
f_i(y) + lam/2 ||y - x||^2 from y = x satisfy (derived by fedtheory for quadratics, docs/classic.md; Li et al.
2020 eq. (2) for lam > 0)

    y_K - x = N_i (b_i - A_i x),   N_i = V_i diag(phi(s_i)) V_i^T,   phi(s) = (1 - (1 - eta (s + lam))^K) / (s + lam),

(phi(0) = K eta at s + lam = 0), and the exact prox (``local_steps=None``) has N_i = (A_i + lam I)^{-1}. So one
FedAvg/FedProx round over the clients S with aggregation weights a_i (summing to one) is the affine map

    x+ = x + eta_g sum_{i in S} a_i N_i (b_i - A_i x),

and its fixed point solves (sum a_i N_i A_i) x = sum a_i N_i b_i (McMahan et al. 2017, Alg. 1; Li et al.
2020, Alg. 2; the closed form derived by fedtheory, also in :mod:`fedtheory.theory.classic`).
"""
from __future__ import annotations

import numpy as np

from .instance import Instance

__all__ = ["local_operators", "round_map", "fixed_point", "aggregation_weights", "global_grad"]


def _phi(s: np.ndarray, local_steps: int | None, local_step: float, prox: float) -> np.ndarray:
    t = s + prox
    if local_steps is None:
        return 1.0 / t
    contraction = 1.0 - local_step * t
    safe = np.where(t > 0, t, 1.0)
    # -expm1(K log1p(-eta t)) / t is accurate for small eta t; the direct form is fine elsewhere
    small = np.abs(local_step * t) < 0.5
    direct = (1.0 - contraction ** local_steps) / safe
    stable = -np.expm1(local_steps * np.log1p(-np.where(small, local_step * t, 0.0))) / safe
    return np.where(t > 0, np.where(small, stable, direct), local_steps * local_step)


def local_operators(inst: Instance, local_steps: int | None, local_step: float, prox: float = 0.0) -> np.ndarray:
    """N_i for every client, shape (n, d, d) (see the module docstring)."""
    s, V = np.linalg.eigh(inst.A)
    return np.einsum("nij,nj,nkj->nik", V, _phi(s, local_steps, local_step, prox), V)


def aggregation_weights(inst: Instance, clients: np.ndarray, weighting: str) -> np.ndarray:
    """a_i over the participants: num_examples / their sum (McMahan et al. 2017) or 1/|S|."""
    if weighting == "num_examples":
        m = inst.sizes[clients].astype(np.float64)
        return m / m.sum()
    return np.full(len(clients), 1.0 / len(clients))


def round_map(inst: Instance, x: np.ndarray, clients: np.ndarray, *, local_steps: int | None, local_step: float,
              prox: float = 0.0, server_step: float = 1.0, weighting: str = "num_examples") -> np.ndarray:
    """x+ of one FedAvg (prox = 0) or FedProx round over ``clients`` from x."""
    N = local_operators(inst, local_steps, local_step, prox)[clients]
    a = aggregation_weights(inst, clients, weighting)
    r = inst.b[clients] - np.einsum("nij,j->ni", inst.A[clients], x)
    return x + server_step * np.einsum("n,nij,nj->i", a, N, r)


def fixed_point(inst: Instance, *, local_steps: int | None, local_step: float, prox: float = 0.0,
                weighting: str = "num_examples") -> np.ndarray:
    """Solve (sum_i a_i N_i A_i) x = sum_i a_i N_i b_i over all clients."""
    N = local_operators(inst, local_steps, local_step, prox)
    a = aggregation_weights(inst, np.arange(inst.n), weighting)
    return np.linalg.solve(np.einsum("n,nij,njk->ik", a, N, inst.A), np.einsum("n,nij,nj->i", a, N, inst.b))


def global_grad(inst: Instance, x: np.ndarray, clients: np.ndarray, weighting: str) -> np.ndarray:
    """sum_{i in S} a_i (A_i x - b_i)."""
    a = aggregation_weights(inst, clients, weighting)
    return a @ (np.einsum("nij,j->ni", inst.A[clients], x) - inst.b[clients])


def client_grads(inst: Instance, x: np.ndarray) -> np.ndarray:
    """(n, d): A_i x - b_i (the control variates at the optimum when x = x*)."""
    return np.einsum("nij,j->ni", inst.A, x) - inst.b
