"""FedElasticNet for FedAvg/FedProx (Kim et al., Alg. 1): Delta_k = argmin_u f_k(x + u) + lam2/2 ||u||^2
+ lam1 ||u||_1 (eq. (4), exact), or K local steps z <- z - eta (grad f_k(z) + lam2 (z - x) + lam1 sign(z - x))
with sign(0) = 0 (subgradient, as eq. (7) prints); x+ = x + eta_g sum_k n_k/n Delta_k (full participation)."""
from __future__ import annotations

import numpy as np

from ._common import elastic_net, hess, weights


def en_exact_fista(x, clients, *, state=None, rng=None, local_steps=None, prox=0.5, l1=0.1, server_step=1.0,
                   weighting="num_examples", **_):
    """Correct: the exact elastic-net solve by FISTA + an active-set polish (exact on the support, KKT checked)."""
    a = weights(clients, weighting)
    d = np.zeros_like(x)
    for ak, c in zip(a, clients):
        A, b = hess(c)
        d += ak * elastic_net(A + prox * np.eye(len(x)), A @ x - b, l1)
    return x + server_step * d


def en_subgradient_steps(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.5, l1=0.1,
                         server_step=1.0, weighting="num_examples", l1_mode="subgradient", **_):
    """Correct: K local sub-gradient steps (sign(0) = 0 as printed), clients stacked when their sizes agree."""
    a = weights(clients, weighting)
    out = x.copy()
    for ak, c in zip(a, clients):
        z = x.copy()
        for _ in range(local_steps):
            z = z - local_step * (c.grad(z) + prox * (z - x) + l1 * np.sign(z - x))
        out = out + server_step * ak * (z - x)
    return out


def en_l1_at_origin(x, clients, *, state=None, rng=None, local_steps=None, prox=0.5, l1=0.1, server_step=1.0,
                    weighting="num_examples", **_):
    """WRONG: the l1 penalty is put on the model, lam1 ||theta||_1 (the usual elastic-net habit), where eq. (4)
    penalises the update, lam1 ||theta - theta^{t-1}||_1 (the source of the sparse Delta)."""
    a = weights(clients, weighting)
    d = np.zeros_like(x)
    for ak, c in zip(a, clients):
        A, b = hess(c)
        # theta = x + u:  lam1 ||x + u||_1 -> solve in theta directly: 1/2 t^T (A + lam2) t - (b + lam2 x)^T t + lam1 ||t||_1
        th = elastic_net(A + prox * np.eye(len(x)), -(b + prox * x), l1)
        d += ak * (th - x)
    return x + server_step * d


def en_doubled_l2(x, clients, *, state=None, rng=None, local_steps=None, prox=0.5, l1=0.1, server_step=1.0,
                  weighting="num_examples", **_):
    """WRONG: the l2 term written lam2 ||u||^2 without the 1/2 of eq. (4), so its curvature is 2 lam2."""
    a = weights(clients, weighting)
    d = np.zeros_like(x)
    for ak, c in zip(a, clients):
        A, b = hess(c)
        d += ak * elastic_net(A + 2 * prox * np.eye(len(x)), A @ x - b, l1)
    return x + server_step * d


CORRECT = [("exact_fista_active_set", en_exact_fista, {}),
           ("subgradient_k_steps", en_subgradient_steps, {"local_steps": 5, "l1_mode": "subgradient"})]
WRONG = [("l1_on_model_not_update", en_l1_at_origin, {}),
         ("l2_without_half", en_doubled_l2, {})]
