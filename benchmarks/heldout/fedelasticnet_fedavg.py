"""FedElasticNet Alg. 1 (Kim et al.): held-out implementations, from the spec only (full participation).

Delta_k = argmin_u f_k(x + u) + lam2/2 ||u||^2 + lam1 ||u||_1 (exact), or K local steps of
y <- y - eta (grad f_k(y) + lam2 (y - x) + lam1 sign(y - x)) (l1_mode "subgradient", sign(0) = 0) or the proximal
step y <- x + S_{eta lam1}(y - eta(grad f_k(y) + lam2 (y - x)) - x) ("proximal"); x+ = x + eta_g sum n_k/n Delta_k.
"""
from __future__ import annotations

import numpy as np

from ._util import enet, quad, soft, weights


def _delta(c, x, K, eta, lam2, lam1, mode, centre_zero=False, l1_scale=1.0):
    A, b = quad(c)
    if K is None:
        if centre_zero:   # regularise theta, not the update: u = theta - x, ||theta||_1 = ||x + u||_1
            # solve in theta directly: min 1/2 th'(A)th - b'th + lam2/2||th - x||^2 + lam1 ||th||_1
            t = enet(A + lam2 * np.eye(len(x)), -(b + lam2 * x), lam1 * l1_scale)
            return t - x
        return enet(A + lam2 * np.eye(len(x)), A @ x - b, lam1 * l1_scale)
    y = x.copy()
    for _ in range(K):
        g = c.grad(y) + lam2 * (y - x)
        if mode == "proximal":
            y = x + soft(y - eta * g - x, eta * lam1 * l1_scale)
        else:
            y = y - eta * (g + lam1 * l1_scale * np.sign(y - x))
    return y - x


def _make(**bug):
    def impl(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5, l1=0.1,
             l1_mode="subgradient", server_step=1.0, weighting="num_examples", **_):
        w = weights(clients, "uniform" if bug.get("uniform") else weighting)
        D = [_delta(c, x, local_steps, local_step, prox, l1, l1_mode, bug.get("centre_zero", False),
                    bug.get("l1_scale", 1.0)) for c in clients]
        return x + server_step * sum(wi * dk for wi, dk in zip(w, D))
    return impl


def fen1_loop_prox(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5, l1=0.1,
                   l1_mode="proximal", server_step=1.0, weighting="num_examples", **_):
    """Correct: K proximal steps written coordinate by coordinate in pure Python floats."""
    tot = float(sum(c.num_examples for c in clients)) if weighting == "num_examples" else float(len(clients))
    out = list(map(float, x))
    for c in clients:
        y = x.copy()
        for _ in range(local_steps):
            g = c.grad(y)
            z = [y[j] - local_step * (g[j] + prox * (y[j] - x[j])) - x[j] for j in range(len(x))]
            y = np.array([x[j] + (max(abs(v) - local_step * l1, 0.0) * (1 if v > 0 else -1)) for j, v in enumerate(z)])
        a = (c.num_examples if weighting == "num_examples" else 1.0) / tot
        for j in range(len(x)):
            out[j] += server_step * a * (y[j] - x[j])
    return np.array(out)


CORRECT = [
    ("exact_fista_polish", _make(), {}),
    ("k_steps_subgradient_vectorised", _make(), {"local_steps": 5, "local_step": 0.1}),
    ("k_steps_proximal_python_loop", fen1_loop_prox, {"local_steps": 5, "local_step": 0.1, "l1_mode": "proximal"}),
]
WRONG = [
    ("l1_on_theta_not_on_update", _make(centre_zero=True), {}),
    ("l1_halved_like_l2", _make(l1_scale=0.5), {}),
    ("uniform_average_under_num_examples", _make(uniform=True), {}),
    ("k_steps_l1_halved", _make(l1_scale=0.5), {"local_steps": 5, "local_step": 0.1}),
]
