"""Online federated problems: K clients receive one convex beta-smooth loss per time step.

Kwon, Park & Hong, "Tighter Regret Analysis and Optimization of Online Federated Learning" (Section 2):
client k at time t (1-based in the paper, 0-based here) holds a sample (x_{k,t}, y_{k,t}) and the loss

* ridge:    L_{k,t}(w) = 1/2 (x^T w - y)^2 + lam/2 ||w||^2,          beta = max ||x||^2 + lam,
* logistic: L_{k,t}(w) = log(1 + exp(-y x^T w)) + lam/2 ||w||^2,     beta = max ||x||^2 / 4 + lam  (y = +-1).

For every prefix T' <= T the problem computes exactly the best fixed comparator in hindsight (eq. 10)

    w*_{T'} = argmin_w sum_{t <= T'} sum_k L_{k,t}(w)

(closed form from prefix sums for ridge; warm-started Newton to ~1e-13 relative gradient for logistic), the
hindsight value ``prefix_min_values[T'-1]`` (the subtracted term of the regret, eq. 3) and Definition 1's

    sigma2_diff(T') = 1/(K T') sum_{t <= T'} sum_k ||grad L_{k,t}(w*_{T'})||^2.

An :class:`OnlineProblem` is also an ordinary :class:`~fedtheory.problems.base.Problem`: the static view is
the hindsight problem f_k(w) = (1/T) sum_t L_{k,t}(w) over the whole horizon, so ``metrics(x)["gap"]`` is
F_T(x) - F_T(w*_T) with F_T = (1/K) sum_k f_k. The per-time-step oracles :meth:`OnlineProblem.losses_at` and
:meth:`OnlineProblem.grads_at` take the time index the algorithms keep in their state; the algorithms of
:mod:`fedtheory.algorithms.ofediq` put the instantaneous loss and the cumulative regret into ``RoundLog.extra``.
"""
from __future__ import annotations

from functools import cached_property
from typing import Literal, Mapping

import numpy as np

from ..validation import check_int, check_nonnegative, check_real, check_seed
from .base import Certificate, Problem

__all__ = ["OnlineProblem", "online_ridge", "online_logistic", "online_from_dataset", "stream_losses",
           "stream_grads"]

LossKind = Literal["ridge", "logistic"]

#: Above this T^2 K D the ridge hindsight minima use the closed form instead of direct summation.
DIRECT_EVAL_LIMIT = 5e7


def _log1pexp(z: np.ndarray) -> np.ndarray:
    """log(1 + e^z) without overflow."""
    return np.logaddexp(0.0, z)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


def _solve_psd(H: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched solves H_i w_i = b_i; singular systems (lam = 0 with few samples) get the minimum-norm solution."""
    eig_min = np.linalg.eigvalsh(H)[:, 0] if H.shape[-1] <= 8 else None
    ok = np.full(H.shape[0], True) if eig_min is None else eig_min > 1e-12 * np.abs(H).max(axis=(1, 2))
    W = np.empty(b.shape)
    try:
        W[ok] = np.linalg.solve(H[ok], b[ok][..., None])[..., 0]
    except np.linalg.LinAlgError:
        ok[:] = False
    bad = ~ok | ~np.all(np.isfinite(W), axis=1)
    for i in np.flatnonzero(bad):  # rare: only singular prefixes
        W[i] = np.linalg.lstsq(H[i], b[i], rcond=None)[0]
    return W


class OnlineProblem(Problem):
    """A stream of per-sample losses for K clients over T time steps (OFedIQ, Sections 2 and 5).

    Parameters
    ----------
    features:
        Array of shape ``(T, K, D)``: x_{k,t} at ``features[t, k]``.
    labels:
        Array of shape ``(T, K)``: real targets for ridge, +-1 for logistic.
    loss:
        ``"ridge"`` or ``"logistic"``.
    lam:
        l2 regulariser inside every per-sample loss (> 0 for logistic so that w* exists).
    """

    def __init__(self, features: np.ndarray, labels: np.ndarray, *, loss: LossKind = "ridge",
                 lam: float = 0.0) -> None:
        X = np.ascontiguousarray(features, dtype=np.float64)
        y = np.ascontiguousarray(labels, dtype=np.float64)
        if X.ndim != 3 or X.shape[0] < 1 or X.shape[1] < 1 or X.shape[2] < 1:
            raise ValueError(f"features must have shape (T, K, D) with T, K, D >= 1, got {X.shape}")
        if y.shape != X.shape[:2]:
            raise ValueError(f"labels must have shape (T, K) = {X.shape[:2]}, got {y.shape}")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
            raise ValueError("features and labels must be finite")
        if loss not in ("ridge", "logistic"):
            raise ValueError(f"loss must be 'ridge' or 'logistic', got {loss!r}")
        self.lam = check_nonnegative("lam", lam)
        if loss == "logistic":
            if self.lam <= 0:
                raise ValueError("lam must be in (0, inf) for logistic losses (w* may not exist otherwise)")
            if not np.all(np.abs(y) == 1.0):
                raise ValueError("labels must be +-1 for logistic losses")
        self.loss = loss
        self.features, self.labels = X, y
        self.horizon, self.n_clients, self.dim = X.shape
        self.weights = np.full(self.n_clients, 1.0 / self.n_clients)
        sq = np.einsum("tkd,tkd->tk", X, X)
        #: Assumption 2's per-sample smoothness constant (one beta for all k, t).
        self.beta = float(sq.max() / (4.0 if loss == "logistic" else 1.0) + self.lam)
        self.certificate = self._certify()

    # ----- defining arrays -----
    def arrays(self) -> dict[str, np.ndarray]:
        return {"features": self.features, "labels": self.labels, "loss": np.array(self.loss),
                "lam": np.array(self.lam)}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> "OnlineProblem":
        return cls(arrays["features"], arrays["labels"], loss=str(arrays["loss"]), lam=float(arrays["lam"]))

    # ----- per-sample losses -----
    def _margin(self, X: np.ndarray, W: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = np.einsum("...d,...d->...", X, W)
        return z, y

    def _loss_and_dz(self, z: np.ndarray, y: np.ndarray, need_value: bool = True,
                     need_dz: bool = True) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Data-fit part of the loss as a function of z = x^T w, and its derivative in z."""
        if self.loss == "ridge":
            r = z - y
            return (0.5 * r * r if need_value else None), (r if need_dz else None)
        yz = y * z
        return (_log1pexp(-yz) if need_value else None), (-y * _sigmoid(-yz) if need_dz else None)

    def _time(self, t: int) -> int:
        t = check_int("t", t, low=0)
        if t >= self.horizon:
            raise ValueError(f"t must be in [0, T-1] = [0, {self.horizon - 1}] (the stream has T = "
                             f"{self.horizon} steps), got {t}")
        return t

    def _stack(self, W: np.ndarray) -> np.ndarray:
        W = np.asarray(W, dtype=np.float64)
        if W.ndim == 1:
            self._check_point(W, "W")
            return np.broadcast_to(W, (self.n_clients, self.dim))
        self._check_points(W, None, "W")
        return W

    def losses_at(self, t: int, W: np.ndarray) -> np.ndarray:
        """L_{k,t}(W[k]) for every client at time step t (0-based); W is (K, D) or one (D,) point."""
        t, W = self._time(t), self._stack(W)
        z = np.einsum("kd,kd->k", self.features[t], W)
        value, _ = self._loss_and_dz(z, self.labels[t], need_dz=False)
        return value + 0.5 * self.lam * np.einsum("kd,kd->k", W, W)

    def grads_at(self, t: int, W: np.ndarray) -> np.ndarray:
        """grad L_{k,t}(W[k]) for every client at time step t (0-based), shape (K, D) (eq. 21)."""
        t, W = self._time(t), self._stack(W)
        z = np.einsum("kd,kd->k", self.features[t], W)
        _, dz = self._loss_and_dz(z, self.labels[t], need_value=False)
        return dz[:, None] * self.features[t] + self.lam * W

    def sample_losses(self, w: np.ndarray, horizon: int | None = None) -> np.ndarray:
        """L_{k,t}(w) for one point w and every (t, k) with t < horizon, shape (horizon, K)."""
        self._check_point(w, "w")
        h = self.horizon if horizon is None else check_int("horizon", horizon, low=1, high=self.horizon)
        z = self.features[:h] @ w
        value, _ = self._loss_and_dz(z, self.labels[:h], need_dz=False)
        return value + 0.5 * self.lam * float(w @ w)

    def sample_grads(self, w: np.ndarray, horizon: int | None = None) -> np.ndarray:
        """grad L_{k,t}(w) for one point and every (t, k) with t < horizon, shape (horizon, K, D)."""
        self._check_point(w, "w")
        h = self.horizon if horizon is None else check_int("horizon", horizon, low=1, high=self.horizon)
        z = self.features[:h] @ w
        _, dz = self._loss_and_dz(z, self.labels[:h], need_value=False)
        return dz[..., None] * self.features[:h] + self.lam * w

    # ----- the hindsight comparator for every prefix -----
    @cached_property
    def _prefix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        if self.loss == "ridge":
            return self._prefix_ridge()
        return self._prefix_logistic()

    def _prefix_ridge(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """Closed form from prefix sums: A = sum x x^T, b = sum x y; w* = (A + lam K T' I)^{-1} b.

        The minimum is 1/2 (c - b^T w*) with c = sum y^2 (stationarity). sigma2_diff is computed lazily
        (:attr:`prefix_sigma2`).
        """
        y, lam, K = self.labels, self.lam, self.n_clients
        T, D = self.horizon, self.dim
        counts = K * np.arange(1, T + 1, dtype=np.float64)
        A, b = self._ridge_sums
        c = np.cumsum(np.einsum("tk,tk->t", y, y))
        H = A + lam * counts[:, None, None] * np.eye(D)
        W = _solve_psd(H, b)
        # Closed-form minimum (stationarity: (A + lam n I) w* = b); it cancels when the fit is good, so
        # prefix_min_values evaluates the losses directly when affordable and uses this value otherwise.
        vmin = 0.5 * (c - np.einsum("td,td->t", b, W))
        resid = float(np.max(np.linalg.norm(np.einsum("tde,te->td", H, W) - b, axis=1)
                             / np.maximum(1.0, np.linalg.norm(b, axis=1))))
        return W, vmin, np.empty(0), resid

    @cached_property
    def _ridge_sums(self) -> tuple[np.ndarray, np.ndarray]:
        X = self.features
        return (np.cumsum(np.einsum("tkd,tke->tde", X, X), axis=0),
                np.cumsum(np.einsum("tkd,tk->td", X, self.labels), axis=0))

    @cached_property
    def _ridge_sigma2(self) -> np.ndarray:
        """sigma2_diff for every prefix from the expanded square sum ||x (x^T w - y) + lam w||^2 =
        w^T M w - 2 m^T w + e + 2 lam (w^T A w - b^T w) + lam^2 K T' ||w||^2, M = sum ||x||^2 x x^T,
        m = sum ||x||^2 y x, e = sum ||x||^2 y^2 (prefix sums, O(T K D^2))."""
        X, y, lam = self.features, self.labels, self.lam
        counts = self.n_clients * np.arange(1, self.horizon + 1, dtype=np.float64)
        A, b = self._ridge_sums
        W = self.prefix_minimizers
        sq = np.einsum("tkd,tkd->tk", X, X)
        Xs = X * sq[..., None]
        M = np.cumsum(np.einsum("tkd,tke->tde", Xs, X), axis=0)
        m = np.cumsum(np.einsum("tkd,tk->td", Xs, y), axis=0)
        e = np.cumsum(np.einsum("tk,tk->t", sq * y, y))
        S = (np.einsum("td,tde,te->t", W, M, W) - 2 * np.einsum("td,td->t", m, W) + e
             + 2 * lam * (np.einsum("td,tde,te->t", W, A, W) - np.einsum("td,td->t", b, W))
             + lam**2 * counts * np.einsum("td,td->t", W, W))
        return np.maximum(S, 0.0) / counts

    def _prefix_logistic(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """Newton's method for each prefix, warm-started at the previous prefix's minimiser."""
        X, y, lam = self.features, self.labels, self.lam
        T, D = self.horizon, self.dim
        W = np.empty((T, D))
        vmin = np.empty(T)
        sigma2 = np.empty(T)
        w = np.zeros(D)
        worst = 0.0
        for i in range(T):  # one Newton solve per prefix (the comparator changes with the horizon)
            Xi, yi = X[: i + 1].reshape(-1, D), y[: i + 1].reshape(-1)
            n = Xi.shape[0]
            scale = max(1.0, float(np.linalg.norm(Xi.T @ yi)))
            for _ in range(60):
                z = Xi @ w
                s = _sigmoid(-yi * z)
                g = -(Xi.T @ (yi * s)) + lam * n * w
                if np.linalg.norm(g) <= 1e-13 * scale:
                    break
                h = s * (1.0 - s)
                Hm = (Xi.T * h) @ Xi + lam * n * np.eye(D)
                step = np.linalg.solve(Hm, g)
                # Damped Newton with Armijo backtracking (far from w*, e.g. after a prefix with few samples).
                f0 = float(_log1pexp(-yi * z).sum() + 0.5 * lam * n * w @ w)
                tau = 1.0
                while tau > 1e-6:
                    wn = w - tau * step
                    f1 = float(_log1pexp(-yi * (Xi @ wn)).sum() + 0.5 * lam * n * wn @ wn)
                    if f1 <= f0 - 0.25 * tau * float(g @ step):
                        break
                    tau *= 0.5
                if float(np.linalg.norm(w - wn)) <= 1e-16 * (1.0 + float(np.linalg.norm(w))):
                    w = wn
                    break  # rounding floor: no representable progress left
                w = wn
            gn = -(Xi.T @ (yi * _sigmoid(-yi * (Xi @ w)))) + lam * n * w
            worst = max(worst, float(np.linalg.norm(gn)) / scale)
            W[i] = w
            z = Xi @ w
            vmin[i] = float(_log1pexp(-yi * z).sum() + 0.5 * lam * n * w @ w)
            G = (-(yi * _sigmoid(-yi * z)))[:, None] * Xi + lam * w
            sigma2[i] = float(np.einsum("nd,nd->", G, G)) / n
        return W, vmin, sigma2, worst

    @property
    def prefix_minimizers(self) -> np.ndarray:
        """w*_{T'} for T' = 1..T, shape (T, D) (row T'-1)."""
        return self._prefix[0]

    @property
    def prefix_min_values(self) -> np.ndarray:
        """min_w sum_{t <= T'} sum_k L_{k,t}(w) for T' = 1..T, shape (T,)."""
        if self.loss == "ridge":
            return self._ridge_min_values
        return self._prefix[1]

    @cached_property
    def _ridge_min_values(self) -> np.ndarray:
        if self.horizon**2 * self.n_clients * self.dim > DIRECT_EVAL_LIMIT:
            # closed form 1/2 (c - b^T w*): absolute error ~ 1e-16 sum y^2, negligible against regrets
            return self._prefix[1]
        return self._ridge_min_values_direct

    @cached_property
    def _ridge_min_values_direct(self) -> np.ndarray:
        # Stable evaluation of the hindsight minimum: sum the per-sample losses at w*_{T'} directly in
        # chunks of prefixes (O(T^2 K D) total; the closed form 1/2 (c - b^T w*) cancels when the fit is good).
        W = self.prefix_minimizers
        T = self.horizon
        out = np.empty(T)
        chunk = max(1, int(2e7 // max(1, T * self.n_clients * self.dim)))
        tri = np.tri(T, dtype=bool)  # tri[i, t] = t <= i
        for lo in range(0, T, chunk):
            hi = min(T, lo + chunk)
            Z = np.einsum("tkd,pd->ptk", self.features, W[lo:hi])
            R = Z - self.labels[None]
            L = 0.5 * R * R + 0.5 * self.lam * np.einsum("pd,pd->p", W[lo:hi], W[lo:hi])[:, None, None]
            out[lo:hi] = np.einsum("ptk,pt->p", L, tri[lo:hi])
        return out

    @property
    def prefix_sigma2(self) -> np.ndarray:
        """sigma2_diff of Definition 1 for every prefix T' = 1..T, shape (T,)."""
        return self._ridge_sigma2 if self.loss == "ridge" else self._prefix[2]

    @property
    def comparator_residual(self) -> float:
        """Worst relative stationarity residual of the prefix comparators (certificate of exactness)."""
        return self._prefix[3]

    def comparator(self, horizon: int | None = None) -> np.ndarray:
        """w*_{T'} for the prefix of length T' (default: the whole horizon)."""
        h = self.horizon if horizon is None else check_int("horizon", horizon, low=1, high=self.horizon)
        return self.prefix_minimizers[h - 1]

    def sigma2_diff(self, horizon: int | None = None, w: np.ndarray | None = None) -> float:
        """Definition 1 at the comparator of the prefix (or at any point ``w``: the proofs hold for any u)."""
        h = self.horizon if horizon is None else check_int("horizon", horizon, low=1, high=self.horizon)
        if w is None:
            return float(self.prefix_sigma2[h - 1])
        G = self.sample_grads(np.asarray(w, dtype=np.float64), h)
        return float(np.einsum("tkd,tkd->", G, G)) / (h * self.n_clients)

    def regret(self, losses: np.ndarray) -> np.ndarray:
        """Cumulative regret for every prefix (eq. 3) from the per-step loss sums sum_k L_{k,t}(w_t)."""
        losses = np.asarray(losses, dtype=np.float64)
        if losses.ndim != 1 or losses.size > self.horizon:
            raise ValueError(f"losses must be a vector of length <= T = {self.horizon}, got {losses.shape}")
        return np.cumsum(losses) - self.prefix_min_values[: losses.size]

    # ----- static (hindsight) view: f_k(w) = (1/T) sum_t L_{k,t}(w) over the whole horizon -----
    def values(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        self._check_points(X, clients)
        F = self.features if clients is None else self.features[:, clients]
        y = self.labels if clients is None else self.labels[:, clients]
        X = np.asarray(X, dtype=np.float64)
        z = np.einsum("tkd,kd->tk", F, X)
        value, _ = self._loss_and_dz(z, y, need_dz=False)
        return value.mean(axis=0) + 0.5 * self.lam * np.einsum("kd,kd->k", X, X)

    def grads(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        self._check_points(X, clients)
        F = self.features if clients is None else self.features[:, clients]
        y = self.labels if clients is None else self.labels[:, clients]
        X = np.asarray(X, dtype=np.float64)
        z = np.einsum("tkd,kd->tk", F, X)
        _, dz = self._loss_and_dz(z, y, need_value=False)
        return np.einsum("tk,tkd->kd", dz, F) / self.horizon + self.lam * X

    def solve_local(self, lin: np.ndarray, center: np.ndarray, lam: float | np.ndarray, l1: float = 0.0,
                    clients: np.ndarray | None = None) -> np.ndarray:
        """Exact local prox for ridge streams (per-client linear solves); not available for logistic."""
        if self.loss != "ridge" or l1 != 0.0:
            raise NotImplementedError("solve_local is implemented for ridge streams without l1 only")
        lam_arr = self._check_local_args(lin, center, lam, clients)
        if np.any(lam_arr < 0):
            raise ValueError(f"lam must be in [0, inf), got {lam}")
        idx = np.arange(self.n_clients) if clients is None else np.asarray(clients)
        A = self._client_hessians[idx]
        lam_arr = np.broadcast_to(lam_arr, (idx.size,))
        rhs = self._client_b[idx] - lin + lam_arr[:, None] * center
        return np.linalg.solve(A + lam_arr[:, None, None] * np.eye(self.dim), rhs[..., None])[..., 0]

    @cached_property
    def _client_hessians(self) -> np.ndarray:
        return np.einsum("tkd,tke->kde", self.features, self.features) / self.horizon + self.lam * np.eye(self.dim)

    @cached_property
    def _client_b(self) -> np.ndarray:
        return np.einsum("tkd,tk->kd", self.features, self.labels) / self.horizon

    @cached_property
    def _hindsight_quadratic(self) -> tuple[np.ndarray, np.ndarray]:
        """(Abar, bbar) of the ridge hindsight objective F_T(w) = 1/2 w^T Abar w - bbar^T w + const."""
        return self._client_hessians.mean(axis=0), self._client_b.mean(axis=0)

    def metrics(self, x: np.ndarray) -> dict[str, float]:
        """gap = F_T(x) - F_T(w*_T) of the hindsight problem, dist2 = ||x - w*_T||^2, grad_norm2 = ||grad F_T||^2.

        Ridge uses the closed forms (O(D^2) per call, so recording every time step stays cheap); the
        instantaneous loss and the regret are in the algorithms' ``RoundLog.extra``.
        """
        if self.loss != "ridge":
            return super().metrics(x)
        self._check_point(x)
        A, b = self._hindsight_quadratic
        diff = x - self.certificate.x_star
        g = A @ x - b
        return {"gap": float(0.5 * diff @ (A @ diff)), "dist2": float(diff @ diff), "grad_norm2": float(g @ g)}

    def gap(self, x: np.ndarray) -> float:
        """F_T(x) - F_T(w*_T); for ridge computed as 1/2 (x - w*)^T Abar (x - w*) (no cancellation)."""
        self._check_point(x)
        if self.loss == "ridge":
            diff = x - self.certificate.x_star
            return float(0.5 * diff @ (self._client_hessians.mean(axis=0) @ diff))
        return self.value(x) - self.certificate.f_star

    def _full_comparator(self) -> tuple[np.ndarray, float]:
        """w*_T alone (one solve for ridge; the logistic prefixes are computed anyway by Newton)."""
        if self.loss != "ridge":
            return self.comparator(), self.comparator_residual
        n = self.n_clients * self.horizon
        X2 = self.features.reshape(-1, self.dim)
        H = X2.T @ X2 + self.lam * n * np.eye(self.dim)
        b = X2.T @ self.labels.reshape(-1)
        w = _solve_psd(H[None], b[None])[0]
        return w, float(np.linalg.norm(H @ w - b) / max(1.0, float(np.linalg.norm(b))))

    def _certify(self) -> Certificate:
        w, resid = self._full_comparator()
        K, T = self.n_clients, self.horizon
        f_star = float(np.sum(self.sample_losses(w)) / (K * T))
        G = self.grads(self.broadcast(w))
        zeta2 = float(np.mean(np.einsum("kd,kd->k", G, G)))
        if self.loss == "ridge":
            H = self._client_hessians
            eig = np.linalg.eigvalsh(H)
            mu_i, L_i = eig[:, 0], eig[:, -1]
            e_f = np.linalg.eigvalsh(H.mean(axis=0))
            mu_f, L_f = float(e_f[0]), float(e_f[-1])
            # Hessian dissimilarity is not used by the online theory; skipped (NaN) to keep construction cheap.
            delta_A = delta_B = float("nan")
            exact = {"x_star": True, "mu": True, "L": True, "delta": False, "beta": True}
        else:
            sq = np.einsum("tkd,tkd->tk", self.features, self.features)
            L_i = np.max(sq, axis=0) / 4 + self.lam  # upper bounds (the Hessian of log(1+e^z) is <= 1/4)
            mu_i = np.full(K, self.lam)
            mu_f, L_f = self.lam, float(L_i.max())
            delta_A = delta_B = float("nan")
            exact = {"x_star": True, "mu": False, "L": False, "delta": False, "beta": True}
        return Certificate(x_star=w.copy(), f_star=f_star, mu=float(mu_i.min()), L=float(L_i.max()), mu_f=mu_f,
                           L_f=L_f, mu_i=mu_i, L_i=L_i, delta_A=delta_A, delta_B=delta_B, zeta2=zeta2,
                           weights=self.weights.copy(), kkt_residual=resid, exact=exact,
                           notes=f"online {self.loss} stream K={K} T={T} D={self.dim}; beta={self.beta:.6g}")


# ----- stream access for any Problem (a static problem is a stream whose loss is the same every step) -----
def stream_losses(problem: Problem, t: int, W: np.ndarray) -> np.ndarray:
    """Per-client losses at time t: ``losses_at`` for online problems, ``values`` for static ones."""
    if isinstance(problem, OnlineProblem):
        return problem.losses_at(t, W)
    W = np.asarray(W, dtype=np.float64)
    return problem.values(problem.broadcast(W) if W.ndim == 1 else W)


def stream_grads(problem: Problem, t: int, W: np.ndarray) -> np.ndarray:
    """Per-client gradients at time t (``grads_at`` online, ``grads`` for static problems)."""
    if isinstance(problem, OnlineProblem):
        return problem.grads_at(t, W)
    W = np.asarray(W, dtype=np.float64)
    return problem.grads(problem.broadcast(W) if W.ndim == 1 else W)


# ----- generators -----
def _synthetic(n_clients: int, horizon: int, dim: int, heterogeneity: float, drift: float, seed: int
               ) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
    """Features with client-specific means and the linear score with client-specific, drifting weights.

    x_{k,t} = (z + heterogeneity * m_k) / sqrt(D),   score = x^T (w0 + heterogeneity * u_k + drift * (t/T) v)
    with z, m_k, w0, u_k, v standard normal.
    """
    K = check_int("n_clients", n_clients, low=1)
    T = check_int("horizon", horizon, low=1)
    D = check_int("dim", dim, low=1)
    h = check_nonnegative("heterogeneity", heterogeneity)
    dr = check_nonnegative("drift", drift)
    rng = np.random.default_rng(check_seed("seed", seed))
    means = rng.normal(size=(K, D))
    w0 = rng.normal(size=D)
    u = rng.normal(size=(K, D))
    v = rng.normal(size=D)
    X = (rng.normal(size=(T, K, D)) + h * means) / np.sqrt(D)
    frac = (np.arange(T) / max(T - 1, 1))[:, None, None]
    Wt = w0 + h * u[None] + dr * frac * v  # (T, K, D)
    score = np.einsum("tkd,tkd->tk", X, Wt)
    return X, score, rng


def online_ridge(n_clients: int, horizon: int, dim: int, *, heterogeneity: float = 0.0, drift: float = 0.0,
                 noise: float = 0.1, lam: float = 0.01, seed: int = 0) -> OnlineProblem:
    """Synthetic online ridge regression: y = x^T w_{k,t} + noise * N(0,1) (fedtheory's synthetic stream; the
    paper's experiments, Section 5, use real datasets, see :func:`online_from_dataset`).

    ``heterogeneity`` shifts each client's feature mean and true weights; ``drift`` moves the true weights
    linearly over time. Both raise sigma2_diff.
    """
    X, score, rng = _synthetic(n_clients, horizon, dim, heterogeneity, drift, seed)
    y = score + check_nonnegative("noise", noise) * rng.normal(size=score.shape)
    return OnlineProblem(X, y, loss="ridge", lam=lam)


def online_logistic(n_clients: int, horizon: int, dim: int, *, heterogeneity: float = 0.0, drift: float = 0.0,
                    noise: float = 0.5, lam: float = 0.01, seed: int = 0) -> OnlineProblem:
    """Synthetic online l2-logistic regression: y = sign(x^T w_{k,t} + noise * N(0,1)) in {-1, +1}."""
    X, score, rng = _synthetic(n_clients, horizon, dim, heterogeneity, drift, seed)
    y = np.where(score + check_nonnegative("noise", noise) * rng.normal(size=score.shape) >= 0, 1.0, -1.0)
    return OnlineProblem(X, y, loss="logistic", lam=check_real("lam", lam, low=0.0, low_open=True))


def online_from_dataset(name: Literal["breast_cancer", "digits"], n_clients: int, horizon: int, *,
                        loss: LossKind = "ridge", heterogeneity: float = 0.0, drift: float = 0.0,
                        lam: float = 0.01, bias: bool = True, seed: int = 0) -> OnlineProblem:
    """Stream a scikit-learn bundled dataset to K clients (OFedIQ Section 5's protocol; no downloads).

    Features are standardised, scaled by 1/sqrt(N) and rows projected into the unit ball (so beta <= 1 +
    lam); ``bias`` appends a constant
    constant feature (before the
    1/sqrt(N) scaling, so beta stays O(1)). As in the paper, the dataset is repeated when K T
    exceeds its size, shuffled and split into K streams of length T. Labels: for ridge, y in [0, 1]
    (breast_cancer: the class; digits: digit/9, the paper's label normalisation); for logistic, +-1
    (breast_cancer: the class; digits: digit >= 5).

    ``heterogeneity`` in [0, 1] sorts samples by label before splitting (label skew across clients; 0 =
    random partition, 1 = fully sorted); ``drift`` in [0, 1] sorts each client's stream by its first
    principal component (a covariate shift over time).
    """
    from sklearn import datasets  # here, not at the top: scikit-learn (1.7 s), bundled data: no download

    K = check_int("n_clients", n_clients, low=1)
    T = check_int("horizon", horizon, low=1)
    h = check_real("heterogeneity", heterogeneity, low=0.0, high=1.0)
    dr = check_real("drift", drift, low=0.0, high=1.0)
    if name == "breast_cancer":
        data = datasets.load_breast_cancer()
        target = data.target.astype(np.float64)
        y_ridge, y_log = target, np.where(target > 0.5, 1.0, -1.0)
    elif name == "digits":
        data = datasets.load_digits()
        target = data.target.astype(np.float64)
        y_ridge, y_log = target / 9.0, np.where(target >= 5, 1.0, -1.0)
    else:
        raise ValueError(f"name must be 'breast_cancer' or 'digits', got {name!r}")
    if loss not in ("ridge", "logistic"):
        raise ValueError(f"loss must be 'ridge' or 'logistic', got {loss!r}")
    F = np.asarray(data.data, dtype=np.float64)
    sd = F.std(axis=0)
    F = (F - F.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    if bias:
        F = np.hstack([F, np.ones((F.shape[0], 1))])
    F /= np.sqrt(F.shape[1])
    # Rows are scaled into the unit ball (a few standardised pixels of `digits` are extreme): beta <= 1 + lam.
    F /= np.maximum(1.0, np.linalg.norm(F, axis=1))[:, None]
    labels = y_ridge if loss == "ridge" else y_log
    rng = np.random.default_rng(check_seed("seed", seed))
    need = K * T
    reps = -(-need // F.shape[0])
    idx = np.tile(np.arange(F.shape[0]), reps)
    idx = idx[rng.permutation(idx.size)][:need]
    # label skew: sort by a key mixing the label rank with noise, then cut into K consecutive streams
    key = h * (y_ridge[idx] - y_ridge.min()) / max(np.ptp(y_ridge), 1e-12) + (1 - h) * rng.random(need)
    idx = idx[np.argsort(key, kind="stable")].reshape(K, T)
    if dr > 0:
        pc = np.linalg.svd(F - F.mean(axis=0), full_matrices=False)[2][0]
        proj = F @ pc
        score = (proj - proj.min()) / max(np.ptp(proj), 1e-12)
        key2 = dr * score[idx] + (1 - dr) * rng.random((K, T))
        idx = np.take_along_axis(idx, np.argsort(key2, axis=1, kind="stable"), axis=1)
    X = np.transpose(F[idx], (1, 0, 2))  # (T, K, D)
    y = labels[idx].T
    return OnlineProblem(X, y, loss=loss, lam=lam)
