"""FedElasticNet Alg. 1 (Kim et al.)
written as framework code (a loop over client objects, in a chosen ``dtype``), with ``slip`` options:
the power test's wrong implementations and differently written correct ones."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...textbook import client_data, client_weights

__all__ = ["fedelasticnet_fedavg", "TEXTBOOK", "WRONG", "CORRECT", "soft", "elastic_solve", "sign_of"]


def soft(z, t):
    return np.sign(z) * np.maximum(np.abs(z) - t, 0)


def elastic_solve(A, rhs_lin, x, lam2, lam1, iters=4000):
    """argmin 1/2 y^T A y - rhs_lin^T y + lam2/2||y - x||^2 + lam1||y - x||_1 by proximal gradient (ISTA) in
    u = y - x with step 1/(L + lam2); the l1 problem has no closed form for a general A, so a framework iterates."""
    step = 1.0 / (np.linalg.eigvalsh(A)[-1] + lam2)
    u = np.zeros_like(x)
    g0 = A @ x - rhs_lin
    for _k in range(iters):
        u_new = soft(u - step * (g0 + A @ u + lam2 * u), step * lam1)
        done = np.max(np.abs(u_new - u)) <= 1e-15 * (1.0 + np.max(np.abs(u_new)))
        u = u_new
        if done:
            break
    return x + u


def sign_of(z, slip):
    return np.where(z >= 0, 1.0, -1.0) if slip == "sign_zero_is_one" else np.sign(z)


def fedelasticnet_fedavg(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5, l1=0.1,
                         l1_mode="subgradient", server_step=1.0, weighting="num_examples", slip=None, **_):
    """FedElasticNet Alg. 1 (Kim et al.): Delta_k from eq. (4) (exact, ISTA) or K steps; th + sum n_k/n Delta_k."""
    l1 = {"no_l1": 0.0, "l1_sign_flip": -l1}.get(slip, l1)
    mode = "proximal" if slip == "always_proximal" else l1_mode
    D = []
    for c in clients:
        _, _, A, b = client_data(c, np.float64)
        if local_steps is None and slip == "separable_formula":  # the soft-threshold, exact for diagonal A only
            D.append(-soft(A @ x - b, l1) / (np.diag(A) + prox))
            continue
        if local_steps is None:
            D.append(elastic_solve(A, b, x, prox, max(l1, 0.0)) - x)
            continue
        y = x.copy()
        for _k in range(local_steps):
            g = A @ y - b + prox * (y - x)
            y = x + soft(y - x - local_step * g, local_step * l1) if mode == "proximal" else \
                y - local_step * (g + l1 * sign_of(y - x, slip))
        D.append(y - x)
    return x + server_step * client_weights(clients, weighting, np.float64) @ np.stack(D)


TEXTBOOK = fedelasticnet_fedavg
WRONG: list[Variant] = [
    Variant("fedelasticnet_fedavg", "no_l1", partial(fedelasticnet_fedavg, slip="no_l1")),
    Variant("fedelasticnet_fedavg", "separable_formula", partial(fedelasticnet_fedavg, slip="separable_formula")),
    Variant("fedelasticnet_fedavg", "l1_sign_flip", partial(fedelasticnet_fedavg, slip="l1_sign_flip"),
            {"local_steps": 5}),
    Variant("fedelasticnet_fedavg", "always_proximal", partial(fedelasticnet_fedavg, slip="always_proximal"),
            {"local_steps": 5}),
    Variant("fedelasticnet_fedavg", "sign_zero_is_one", partial(fedelasticnet_fedavg, slip="sign_zero_is_one"),
            {"local_steps": 5}),
]
CORRECT: list[Variant] = [
    Variant("fedelasticnet_fedavg", "ista_exact_solve", fedelasticnet_fedavg),
]
