"""FedProx (Li et al. 2020, Alg. 2): each client approximately minimises h_i(w) = f_i(w) + lam/2 ||w - x||^2;
gamma-inexact (Definition 2): ||grad h_i(w)|| <= gamma ||grad h_i(x)|| = gamma ||grad f_i(x)||. Server:
x+ = x + eta_g sum a_i (w_i - x)."""
from __future__ import annotations

import numpy as np

from ._common import hess, weights


def _cg(A, b, x0, tol_fn, maxit=200):
    """Conjugate gradients on A w = b from x0, stopped as soon as tol_fn(residual norm) is True."""
    w = x0.copy(); r = b - A @ w; pdir = r.copy()
    for _ in range(maxit):
        if tol_fn(np.linalg.norm(r)):
            break
        Ap = A @ pdir
        al = (r @ r) / (pdir @ Ap)
        w = w + al * pdir
        r_new = r - al * Ap
        pdir = r_new + (r_new @ r_new) / (r @ r) * pdir
        r = r_new
    return w


def fedprox_cg(x, clients, *, state=None, rng=None, prox=1.0, server_step=1.0, weighting="num_examples",
               gamma=0.2, **_):
    """Correct: each local problem solved by conjugate gradients stopped at the first gamma-inexact iterate
    (residual of A_i + lam I is grad h_i), declared with gamma (Li et al. 2020, Definition 2)."""
    a = weights(clients, weighting)
    out = np.zeros_like(x)
    for ai, c in zip(a, clients):
        A, b = hess(c)
        H = A + prox * np.eye(len(x)); rhs = b + prox * x
        g0 = np.linalg.norm(A @ x - b)
        w = _cg(H, rhs, x, lambda rn: rn <= 0.9 * gamma * g0)
        out += ai * (w - x)
    return x + server_step * out


def fedprox_cg_squared(x, clients, *, state=None, rng=None, prox=1.0, server_step=1.0, weighting="num_examples",
                       gamma=0.2, **_):
    """WRONG: the stopping test compares squared norms, ||grad h||^2 <= gamma ||grad h(x)||^2, i.e.
    ||grad h|| <= sqrt(gamma) ||grad f_i(x)||: looser than Definition 2's gamma-inexactness for gamma < 1."""
    a = weights(clients, weighting)
    out = np.zeros_like(x)
    for ai, c in zip(a, clients):
        A, b = hess(c)
        H = A + prox * np.eye(len(x)); rhs = b + prox * x
        g0sq = np.linalg.norm(A @ x - b) ** 2
        w = _cg(H, rhs, x, lambda rn: rn ** 2 <= gamma * g0sq)
        out += ai * (w - x)
    return x + server_step * out


def make_stale_centre():
    """WRONG: the proximal centre is the global model of the *previous* call, kept on the object (set before
    the local loop, updated after it); Li et al.'s eq. (2) centres the prox at the current w^t. Round 1 is
    right (the centre starts at x)."""
    class Prox:
        centre = None

        def __call__(self, x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                     server_step=1.0, weighting="num_examples", **_):
            centre = x.copy() if self.centre is None or self.centre.shape != x.shape else self.centre
            a = weights(clients, weighting)
            upd = np.zeros_like(x)
            for ai, c in zip(a, clients):
                w = x.copy()
                for _ in range(local_steps):
                    w = w - local_step * (c.grad(w) + prox * (w - centre))
                upd += ai * (w - x)
            x_new = x + server_step * upd
            self.centre = x.copy()
            return x_new
    return Prox()


CORRECT = [("cg_gamma_inexact", fedprox_cg, {"gamma": 0.2})]
WRONG = [("cg_squared_norm_stop", fedprox_cg_squared, {"gamma": 0.2}),
         ("stale_prox_centre", make_stale_centre(), {})]
