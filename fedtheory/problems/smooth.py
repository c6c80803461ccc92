"""Shared machinery of the smooth non-quadratic families (logistic, nonconvex).

Both families have the form (fedtheory's exact-delta constructions, docs/problems.md)

    f_i(x) = psi_i(x) + 1/2 x^T E_i x + c_i^T x,

with psi_i the family's own part (a logistic loss on the client's data, or a common non-convex
regulariser) and an optional quadratic perturbation (E_i, c_i). Subclasses provide batched value, gradient
and Hessian of psi_i; this class adds the perturbation and the exact local solver

    solve_local: argmin_x f_i(x) + <lin_i, x> + lam/2 ||x - center_i||^2 + l1 ||x - center_i||_1,

by batched damped Newton (l1 = 0) or batched proximal Newton (l1 > 0; the inner l1-regularised quadratic
model is solved exactly by :func:`fedtheory.prox_l1.solve_quadratic_l1`), for every client at once,
until the relative gradient (or l1-KKT) residual is <= 1e-12.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..linalg import batched_matvec, sym_extreme_eigs
from ..prox_l1 import kkt_residual_l1, solve_quadratic_l1
from ..validation import check_nonnegative
from .base import Problem, gradient_error_bound

__all__ = ["SmoothProblem", "NEWTON_TOL"]

#: Relative residual the exact local solver and the certificates drive to.
NEWTON_TOL = 1e-12


class SmoothProblem(Problem):
    """Base class: f_i = psi_i + 1/2 x^T E_i x + c_i^T x with batched Newton local solves."""

    E: np.ndarray | None = None  # (n, d, d) symmetric perturbations (or None)
    c: np.ndarray | None = None  # (n, d) linear terms (or None)
    #: per-client strong-convexity constant of f_i (possibly negative), used to validate lam
    _mu_local: np.ndarray

    # ----- the family's own part (subclasses) -----
    def _psi_values(self, X: np.ndarray, idx: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError

    def _psi_grads(self, X: np.ndarray, idx: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError

    def _psi_hessians(self, X: np.ndarray, idx: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError

    # ----- oracles -----
    def _pert(self, idx: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray | None]:
        E = None if self.E is None else (self.E if idx is None else self.E[idx])
        c = None if self.c is None else (self.c if idx is None else self.c[idx])
        return E, c

    def values(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        self._check_points(X, clients)
        out = self._psi_values(X, clients)
        E, c = self._pert(clients)
        if E is not None:
            out = out + 0.5 * np.einsum("nd,nd->n", X, batched_matvec(E, X))
        if c is not None:
            out = out + np.einsum("nd,nd->n", c, X)
        return out

    def grads(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        self._check_points(X, clients)
        out = self._psi_grads(X, clients)
        E, c = self._pert(clients)
        if E is not None:
            out = out + batched_matvec(E, X)
        if c is not None:
            out = out + c
        return out

    def hessians(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        """Per-client Hessians nabla^2 f_i(X[i]), shape ``(m, d, d)``."""
        self._check_points(X, clients)
        out = self._psi_hessians(X, clients)
        E, _ = self._pert(clients)
        return out if E is None else out + E

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """Hessian of the global objective f at x."""
        self._check_point(x)
        return np.tensordot(self.weights, self.hessians(self.broadcast(x)), axes=1)

    # ----- certificates -----
    def _gradient_error(self, x_star: np.ndarray, L_i: np.ndarray, mu_f: float) -> float:
        """:func:`~fedtheory.problems.base.gradient_error_bound` at the certificate's x* (for the zeta2 policy).

        grad f_i(x*) = grad f_i(0) + int_0^1 H_i(t x*) x* dt, so max_i (L_i ||x*|| + ||grad f_i(0)||) bounds
        the magnitudes summed in it.
        """
        g0 = self.grads(self.broadcast(np.zeros(self.dim)))
        scale = float(np.max(L_i * np.linalg.norm(x_star) + np.linalg.norm(g0, axis=1)))
        return gradient_error_bound(self.dim, scale, float(np.max(L_i)), mu_f,
                                    float(np.linalg.norm(self.grad(x_star))))

    # ----- global Newton (certificates) -----
    def _global_newton(self, x0: np.ndarray, max_iter: int = 100) -> tuple[np.ndarray, float]:
        """Damped Newton on f from x0; returns (x, ||grad f(x)|| / max(1, ||grad f(0)||))."""
        g0 = self.grad(np.zeros(self.dim))
        scale = max(1.0, float(np.linalg.norm(g0)))
        x = np.array(x0, dtype=np.float64)
        g = self.grad(x)
        best = (x.copy(), float(np.linalg.norm(g)) / scale)
        for _ in range(max_iter):
            if best[1] <= 0.1 * NEWTON_TOL:
                break
            p = -np.linalg.solve(self.hessian(x), g)
            f0, slope, t = self.value(x), float(g @ p), 1.0
            for _ls in range(60):
                if self.value(x + t * p) <= f0 + 1e-4 * t * slope + 4e-16 * abs(f0):
                    break
                t *= 0.5
            x = x + t * p
            g = self.grad(x)
            res = float(np.linalg.norm(g)) / scale
            if res < best[1]:
                best = (x.copy(), res)
            elif best[1] <= NEWTON_TOL:
                break  # at the floating-point floor: further steps only jitter
        return best

    # ----- local solver -----
    def _phi(self, X, rows, idx, lin, center, lam):
        D = X - center[rows]
        return (self.values(X, idx[rows]) + np.einsum("nd,nd->n", lin[rows], X)
                + 0.5 * lam[rows] * np.einsum("nd,nd->n", D, D))

    def _dphi(self, X, rows, idx, lin, center, lam):
        return self.grads(X, idx[rows]) + lin[rows] + lam[rows, None] * (X - center[rows])

    def solve_local(self, lin: np.ndarray, center: np.ndarray, lam: float | np.ndarray, l1: float = 0.0,
                    clients: np.ndarray | None = None) -> np.ndarray:
        """argmin_x f_i(x) + <lin_i, x> + lam/2 ||x - center_i||^2 + l1 ||x - center_i||_1, all clients.

        Valid when every subproblem is strongly convex, i.e. lam > -mu_i (mu_i the client's strong-convexity
        constant, negative for weakly convex clients); otherwise ValueError names lam and the needed range.
        Damped Newton (Armijo backtracking) for l1 = 0; proximal Newton with exact inner solves for l1 > 0.
        Both stop at a relative residual <= 1e-12 (gradient norm, resp. the l1 KKT residual, over
        max(1, the sizes of the terms at the start)) and raise RuntimeError if they cannot reach it.
        """
        l1 = check_nonnegative("l1", l1)
        lam_arr = self._check_local_args(lin, center, lam, clients)
        idx = np.arange(self.n_clients) if clients is None else np.asarray(clients)
        k = len(idx)
        lin = np.asarray(lin, dtype=np.float64)
        center = np.asarray(center, dtype=np.float64)
        lam_vec = np.broadcast_to(lam_arr, (k,)).astype(np.float64)
        need = -self._mu_local[idx]
        if np.any(lam_vec <= need) or np.any(lam_vec < 0):
            raise ValueError(f"lam must be > max(0, -min_i mu_i) = {max(0.0, float(need.max())):g} so every local "
                             f"subproblem is strongly convex (this problem has min_i mu_i = {-need.max():g}); "
                             f"got lam={lam!r}")
        args = (idx, lin, center, lam_vec)
        rows_all = np.arange(k)
        X = center.copy()
        G = self._dphi(X, rows_all, *args)
        if l1 == 0.0:
            scale = np.maximum.reduce([np.ones(k), np.linalg.norm(G, axis=1), np.linalg.norm(lin, axis=1),
                                       lam_vec * np.linalg.norm(center, axis=1)])
            return self._newton(X, G, scale, args)
        scale = np.maximum.reduce([np.ones(k), np.abs(G).max(axis=1), np.full(k, l1),
                                   np.abs(lin).max(axis=1), lam_vec * np.abs(center).max(axis=1)])
        return self._prox_newton(X, G, scale, l1, args)

    def _newton(self, X, G, scale, args, max_iter: int = 100):
        idx, lin, center, lam = args
        active = np.arange(len(X))
        for _ in range(max_iter):
            res = np.linalg.norm(G[active], axis=1) / scale[active]
            active = active[res > NEWTON_TOL]
            if len(active) == 0:
                return X
            P = -self._newton_solve(X[active], idx[active], lam[active], G[active])
            X[active] = self._line_search(X[active], P, active, np.einsum("nd,nd->n", G[active], P), args)
            G[active] = self._dphi(X[active], active, *args)
        res = np.linalg.norm(G, axis=1) / scale
        raise RuntimeError(f"local Newton did not reach relative residual {NEWTON_TOL:g} "
                           f"(worst {res.max():.3g})")

    def _newton_solve(self, X: np.ndarray, idx: np.ndarray, lam: np.ndarray, R: np.ndarray) -> np.ndarray:
        """(nabla^2 f_i(X[i]) + lam_i I)^{-1} R[i] for every listed client (families may exploit structure)."""
        H = self.hessians(X, idx) + lam[:, None, None] * np.eye(self.dim)
        return np.linalg.solve(H, R[..., None])[..., 0]

    def _line_search(self, X, P, rows, slope, args, l1: float = 0.0, max_halvings: int = 60):
        """Armijo backtracking for every row at once (unit steps accepted untested once the predicted decrease is
        below floating-point resolution, see below)."""
        idx, lin, center, lam = args

        def F(Y, r):
            out = self._phi(Y, r, idx, lin, center, lam)
            return out + l1 * np.abs(Y - center[r]).sum(axis=1) if l1 else out

        f0 = F(X, rows)
        t = np.ones(len(X))
        # A predicted decrease below 1e-10 (1 + |phi|) is under what phi's rounding can resolve (phi sums terms
        # larger than itself): the point is then within the quadratic-convergence region of a strongly convex
        # function and the unit Newton step is taken without testing.
        pending = np.nonzero(-slope > 1e-10 * (1.0 + np.abs(f0)))[0]
        Xn = X + P
        for _ in range(max_halvings):
            fn = F(Xn[pending], rows[pending])
            ok = fn <= f0[pending] + 1e-4 * t[pending] * slope[pending] + 4e-16 * np.abs(f0[pending])
            pending = pending[~ok]
            if len(pending) == 0:
                break
            t[pending] *= 0.5
            Xn[pending] = X[pending] + t[pending, None] * P[pending]
        return Xn

    def _prox_newton(self, X, G, scale, l1, args, max_iter: int = 100):
        idx, lin, center, lam = args
        eye = np.eye(self.dim)
        active = np.arange(len(X))
        for _ in range(max_iter):
            res = kkt_residual_l1(G[active], X[active] - center[active], l1) / scale[active]
            active = active[res > NEWTON_TOL]
            if len(active) == 0:
                return X
            H = self.hessians(X[active], idx[active]) + lam[active, None, None] * eye
            H = 0.5 * (H + np.swapaxes(H, 1, 2))
            _, top = sym_extreme_eigs(H)
            # the model min_z g^T (z - x) + 1/2 (z - x)^T H (z - x) + l1 ||z - c||_1, solved exactly
            model = SimpleNamespace(A=H, certificate=SimpleNamespace(L_i=top))
            rhs = batched_matvec(H, X[active]) - G[active]
            Z = solve_quadratic_l1(model, rhs, center[active], 0.0, l1, None)
            P = Z - X[active]
            l1_now = np.abs(X[active] - center[active]).sum(axis=1)
            l1_new = np.abs(Z - center[active]).sum(axis=1)
            slope = np.einsum("nd,nd->n", G[active], P) + l1 * (l1_new - l1_now)
            X[active] = self._line_search(X[active], P, active, slope, args, l1=l1)
            G[active] = self._dphi(X[active], active, *args)
        res = kkt_residual_l1(G, X - center, l1) / scale
        raise RuntimeError(f"local proximal Newton did not reach KKT residual {NEWTON_TOL:g} "
                           f"(worst {res.max():.3g})")
