"""FedElasticNet's local problem and transmit operator (Kim et al., "FedElasticNet", Section 3), transcribed.

FedElasticNet's Algorithms 1-3 are FedProx, SCAFFOLD and FedDyn with an elastic-net term on the local update
and a transmit threshold; fedtheory implements them as options of those classes (``l1``, ``threshold``,
``l1_mode``, FedDyn's ``sign_at_zero``), so their reference rounds are the classic references of
:mod:`fedtheory.references.classic`, which take the pieces below from here (one home per concept):

* :func:`transmit` -- T_eps(v)_i = 0 if |v_i| <= eps else v_i (Section 3, inclusive);
* :func:`local_path` -- K local steps on the client's objective of eq. (4)/(7)/(10),
  F_i(y) = f_i(y) + <lin_i, y> + lambda2/2 ||y - x||^2 + lambda1 ||y - x||_1, by the sign sub-gradient (eq. 7,
  sign(0) = 0) or by ISTA (a proximal step on the l1 term), with the documented per-client stopping rule;
* :func:`local_argmin` -- the exact minimiser of F_i (Alg. 1 line 5, Alg. 3 line 6): ``np.linalg.solve`` on a
  quadratic without l1, otherwise proximal Newton written here (Hessians from the problem, or from differences
  of its gradients), with an l1-regularised quadratic model solved by coordinate descent and polished on its
  support, to a KKT residual of 1e-13 relative;
* :func:`upload_cost` -- the RoundLog counts of the transmitted vectors (nnz and bits: each vector in the cheaper
  of a dense float64 array and a coordinate list, docs/design.md).

Everything here is a loop over the clients, sharing no helper with :mod:`fedtheory.algorithms`,
:mod:`fedtheory.local` or :mod:`fedtheory.compressors`; gradients come from the problem's public oracles.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["transmit", "local_path", "local_argmin", "upload_cost", "client_hessians"]

#: Relative KKT residual at which :func:`local_argmin` accepts (the implementation's solvers stop at 1e-12).
ARGMIN_TOL = 1e-13


def transmit(v: np.ndarray, eps: float) -> np.ndarray:
    """T_eps (Kim et al., Section 3): zero every coordinate with |v_i| <= eps (inclusive); eps = 0 sends v."""
    v = np.asarray(v, dtype=float)
    return np.where(np.abs(v) <= eps, 0.0, v) if eps > 0.0 else v.copy()


def _soft(z: np.ndarray, tau: float) -> np.ndarray:
    """argmin_u tau ||u||_1 + 1/2 ||u - z||^2 = sign(z) max(|z| - tau, 0)."""
    return np.sign(z) * np.maximum(np.abs(z) - tau, 0.0)


def _oracle(problem: Any, Y: np.ndarray, clients: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """grad f_i at the rows of Y for ``clients`` (one stacked call: a stochastic oracle draws its noise for all
    listed clients at once, in their order, so the draw order is the oracle's own)."""
    return problem.grads(Y, clients) if rng is None else problem.stochastic_grads(Y, rng, clients)


def local_path(problem: Any, x: np.ndarray, clients: np.ndarray, *, steps: int, eta: float,
               lin: np.ndarray | None = None, prox: float = 0.0, l1: float = 0.0, l1_mode: str = "subgradient",
               tol: float | None = None, rng: np.random.Generator | None = None) -> tuple[np.ndarray, int]:
    """K local steps from y_i = x on F_i (eqs. (4), (7), (10)): (Y, gradient evaluations made).

    Step of client i (g_i = grad f_i(y_i), stochastic when ``rng`` is given):
        sub-gradient: y_i <- y_i - eta (g_i + lin_i + prox (y_i - x) + l1 sign(y_i - x))      (eq. 7)
        ISTA:         y_i <- x + S_{eta l1}(y_i - eta (g_i + lin_i + prox (y_i - x)) - x)
    With ``tol``, client i stops for good at the first step whose direction (y_i - y_i+)/eta has norm <= tol
    (the step is not taken, its gradient evaluation is counted) and makes no further oracle call.
    Draw order: at every step one stacked oracle call over the still-active clients, in the order listed.
    """
    m, d = len(clients), x.shape[0]
    Y = np.tile(np.asarray(x, dtype=float), (m, 1))
    Lin = np.zeros((m, d)) if lin is None else np.broadcast_to(np.asarray(lin, dtype=float), (m, d))
    active = list(range(m))
    evals = 0
    for _ in range(steps):
        if not active:
            break
        G = _oracle(problem, Y[active], np.asarray(clients)[active], rng)
        evals += len(active)
        still = []
        for row, i in enumerate(active):
            y = Y[i]
            direction = G[row] + Lin[i] + prox * (y - x)
            if l1 > 0.0 and l1_mode == "subgradient":
                direction = direction + l1 * np.sign(y - x)
            y_new = y - eta * direction
            if l1 > 0.0 and l1_mode == "proximal":
                y_new = x + _soft(y_new - x, eta * l1)
            if tol is not None and np.linalg.norm((y - y_new) / eta) <= tol:
                continue  # stopped: keep y_i, no more steps
            Y[i] = y_new
            still.append(i)
        active = still
    return Y, evals


def client_hessians(problem: Any, Y: np.ndarray, clients: np.ndarray) -> np.ndarray:
    """nabla^2 f_i(y_i): a quadratic's A_i, the problem's ``hessians`` oracle, or central differences of its
    gradients, one stacked oracle call per coordinate and sign (exact up to rounding on quadratics; Newton below
    converges to the gradient's zero either way)."""
    clients = np.asarray(clients)
    A = getattr(problem, "A", None)
    if A is not None and isinstance(getattr(problem, "hessians", None), str):
        rows = A[clients]
        return np.stack([np.diag(r) for r in rows]) if rows.ndim == 2 else np.array(rows)
    if callable(getattr(problem, "hessians", None)):
        return np.asarray(problem.hessians(Y, clients))
    m, d = Y.shape
    h = 1e-5 * np.maximum(1.0, np.abs(Y).max(axis=1))[:, None]
    H = np.zeros((m, d, d))
    for j in range(d):
        E = np.zeros((m, d))
        E[:, j] = h[:, 0]
        H[:, :, j] = (problem.grads(Y + E, clients) - problem.grads(Y - E, clients)) / (2 * h)
    return 0.5 * (H + np.swapaxes(H, 1, 2))


def _l1_quadratic(H: np.ndarray, q: np.ndarray, l1: float) -> np.ndarray:
    """argmin_u 1/2 u^T H u + q^T u + l1 ||u||_1 (H positive definite): coordinate descent, then the exact
    solve on the support it identified (the KKT point when the support and signs are right; else more sweeps)."""
    d = q.shape[0]
    if l1 == 0.0:
        return np.linalg.solve(H, -q)
    u = np.zeros(d)
    for sweep in range(20000):
        old = u.copy()
        for j in range(d):
            r = q[j] + H[j] @ u - H[j, j] * u[j]
            u[j] = -_soft(np.array([r]), l1)[0] / H[j, j]
        if sweep % 10 == 9 or np.max(np.abs(u - old)) <= 1e-15 * max(1.0, np.abs(u).max()):
            support = np.nonzero(u)[0]
            polished = np.zeros(d)
            if support.size:
                s = np.sign(u[support])
                polished[support] = np.linalg.solve(H[np.ix_(support, support)], -(q[support] + l1 * s))
            g = H @ polished + q
            ok_on = np.all(np.sign(polished[support]) == np.sign(u[support])) if support.size else True
            off = np.setdiff1d(np.arange(d), support)
            if ok_on and np.all(np.abs(g[off]) <= l1 * (1 + 1e-12)):
                return polished
    return u


def local_argmin(problem: Any, x: np.ndarray, clients: np.ndarray, *, lam: float, l1: float = 0.0,
                 lin: np.ndarray | None = None) -> np.ndarray:
    """y_i = argmin_y f_i(y) + <lin_i, y> + lam/2 ||y - x||^2 + l1 ||y - x||_1 for every listed client.

    Proximal Newton in u = y - x: u <- argmin of the second-order model of the smooth part plus l1 ||u||_1,
    with Armijo backtracking on the objective while the residual exceeds 1e-6, until the l1 KKT residual is
    <= 1e-13 relative. On a quadratic the model is exact and one step solves it (``np.linalg.solve`` without
    l1). The Hessian is the problem's at every iterate when it has a ``hessians`` oracle, else the one at x
    (a chord method, exact on quadratics given by gradients only, such as shared-basis or rescaled ones).
    """
    clients = np.asarray(clients)
    m, d = len(clients), x.shape[0]
    Lin = np.zeros((m, d)) if lin is None else np.broadcast_to(np.asarray(lin, dtype=float), (m, d))
    quadratic = getattr(problem, "A", None) is not None and isinstance(getattr(problem, "hessians", None), str)
    exact_hessians = callable(getattr(problem, "hessians", None))
    H_at_x = None if exact_hessians else client_hessians(problem, np.tile(np.asarray(x, dtype=float), (m, 1)),
                                                           clients)
    Y = np.empty((m, d))
    todo = range(m)
    if l1 == 0.0:  # Newton on all clients at once; a client it leaves unconverged gets the damped loop below
        Y, todo = _batched_newton(problem, x, clients, Lin, lam, exact_hessians, H_at_x)
    for i in todo:
        rows = clients[i:i + 1]

        def smooth_grad(y: np.ndarray) -> np.ndarray:
            return problem.grads(y[None, :], rows)[0] + Lin[i] + lam * (y - x)

        def objective(y: np.ndarray) -> float:
            return float(problem.values(y[None, :], rows)[0] + Lin[i] @ y + 0.5 * lam * (y - x) @ (y - x)
                         + l1 * np.abs(y - x).sum())

        y = np.array(x, dtype=float)
        g = smooth_grad(y)
        scale = max(1.0, float(np.abs(g).max()), l1, float(np.abs(Lin[i]).max()), lam * float(np.abs(x).max()))
        for _ in range(100):
            H = (client_hessians(problem, y[None, :], rows)[0] if exact_hessians else H_at_x[i]) + lam * np.eye(d)
            u = y - x
            u_new = _l1_quadratic(H, g - H @ u, l1)
            step = u_new - u
            t = 1.0
            # Armijo backtracking far from the solution only: near it (residual <= 1e-6) the full proximal Newton
            # step converges quadratically, and the objective's decrease is below its rounding error
            if not quadratic and _kkt(g, u, l1) > 1e-6 * scale:
                f0 = objective(y)
                slope = g @ step + l1 * (np.abs(u_new).sum() - np.abs(u).sum())
                while t > 1e-10 and objective(y + t * step) > f0 + 1e-4 * t * slope:
                    t *= 0.5
            y = y + t * step
            g = smooth_grad(y)
            if _kkt(g, y - x, l1) <= ARGMIN_TOL * scale:
                break
        Y[i] = y
    return Y


def _batched_newton(problem: Any, x: np.ndarray, clients: np.ndarray, Lin: np.ndarray, lam: float,
                    exact_hessians: bool, H_at_x: np.ndarray | None) -> tuple[np.ndarray, list[int]]:
    """Undamped Newton steps y_i <- y_i - (H_i + lam I)^{-1} (grad f_i(y_i) + lin_i + lam (y_i - x)) from y_i = x for
    every client together (l1 = 0): (Y, the clients not at a relative residual <= 1e-13 after 30 steps)."""
    m, d = Lin.shape
    Y = np.tile(np.asarray(x, dtype=float), (m, 1))
    G = problem.grads(Y, clients) + Lin
    scale = np.maximum.reduce([np.ones(m), np.abs(G).max(axis=1), np.abs(Lin).max(axis=1),
                               np.full(m, lam * float(np.abs(x).max(initial=0.0)))])
    eye = np.eye(d)
    for _ in range(30):
        done = np.abs(G).max(axis=1) <= ARGMIN_TOL * scale
        if done.all():
            return Y, []
        H = (client_hessians(problem, Y, clients) if exact_hessians else H_at_x) + lam * eye
        Y_new = Y - np.linalg.solve(H, G[..., None])[..., 0]
        if not np.all(np.isfinite(Y_new)):
            break
        Y = np.where(done[:, None], Y, Y_new)
        G = problem.grads(Y, clients) + Lin + lam * (Y - x)
    done = np.abs(G).max(axis=1) <= ARGMIN_TOL * scale
    return Y, [i for i in range(m) if not done[i]]


def _kkt(g: np.ndarray, u: np.ndarray, l1: float) -> float:
    """Distance of 0 to the subdifferential of the local objective at u = y - x (infinity norm)."""
    r = np.where(u != 0, np.abs(g + l1 * np.sign(u)), np.maximum(np.abs(g) - l1, 0.0))
    return float(r.max()) if r.size else 0.0


def upload_cost(vectors: list[np.ndarray], d: int) -> tuple[float, int, int]:
    """(bits, non-zeros, number) of the transmitted vectors: a vector with k non-zeros costs
    min(64 d, k (64 + max(1, ceil(log2 d)))) bits (dense float64, or a coordinate list, whichever is smaller)."""
    index_bits = max(1, math.ceil(math.log2(d))) if d > 1 else 1
    bits, nnz = 0.0, 0
    for v in vectors:
        k = int(np.count_nonzero(v))
        nnz += k
        bits += min(64 * d, k * (64 + index_bits))
    return float(bits), nnz, len(vectors)
