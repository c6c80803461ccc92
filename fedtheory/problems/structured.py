"""Cross-device quadratics: 10^5-10^7 clients in O(n d) memory, with exact certificates.

A dense federated quadratic stores n Hessians of d^2 numbers each, which rules out the cross-device regime
(10^6 clients at d = 100 would need 80 GB). The family here shares one eigenbasis between the clients:

    f_i(x) = 1/2 x^T Q diag(s_i) Q^T x - c_i^T Q^T x,        A_i = Q diag(s_i) Q^T,  b_i = Q c_i,

with Q a d x d orthogonal matrix (``basis="random"``: Haar-distributed, so the Hessians are genuinely
non-diagonal; ``basis="identity"``: Q = I, diagonal Hessians) and s_i, c_i in R^d. Storage is 2 n d + d^2
numbers, and every constant the theory needs is a closed form in the eigen-coordinates (derived by fedtheory
for this family, not stated in the papers; Q orthogonal, so norms and spectra are those of the diagonal case):

    mu_i = min_j s_ij,  L_i = max_j s_ij,  sbar = sum_i w_i s_i,  z* = cbar / sbar,  x* = Q z*,
    E_i = A_i - Abar = Q diag(s_i - sbar) Q^T,
    delta_B = max_i ||E_i||_2 = max_{i,j} |s_ij - sbar_j|,
    delta_A = sqrt(lambda_max(sum_i w_i E_i^2)) = sqrt(max_j sum_i w_i (s_ij - sbar_j)^2),
    zeta2 = sum_i w_i ||grad f_i(x*)||^2 = sum_i w_i ||s_i * z* - c_i||^2

(the Hessian dissimilarities of Jiang, Rodomanov & Stich 2024, Defs. 1-2, specialised to quadratics as in
:mod:`fedtheory.problems.quadratic`). Every oracle on a subset of m clients costs O(m d) (identity basis) or
two (m, d) x (d, d) products (random basis) and never touches the other clients' rows, which is what makes a
round with S << n participants cost O(S d) (docs/problems.md, "Cross-device scale").

Generator (:func:`structured_quadratic`, also ``quadratic(..., hessians="eigenbasis")``): s_i = a (s0 + t g_i)
+ k 1 with s0 = linspace(0, 1, d), g_i uniform on [-1/2, 1/2)^d centred so that sum_i w_i g_i = 0, and
(a, k, t) chosen so that min s = mu, max s = L and delta = a t u(g) exactly (u the requested dissimilarity of
g). Unlike the dense generator no eigendecomposition is needed: the extremes of s0 + t g_i over all clients are
max_j (s0_j + t max_i g_ij) and min_j (s0_j + t min_i g_ij), piecewise linear in t with O(d) pieces, so the
scale t is a root of an O(d) function. c_i = s_i * z* - r_i with sum_i w_i r_i = 0 and sum_i w_i ||r_i||^2 =
zeta2 makes z* (of norm ``x_star_norm``) the exact minimiser in eigen-coordinates.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Literal, Mapping, TypeVar

import numpy as np
from scipy import optimize

from ..validation import available_memory, check_nonnegative, check_quadratic_request, check_seed, check_weights
from .base import Certificate, Problem, gradient_error_bound

__all__ = ["SharedBasisQuadratic", "structured_quadratic", "STRUCTURED_PEAK_ARRAYS", "CHUNK_ROWS"]

Basis = Literal["random", "identity"]
T = TypeVar("T")
#: Rows of the (n, d) arrays processed at once by the certificate and the generator (blocks of ~50 MB at
#: d = 100): keeps the temporaries of a pass over 10^6 clients at a few blocks instead of whole (n, d) copies.
#: It is also the block of rows one random stream fills in :func:`structured_quadratic` (streams are keyed by
#: (seed, purpose, block)), so it is part of every generated instance's definition: changing it changes the
#: arrays of a given seed (the catalogue's cross-device instances would need a version bump).
CHUNK_ROWS = 1 << 16
#: Peak memory of :func:`structured_quadratic` in (n, d) float64 arrays: s and c, plus chunk temporaries.
STRUCTURED_PEAK_ARRAYS = 2


def _chunks(n: int, size: int = CHUNK_ROWS) -> list[slice]:
    return [slice(lo, min(n, lo + size)) for lo in range(0, n, size)]


#: Threads of the chunked passes (NumPy's elementwise kernels release the GIL, so chunks run in parallel).
THREADS = max(1, min(4, os.cpu_count() or 1))


def _map_chunks(fn: Callable[[int, slice], T], n: int) -> list[T]:
    """``[fn(k, chunk_k) for every chunk]`` run on :data:`THREADS` threads, results in chunk order.

    Each call writes only its own rows, and partial results are combined by the caller in chunk order, so the
    output is bitwise the same for any number of threads.
    """
    chunks = _chunks(n)
    if THREADS == 1 or len(chunks) == 1:
        return [fn(k, sl) for k, sl in enumerate(chunks)]

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        return list(pool.map(fn, range(len(chunks)), chunks))


class SharedBasisQuadratic(Problem):
    """f(x) = sum_i w_i (1/2 x^T Q diag(s_i) Q^T x - c_i^T Q^T x): Hessians sharing one eigenbasis Q.

    Parameters
    ----------
    s:
        Eigenvalues of the client Hessians, shape ``(n, d)`` (>= 0: the family is convex).
    c:
        Linear terms in eigen-coordinates, shape ``(n, d)`` (b_i = Q c_i).
    Q:
        Orthogonal ``(d, d)`` matrix whose columns are the shared eigenvectors, or None for Q = I (diagonal
        Hessians; every oracle is then elementwise).
    weights:
        Client weights (normalised to sum to one; uniform when None).

    ``s``, ``c`` and ``Q`` are taken over without a copy (10^6 clients: no second copy of 1.5 GB) and made
    read-only, so the certificate computed from them stays true; pass copies to keep writable arrays.
    """

    def __init__(self, s: np.ndarray, c: np.ndarray, Q: np.ndarray | None = None,
                 weights: np.ndarray | None = None) -> None:
        s = np.ascontiguousarray(s, dtype=np.float64)
        c = np.ascontiguousarray(c, dtype=np.float64)
        if s.ndim != 2 or c.shape != s.shape:
            raise ValueError(f"s and c must both have shape (n, d), got {s.shape} and {c.shape}")
        self.n_clients, self.dim = s.shape
        if Q is not None:
            Q = np.ascontiguousarray(Q, dtype=np.float64)
            if Q.shape != (self.dim, self.dim):
                raise ValueError(f"Q must have shape (d, d) = ({self.dim}, {self.dim}), got {Q.shape}")
            if not np.allclose(Q.T @ Q, np.eye(self.dim), rtol=0.0, atol=1e-12 * self.dim):
                raise ValueError("Q must be orthogonal (Q^T Q = I): the certificate's closed forms need it")
        self.s, self.c, self.Q = s, c, Q
        for arr in (s, c) if Q is None else (s, c, Q):
            arr.setflags(write=False)  # the defining arrays: immutable, so the certificate and row cache stay valid
        self._rows_cache: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.weights = check_weights(weights, self.n_clients)
        self.hessians = "diagonal" if Q is None else "eigenbasis"
        self.s_bar, self.c_bar = self._means()
        self.certificate = self._certify()

    def _means(self) -> tuple[np.ndarray, np.ndarray]:
        """sbar = sum_i w_i s_i and cbar, shifted by the first client's row: v + sum_i w_i (s_i - v).

        The shift makes identical rows average to themselves exactly (a plain weighted sum of 10^6 equal rows
        is off by ~ n eps, which the certificate would report as a dissimilarity of 1e-12); the same pass
        checks that the arrays are finite (chunked: ``np.isfinite`` of the whole array would be an (n, d)
        temporary).
        """
        s, c, w = self.s, self.c, self.weights
        v_s, v_c = s[0].copy(), c[0].copy()

        def block(k: int, sl: slice) -> tuple[bool, np.ndarray, np.ndarray]:
            S, C = s[sl], c[sl]
            finite = bool(np.isfinite(S).all() and np.isfinite(C).all())
            return finite, w[sl] @ (S - v_s), w[sl] @ (C - v_c)

        parts = _map_chunks(block, self.n_clients)
        if not all(p[0] for p in parts):
            raise ValueError("s and c must be finite")
        return v_s + np.sum([p[1] for p in parts], axis=0), v_c + np.sum([p[2] for p in parts], axis=0)

    # ----- defining arrays -----
    def arrays(self) -> dict[str, np.ndarray]:
        out = {"s": self.s, "c": self.c, "weights": self.weights}
        if self.Q is not None:
            out["Q"] = self.Q
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> "SharedBasisQuadratic":
        return cls(arrays["s"], arrays["c"], arrays.get("Q"), arrays["weights"])

    @property
    def nbytes(self) -> int:
        """Memory held by the defining arrays (2 n d + d^2 float64)."""
        return self.s.nbytes + self.c.nbytes + (0 if self.Q is None else self.Q.nbytes)

    # ----- coordinates -----
    def _to_eigen(self, X: np.ndarray) -> np.ndarray:
        """Z = X Q (rows z_i = Q^T x_i); a fresh array."""
        return np.array(X, dtype=np.float64) if self.Q is None else np.asarray(X, dtype=np.float64) @ self.Q

    def _from_eigen(self, Z: np.ndarray) -> np.ndarray:
        return Z if self.Q is None else Z @ self.Q.T

    def _rows(self, clients: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """(s_i, c_i) of the listed clients. The last subset's rows are cached: local solvers call the oracle K
        times on the same participants, and gathering S scattered rows of a 10^6-row table costs more than the
        oracle's arithmetic (s and c are read-only, so the cache cannot go stale; the key is compared by value,
        O(S))."""
        if clients is None:
            return self.s, self.c
        cached = self._rows_cache
        if cached is not None and cached[0].shape == np.shape(clients) and np.array_equal(cached[0], clients):
            return cached[1], cached[2]
        key = np.array(clients, dtype=np.int64)
        rows = (self.s[key], self.c[key])
        for arr in rows:
            arr.setflags(write=False)  # handed to callers: nobody may change the cached copy
        self._rows_cache = (key, *rows)
        return rows

    # ----- certificate (one chunked O(n d) pass; no (n, d) temporary) -----
    def _certify(self) -> Certificate:
        s, c, w, d = self.s, self.c, self.weights, self.dim
        mu_i = np.empty(self.n_clients)
        L_i = np.empty(self.n_clients)
        s_bar = self.s_bar
        keep = s_bar > 0
        z_star = np.where(keep, self.c_bar / np.where(keep, s_bar, 1.0), 0.0)  # minimum-norm minimiser

        def block(k: int, sl: slice) -> tuple[np.ndarray, np.ndarray, float, float]:
            blk = s[sl]
            mu_i[sl] = blk.min(axis=1)
            L_i[sl] = blk.max(axis=1)
            E = blk - s_bar
            dev_max = np.abs(E).max(axis=0)
            E *= E
            dev_sq = w[sl] @ E
            R = blk * z_star
            R -= c[sl]
            zeta2 = float(w[sl] @ np.einsum("ij,ij->i", R, R))
            b_norm = float(np.sqrt(np.einsum("ij,ij->i", c[sl], c[sl]).max()))
            return dev_max, dev_sq, zeta2, b_norm

        parts = _map_chunks(block, self.n_clients)
        dev_max = np.max([p[0] for p in parts], axis=0)
        dev_sq = np.sum([p[1] for p in parts], axis=0)  # partial sums added in chunk order: thread-independent
        zeta2 = math.fsum(p[2] for p in parts)
        b_norm_max = max(p[3] for p in parts)
        if np.min(mu_i) < -1e-12 * max(1.0, float(np.max(np.abs(L_i)))):
            raise ValueError("SharedBasisQuadratic needs s >= 0 (convex clients); use the nonconvex family")
        g_star = s_bar * z_star - self.c_bar
        residual = float(np.linalg.norm(g_star) / max(1.0, float(np.linalg.norm(self.c_bar))))
        if residual > 1e-8:
            raise ValueError("f has no minimiser: the mean linear term is not in the range of the mean Hessian")
        x_star = self._from_eigen(z_star[None, :])[0].copy()
        L = float(np.max(L_i))
        gradient_scale = float(L * np.linalg.norm(z_star) + b_norm_max)
        return Certificate(
            x_star=x_star, f_star=float(-0.5 * self.c_bar @ z_star),
            mu=float(np.min(mu_i)), L=L, mu_f=float(np.min(s_bar)), L_f=float(np.max(s_bar)),
            mu_i=mu_i, L_i=L_i,
            delta_A=float(np.sqrt(max(float(dev_sq.max()), 0.0))), delta_B=float(dev_max.max()),
            zeta2=zeta2, weights=w, kkt_residual=residual,
            exact={name: True for name in ("x_star", "f_star", "mu", "L", "delta_A", "delta_B", "zeta2")},
            gradient_error=gradient_error_bound(d, gradient_scale, L, float(np.min(s_bar)),
                                                float(np.linalg.norm(g_star))),
        )

    # ----- per-client oracles (cost proportional to the listed clients) -----
    def hess_vec(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        """A_i X[i] = Q (s_i * (Q^T X[i])) for every (listed) client."""
        self._check_points(X, clients)
        Z = self._to_eigen(X)
        Z *= self._rows(clients)[0]
        return self._from_eigen(Z)

    def grads(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        self._check_points(X, clients)
        s, c = self._rows(clients)
        Z = self._to_eigen(X)
        Z *= s
        Z -= c
        return self._from_eigen(Z)

    def fisher_diag(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        """diag(A_i) = (Q o Q) s_i for the listed clients (independent of X): the Fisher information diagonal of
        a unit-variance Gaussian likelihood, as EFL (Ma et al., Alg. 2) uses for quadratics."""
        self._check_points(X, clients)
        s = self._rows(clients)[0]
        return np.array(s) if self.Q is None else s @ (self.Q * self.Q).T

    def values(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        self._check_points(X, clients)
        s, c = self._rows(clients)
        Z = self._to_eigen(X)
        return np.einsum("nd,nd->n", Z, 0.5 * s * Z - c)

    def solve_local(self, lin: np.ndarray, center: np.ndarray, lam: float | np.ndarray, l1: float = 0.0,
                    clients: np.ndarray | None = None) -> np.ndarray:
        """Exact argmin_x f_i(x) + <lin_i, x> + lam/2 ||x - center_i||^2 (+ l1 ||x - center_i||_1).

        In eigen-coordinates the system (A_i + lam I) x = b_i - lin_i + lam center_i is diagonal:
        z = (c_i - Q^T lin_i + lam Q^T center_i) / (s_i + lam). The l1 term is separable only for the identity
        basis, where the solution is the closed-form soft-threshold u = -S_l1(s_i center_i - c_i + lin_i) /
        (s_i + lam), x = center_i + u; a rotated basis with l1 > 0 is refused.
        """
        l1 = check_nonnegative("l1", l1)
        lam_arr = self._check_local_args(lin, center, lam, clients)
        if np.any(lam_arr < 0):
            raise ValueError(f"lam must be in [0, inf), got {lam}")
        s, c = self._rows(clients)
        lam_col = lam_arr[..., None] if lam_arr.ndim == 1 else lam_arr
        denom = s + lam_col
        if np.any(denom.min(axis=1) <= 0):
            rows = np.nonzero(denom.min(axis=1) <= 0)[0]
            ids = (rows if clients is None else np.asarray(clients)[rows])[:5].tolist()
            raise ValueError(f"lam must be > 0 here: the local subproblem of client(s) {ids} (mu_i = 0, merely "
                             f"convex) is not strongly convex with lam={lam!r}")
        if l1 > 0.0:
            if self.Q is not None:
                raise ValueError("l1 > 0 needs axis-aligned Hessians (basis='identity'): with a rotated shared "
                                 "basis the l1 term is not separable")
            ctr = np.asarray(center, dtype=np.float64)
            v = s * ctr - c + np.asarray(lin, dtype=np.float64)
            u = -np.sign(v) * np.maximum(np.abs(v) - l1, 0.0) / denom
            return ctr + u
        Z = c - self._to_eigen(lin)
        Z += lam_col * self._to_eigen(center)
        Z /= denom
        return self._from_eigen(Z)

    # ----- global oracles in O(d) (identity) or O(d^2) (rotated), never a pass over the clients -----
    def value(self, x: np.ndarray) -> float:
        self._check_point(x)
        z = self._to_eigen(x[None, :])[0]
        return float(0.5 * z @ (self.s_bar * z) - self.c_bar @ z)

    def grad(self, x: np.ndarray) -> np.ndarray:
        self._check_point(x)
        z = self._to_eigen(x[None, :])[0]
        return self._from_eigen((self.s_bar * z - self.c_bar)[None, :])[0]

    def gap(self, x: np.ndarray) -> float:
        """1/2 (x - x*)^T Abar (x - x*), exact (no cancellation in f(x) - f*)."""
        self._check_point(x)
        e = self._to_eigen((x - self.certificate.x_star)[None, :])[0]
        return float(0.5 * e @ (self.s_bar * e))

    def mean_hessian(self) -> np.ndarray:
        """Abar = Q diag(sbar) Q^T as a dense (d, d) matrix (for closed forms; O(d^2) memory)."""
        return np.diag(self.s_bar) if self.Q is None else (self.Q * self.s_bar) @ self.Q.T


def check_structured_memory(n_clients: int, dim: int) -> None:
    """Refuse, before allocating, a structured instance whose two (n, d) float64 arrays cannot fit."""
    need = (STRUCTURED_PEAK_ARRAYS + 0.5) * 8.0 * n_clients * dim
    available = available_memory()
    if available is not None and need > available:
        n_max = int(available / ((STRUCTURED_PEAK_ARRAYS + 0.5) * 8.0 * dim))
        raise ValueError(f"n_clients={n_clients} is too large for dim={dim}: structured_quadratic holds "
                         f"{STRUCTURED_PEAK_ARRAYS} arrays of n_clients*dim float64 ({need / 2**30:.1f} GiB with "
                         f"its working blocks) and {available / 2**30:.1f} GiB of memory is available; n_clients "
                         f"must be <= {n_max} with dim={dim}")


def _extreme_range(s0: np.ndarray, g_lo: np.ndarray, g_hi: np.ndarray, t: float) -> tuple[float, float]:
    """(min, max) over all clients and coordinates of s0_j + t g_ij, from the per-coordinate g extremes."""
    return float(np.min(s0 + t * g_lo)), float(np.max(s0 + t * g_hi))


def _solve_scale(s0: np.ndarray, g_lo: np.ndarray, g_hi: np.ndarray, spread: float, delta: float,
                 name: str) -> float:
    """The smallest t with spread t / (max - min of s0 + t g) = delta (g normalised to unit dissimilarity).

    Exact and O(d) per evaluation (see the module docstring); the first crossing on a geometric grid is
    refined by Brent's method to full precision.
    """
    def ratio(t: float) -> float:
        lo, hi = _extreme_range(s0, g_lo, g_hi, t)
        return spread * t / (hi - lo)

    grid = np.geomspace(1e-10, 1e10, 401)
    values = np.array([ratio(t) - delta for t in grid])
    above = np.nonzero(values >= 0)[0]
    if above.size == 0:
        raise ValueError(f"{name}={delta:g} is infeasible for this generator: with L - mu = {spread:g} it reaches "
                         f"{name} up to about {values.max() + delta:g} (any instance needs {name} <= L - mu)")
    j = int(above[0])
    if j == 0:
        return float(grid[0])
    return float(optimize.brentq(lambda t: ratio(t) - delta, grid[j - 1], grid[j], xtol=1e-300,
                                 rtol=4 * np.finfo(float).eps, maxiter=500))


def structured_quadratic(n_clients: int, dim: int, *, mu: float, L: float, delta_A: float | None = None,
                         delta_B: float | None = None, zeta2: float = 0.0, basis: Basis = "random",
                         weights: np.ndarray | None = None, x_star_norm: float = 1.0,
                         seed: int = 0) -> SharedBasisQuadratic:
    """A cross-device quadratic (shared eigenbasis) with exactly the requested constants, in O(n d) memory.

    Same parameters and guarantees as :func:`fedtheory.problems.quadratic` (min_i mu_i = ``mu``, max_i L_i =
    ``L``, ``delta_A`` or ``delta_B``, ``zeta2``, ||x*|| = ``x_star_norm``), for 10^5-10^7 clients: see the
    module docstring for the construction. ``basis="random"`` draws a Haar orthogonal Q (non-diagonal
    Hessians), ``basis="identity"`` gives diagonal Hessians.

    Raises
    ------
    ValueError
        For an infeasible request (naming the parameter and the feasible range) or one that cannot fit in memory.
    """
    if basis not in ("random", "identity"):
        raise ValueError(f"basis must be 'random' or 'identity', got {basis!r}")
    n, d, mu, L, which, delta, zeta2, x_star_norm, w = check_quadratic_request(
        n_clients, dim, mu, L, delta_A, delta_B, zeta2, x_star_norm, weights)
    check_structured_memory(n, d)
    seed = check_seed("seed", seed)
    rng = np.random.default_rng(seed)
    Q = None
    if basis == "random":
        M = rng.standard_normal((d, d))
        Q, R = np.linalg.qr(M)
        Q *= np.sign(np.diag(R))  # the sign fix makes Q Haar-distributed (Mezzadri 2007)
    s0 = np.linspace(0.0, 1.0, d)
    spread = L - mu

    # Every chunk of rows draws from its own stream (seed, purpose, chunk): the arrays are the same for any
    # number of threads.
    def chunk_rng(purpose: int, k: int) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, purpose, k])))

    # Directions g (becomes s in place): uniform, centred so that sum_i w_i g_i = 0.
    s = np.empty((n, d))

    def fill_g(k: int, sl: slice) -> np.ndarray:
        chunk_rng(1, k).random(out=s[sl])
        return w[sl] @ s[sl]

    g_mean = np.sum(_map_chunks(fill_g, n), axis=0)

    def centre_g(k: int, sl: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        blk = s[sl]
        blk -= g_mean
        return blk.min(axis=0), blk.max(axis=0), (w[sl] @ (blk * blk) if which == "delta_A" else np.zeros(d))

    parts = _map_chunks(centre_g, n)
    g_lo = np.min([p[0] for p in parts], axis=0)
    g_hi = np.max([p[1] for p in parts], axis=0)
    dev_sq = np.sum([p[2] for p in parts], axis=0)
    if delta > 0:
        # unit dissimilarity of g: delta_A(g) = sqrt(max_j sum_i w_i g_ij^2), delta_B(g) = max |g_ij|
        unit = float(np.sqrt(dev_sq.max())) if which == "delta_A" else float(max(-g_lo.min(), g_hi.max()))
        t = _solve_scale(s0, g_lo / unit, g_hi / unit, spread, delta, which) / unit
        lo, hi = _extreme_range(s0, g_lo, g_hi, t)
    else:
        t, lo, hi = 0.0, 0.0, 1.0
    a = spread / (hi - lo)
    k0 = mu - a * lo
    base = a * s0 + k0
    if t == 0.0:
        base[0], base[-1] = mu, L  # identical Hessians: every client is exactly this row, delta = 0 exactly

    # s_i = a (s0 + t g_i) + k0 in place; r (the gradients at x*, up to scale) drawn into c.
    c = np.empty((n, d))

    def form_s(k: int, sl: slice) -> tuple[np.ndarray, tuple[int, float], tuple[int, float]]:
        blk = s[sl]
        blk *= a * t
        blk += base
        chunk_rng(2, k).random(out=c[sl])
        i_lo, i_hi = int(np.argmin(blk)), int(np.argmax(blk))
        return w[sl] @ c[sl], (sl.start * d + i_lo, blk.flat[i_lo]), (sl.start * d + i_hi, blk.flat[i_hi])

    parts = _map_chunks(form_s, n)
    r_mean = np.sum([p[0] for p in parts], axis=0)
    if t > 0.0:
        # The affine map is exact only to rounding: put the two extreme entries exactly on mu and L (an O(eps)
        # move), so the certificate reports mu and L as requested.
        flat_lo = min((p[1] for p in parts), key=lambda e: e[1])[0]
        flat_hi = max((p[2] for p in parts), key=lambda e: e[1])[0]
        s.flat[flat_lo], s.flat[flat_hi] = mu, L

    def centre_r(k: int, sl: slice) -> float:
        blk = c[sl]
        blk -= r_mean
        return float(w[sl] @ np.einsum("ij,ij->i", blk, blk))

    r_sq = math.fsum(_map_chunks(centre_r, n))
    scale = math.sqrt(zeta2 / r_sq) if zeta2 > 0 and r_sq > 0 else 0.0
    # z* (the minimiser in eigen-coordinates), then c_i = s_i * z* - r_i.
    z_star = rng.standard_normal(d)
    nz = np.linalg.norm(z_star)
    z_star *= x_star_norm / nz if nz > 0 else 0.0

    def form_c(k: int, sl: slice) -> None:
        blk = c[sl]
        blk *= -scale
        blk += s[sl] * z_star

    _map_chunks(form_c, n)
    return SharedBasisQuadratic(s, c, Q, w)
