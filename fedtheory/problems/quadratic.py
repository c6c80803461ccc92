"""Exact federated quadratics: f_i(x) = 1/2 x^T A_i x - b_i^T x.

Everything about a quadratic is available in closed form, so these are the problems on which fedtheory's
identity and rate checks are sharpest: x* = Abar^{-1} bbar, f(x) - f* = 1/2 (x - x*)^T Abar (x - x*), and the
Hessian dissimilarities of Jiang, Rodomanov & Stich (2024, Defs. 1-2), specialised to quadratics (derived
by fedtheory, not stated in the paper):

    E_i = A_i - Abar,   delta_B = max_i ||E_i||_2,   delta_A = sqrt(lambda_max(sum_i w_i E_i^2)).

Hessians are stored either dense, shape ``(n, d, d)``, or diagonal, shape ``(n, d)``. Eigendecompositions are
computed once (lazily) so that :meth:`QuadraticProblem.solve_local` costs O(d^2) per client for any lambda.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal, Mapping

import numpy as np
from scipy import optimize

from ..linalg import batched_spectral_apply, batched_symmetric_matvec, sym_extreme_eigs
from ..prox_l1 import solve_quadratic_l1
from ..validation import check_dense_memory, check_nonnegative, check_quadratic_request, check_seed, check_weights
from .base import Certificate, Problem, gradient_error_bound
from .structured import SharedBasisQuadratic, structured_quadratic

HessianKind = Literal["dense", "diagonal", "eigenbasis"]
#: What a dense request that cannot fit is pointed to instead (every dense generator's memory error names it).
STRUCTURED_HINT = ("; a structured family stores O(n_clients*dim) numbers with the same exact certificate: "
                   "quadratic(..., hessians='eigenbasis') (Hessians sharing one random eigenbasis, "
                   "fedtheory.problems.structured.structured_quadratic) or hessians='diagonal'")
#: The same pointer for dense families without an O(n d) variant (logistic, non-convex).
CROSS_DEVICE_HINT = ("; this family has no O(n_clients*dim) variant: for cross-device sizes use the structured "
                     "quadratics, quadratic(..., hessians='eigenbasis') (fedtheory.problems.structured."
                     "structured_quadratic), which keep an exact certificate")
#: Peak memory of the dense quadratic generators in arrays of shape (n, d, d) (tracemalloc, d = 60..150:
#: 3.1-4.1), used to refuse a request that cannot fit before anything is allocated.
DENSE_PEAK_ARRAYS = 4


@dataclass(frozen=True)
class Dissimilarity:
    """Exact Hessian and gradient dissimilarity of a quadratic (see :func:`measure_dissimilarity`)."""

    delta_A: float
    delta_B: float
    zeta2: float


def weighted_mean(weights: np.ndarray, arr: np.ndarray) -> np.ndarray:
    """sum_i w_i arr_i over the leading (client) axis: the server average of per-client vectors or Hessians."""
    return np.tensordot(weights, arr, axes=1)


def hessian_dissimilarity(A: np.ndarray, weights: np.ndarray,
                           which: tuple[str, ...] = ("delta_A", "delta_B")) -> tuple[float, float]:
    """(delta_A, delta_B) of a stack of symmetric (dense ``(n,d,d)``) or diagonal (``(n,d)``) Hessians.

    With E_i = A_i - sum_j w_j A_j: delta_A = sqrt(lambda_max(sum_i w_i E_i^2)) and delta_B = max_i ||E_i||, the
    averaged and bounded Hessian dissimilarity (Jiang, Rodomanov & Stich 2024, Defs. 1-2; see
    :class:`~fedtheory.problems.base.Certificate`).

    ``which`` skips a quantity that is not needed (returned as NaN): delta_B costs a batched
    eigendecomposition, delta_A only one GEMM, which matters for 10^4 clients.
    """
    E = A - weighted_mean(weights, A)
    if A.ndim == 2:
        delta_B = float(np.max(np.abs(E))) if E.size else 0.0
        delta_A = float(np.sqrt(np.max(weights @ (E * E))))
        return delta_A, delta_B
    delta_A = delta_B = float("nan")
    if "delta_B" in which:
        lo, hi = sym_extreme_eigs(E)
        delta_B = float(np.max(np.maximum(np.abs(lo), np.abs(hi))))
    if "delta_A" in which:
        # sum_i w_i E_i^2 = M^T M with M the vertical stack of sqrt(w_i) E_i (E_i symmetric): one GEMM.
        E *= np.sqrt(weights)[:, None, None]  # E is a fresh temporary: scale in place (memory linear in n)
        M = E.reshape(-1, A.shape[-1])
        delta_A = float(np.sqrt(max(np.linalg.eigvalsh(M.T @ M)[-1], 0.0)))
    return delta_A, delta_B


def measure_dissimilarity(A: np.ndarray, b: np.ndarray, weights: np.ndarray | None = None) -> Dissimilarity:
    """Exact (delta_A, delta_B, zeta2) of the quadratics f_i(x) = 1/2 x^T A_i x - b_i^T x.

    Parameters
    ----------
    A:
        Hessians, dense ``(n, d, d)`` (symmetric) or diagonal ``(n, d)``.
    b:
        Linear terms, ``(n, d)``.
    weights:
        Client weights (normalised to sum to one; uniform when None).

    zeta2 = sum_i w_i ||A_i x* - b_i||^2 at the (minimum-norm) minimiser x* of f = sum_i w_i f_i.
    """
    problem = QuadraticProblem(A, b, weights)
    c = problem.certificate
    return Dissimilarity(c.delta_A, c.delta_B, c.zeta2)


class QuadraticProblem(Problem):
    """f(x) = sum_i w_i (1/2 x^T A_i x - b_i^T x), with its exact certificate."""

    def __init__(self, A: np.ndarray, b: np.ndarray, weights: np.ndarray | None = None, *,
                 sigma2: float = 0.0) -> None:
        A = np.asarray(A, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        if A.ndim not in (2, 3):
            raise ValueError(f"A must have shape (n, d, d) (dense) or (n, d) (diagonal), got {A.shape}")
        if b.ndim != 2 or b.shape != A.shape[:2]:
            raise ValueError(f"b must have shape {A.shape[:2]}, got {b.shape}")
        if A.ndim == 3:
            if A.shape[1] != A.shape[2]:
                raise ValueError(f"dense A must be square per client, got {A.shape}")
            # Fast path: exactly symmetric input (what the generators produce) needs no check and no copy.
            if not np.array_equal(A, np.swapaxes(A, 1, 2)):
                if not np.allclose(A, np.swapaxes(A, 1, 2), rtol=1e-12,
                                   atol=1e-12 * max(1.0, np.abs(A).max())):
                    raise ValueError("A must be symmetric for every client")
                A = 0.5 * (A + np.swapaxes(A, 1, 2))
        if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
            raise ValueError("A and b must be finite")
        self.A = A
        self.b = b
        self.n_clients, self.dim = b.shape
        self.weights = check_weights(weights, self.n_clients)
        self.hessians: HessianKind = "dense" if A.ndim == 3 else "diagonal"
        self.sigma2 = check_nonnegative("sigma2", sigma2)
        self.A_bar = weighted_mean(self.weights, A)
        self.b_bar = self.weights @ b
        self.certificate = self._certify()

    # ----- defining arrays -----
    def arrays(self) -> dict[str, np.ndarray]:
        return {"A": self.A, "b": self.b, "weights": self.weights}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> "QuadraticProblem":
        return cls(arrays["A"], arrays["b"], arrays["weights"])

    # ----- certificate -----
    def _certify(self) -> Certificate:
        if self.hessians == "diagonal":
            mu_i, L_i = self.A.min(axis=1), self.A.max(axis=1)
            ev_bar = self.A_bar
            x_star = np.where(ev_bar > 0, self.b_bar / np.where(ev_bar > 0, ev_bar, 1.0), 0.0)
        else:
            mu_i, L_i = sym_extreme_eigs(self.A)
            ev_bar, V = np.linalg.eigh(self.A_bar)
            scale = max(abs(ev_bar[-1]), 1e-300)
            keep = ev_bar > 1e-13 * scale
            # Minimum-norm minimiser (pseudo-inverse), so the general-convex case has a certificate too.
            coef = np.where(keep, (V.T @ self.b_bar) / np.where(keep, ev_bar, 1.0), 0.0)
            x_star = V @ coef
        if np.min(mu_i) < -1e-12 * max(1.0, np.max(np.abs(L_i))):
            raise ValueError("QuadraticProblem needs positive semidefinite A_i (use the nonconvex family)")
        delta_A, delta_B = hessian_dissimilarity(self.A, self.weights)
        grads_star = self.grads(self.broadcast(x_star))
        zeta2 = float(self.weights @ np.sum(grads_star * grads_star, axis=1))
        g_star = self.weights @ grads_star
        residual = float(np.linalg.norm(g_star) / max(1.0, float(np.linalg.norm(self.b_bar))))
        if residual > 1e-8:
            raise ValueError("f has no minimiser: the mean linear term is not in the range of the mean Hessian")
        gradient_scale = float(np.max(L_i * np.linalg.norm(x_star) + np.linalg.norm(self.b, axis=1)))
        return Certificate(
            x_star=x_star, f_star=float(-0.5 * self.b_bar @ x_star),
            mu=float(np.min(mu_i)), L=float(np.max(L_i)),
            mu_f=float(np.min(ev_bar)), L_f=float(np.max(ev_bar)),
            mu_i=np.asarray(mu_i), L_i=np.asarray(L_i),
            delta_A=delta_A, delta_B=delta_B, zeta2=zeta2, weights=self.weights,
            kkt_residual=residual, sigma2=self.sigma2,
            exact={name: True for name in ("x_star", "f_star", "mu", "L", "delta_A", "delta_B", "zeta2")},
            gradient_error=gradient_error_bound(self.dim, gradient_scale, float(np.max(L_i)), float(np.min(ev_bar)),
                                                float(np.linalg.norm(g_star))),
        )

    # ----- oracles -----
    def _rows(self, clients: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        if clients is None:
            return self.A, self.b
        return self.A[clients], self.b[clients]

    def hess_vec(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        """A_i X[i] for every (listed) client (``dsymv`` per client above the BLAS threshold: A_i is symmetric)."""
        self._check_points(X, clients)
        return self._hess_vec(X, clients)

    def _hess_vec(self, X: np.ndarray, clients: np.ndarray | None) -> np.ndarray:
        A, _ = self._rows(clients)
        return A * X if A.ndim == 2 else batched_symmetric_matvec(A, X)

    def grads(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        self._check_points(X, clients)
        G = self._hess_vec(X, clients)  # a fresh array: subtract in place (this oracle is memory-bound)
        G -= self._rows(clients)[1]
        return G

    def values(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        self._check_points(X, clients)
        _, b = self._rows(clients)
        return np.einsum("nd,nd->n", X, 0.5 * self._hess_vec(X, clients) - b)

    def value(self, x: np.ndarray) -> float:
        self._check_point(x)
        return float(0.5 * x @ (self.A_bar @ x if self.hessians == "dense" else self.A_bar * x) - self.b_bar @ x)

    def grad(self, x: np.ndarray) -> np.ndarray:
        self._check_point(x)
        return (self.A_bar @ x if self.hessians == "dense" else self.A_bar * x) - self.b_bar

    def gap(self, x: np.ndarray) -> float:
        """1/2 (x - x*)^T Abar (x - x*): exact, free of the cancellation in f(x) - f*."""
        self._check_point(x)
        e = x - self.certificate.x_star
        return float(0.5 * e @ (self.A_bar @ e if self.hessians == "dense" else self.A_bar * e))

    @cached_property
    def _eig(self) -> tuple[np.ndarray, np.ndarray | None]:
        if self.hessians == "diagonal":
            return self.A, None
        return np.linalg.eigh(self.A)

    def solve_local(self, lin: np.ndarray, center: np.ndarray, lam: float | np.ndarray, l1: float = 0.0,
                    clients: np.ndarray | None = None) -> np.ndarray:
        """Exact argmin_x f_i(x) + <lin_i, x> + lam/2 ||x - center_i||^2 + l1 ||x - center_i||_1.

        Without l1: (A_i + lam I) x = b_i - lin_i + lam center_i, solved through the cached
        eigendecomposition A_i = V_i diag(s_i) V_i^T (no refactorisation when lam changes).
        With l1 > 0: closed-form soft-thresholding for diagonal Hessians, otherwise the batched proximal
        solver of :mod:`fedtheory.prox_l1`, driven to a KKT residual <= 1e-12 (relative).
        """
        l1 = check_nonnegative("l1", l1)
        lam_arr = self._check_local_args(lin, center, lam, clients)
        b = self.b if clients is None else self.b[clients]  # only b: indexing A would copy the Hessians
        if np.any(lam_arr < 0):
            raise ValueError(f"lam must be in [0, inf), got {lam}")
        lam_col = lam_arr[..., None] if lam_arr.ndim == 1 else lam_arr
        mu_i = self.certificate.mu_i if clients is None else self.certificate.mu_i[clients]
        if np.any(mu_i + lam_arr <= 0):
            rows = np.nonzero(np.broadcast_to(mu_i + lam_arr <= 0, mu_i.shape))[0]
            ids = (rows if clients is None else np.asarray(clients)[rows])[:5].tolist()
            raise ValueError(f"lam must be > 0 here: the local subproblem of client(s) {ids} (mu_i = 0, merely "
                             f"convex) is not strongly convex with lam={lam!r}")
        center_rows = np.asarray(center, dtype=np.float64)
        if center_rows.ndim == 2 and center_rows.shape[0] > 1 and center_rows.strides[0] == 0:
            center_rows = center_rows[:1]  # a broadcast server model: the same products lam * x_j, made once
        rhs = b - lin
        rhs += lam_col * center_rows  # rhs is a fresh array: in place saves one (m, d) temporary
        if l1 > 0.0:
            return solve_quadratic_l1(self, rhs, center, lam_arr, l1, clients)
        evals, evecs = self._eig
        if clients is not None:
            evals = evals[clients]
            evecs = None if evecs is None else evecs[clients]
        if evecs is None:
            return rhs / (evals + lam_col)
        return batched_spectral_apply(evecs, self._inverse_spectrum(lam_arr, clients), rhs)

    def _inverse_spectrum(self, lam: np.ndarray, clients: np.ndarray | None) -> np.ndarray:
        """1 / (s_i + lam) for the eigenvalues s_i; cached for the last scalar lam on all clients (FedDyn,
        FedProx and DANE solve with one lam every round, so this (n, d) pass is made once)."""
        evals = self._eig[0] if clients is None else self._eig[0][clients]
        if lam.ndim != 0 or clients is not None:
            return 1.0 / (evals + (lam[..., None] if lam.ndim == 1 else lam))
        cached = self.__dict__.get("_inverse_spectrum_cache")
        if cached is None or cached[0] != float(lam):
            scale = 1.0 / (evals + lam)
            scale.setflags(write=False)  # shared between calls: nobody may scale it in place
            cached = (float(lam), scale)
            self.__dict__["_inverse_spectrum_cache"] = cached
        return cached[1]


# ---------------------------------------------------------------------------------------------------------
# Generator with exact constants
# ---------------------------------------------------------------------------------------------------------

def unit_dissimilarity(G: np.ndarray, weights: np.ndarray, which: str) -> float:
    """``which`` (``"delta_A"`` or ``"delta_B"``) of the direction stack G: dividing G by it makes it 1.

    The constructions scale zero-mean directions G_i to a unit dissimilarity before :func:`assemble_quadratic`
    solves for the scale that hits the requested one.
    """
    delta_A, delta_B = hessian_dissimilarity(G, weights, which=(which,))
    return delta_A if which == "delta_A" else delta_B


def _extremes(A_bar0: np.ndarray, G: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-client (lambda_min, lambda_max) of A_bar0 + t G_i."""
    if G.ndim == 2:
        M = A_bar0 + t * G
        return M.min(axis=1), M.max(axis=1)
    return sym_extreme_eigs(A_bar0 + t * G)


def _solve_scale(A_bar0: np.ndarray, G: np.ndarray, spread: float, delta: float,
                 name: str) -> tuple[float, np.ndarray, np.ndarray]:
    """Find t with spread * t / (L0(t) - mu0(t)) = delta, where mu0, L0 are the extreme client eigenvalues.

    The affine map A -> a A + c I with a = spread / (L0 - mu0) then puts the extremes exactly at (mu, L),
    and scales the dissimilarity t of ``t G`` to a t = delta. Root finding runs on a small set of candidate
    clients (those extreme at the current guess) and is confirmed on all clients, so generation costs two
    batched eigendecompositions even for 10^4 clients (the confirming one is returned for reuse).
    Returns t and the exact all-client extremes (lambda_min, lambda_max) of A_bar0 + t G_i.
    """
    n = G.shape[0]
    k = min(n, 32)

    def ratio(t: float, idx: np.ndarray) -> float:
        lo, hi = _extremes(A_bar0, G[idx], t)
        return spread * t / (hi.max() - lo.min())

    t_grid = np.geomspace(1e-8, 1e8, 161)
    # Weyl: max_i lambda_max(A0 + t G_i) - min_i lambda_min(A0 + t G_i) >= range0 - 2 t max_i ||G_i||_2, so
    # ratio(t) <= spread t / (range0 - 2 t g) for any client subset (g >= every ||G_i||_2). Grid points where
    # this bound is below delta cannot be crossings and are skipped without an eigendecomposition (this is
    # what makes large d affordable: each skipped point saves k eigendecompositions of size d).
    if G.ndim == 2:
        range0 = float(np.max(A_bar0) - np.min(A_bar0))
        g_max = float(np.max(np.abs(G)))
    else:
        ev0 = np.linalg.eigvalsh(A_bar0)
        range0 = float(ev0[-1] - ev0[0])
        g_max = float(np.sqrt(np.max(np.einsum("nij,nij->n", G, G))))

    def ratio_bound(t: float) -> float:
        room = range0 - 2.0 * t * g_max
        return spread * t / room if room > 0 else np.inf
    candidates = np.arange(n) if n <= 2 * k else None
    t_guess = delta / max(spread - 2.0 * delta, 1e-3 * spread)
    for _ in range(8):
        if candidates is None or len(candidates) < n:
            lo, hi = _extremes(A_bar0, G, t_guess)
            new = np.union1d(np.argsort(lo)[:k], np.argsort(hi)[-k:])
            candidates = new if candidates is None else np.union1d(candidates, new)
        # Only the first grid point with ratio >= delta matters: stop the scan there (same bracket as a
        # full scan, at a fraction of the small eigendecompositions).
        values = []
        for t_try in t_grid:
            bound = ratio_bound(t_try)
            values.append(bound - delta if bound < delta else ratio(t_try, candidates) - delta)
            if values[-1] >= 0:
                break
        values = np.array(values)
        above = np.nonzero(values >= 0)[0]
        if len(above) == 0:
            # The candidate ratio upper-bounds the all-client ratio, so this is a proof of infeasibility.
            raise ValueError(
                f"{name}={delta:g} is infeasible for this generator: with L - mu = {spread:g} it reaches "
                f"{name} up to about {values.max() + delta:g} for {n} clients (any instance needs "
                f"{name} <= L - mu)")
        j = above[0]
        if j == 0:
            t = t_grid[0]
        else:
            t = optimize.brentq(lambda s: ratio(s, candidates) - delta, t_grid[j - 1], t_grid[j],
                                xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
        lo, hi = _extremes(A_bar0, G, t)
        if len(candidates) == n or (lo.argmin() in candidates and hi.argmax() in candidates):
            return t, lo, hi
        t_guess = t
        candidates = np.union1d(candidates, [lo.argmin(), hi.argmax()])
    raise RuntimeError("scale search did not settle on its candidate clients")  # pragma: no cover


def quadratic(n_clients: int, dim: int, *, mu: float, L: float, delta_A: float | None = None,
              delta_B: float | None = None, zeta2: float = 0.0, hessians: HessianKind = "dense",
              weights: np.ndarray | None = None, x_star_norm: float = 1.0, seed: int = 0
              ) -> "QuadraticProblem | SharedBasisQuadratic":
    """A federated quadratic with exactly the requested constants (to floating-point accuracy).

    f_i(x) = 1/2 x^T A_i x - b_i^T x with min_i lambda_min(A_i) = ``mu``, max_i lambda_max(A_i) = ``L``,
    Hessian dissimilarity ``delta_A`` or ``delta_B`` (give at most one; neither means identical Hessians)
    and gradient heterogeneity sum_i w_i ||grad f_i(x*)||^2 = ``zeta2``. Construction (fedtheory's, not from
    the papers; docs/problems.md): A_i = a (Abar0 + t G_i) + c I with random symmetric G_i, sum_i w_i G_i = 0,
    and (a, c, t) solved so that the three constants are hit exactly; then b_i = A_i x* - r_i with
    sum_i w_i r_i = 0 and sum_i w_i ||r_i||^2 = zeta2, which makes x* (of norm ``x_star_norm``) the exact
    minimiser.

    ``hessians``: ``"dense"`` stores n Hessians of d^2 numbers (small n); ``"diagonal"`` stores (n, d) diagonals
    (a :class:`QuadraticProblem`); ``"eigenbasis"`` draws Hessians A_i = Q diag(s_i) Q^T sharing a random
    orthogonal Q, stored in O(n d) -- the cross-device family of :func:`fedtheory.problems.structured.
    structured_quadratic` (a :class:`~fedtheory.problems.structured.SharedBasisQuadratic`, 10^6 clients and more).

    Raises
    ------
    ValueError
        For an infeasible request, naming the parameter and the feasible range.
    """
    if hessians not in ("dense", "diagonal", "eigenbasis"):
        raise ValueError(f"hessians must be 'dense' or 'diagonal', or 'eigenbasis' (the cross-device family "
                         f"with a shared eigenbasis), got {hessians!r}")
    if hessians == "eigenbasis":
        return structured_quadratic(n_clients, dim, mu=mu, L=L, delta_A=delta_A, delta_B=delta_B, zeta2=zeta2,
                                    basis="random", weights=weights, x_star_norm=x_star_norm, seed=seed)
    n, d, mu, L, which, delta, zeta2, x_star_norm, w = check_quadratic_request(
        n_clients, dim, mu, L, delta_A, delta_B, zeta2, x_star_norm, weights)
    if hessians == "dense":  # G, its transpose, the certificate's eigendecomposition workspace
        check_dense_memory(n, d, DENSE_PEAK_ARRAYS, what="quadratic(hessians='dense')",
                           hint=STRUCTURED_HINT)

    rng = np.random.default_rng(check_seed("seed", seed))
    s0 = np.linspace(0.0, 1.0, d)
    if hessians == "dense":
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        A_bar0 = (Q * s0) @ Q.T
        # exactly symmetric, so every A_i is exactly symmetric and QuadraticProblem skips its symmetry pass
        A_bar0 = 0.5 * (A_bar0 + A_bar0.T)
        G = rng.standard_normal((n, d, d))
        G += np.swapaxes(G, 1, 2).copy()
    else:
        A_bar0 = s0
        G = rng.standard_normal((n, d))
    G_mean = weighted_mean(w, G)
    if hessians == "dense":  # BLAS may sum (i, j) and (j, i) in different orders: restore exact symmetry
        G_mean = 0.5 * (G_mean + G_mean.T)
    G -= G_mean
    return assemble_quadratic(A_bar0, G, w, mu=mu, L=L, delta=delta, which=which, zeta2=zeta2,
                              x_star_norm=x_star_norm, rng=rng)


def assemble_quadratic(A_bar0: np.ndarray, G: np.ndarray, w: np.ndarray, *, mu: float, L: float, delta: float,
                       which: str, zeta2: float, x_star_norm: float, rng: np.random.Generator) -> QuadraticProblem:
    """A_i = a (A_bar0 + t G_i) + c I with exact (mu, L, delta), then b_i with exact zeta2 (see quadratic()).

    ``G`` (consumed in place) must satisfy sum_i w_i G_i = 0; shared by :func:`quadratic` and the special
    constructions of :mod:`fedtheory.problems.constructions` (which choose their own directions G).
    """
    n, d = G.shape[0], G.shape[1]
    hessians = "dense" if G.ndim == 3 else "diagonal"
    spread = L - mu
    if delta > 0:
        G /= unit_dissimilarity(G, w, which)
        t, lo, hi = _solve_scale(A_bar0, G, spread, delta, which)
        mu0, L0 = lo.min(), hi.max()
        G *= t  # in place: base = A_bar0 + t G without another (n, d, d) temporary
        G += A_bar0
        base = G
    else:
        mu0, L0 = 0.0, 1.0
        base = np.broadcast_to(A_bar0, G.shape).copy()
    a = spread / (L0 - mu0)
    eye = np.eye(d) if hessians == "dense" else np.ones(d)
    base *= a
    base += (mu - a * mu0) * eye
    A = base

    x_star = rng.standard_normal(d)
    x_star *= x_star_norm / np.linalg.norm(x_star)
    r = rng.standard_normal((n, d))
    r -= w @ r
    if zeta2 > 0:
        r *= np.sqrt(zeta2 / (w @ np.sum(r * r, axis=1)))
    else:
        r[:] = 0.0
    hv = A * x_star if hessians == "diagonal" else A @ x_star
    b = hv - r
    return QuadraticProblem(A, b, w)
