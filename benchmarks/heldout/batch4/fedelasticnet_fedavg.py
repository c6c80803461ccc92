"""FedElasticNet for FedAvg/FedProx (Kim et al., Alg. 1, eq. (4)): each client
theta_k = argmin L_k(t) + lam2/2 ||t - th||^2 + lam1 ||t - th||_1 (exact; or K sub-gradient steps
t <- t - eta (grad L_k(t) + lam2 (t - th) + lam1 sign(t - th)), sign(0) = 0), Delta_k = theta_k - th;
th+ = th + eta_g sum_k n_k/n Delta_k (full participation)."""
from __future__ import annotations

import numpy as np

from ._common import elastic_net, hess_lin


def _wts(clients, weighting):
    if weighting == "uniform":
        return np.full(len(clients), 1.0 / len(clients))
    n = np.array([c.num_examples for c in clients], dtype=float)
    return n / n.sum()


# ---------------------------------------------------------------- correct

def fenet1_exact_cd(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5, l1=0.1,
                    l1_mode="subgradient", server_step=1.0, weighting="num_examples", **_):
    """Correct: the exact elastic-net local solve (coordinate descent + an exact solve on the support, KKT checked)
    in the variable u = theta - th: min 1/2 u^T (A + lam2 I) u + grad L_k(th)^T u + lam1 ||u||_1; K sub-gradient
    steps when local_steps is given."""
    deltas = []
    for c in clients:
        if local_steps is None:
            A, _b = hess_lin(c)
            deltas.append(elastic_net(A + prox * np.eye(len(x)), c.grad(x), l1))
        else:
            t = x.copy()
            for _ in range(local_steps):
                t = t - local_step * (c.grad(t) + prox * (t - x) + l1 * np.sign(t - x))
            deltas.append(t - x)
    return x + server_step * (_wts(clients, weighting) @ np.array(deltas))


def fenet1_ksteps_loop(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5, l1=0.1,
                       l1_mode="subgradient", server_step=1.0, weighting="num_examples", **_):
    """Correct: K sub-gradient steps of eq. (7)'s form without control variates, sign(0) = 0, written coordinate by
    coordinate (declared local_steps=5)."""
    n = sum(c.num_examples for c in clients)
    out = x.copy()
    for c in clients:
        t = x.copy()
        for _ in range(local_steps):
            g = c.grad(t)
            for i in range(len(t)):
                diff = t[i] - x[i]
                sg = 1.0 if diff > 0 else (-1.0 if diff < 0 else 0.0)
                g[i] += prox * diff + l1 * sg
            t = t - local_step * g
        a = 1.0 / len(clients) if weighting == "uniform" else c.num_examples / n
        out = out + server_step * a * (t - x)
    return out


# ---------------------------------------------------------------- wrong

def fenet1_l1_at_origin(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5, l1=0.1,
                        l1_mode="subgradient", server_step=1.0, weighting="num_examples", **_):
    """WRONG: the l1 term on the weights, lam1 ||theta||_1 (the usual lasso), instead of lam1 ||theta - th^{t-1}||_1
    (eq. (4): the elastic net is on the update, which is what makes Delta_k sparse)."""
    deltas = []
    for c in clients:
        A, b = hess_lin(c)
        if local_steps is None:
            th = elastic_net(A + prox * np.eye(len(x)), -(b + prox * x), l1)
        else:
            th = x.copy()
            for _ in range(local_steps):
                th = th - local_step * (c.grad(th) + prox * (th - x) + l1 * np.sign(th))
        deltas.append(th - x)
    return x + server_step * (_wts(clients, weighting) @ np.array(deltas))


def fenet1_l1_per_example(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5, l1=0.1,
                          l1_mode="subgradient", server_step=1.0, weighting="num_examples", **_):
    """WRONG: lam1 divided by the client's number of examples (the penalty "per sample", as when it is added to a
    summed loss); eq. (4) adds lam1 ||.||_1 to L_k itself, the client's mean loss."""
    deltas = []
    for c in clients:
        A, _b = hess_lin(c)
        lk = l1 / c.num_examples
        if local_steps is None:
            deltas.append(elastic_net(A + prox * np.eye(len(x)), c.grad(x), lk))
        else:
            t = x.copy()
            for _ in range(local_steps):
                t = t - local_step * (c.grad(t) + prox * (t - x) + lk * np.sign(t - x))
            deltas.append(t - x)
    return x + server_step * (_wts(clients, weighting) @ np.array(deltas))


def fenet1_server_step_on_model(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5,
                                l1=0.1, l1_mode="subgradient", server_step=1.0, weighting="num_examples", **_):
    """WRONG: the server step multiplies the new model, th+ = eta_g (th + sum_k n_k/n Delta_k), instead of the
    aggregated update (th + eta_g sum ...); a typo invisible at eta_g = 1."""
    deltas = []
    for c in clients:
        A, _b = hess_lin(c)
        if local_steps is None:
            deltas.append(elastic_net(A + prox * np.eye(len(x)), c.grad(x), l1))
        else:
            t = x.copy()
            for _ in range(local_steps):
                t = t - local_step * (c.grad(t) + prox * (t - x) + l1 * np.sign(t - x))
            deltas.append(t - x)
    return server_step * (x + _wts(clients, weighting) @ np.array(deltas))


CORRECT = [
    ("fenet1_exact_cd", fenet1_exact_cd, {}),
    ("fenet1_ksteps_loop", fenet1_ksteps_loop, {"local_steps": 5}),
]
WRONG = [
    ("fenet1_l1_at_origin", fenet1_l1_at_origin, {}),
    ("fenet1_l1_per_example", fenet1_l1_per_example, {}),
    ("fenet1_server_step_on_model", fenet1_server_step_on_model, {}),
]
CRASH_IS_THE_BUG: tuple = ()
