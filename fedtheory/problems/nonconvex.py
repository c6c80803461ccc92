"""Non-convex federated problems with exact Hessian dissimilarity (fedtheory's construction, docs/problems.md;
non-convex in the sense of Jiang, Rodomanov & Stich 2024, whose own non-convex instance is not recoverable).

    f_i(x) = c sum_j log(1 + x_j^2) + nu/2 ||x||^2 + 1/2 x^T E_i x + c_i^T x,    sum_i w_i E_i = 0.

Dissimilarity only sees h_i = f - f_i = -(E_i x + c_i - cbar) + const, so delta_B = max_i ||E_i|| and
delta_A = sqrt(lambda_max(sum_i w_i E_i^2)) are exact whatever the common part. The common part
psi(x) = c sum_j log(1 + x_j^2) has psi''(t) = 2c (1 - t^2) / (1 + t^2)^2 in [-c/4, 2c] per coordinate
(-c/4 at t^2 = 3, 2c at t = 0), so every constant is exact:

    mu_i = nu - c/4 + lambda_min(E_i)   (attained at x_j = +-sqrt(3)),  L_i = 2c + nu + lambda_max(E_i)  (at x = 0),
    mu_f = nu - c/4, L_f = 2c + nu.

f = psi + nu/2 ||x||^2 + cbar^T x (cbar = sum_i w_i c_i) is separable, so its global minimum is exact: per
coordinate the stationary points are the real roots of the cubic nu t^3 + cbar_j t^2 + (2c + nu) t + cbar_j = 0;
the best one is the global minimiser. A known lower bound (psi >= 0) is f >= -||cbar||^2 / (2 nu), and a
multi-start gradient descent estimate of f^inf is recorded as a cross-check (labelled an estimate).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..linalg import batched_matvec, sym_extreme_eigs
from ..validation import (
    check_dense_memory,
    check_dissimilarity_request,
    check_int,
    check_nonnegative,
    check_positive,
    check_seed,
    check_weights,
)
from .base import Certificate
from .quadratic import CROSS_DEVICE_HINT, hessian_dissimilarity, unit_dissimilarity, weighted_mean
from .smooth import SmoothProblem

__all__ = ["NonconvexProblem", "nonconvex"]


def _separable_minimum(curv: float, nu: float, cbar: np.ndarray) -> np.ndarray:
    """Global minimiser of g_j(t) = curv log(1 + t^2) + nu/2 t^2 + cbar_j t, for every coordinate."""
    out = np.empty_like(cbar)
    for j, b in enumerate(cbar):  # d cubics once per instance (construction time)
        roots = np.roots([nu, b, 2 * curv + nu, b])
        real = roots[np.abs(roots.imag) <= 1e-9 * (1 + np.abs(roots.real))].real
        # polish each stationary point with Newton on g' (np.roots is accurate to ~1e-12 only)
        for _ in range(5):
            gp = 2 * curv * real / (1 + real**2) + nu * real + b
            gpp = 2 * curv * (1 - real**2) / (1 + real**2) ** 2 + nu
            real = real - np.where(gpp != 0, gp / np.where(gpp != 0, gpp, 1.0), 0.0)
        vals = curv * np.log1p(real**2) + 0.5 * nu * real**2 + b * real
        out[j] = real[np.argmin(vals)]
    return out


class NonconvexProblem(SmoothProblem):
    """f_i(x) = c sum_j log(1 + x_j^2) + nu/2 ||x||^2 + 1/2 x^T E_i x + c_i^T x (see the module docstring)."""

    def __init__(self, E: np.ndarray, lin: np.ndarray, *, curvature: float, nu: float,
                 weights: np.ndarray | None = None, sigma2: float = 0.0, multistart: int = 16,
                 seed: int = 0) -> None:
        E = np.asarray(E, dtype=np.float64)
        lin = np.asarray(lin, dtype=np.float64)
        if E.ndim != 3 or E.shape[1] != E.shape[2] or lin.shape != E.shape[:2]:
            raise ValueError(f"E must be (n, d, d) and lin (n, d), got {E.shape} and {lin.shape}")
        if not (np.all(np.isfinite(E)) and np.all(np.isfinite(lin))):
            raise ValueError("E and lin must be finite")
        self.n_clients, self.dim = lin.shape
        self.weights = check_weights(weights, self.n_clients)
        E_bar = weighted_mean(self.weights, E)
        if not np.allclose(E, np.swapaxes(E, 1, 2), rtol=0, atol=1e-12 * max(1.0, np.abs(E).max())):
            raise ValueError("E must be symmetric for every client")
        if np.abs(E_bar).max() > 1e-10 * max(1.0, np.abs(E).max()):
            raise ValueError("E must satisfy sum_i w_i E_i = 0 (the common part is c log(1+x^2) + nu/2 ||x||^2)")
        self.E = 0.5 * (E + np.swapaxes(E, 1, 2))
        self.c = lin
        self.curvature = check_positive("curvature", curvature)
        self.nu = check_positive("nu", nu)
        self.sigma2 = check_nonnegative("sigma2", sigma2)
        self.multistart = check_int("multistart", multistart, low=1)
        self._seed = check_seed("seed", seed)
        self.certificate = self._certify()

    def arrays(self) -> dict[str, np.ndarray]:
        return {"E": self.E, "c": self.c, "weights": self.weights, "curvature": np.array(self.curvature),
                "nu": np.array(self.nu), "multistart": np.array(self.multistart), "seed": np.array(self._seed)}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> "NonconvexProblem":
        return cls(arrays["E"], arrays["c"], curvature=float(arrays["curvature"]), nu=float(arrays["nu"]),
                   weights=arrays["weights"], multistart=int(arrays["multistart"]), seed=int(arrays["seed"]))

    def _psi_values(self, X, idx):
        return self.curvature * np.log1p(X * X).sum(axis=1) + 0.5 * self.nu * np.einsum("nd,nd->n", X, X)

    def _psi_grads(self, X, idx):
        return 2 * self.curvature * X / (1 + X * X) + self.nu * X

    def _psi_hessians(self, X, idx):
        diag = 2 * self.curvature * (1 - X * X) / (1 + X * X) ** 2 + self.nu
        H = np.zeros(X.shape + (X.shape[1],))
        r = np.arange(X.shape[1])
        H[:, r, r] = diag
        return H

    @property
    def lower_bound(self) -> float:
        """The known lower bound f >= -||cbar||^2 / (2 nu) (psi >= 0, complete the square)."""
        cbar = self.weights @ self.c
        return float(-(cbar @ cbar) / (2 * self.nu))

    def _multistart_estimate(self, iters: int = 2000) -> float:
        """f^inf estimated by gradient descent (step 1/L_f) from ``multistart`` random starts, batched."""
        rng = np.random.default_rng(self._seed)
        cbar = self.weights @ self.c
        radius = 1.0 + np.linalg.norm(cbar) / self.nu
        X = radius * rng.standard_normal((self.multistart, self.dim))
        step = 1.0 / (2 * self.curvature + self.nu)
        for _ in range(iters):
            X -= step * (2 * self.curvature * X / (1 + X * X) + self.nu * X + cbar)
        vals = self.curvature * np.log1p(X * X).sum(axis=1) + 0.5 * self.nu * np.sum(X * X, axis=1) + X @ cbar
        return float(vals.min())

    def _certify(self) -> Certificate:
        w = self.weights
        lo, hi = sym_extreme_eigs(self.E)
        mu_i = self.nu - self.curvature / 4 + lo
        L_i = 2 * self.curvature + self.nu + hi
        self._mu_local = mu_i
        cbar = w @ self.c
        x_star = _separable_minimum(self.curvature, self.nu, cbar)
        delta_A, delta_B = hessian_dissimilarity(self.E, w)
        G = self.grads(self.broadcast(x_star))
        g = w @ G
        residual = float(np.linalg.norm(g) / max(1.0, float(np.linalg.norm(cbar))))
        estimate = self._multistart_estimate()
        f_star = self.value(x_star)
        return Certificate(
            x_star=x_star, f_star=f_star, mu=float(mu_i.min()), L=float(L_i.max()),
            mu_f=self.nu - self.curvature / 4, L_f=2 * self.curvature + self.nu, mu_i=mu_i, L_i=L_i,
            delta_A=delta_A, delta_B=delta_B, zeta2=float(w @ np.sum(G * G, axis=1)), weights=w,
            kkt_residual=residual, sigma2=self.sigma2,
            exact={"x_star": True, "f_star": True, "mu": True, "L": True, "delta_A": True, "delta_B": True,
                   "zeta2": True, "f_inf_multistart": False},
            notes=(f"f* is the exact global minimum of the separable f (cubic roots per coordinate); "
                   f"known lower bound {self.lower_bound:.17g}; multi-start GD estimate of f^inf "
                   f"(ESTIMATE, {self.multistart} starts) {estimate:.17g}; mu is weak convexity (may be < 0)"),
            gradient_error=self._gradient_error(x_star, L_i, self.nu - self.curvature / 4))

    @property
    def f_inf_multistart(self) -> float:
        """Multi-start gradient-descent estimate of f^inf (an estimate; compare with certificate.f_star)."""
        return self._multistart_estimate()


def nonconvex(n_clients: int, dim: int, *, curvature: float = 1.0, nu: float = 0.1, delta_A: float | None = None,
              delta_B: float | None = None, zeta2: float = 0.0, mean_linear: float = 1.0,
              weights: np.ndarray | None = None, seed: int = 0) -> NonconvexProblem:
    """The non-convex family of this module (fedtheory's construction, docs/problems.md) with exact constants.

    ``curvature`` is c and ``nu`` is nu in the formula above (f is non-convex when nu < c/4). E_i are random
    symmetric with sum_i w_i E_i = 0, scaled so that ``delta_A`` or ``delta_B`` is exact. The linear terms are
    c_i = cbar + r_i - E_i x* with ||cbar|| = ``mean_linear`` (it moves x* away from 0), sum_i w_i r_i = 0 and
    sum_i w_i ||r_i||^2 = ``zeta2``, so that zeta2 = sum_i w_i ||grad f_i(x*)||^2 exactly.
    """
    n = check_int("n_clients", n_clients, low=1)
    d = check_int("dim", dim, low=1)
    curvature = check_positive("curvature", curvature)
    nu = check_positive("nu", nu)
    zeta2 = check_nonnegative("zeta2", zeta2)
    mean_linear = check_nonnegative("mean_linear", mean_linear)
    which, delta = check_dissimilarity_request(delta_A, delta_B, n_clients=n, zeta2=zeta2)
    w = check_weights(weights, n)
    # G, its transpose and the certificate's eigenvalue workspace: measured peak 3.2 arrays of shape (n, d, d)
    check_dense_memory(n, d, 3, what="nonconvex", hint=CROSS_DEVICE_HINT)
    rng = np.random.default_rng(check_seed("seed", seed))
    G = rng.standard_normal((n, d, d))
    G += np.swapaxes(G, 1, 2).copy()
    G_mean = weighted_mean(w, G)
    G -= 0.5 * (G_mean + G_mean.T)
    if delta > 0 and d > 0:
        G *= delta / unit_dissimilarity(G, w, which)
    else:
        G[:] = 0.0
    cbar = rng.standard_normal(d)
    cbar *= mean_linear / max(np.linalg.norm(cbar), 1e-300)
    x_star = _separable_minimum(curvature, nu, cbar)
    r = rng.standard_normal((n, d))
    r -= w @ r
    r *= np.sqrt(zeta2 / (w @ np.sum(r * r, axis=1))) if zeta2 > 0 else 0.0
    lin = cbar + r - batched_matvec(G, np.broadcast_to(x_star, (n, d)))
    return NonconvexProblem(G, lin, curvature=curvature, nu=nu, weights=w, seed=seed)
