"""FedElasticNet Alg. 1 (Kim et al.): Delta_k = argmin_u L_k(th + u) + lam2/2 ||u||^2 + lam1 ||u||_1 (eq. 4),
th+ = th + eta_g sum_k n_k/n Delta_k (full participation). On a quadratic: Q = A_k + lam2 I, p = grad L_k(th)."""
from __future__ import annotations

import numpy as np

from ._common import elastic_net, quad, weights


def fen1_exact_fista_active_set(x, clients, *, state=None, rng=None, prox=0.5, l1=0.1, server_step=1.0,
                                weighting="num_examples", **_):
    """Correct: exact solve (FISTA, then the linear system on the support with a KKT check)."""
    a = weights(clients, weighting)
    upd = np.zeros_like(x)
    for ai, c in zip(a, clients):
        A, b = quad(c)
        upd += ai * elastic_net(A + prox * np.eye(len(x)), A @ x - b, l1)
    return x + server_step * upd


def fen1_ista_50_iterations(x, clients, *, state=None, rng=None, prox=0.5, l1=0.1, server_step=1.0,
                            weighting="num_examples", **_):
    """WRONG: the "exact" solve of eq. (4) is 50 ISTA iterations with step 1/L (not converged on
    ill-conditioned clients); Alg. 1 line 5 sets theta_k to the argmin."""
    a = weights(clients, weighting)
    upd = np.zeros_like(x)
    for ai, c in zip(a, clients):
        A, b = quad(c)
        Q = A + prox * np.eye(len(x)); p = A @ x - b
        L = np.linalg.eigvalsh(Q)[-1]
        u = np.zeros_like(x)
        for _ in range(50):
            v = u - (Q @ u + p) / L
            u = np.sign(v) * np.maximum(np.abs(v) - l1 / L, 0)
        upd += ai * u
    return x + server_step * upd


def fen1_server_step_ignored(x, clients, *, state=None, rng=None, prox=0.5, l1=0.1, server_step=1.0,
                             weighting="num_examples", **_):
    """WRONG: th+ = th + sum n_k/n Delta_k whatever eta_g (the kit's contract passes eta_g); right at 1.0."""
    a = weights(clients, weighting)
    return x + sum(ai * elastic_net(quad(c)[0] + prox * np.eye(len(x)), quad(c)[0] @ x - quad(c)[1], l1)
                   for ai, c in zip(a, clients))


CORRECT = [("exact_fista_active_set", fen1_exact_fista_active_set, {})]
WRONG = [("exact_solve_is_50_ista_steps", fen1_ista_50_iterations, {}),
         ("server_step_ignored (eta_g=1 default)", fen1_server_step_ignored, {})]
