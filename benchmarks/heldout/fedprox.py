"""FedProx (Li et al. 2020, Alg. 2): held-out implementations, written from the paper only.

Local problem h_i(w) = f_i(w) + lam/2 ||w - x||^2, solved by K GD steps (gamma=None) or gamma-inexactly
(Definition 2: ||grad h_i(w)|| <= gamma ||grad h_i(x)|| = gamma ||grad f_i(x)||); server x + eta_g sum a_i (w_i - x).
"""
from __future__ import annotations

import numpy as np

from ._util import quad, weights


def fedprox_gamma_lstsq(x, clients, *, state=None, rng=None, prox=1.0, server_step=1.0, weighting="num_examples",
                        **_):
    """Correct: an exact local solve through a stacked least-squares system [Z/sqrt(m); sqrt(lam) I], declared
    as a gamma = 0.05 inexact solver (an exact solve is gamma-inexact for every gamma >= 0)."""
    w = weights(clients, weighting)
    step = np.zeros_like(x)
    for wi, c in zip(w, clients):
        Z = np.asarray(c.features); m = Z.shape[0]
        M = np.vstack([Z / np.sqrt(m), np.sqrt(prox) * np.eye(len(x))])
        r = np.concatenate([np.asarray(c.targets) / np.sqrt(m), np.sqrt(prox) * x])
        sol = np.linalg.lstsq(M, r, rcond=None)[0]
        step += wi * (sol - x)
    return x + server_step * step


def fedprox_gd_until_gamma(x, clients, *, state=None, rng=None, prox=1.0, server_step=1.0, weighting="num_examples",
                           gamma=0.2, **_):
    """Correct: local GD on h_i with step 1/(L_i + lam), stopped as soon as Definition 2 holds (gamma declared)."""
    w = weights(clients, weighting)
    step = np.zeros_like(x)
    for wi, c in zip(w, clients):
        A, b = quad(c)
        Lh = np.linalg.eigvalsh(A)[-1] + prox
        g0 = np.linalg.norm(c.grad(x))
        y = x.copy()
        for _ in range(100000):
            gh = c.grad(y) + prox * (y - x)
            if np.linalg.norm(gh) <= gamma * g0 * (1 - 1e-9):
                break
            y = y - gh / Lh
        step += wi * (y - x)
    return x + server_step * step


def fedprox_f32_k_steps(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                        server_step=1.0, weighting="num_examples", **_):
    """Correct: K GD steps in float32 (rtol 1e-4), vectorised over clients by stacking padded problems."""
    w = weights(clients, weighting).astype(np.float32)
    As = np.stack([quad(c, np.float32)[0] for c in clients]); bs = np.stack([quad(c, np.float32)[1] for c in clients])
    x32 = x.astype(np.float32)
    Y = np.repeat(x32[None, :], len(clients), axis=0)
    for _ in range(local_steps):
        G = np.einsum("nij,nj->ni", As, Y) - bs + np.float32(prox) * (Y - x32)
        Y = Y - np.float32(local_step) * G
    return (x32 + np.float32(server_step) * (w[:, None] * (Y - x32)).sum(0)).astype(np.float64)


# ---------------------------------------------------------------- wrong
def fedprox_inplace_alias(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                          server_step=1.0, weighting="num_examples", **_):
    """WRONG: the local model aliases the anchor (y = anchor; y -= ...), so the prox centre moves with y
    (the proximal term vanishes) -- the anchor is re-copied per client, so the server side is fine."""
    w = weights(clients, weighting)
    acc = np.zeros_like(x)
    for wi, c in zip(w, clients):
        anchor = x.copy()
        y = anchor
        for _ in range(local_steps):
            y -= local_step * (c.grad(y) + prox * (y - anchor))
        acc += wi * (y - x)
    return x + server_step * acc


def fedprox_prox_per_example(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                             server_step=1.0, weighting="num_examples", **_):
    """WRONG: the proximal term is added to the per-example sum loss and then divided by m (lam/m_i)."""
    w = weights(clients, weighting)
    acc = np.zeros_like(x)
    for wi, c in zip(w, clients):
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * (c.grad(y) + prox / c.num_examples * (y - x))
        acc += wi * (y - x)
    return x + server_step * acc


def fedprox_exact_instead_of_k(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0,
                               server_step=1.0, weighting="num_examples", **_):
    """WRONG: claims K steps (gamma=None) but solves the local problem exactly."""
    w = weights(clients, weighting)
    acc = np.zeros_like(x)
    for wi, c in zip(w, clients):
        A, b = quad(c)
        acc += wi * (np.linalg.solve(A + prox * np.eye(len(x)), b + prox * x) - x)
    return x + server_step * acc


def fedprox_gamma_wrong_reference(x, clients, *, state=None, rng=None, prox=1.0, server_step=1.0,
                                  weighting="num_examples", gamma=0.2, **_):
    """WRONG: declared gamma-inexact, but runs a fixed 2 GD steps of size 1/(L + lam) whatever gamma says."""
    w = weights(clients, weighting)
    acc = np.zeros_like(x)
    for wi, c in zip(w, clients):
        A, b = quad(c)
        Lh = np.linalg.eigvalsh(A)[-1] + prox
        y = x.copy()
        for _ in range(2):
            y = y - (c.grad(y) + prox * (y - x)) / Lh
        acc += wi * (y - x)
    return x + server_step * acc


CORRECT = [
    ("exact_lstsq_declared_gamma0.05", fedprox_gamma_lstsq, {"gamma": 0.05}),
    ("gd_until_gamma0.2", fedprox_gd_until_gamma, {"gamma": 0.2}),
    ("k_steps_f32_vectorised (rtol 1e-4)", fedprox_f32_k_steps, {"rtol": 1e-4}),
]
WRONG = [
    ("inplace_alias_prox_centre", fedprox_inplace_alias, {}),
    ("prox_divided_by_m_i", fedprox_prox_per_example, {}),
    ("exact_solve_declared_k_steps", fedprox_exact_instead_of_k, {}),
    ("gamma0.2_declared_two_fixed_steps", fedprox_gamma_wrong_reference, {"gamma": 0.2}),
]


def fedprox_gamma_squared_criterion(x, clients, *, state=None, rng=None, prox=1.0, server_step=1.0,
                                    weighting="num_examples", gamma=0.2, **_):
    """WRONG: gamma declared; the stopping test compares squared norms, ||grad h(w)||^2 <= gamma ||grad f_i(x)||^2,
    i.e. it accepts a sqrt(gamma)-inexact solution."""
    w = weights(clients, weighting)
    acc = np.zeros_like(x)
    for wi, c in zip(w, clients):
        A, b = quad(c)
        Lh = np.linalg.eigvalsh(A)[-1] + prox
        g0 = np.linalg.norm(c.grad(x)); y = x.copy()
        for _ in range(100000):
            gh = c.grad(y) + prox * (y - x)
            if gh @ gh <= gamma * g0 ** 2:
                break
            y = y - gh / Lh
        acc += wi * (y - x)
    return x + server_step * acc


WRONG.append(("gamma_test_on_squared_norms", fedprox_gamma_squared_criterion, {"gamma": 0.2}))
