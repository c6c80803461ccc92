"""FedElasticNet for FedAvg/FedProx (Kim et al., Alg. 1, eq. (4)), from the paper and docs/conformance.md only.

Client k (full participation): theta_k = argmin L_k(t) + lam2/2 ||t - th||^2 + lam1 ||t - th||_1, i.e.
Delta_k = argmin_u 1/2 u^T (A_k + lam2 I) u + grad L_k(th)^T u + lam1 ||u||_1 (exact, local_steps=None).
Server: th+ = th + eta_g sum_k n_k/n Delta_k.
"""
from __future__ import annotations

import numpy as np


def _cd_lasso(Q, q, lam1, centre=None, tol=1e-15, max_sweeps=200000):
    """min_v 1/2 v^T Q v + q^T v + lam1 ||v - centre||_1 by cyclic coordinate descent (residual kept)."""
    d = len(q)
    centre = np.zeros(d) if centre is None else centre
    v = centre.copy()
    r = Q @ v + q
    for _ in range(max_sweeps):
        biggest = 0.0
        for i in range(d):
            z = Q[i, i] * (v[i] - centre[i]) - r[i]          # = -(gradient of the rest) in u_i = v_i - c_i
            u_new = np.sign(z) * max(abs(z) - lam1, 0.0) / Q[i, i]
            step = centre[i] + u_new - v[i]
            if step != 0.0:
                r += Q[:, i] * step
                v[i] += step
                biggest = max(biggest, abs(step))
        if biggest <= tol * (1.0 + np.abs(v).max()):
            break
    return v


def _weights(clients, weighting):
    m = np.array([1.0 if weighting == "uniform" else c.num_examples for c in clients])
    return m / m.sum()


def _local_k_steps(c, th, K, eta, lam1, lam2, mode):
    t = th.copy()
    for _ in range(int(K)):
        if mode == "proximal":
            v = t - th - eta * (c.grad(t) + lam2 * (t - th))
            t = th + np.sign(v) * np.maximum(np.abs(v) - eta * lam1, 0.0)
        else:
            t = t - eta * (c.grad(t) + lam2 * (t - th) + lam1 * np.sign(t - th))
    return t - th


def fen1_coordinate_descent(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5,
                            l1=0.1, l1_mode="subgradient", server_step=1.0, weighting="num_examples", **_):
    """Correct. The elastic-net subproblem solved to machine precision by coordinate descent (exact zeros off
    the support); K-step local updates by eq. (7)'s rule when local_steps is given."""
    a = _weights(clients, weighting)
    step = np.zeros_like(x)
    for ak, c in zip(a, clients):
        if local_steps is None:
            Z = c.features
            Q = Z.T @ Z / Z.shape[0] + prox * np.eye(len(x))
            delta = _cd_lasso(Q, c.grad(x), l1)
        else:
            delta = _local_k_steps(c, x, local_steps, local_step, l1, prox, l1_mode)
        step += ak * delta
    return x + server_step * step


def fen1_ista_50(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5, l1=0.1,
                  l1_mode="subgradient", server_step=1.0, weighting="num_examples", **_):
    """WRONG: the "exact" argmin of eq. (4) is ISTA with step 1/L stopped at max_iter = 50, not run to
    convergence. Alg. 1 sets theta_k to the argmin; on a subproblem with condition number kappa the iterate
    after 50 steps is off by about (1 - 1/kappa)^50 (0.36 at kappa = 50), far above any rounding; on a very
    well-conditioned subproblem (large lam2) it is exact to rounding."""
    a = _weights(clients, weighting)
    out = np.zeros_like(x)
    for ak, c in zip(a, clients):
        if local_steps is not None:
            out += ak * _local_k_steps(c, x, local_steps, local_step, l1, prox, l1_mode)
            continue
        Z = c.features
        Q = Z.T @ Z / Z.shape[0] + prox * np.eye(len(x))
        L = np.linalg.eigvalsh(Q).max()
        g0 = c.grad(x)
        u = np.zeros_like(x)
        for _ in range(50):
            v = u - (Q @ u + g0) / L
            u = np.sign(v) * np.maximum(np.abs(v) - l1 / L, 0.0)
        out += ak * u
    return x + server_step * out


def fen1_threshold_after_scaling(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1,
                                 prox=0.5, l1=0.1, l1_mode="subgradient", server_step=1.0,
                                 weighting="num_examples", **_):
    """WRONG: coordinate descent with the soft-threshold applied after dividing by Q_ii,
    u_i = S_lam1(-z_i / Q_ii), instead of u_i = -S_lam1(z_i) / Q_ii. That minimises a problem whose l1 weight
    is lam1 Q_ii per coordinate, not eq. (4)'s lam1 (the two agree only where Q_ii = 1 or lam1 = 0)."""
    a = _weights(clients, weighting)
    out = np.zeros_like(x)
    for ak, c in zip(a, clients):
        if local_steps is not None:
            out += ak * _local_k_steps(c, x, local_steps, local_step, l1, prox, l1_mode)
            continue
        Z = c.features
        Q = Z.T @ Z / Z.shape[0] + prox * np.eye(len(x))
        q = c.grad(x)
        u = np.zeros_like(x)
        for _ in range(100000):
            old = u.copy()
            for i in range(len(x)):
                z = q[i] + Q[i] @ u - Q[i, i] * u[i]
                v = -z / Q[i, i]
                u[i] = np.sign(v) * max(abs(v) - l1, 0.0)
            if np.abs(u - old).max() <= 1e-15 * (1 + np.abs(u).max()):
                break
        out += ak * u
    return x + server_step * out


def fen1_lasso_on_model(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5, l1=0.1,
                        l1_mode="subgradient", server_step=1.0, weighting="num_examples", **_):
    """WRONG: the l1 term is put on the model, lam1 ||theta||_1 (the usual "elastic net" regulariser), instead
    of on the update, lam1 ||theta - theta^{t-1}||_1 (eq. (4)); the l2 term is centred correctly. The local
    solution is pulled towards 0, not towards theta^{t-1}."""
    a = _weights(clients, weighting)
    out = np.zeros_like(x)
    for ak, c in zip(a, clients):
        Z, y = c.features, c.targets
        if local_steps is not None:
            t = x.copy()
            for _ in range(int(local_steps)):
                t = t - local_step * (c.grad(t) + prox * (t - x) + l1 * np.sign(t))
            out += ak * (t - x)
            continue
        Q = Z.T @ Z / len(y) + prox * np.eye(len(x))
        q = -(Z.T @ y / len(y)) - prox * x
        theta = _cd_lasso(Q, q, l1)            # centre 0: lam1 ||theta||_1
        out += ak * (theta - x)
    return x + server_step * out


CORRECT = [("fen1_coordinate_descent", fen1_coordinate_descent, {})]
WRONG = [
    ("fen1_ista_50", fen1_ista_50, {}),
    ("fen1_threshold_after_scaling", fen1_threshold_after_scaling, {}),
    ("fen1_lasso_on_model", fen1_lasso_on_model, {}),
]
