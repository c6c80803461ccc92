"""Batched local first-order solvers for prox-linear subproblems: GD and Nesterov's fast GD.

The local subproblems of DANE+ (Jiang, Rodomanov & Stich 2024, Alg. 1) and FedRed (Alg. 2) are

    F_i(x) = f_i(x) + <lin_i, x> + lam/2 ||x - center_i||^2,
    grad F_i(x) = grad f_i(x) + lin_i + lam (x - center_i),

(FedRed's two proximal terms merge into one: lam (x - x~) + (x - x_i)/eta = (lam + 1/eta)(x - c_i) with
c_i = (lam x~ + x_i/eta) / (lam + 1/eta)). This module runs, for every client at once,

    x_{k+1} = y_k - s_i grad F_i(y_k),      y_{k+1} = x_{k+1} + beta_i (x_{k+1} - x_k),   y_0 = x_0,

with s_i = 1/(L_i + lam). ``beta = 0`` is plain gradient descent (y_k = x_k); Nesterov's constant-momentum
fast GD for a (mu_i + lam)-strongly convex, (L_i + lam)-smooth F_i uses
beta_i = (sqrt(kappa_i) - 1)/(sqrt(kappa_i) + 1), kappa_i = (L_i + lam)/(mu_i + lam) (Nesterov 2004,
scheme 2.2.19; Bubeck 2015, Thm 3.18). GD and FGD are one loop with one option, so they cannot drift apart.

Stopping rules (checked at every evaluated point y_k, which is then returned; the paper's conditions only
concern the returned point):

* ``"relative"``: ||grad F_i(y)|| <= tol ||y - x_0||            (Thm 4 / Cor 5; tol = e_r)
* ``"absolute"``: ||grad F_i(y)|| <= tol                         (Thm 3; Cor 30 uses its square)
* ``"steps"``:    exactly ``max_steps`` updates, returning the evaluated point with the smallest
  ||grad F_i|| (Cor 2).

Accounting: a client that performs K updates evaluated grad f_i at y_0, ..., y_K, i.e. K + 1 gradients; the
first one, at the round's starting point, is the gradient DANE+'s control variate (1) needs anyway, so the
caller may pass it in (``G0``) and charge it once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np

from ..problems.base import Problem
from ..validation import check_int, check_nonnegative

__all__ = ["LocalResult", "StopRule", "local_descent", "prox_linear_descent", "nesterov_momentum",
           "gd_last_iterate", "AUTHORS_STOP_FLOOR"]

#: The absolute term the authors' code (mlolab/S-DANE, ``FedRed.test_critertion``) adds to the squared
#: tolerance of its DANE+ stopping rule.
AUTHORS_STOP_FLOOR = 1e-6

StopKind = Literal["relative", "absolute", "steps"]


@dataclass(frozen=True)
class StopRule:
    """When a local solver may stop (see the module docstring); ``tol`` is e_r for the current round."""

    kind: StopKind
    tol: float = 0.0
    #: Also stop once ||grad F|| <= floor: a floating-point floor, not part of the theory (0 disables it).
    floor: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in ("relative", "absolute", "steps"):
            raise ValueError(f"kind must be 'relative', 'absolute' or 'steps', got {self.kind!r}")
        object.__setattr__(self, "tol", check_nonnegative("tol", self.tol))
        object.__setattr__(self, "floor", check_nonnegative("floor", self.floor))

    def satisfied(self, Y: np.ndarray, G: np.ndarray, X0: np.ndarray) -> np.ndarray:
        """Boolean mask over rows: does the point Y[j] with gradient G[j] satisfy the rule?"""
        gnorm = np.linalg.norm(G, axis=1)
        if self.kind == "relative":
            return (gnorm <= self.tol * np.linalg.norm(Y - X0, axis=1)) | (gnorm <= self.floor)
        if self.kind == "absolute":
            return gnorm <= max(self.tol, self.floor)
        return np.zeros(len(Y), dtype=bool)


@dataclass(frozen=True)
class LocalResult:
    """Returned points ``X`` (m, d), updates performed ``steps`` (m,), gradient evaluations ``grad_evals``
    (m,) = steps + 1 (the start included), the returned points' ``grad_norm`` (m,), and whether the stopping
    rule was met (``converged``; always True for the ``"steps"`` rule)."""

    X: np.ndarray
    steps: np.ndarray
    grad_evals: np.ndarray
    grad_norm: np.ndarray
    converged: np.ndarray


def nesterov_momentum(mu: np.ndarray, L: np.ndarray) -> np.ndarray:
    """beta = (sqrt(kappa) - 1)/(sqrt(kappa) + 1) with kappa = L/mu, per row (mu > 0 required)."""
    mu = np.asarray(mu, dtype=np.float64)
    L = np.asarray(L, dtype=np.float64)
    if np.any(mu <= 0):
        raise ValueError("fast GD needs a strongly convex subproblem: mu_i + lam must be > 0 for every client")
    root = np.sqrt(L / mu)
    return (root - 1.0) / (root + 1.0)


def local_descent(grad_F: Callable[[np.ndarray, np.ndarray], np.ndarray], X0: np.ndarray, step: np.ndarray,
                  momentum: np.ndarray, rule: StopRule, max_steps: int, G0: np.ndarray | None = None,
                  return_best: bool | None = None) -> LocalResult:
    """(Fast) gradient descent on m independent problems at once (see the module docstring).

    Parameters
    ----------
    grad_F:
        ``grad_F(Y, rows)`` returns the gradients of the rows ``rows`` (indices into 0..m-1) at ``Y``.
    X0, step, momentum:
        Starting points (m, d), step sizes (m,), momentum coefficients (m,) (zeros: GD).
    rule:
        The stopping rule; ``max_steps`` caps the updates (for ``"steps"`` it is the number of updates).
    G0:
        Gradients at X0 when the caller already has them (not recomputed).
    return_best:
        Return the evaluated point of smallest gradient norm instead of the stopping point (default: True
        for the ``"steps"`` rule, as in Cor 2, else False).

    Only rows still running are evaluated, so the cost is sum_i (K_i + 1) gradient rows.
    """
    max_steps = check_int("max_steps", max_steps, low=0)
    X0 = np.asarray(X0, dtype=np.float64)
    m = X0.shape[0]
    step = np.broadcast_to(np.asarray(step, dtype=np.float64), (m,))
    momentum = np.broadcast_to(np.asarray(momentum, dtype=np.float64), (m,))
    if return_best is None:
        return_best = rule.kind == "steps"
    all_rows = np.arange(m)
    G = grad_F(X0, all_rows) if G0 is None else np.asarray(G0, dtype=np.float64)
    out = X0.copy()
    out_norm = np.linalg.norm(G, axis=1)
    steps = np.zeros(m, dtype=np.int64)
    converged = np.zeros(m, dtype=bool)
    best_X, best_norm = X0.copy(), out_norm.copy()

    rows = all_rows  # rows still running
    Y, X_prev = X0.copy(), X0.copy()
    for k in range(max_steps + 1):
        gnorm = np.linalg.norm(G, axis=1)
        if return_best:
            better = gnorm < best_norm[rows]
            best_norm[rows[better]] = gnorm[better]
            best_X[rows[better]] = Y[better]
        # A row whose iterate or gradient overflowed can never meet its rule: it stops now, not converged,
        # and returns its non-finite point, so the caller sees the divergence instead of max_steps more steps.
        finite = np.isfinite(Y).all(axis=1) & np.isfinite(G).all(axis=1)
        satisfied = rule.satisfied(Y, G, X0 if len(rows) == m else X0[rows]) & finite
        last = k == max_steps
        done = satisfied | last | ~finite
        converged[rows[done]] = ((np.full(len(rows), last) if rule.kind == "steps" else satisfied) & finite)[done]
        out[rows[done]] = Y[done]
        out_norm[rows[done]] = gnorm[done]
        keep = ~done
        if not np.any(keep):
            break
        if not np.all(keep):
            rows, Y, X_prev, G = rows[keep], Y[keep], X_prev[keep], G[keep]
        X_new = Y - step[rows, None] * G
        Y = X_new + momentum[rows, None] * (X_new - X_prev)
        X_prev = X_new
        steps[rows] += 1
        G = grad_F(Y, rows)
    if return_best:
        out, out_norm = best_X, best_norm
    return LocalResult(X=out, steps=steps, grad_evals=steps + 1, grad_norm=out_norm, converged=converged)


def prox_linear_descent(problem: Problem, lin: np.ndarray, center: np.ndarray, lam: float, X0: np.ndarray, *,
                        rule: StopRule, max_steps: int, fast: bool = False, clients: np.ndarray | None = None,
                        G0: np.ndarray | None = None, step: np.ndarray | float | None = None) -> LocalResult:
    """GD (``fast=False``) or Nesterov's FGD (``fast=True``) on F_i(x) = f_i(x) + <lin_i, x> + lam/2||x - c_i||^2.

    ``clients`` selects the rows of the problem (default all); ``G0`` are the *f_i* gradients at X0 if known.
    The default step is 1/(L_i + lam) with L_i from the certificate, which makes F_i non-increasing along GD
    (descent lemma), as the non-convex accuracy condition F(x_{i,r+1}) <= F(x^r) requires.
    """
    cert = problem.certificate
    idx = np.arange(problem.n_clients) if clients is None else np.asarray(clients)
    L_i = np.asarray(cert.L_i, dtype=np.float64)[idx]
    mu_i = np.asarray(cert.mu_i, dtype=np.float64)[idx]
    s = 1.0 / (L_i + lam) if step is None else np.broadcast_to(np.asarray(step, dtype=np.float64), L_i.shape)
    beta = nesterov_momentum(mu_i + lam, L_i + lam) if fast else np.zeros_like(L_i)

    full = clients is None or (len(idx) == problem.n_clients and np.array_equal(idx, np.arange(len(idx))))

    def grad_F(Y: np.ndarray, rows: np.ndarray) -> np.ndarray:
        # Passing clients=None while every client is still running avoids copying the data rows each step.
        sel = None if full and len(rows) == len(idx) else idx[rows]
        if sel is None:
            return problem.grads(Y) + lin + lam * (Y - center)
        return problem.grads(Y, sel) + lin[rows] + lam * (Y - center[rows])

    G_start = None if G0 is None else G0 + lin + lam * (X0 - center)
    return local_descent(grad_F, X0, s, beta, rule, max_steps, G0=G_start)


def gd_last_iterate(problem: Problem, lin: np.ndarray, center: np.ndarray, lam: float, X0: np.ndarray, *,
                    max_steps: int, step: np.ndarray | float | None = None, clients: np.ndarray | None = None,
                    G0: np.ndarray | None = None, stop_tol: float | None = None,
                    stop_floor: float = 0.0) -> LocalResult:
    """Plain GD on F_i(x) = f_i(x) + <lin_i, x> + lam/2 ||x - c_i||^2 returning the *last* iterate, optionally
    stopped by the authors' rule checked *after* each step (mlolab/S-DANE ``src/optimizers/fedred.py``).

    Step k (from z_0 = X0, step s_i, default 1/(L_i + lam)):

        g_k = grad f_i(z_k) + lin_i,      z_{k+1} = z_k - s_i (g_k + lam (z_k - c_i)),
        stop if  ||g_k + lam (z_{k+1} - c_i)||^2 < stop_tol^2 ||z_{k+1} - c_i||^2 + stop_floor.

    The stopped quantity mixes the f-gradient at the pre-step point with the proximal term at the post-step
    point; it equals (z_k - z_{k+1})/lr for the code's semi-implicit step with lr = s_i/(1 - lam s_i), a
    gradient mapping. ``stop_tol=None`` never stops early: exactly ``max_steps`` steps (the code's fixed-K mode);
    otherwise ``max_steps`` is a safety cap (the code has none) and ``converged`` says whether the rule was met.

    Why not :func:`local_descent`: that loop checks its rules at an evaluated point before stepping and
    evaluates the gradient at the returned point (K + 1 gradients); here the rule needs the post-step point and
    the last point's gradient is never needed (K gradients, as in the code). ``grad_norm`` holds
    ||g_k + lam (z_{k+1} - c_i)|| of the last step (the stopped quantity), ``grad_evals`` = ``steps``.
    """
    max_steps = check_int("max_steps", max_steps, low=0)
    idx = np.arange(problem.n_clients) if clients is None else np.asarray(clients)
    m = len(idx)
    s = (1.0 / (np.asarray(problem.certificate.L_i, dtype=np.float64)[idx] + lam) if step is None
         else np.broadcast_to(np.asarray(step, dtype=np.float64), (m,)))
    C = np.broadcast_to(np.asarray(center, dtype=np.float64), (m, problem.dim))
    Lin = np.broadcast_to(np.asarray(lin, dtype=np.float64), (m, problem.dim))
    full = clients is None or (m == problem.n_clients and np.array_equal(idx, np.arange(m)))
    out = np.array(X0, dtype=np.float64)
    steps = np.zeros(m, dtype=np.int64)
    converged = np.full(m, stop_tol is None)
    out_norm = np.zeros(m)
    rows = np.arange(m)  # rows still running
    Z = out.copy()
    Gf = (problem.grads(Z, None if full else idx) if G0 is None else np.asarray(G0, dtype=np.float64)) + Lin
    for k in range(max_steps):
        Z_new = Z - s[rows, None] * (Gf + lam * (Z - C[rows]))
        steps[rows] += 1
        D = Gf + lam * (Z_new - C[rows])
        dsq = np.einsum("ij,ij->i", D, D)
        if stop_tol is None:
            met = np.zeros(len(rows), dtype=bool)
        else:
            diff = Z_new - C[rows]
            met = dsq < stop_tol ** 2 * np.einsum("ij,ij->i", diff, diff) + stop_floor
            converged[rows[met]] = True
        done = met | (k == max_steps - 1)
        out[rows[done]] = Z_new[done]
        out_norm[rows[done]] = np.sqrt(dsq[done])
        keep = ~done
        if not np.any(keep):
            break
        rows, Z = rows[keep], Z_new[keep]
        sel = None if full and len(rows) == m else idx[rows]
        Gf = problem.grads(Z, sel) + Lin[rows]
    return LocalResult(X=out, steps=steps, grad_evals=steps.copy(), grad_norm=out_norm, converged=converged)
