"""Special quadratic constructions, each with an exact certificate (fedtheory's, not from the papers;
docs/problems.md, "Special constructions").

* :func:`general_convex_quadratic`: mu = 0 exactly. Every A_i has the common null direction e_d (the
  last ``null_dim`` coordinates), and b_i has no component there, so bbar is in the range of Abar and a
  (minimum-norm) minimiser exists. Built by embedding an exact :func:`quadratic` on the other coordinates,
  which keeps its L, delta and zeta2 exactly (the embedding is an isometry).
* :func:`vary_L`: A_i + s q q^T for every client (q the top eigenvector of Abar) with s solved so that
  the new L is exactly the requested one. E_i = A_i - Abar are untouched, so delta_A and delta_B are
  unchanged (to rounding); b_i gains s q q^T x*, so x* and every grad f_i(x*) (hence zeta2) are unchanged too.
  mu can only grow (Weyl) and is reported by the certificate.
* :func:`vary_delta`: A_i = Abar + t E_i for t in [0, 1]: delta scales exactly by t while Abar, x*, L_f,
  mu_f and zeta2 stay fixed; per-client mu and L stay inside the original window (lambda_min is concave
  and lambda_max convex in t). :func:`vary_delta_family` instead keeps per-client mu and L *exactly*
  fixed: the exact generator with one seed (same random directions) at every delta.
* :func:`outlier_quadratic`: G_1 = (n - 1) M, G_j = -M, so delta_B / delta_A = sqrt(n - 1) exactly,
  with mu, L and the requested delta exact (same affine scaling as :func:`quadratic`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy import optimize

from ..linalg import sym_extreme_eigs
from ..validation import (
    check_dense_memory,
    check_dissimilarity_request,
    check_int,
    check_nonnegative,
    check_real,
    check_seed,
)
from .quadratic import (
    DENSE_PEAK_ARRAYS,
    STRUCTURED_HINT,
    QuadraticProblem,
    assemble_quadratic,
    quadratic,
    unit_dissimilarity,
)

__all__ = ["general_convex_quadratic", "vary_L", "vary_delta", "vary_delta_family", "outlier_quadratic"]


def general_convex_quadratic(n_clients: int, dim: int, *, L: float, mu_range: float | None = None,
                             delta_A: float | None = None, delta_B: float | None = None, zeta2: float = 0.0,
                             null_dim: int = 1, x_star_norm: float = 1.0, seed: int = 0) -> QuadraticProblem:
    """A general-convex (mu = 0) quadratic with a common null space and a solvable linear term.

    The first ``dim - null_dim`` coordinates carry an exact :func:`quadratic` with per-client eigenvalues in
    [``mu_range``, L] (default L / 100) and the requested delta and zeta2; the last ``null_dim`` coordinates
    are a common null space (A_i e_j = 0, b_i e_j = 0), so mu = mu_f = 0 exactly and the certificate's
    minimum-norm x* exists. delta_B <= L - mu_range is required (the embedded block must be feasible).
    """
    n = check_int("n_clients", n_clients, low=1)
    d = check_int("dim", dim, low=3)
    k = check_int("null_dim", null_dim, low=1, high=d - 2)
    L = check_real("L", L, low=0.0, low_open=True)
    mu_range = L / 100 if mu_range is None else check_real("mu_range", mu_range, low=0.0, high=L)
    # the embedded quadratic's arrays, then the zero-padded A of shape (n, d, d)
    check_dense_memory(n, d, DENSE_PEAK_ARRAYS, what="general_convex_quadratic", hint=STRUCTURED_HINT)
    inner = quadratic(n, d - k, mu=mu_range, L=L, delta_A=delta_A, delta_B=delta_B, zeta2=zeta2,
                      x_star_norm=x_star_norm, seed=seed)
    A = np.zeros((n, d, d))
    A[:, : d - k, : d - k] = inner.A
    b = np.zeros((n, d))
    b[:, : d - k] = inner.b
    return QuadraticProblem(A, b, inner.weights)


def _top_direction(problem: QuadraticProblem) -> np.ndarray:
    if problem.hessians == "diagonal":
        q = np.zeros(problem.dim)
        q[np.argmax(problem.A_bar)] = 1.0
        return q
    return np.linalg.eigh(problem.A_bar)[1][:, -1]


def _check_quadratic(problem: object) -> None:
    if not isinstance(problem, QuadraticProblem):
        raise TypeError(f"problem must be a QuadraticProblem, got {type(problem).__name__}")


def vary_L(problem: QuadraticProblem, L: float) -> QuadraticProblem:
    """The same instance with per-client L exactly ``L`` and unchanged E_i, x*, zeta2.

    A_i -> A_i + s q q^T, b_i -> b_i + s q q^T x*, with q the top eigenvector of Abar and s >= 0 the root of
    max_i lambda_max(A_i + s q q^T) = L (continuous and nondecreasing in s, so bisection is exact).
    """
    _check_quadratic(problem)
    c = problem.certificate
    # the certified L carries rounding (~1e-16 relative): a request equal to it up to that means "unchanged"
    L = check_real("L", L, low=c.L * (1 - 1e-12))
    q = _top_direction(problem)
    if problem.hessians == "diagonal":
        P = q
    else:
        P = np.outer(q, q)

    def top(s: float) -> float:
        A = problem.A + s * P
        return float((A.max() if A.ndim == 2 else sym_extreme_eigs(A)[1].max()))

    if L <= c.L:
        s = 0.0
    else:
        hi = 2.0 * (L - c.L) + 1.0
        while top(hi) < L:  # lambda_max(A_i + s q q^T) >= q^T A_i q + s, so this terminates
            hi *= 2.0
        s = optimize.brentq(lambda v: top(v) - L, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    A = problem.A + s * P
    shift = s * (P * c.x_star if problem.hessians == "diagonal" else P @ c.x_star)
    return QuadraticProblem(A, problem.b + shift, problem.weights)


def vary_delta(problem: QuadraticProblem, scale: float) -> QuadraticProblem:
    """A_i = Abar + t E_i (t = ``scale`` in [0, 1]) and b_i adjusted so that x* and zeta2 stay.

    delta_A and delta_B scale exactly by t; Abar (so x*, mu_f, L_f) is unchanged; grad f_i(x*) is kept, so
    zeta2 is unchanged; per-client mu and L stay within the original [mu, L].
    """
    _check_quadratic(problem)
    t = check_real("scale", scale, low=0.0, high=1.0)
    c = problem.certificate
    E = problem.A - (problem.A_bar if problem.hessians == "diagonal" else problem.A_bar[None])
    A = problem.A_bar + t * E
    if A.ndim == 3:
        A = 0.5 * (A + np.swapaxes(A, 1, 2))
    grads_star = problem.grads(problem.broadcast(c.x_star))
    hv = A * c.x_star if A.ndim == 2 else A @ c.x_star
    return QuadraticProblem(A, hv - grads_star, problem.weights)


def vary_delta_family(n_clients: int, dim: int, *, mu: float, L: float, deltas: Sequence[float],
                      which: str = "delta_A", zeta2: float = 0.0, hessians: str = "dense",
                      seed: int = 0) -> list[QuadraticProblem]:
    """Instances with per-client mu and L exactly fixed and delta exactly each of ``deltas``.

    The exact generator :func:`quadratic` with one seed: the random directions (Q, G_i, x*, r_i) are shared,
    only the affine scaling changes with delta.
    """
    if which not in ("delta_A", "delta_B"):
        raise ValueError(f"which must be 'delta_A' or 'delta_B', got {which!r}")
    seed = check_seed("seed", seed)
    deltas = list(deltas)
    if hessians == "dense":  # every instance is kept, plus one generator's working arrays
        check_dense_memory(check_int("n_clients", n_clients, low=1), check_int("dim", dim, low=2),
                           len(deltas) + DENSE_PEAK_ARRAYS - 1, what=f"vary_delta_family with {len(deltas)} deltas",
                           hint="; fewer deltas need less" + STRUCTURED_HINT)
    return [quadratic(n_clients, dim, mu=mu, L=L, zeta2=zeta2, hessians=hessians, seed=seed, **{which: dl})
            for dl in deltas]


def outlier_quadratic(n_clients: int, dim: int, *, mu: float, L: float, delta_A: float | None = None,
                      delta_B: float | None = None, zeta2: float = 0.0, x_star_norm: float = 1.0,
                      seed: int = 0) -> QuadraticProblem:
    """One outlier client, E_1 = (n - 1) s M, E_j = -s M (uniform weights).

    Then sum_i E_i^2 / n = (n - 1) s^2 M^2, so delta_A = sqrt(n - 1) s ||M|| and delta_B = (n - 1) s ||M||:
    delta_B / delta_A = sqrt(n - 1) exactly. mu, L and the requested delta are exact (affine scaling of
    :func:`quadratic`); the other delta follows from the ratio.
    """
    n = check_int("n_clients", n_clients, low=2)
    d = check_int("dim", dim, low=2)
    mu = check_nonnegative("mu", mu)
    L = check_real("L", L, low=mu)
    which, delta = check_dissimilarity_request(delta_A, delta_B, n_clients=n, zeta2=zeta2)
    if delta > L - mu:
        raise ValueError(f"{which} must be in [0, L - mu] = [0, {L - mu:g}], got {delta:g}")
    if mu == L and delta > 0:
        raise ValueError(f"{which} must be 0 when mu == L; feasible range [0, 0]")
    check_dense_memory(n, d, DENSE_PEAK_ARRAYS, what="outlier_quadratic", hint=STRUCTURED_HINT)
    rng = np.random.default_rng(check_seed("seed", seed))
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    A_bar0 = (Q * np.linspace(0.0, 1.0, d)) @ Q.T
    A_bar0 = 0.5 * (A_bar0 + A_bar0.T)
    M = rng.standard_normal((d, d))
    M = M + M.T
    G = np.broadcast_to(-M, (n, d, d)).copy()
    G[0] = (n - 1) * M
    w = np.full(n, 1.0 / n)
    if delta > 0:
        G /= unit_dissimilarity(G, w, which)
    return assemble_quadratic(A_bar0, G, w, mu=mu, L=L, delta=delta, which=which,
                              zeta2=check_nonnegative("zeta2", zeta2),
                              x_star_norm=check_nonnegative("x_star_norm", x_star_norm), rng=rng)
