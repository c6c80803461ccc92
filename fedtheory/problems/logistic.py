"""Federated l2-regularised binary logistic regression, with a Newton certificate.

Client i holds samples (a_j, y_j), y_j in {-1, +1}, j in D_i, and

    f_i(x) = (1/m_i) sum_{j in D_i} log(1 + exp(-y_j a_j^T x)) + reg/2 ||x||^2  [+ 1/2 x^T E_i x + c_i^T x],
    f = sum_i w_i f_i,  w_i = m_i / M by default (so f is the pooled empirical risk) or uniform.

Storage is batched: the signed samples z_j = y_j a_j of every client sit in one zero-padded array of shape
``(n, m_max, d)`` (padding rows are zero, so they contribute nothing to gradients and Hessians; values use a
mask), so every oracle is a batched matrix product with no loop over clients. When all clients share one
dataset (the exact-delta construction of :func:`logistic_perturbed`) the data is stored once, ``(m, d)``.

Certificate: x* by damped Newton on f to a relative gradient residual <= 1e-12 (the achieved residual is
recorded); mu = reg (exact: the logistic Hessian's infimum is 0), L_i = ||Z_i||_2^2 / (4 m_i) + reg (exact:
the logistic Hessian is largest at x = 0, where it equals Z_i^T Z_i / (4 m_i)). Hessian dissimilarity is
exact for the shared-data construction and otherwise *estimated* from Hessian differences at x*, 0 and
sampled points (``certificate.exact["delta_A"] is False``).
"""
from __future__ import annotations

import copy
from typing import Literal, Mapping, Sequence

import numpy as np
from scipy.special import expit

from ..linalg import batched_matvec, batched_matvec_T, sym_extreme_eigs
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
from .datasets import FederatedData, check_sizes, load_breast_cancer, load_digits, synthetic_fedprox
from .partition import partition as _partition
from .quadratic import CROSS_DEVICE_HINT, hessian_dissimilarity, unit_dissimilarity, weighted_mean
from .smooth import SmoothProblem

__all__ = ["LogisticProblem", "logistic", "logistic_perturbed"]

WeightsOption = Literal["size", "uniform"]


class LogisticProblem(SmoothProblem):
    """Binary logistic regression over per-client (or shared) data; see the module docstring.

    Parameters
    ----------
    features, labels:
        Per-client lists of arrays ``(m_i, d)`` and ``(m_i,)`` with labels in {-1, +1}; or, with
        ``n_clients`` given, one shared ``(m, d)`` array and ``(m,)`` labels used by every client.
    reg:
        l2 regularisation (> 0 so that f has a unique minimiser).
    weights:
        ``"size"`` (m_i / M), ``"uniform"``, or an array of positive weights.
    E, c:
        Optional quadratic perturbations ``(n, d, d)`` (symmetric) and linear terms ``(n, d)``.
    batch_size:
        If set, :meth:`stochastic_grads` returns minibatch gradients (uniform sampling with replacement).
    """

    def __init__(self, features: Sequence[np.ndarray] | np.ndarray, labels: Sequence[np.ndarray] | np.ndarray,
                 *, reg: float, weights: WeightsOption | np.ndarray = "size", n_clients: int | None = None,
                 E: np.ndarray | None = None, c: np.ndarray | None = None, batch_size: int | None = None,
                 sigma2: float = 0.0) -> None:
        self.reg = check_positive("reg", reg)
        self.shared = n_clients is not None
        if self.shared:
            n = check_int("n_clients", n_clients, low=1)
            Z, m = self._signed(np.asarray(features, dtype=np.float64), np.asarray(labels, dtype=np.float64))
            self._Z = Z
            self.sizes = np.full(n, m.item() if m.ndim else len(Z))
            self.dim = Z.shape[1]
        else:
            if len(features) != len(labels) or len(features) == 0:
                raise ValueError("features and labels must be non-empty lists of the same length (one per client)")
            n = len(features)
            pairs = [self._signed(np.asarray(a, dtype=np.float64), np.asarray(y, dtype=np.float64))
                     for a, y in zip(features, labels)]
            dims = {p[0].shape[1] for p in pairs}
            if len(dims) != 1:
                raise ValueError(f"every client's features must have the same dimension, got {sorted(dims)}")
            self.dim = dims.pop()
            self.sizes = np.array([len(p[0]) for p in pairs])
            m_max = int(self.sizes.max())
            self._Z = np.zeros((n, m_max, self.dim))
            self._mask = np.zeros((n, m_max))
            for i, (Zi, _) in enumerate(pairs):  # one-off packing into the padded layout
                self._Z[i, :len(Zi)] = Zi
                self._mask[i, :len(Zi)] = 1.0
        self.n_clients = n
        if isinstance(weights, str):
            if weights not in ("size", "uniform"):
                raise ValueError(f"weights must be 'size', 'uniform' or an array, got {weights!r}")
            weights = self.sizes.astype(np.float64) if weights == "size" else None
        self.weights = check_weights(weights, n)
        d = self.dim
        if E is not None:
            E = np.asarray(E, dtype=np.float64)
            if E.shape != (n, d, d) or not np.all(np.isfinite(E)):
                raise ValueError(f"E must be finite with shape {(n, d, d)}, got {E.shape}")
            if not np.allclose(E, np.swapaxes(E, 1, 2), rtol=0, atol=1e-12 * max(1.0, np.abs(E).max())):
                raise ValueError("E must be symmetric for every client")
            E = 0.5 * (E + np.swapaxes(E, 1, 2))
        if c is not None:
            c = np.asarray(c, dtype=np.float64)
            if c.shape != (n, d) or not np.all(np.isfinite(c)):
                raise ValueError(f"c must be finite with shape {(n, d)}, got {c.shape}")
        self.E, self.c = E, c
        self.batch_size = None if batch_size is None else check_int("batch_size", batch_size, low=1)
        self.sigma2 = check_nonnegative("sigma2", sigma2)
        # The certificate forms every client's Hessian at x = 0 (and at 5 more points for the delta estimate):
        # measured peak (tracemalloc) 4.5-5.1 arrays of shape (n, d, d) with the data
        check_dense_memory(n, d, 4, what="the logistic certificate (per-client Hessians)", hint=CROSS_DEVICE_HINT)
        self.certificate = self._certify()

    # ----- defining arrays -----
    def arrays(self) -> dict[str, np.ndarray]:
        """Signed features z = y a (all the loss depends on), stacked over clients, with the client sizes."""
        if self.shared:
            Z = self._Z
        else:
            Z = np.concatenate([self._Z[i, :m] for i, m in enumerate(self.sizes)])  # drop the padding
        out = {"Z": Z, "sizes": self.sizes, "weights": self.weights, "reg": np.array(self.reg),
               "shared": np.array(self.shared)}
        out.update({k: v for k, v in (("E", self.E), ("c", self.c)) if v is not None})
        if self.batch_size is not None:
            out["batch_size"] = np.array(self.batch_size)
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> "LogisticProblem":
        Z, sizes = np.asarray(arrays["Z"]), np.asarray(arrays["sizes"])
        kwargs = dict(reg=float(arrays["reg"]), weights=np.asarray(arrays["weights"]), E=arrays.get("E"),
                      c=arrays.get("c"),
                      batch_size=int(arrays["batch_size"]) if "batch_size" in arrays else None)
        if bool(arrays["shared"]):  # labels +1: the stored features are already signed (z * 1 is exact)
            return cls(Z, np.ones(len(Z)), n_clients=len(sizes), **kwargs)
        parts = np.split(Z, np.cumsum(sizes)[:-1])
        return cls(parts, [np.ones(len(p)) for p in parts], **kwargs)

    @staticmethod
    def _signed(a: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if a.ndim != 2 or y.shape != (a.shape[0],) or a.shape[0] == 0:
            raise ValueError(f"features must be (m, d) with m >= 1 and labels (m,), got {a.shape} and {y.shape}")
        if not (np.all(np.isfinite(a)) and np.all(np.isin(y, (-1.0, 1.0)))):
            raise ValueError("features must be finite and labels must be in {-1, +1}")
        return a * y[:, None], np.asarray(len(a))

    # ----- batched logistic part -----
    def _margins(self, X: np.ndarray, idx: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """z[i, j] = y_j a_j^T X[i] for client i's samples (zero on padding) and the client's data."""
        if self.shared:
            return X @ self._Z.T, None
        Z = self._Z if idx is None else self._Z[idx]
        return batched_matvec(Z, X), Z

    def _m(self, idx: np.ndarray | None) -> np.ndarray:
        return (self.sizes if idx is None else self.sizes[idx]).astype(np.float64)

    def _psi_values(self, X: np.ndarray, idx: np.ndarray | None) -> np.ndarray:
        z, _ = self._margins(X, idx)
        loss = np.logaddexp(0.0, -z)
        if not self.shared:
            loss *= self._mask if idx is None else self._mask[idx]
        return loss.sum(axis=1) / self._m(idx) + 0.5 * self.reg * np.einsum("nd,nd->n", X, X)

    def _psi_grads(self, X: np.ndarray, idx: np.ndarray | None) -> np.ndarray:
        z, Z = self._margins(X, idx)
        s = expit(-z)  # padding rows of Z are zero, so their s does not matter
        G = s @ self._Z if self.shared else batched_matvec_T(Z, s)
        return -G / self._m(idx)[:, None] + self.reg * X

    def _psi_hessians(self, X: np.ndarray, idx: np.ndarray | None) -> np.ndarray:
        z, Z = self._margins(X, idx)
        s = expit(z) * expit(-z)
        if self.shared:
            H = np.einsum("km,md,me->kde", s, self._Z, self._Z, optimize=True)
        else:
            H = np.matmul(np.swapaxes(Z * s[..., None], 1, 2), Z)
        return H / self._m(idx)[:, None, None] + self.reg * np.eye(self.dim)

    def _newton_solve(self, X: np.ndarray, idx: np.ndarray, lam: np.ndarray, R: np.ndarray) -> np.ndarray:
        """Newton systems (Z^T S Z / m + (reg + lam) I) p = r; by Woodbury when clients have fewer samples
        than dimensions (no E): with W = S^{1/2} Z / sqrt(m) and c = reg + lam,

            p = (r - W^T (c I_m + W W^T)^{-1} W r) / c,

        an (m x m) solve per client instead of (d x d), exact in exact arithmetic."""
        m_rows = self._Z.shape[0] if self.shared else self._Z.shape[1]
        if self.E is not None or m_rows >= self.dim:
            return super()._newton_solve(X, idx, lam, R)
        z, Z = self._margins(X, idx)
        if self.shared:
            Z = np.broadcast_to(self._Z, (len(idx),) + self._Z.shape)
        W = Z * np.sqrt(expit(z) * expit(-z) / self._m(idx)[:, None])[..., None]  # (k, m, d)
        c = self.reg + lam
        K = np.matmul(W, np.swapaxes(W, 1, 2)) + c[:, None, None] * np.eye(m_rows)
        WR = batched_matvec(W, R)
        return (R - batched_matvec_T(W, np.linalg.solve(K, WR[..., None])[..., 0])) / c[:, None]

    # ----- stochastic oracle -----
    def stochastic_grads(self, X: np.ndarray, rng: np.random.Generator,
                         clients: np.ndarray | None = None) -> np.ndarray:
        """Minibatch gradients if ``batch_size`` is set (plus additive noise of variance ``sigma2``).

        Client i draws ``batch_size`` of its samples uniformly with replacement, all clients in one batched
        gather: g_i = -(1/b) sum_{j in B_i} sigma(-z_j) z_j + reg x + E_i x + c_i, unbiased for grad f_i.
        """
        if self.batch_size is None:
            return super().stochastic_grads(X, rng, clients)
        self._check_points(X, clients)
        m = self._m(clients)
        b = self.batch_size
        pick = np.floor(rng.random((len(m), b)) * m[:, None]).astype(np.int64)
        if self.shared:
            Zb = self._Z[pick]
        else:
            rows = np.arange(self.n_clients) if clients is None else np.asarray(clients)
            Zb = self._Z[rows[:, None], pick]
        z = np.einsum("kbd,kd->kb", Zb, X)
        G = -np.einsum("kb,kbd->kd", expit(-z), Zb) / b + self.reg * X
        E, c = self._pert(clients)
        if E is not None:
            G = G + batched_matvec(E, X)
        if c is not None:
            G = G + c
        if self.sigma2 > 0:
            G = G + rng.normal(scale=np.sqrt(self.sigma2 / self.dim), size=G.shape)
        return G

    def minibatch_variance(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        """Exact E||g_i - grad f_i(X[i])||^2 of the minibatch oracle (with replacement), per client:
        (1/b) [(1/m_i) sum_j ||grad l_j||^2 - ||(1/m_i) sum_j grad l_j||^2] (+ sigma2)."""
        if self.batch_size is None:
            raise ValueError("minibatch_variance needs batch_size to be set (see with_minibatch)")
        self._check_points(X, clients)
        z, _ = self._margins(X, clients)
        s = expit(-z)
        m = self._m(clients)
        if self.shared:
            sq = (s * s) @ np.einsum("md,md->m", self._Z, self._Z)
            mean = s @ self._Z / m[:, None]
        else:
            Z = self._Z if clients is None else self._Z[clients]
            sq = np.einsum("km,km->k", s * s, np.einsum("kmd,kmd->km", Z, Z))
            mean = batched_matvec_T(Z, s) / m[:, None]
        return (sq / m - np.einsum("kd,kd->k", mean, mean)) / self.batch_size + self.sigma2

    def with_minibatch(self, batch_size: int) -> "LogisticProblem":
        """A copy whose :meth:`stochastic_grads` uses minibatches of ``batch_size`` samples."""
        other = copy.copy(self)
        other.batch_size = check_int("batch_size", batch_size, low=1)
        return other

    # ----- certificate -----
    def _data_gram_top(self) -> np.ndarray:
        """||Z_i||_2^2 / m_i per client (the largest eigenvalue of the data Gram matrix over m_i)."""
        if self.shared:
            top = np.linalg.eigvalsh(self._Z.T @ self._Z)[-1]
            return np.full(self.n_clients, top / len(self._Z))
        gram = np.matmul(np.swapaxes(self._Z, 1, 2), self._Z)
        return sym_extreme_eigs(gram)[1] / self.sizes

    def _certify(self) -> Certificate:
        n, d, w = self.n_clients, self.dim, self.weights
        x_star, residual = self._global_newton(np.zeros(d))
        E_lo = E_hi = np.zeros(n)
        if self.E is not None:
            E_lo, E_hi = sym_extreme_eigs(self.E)
        gram_top = self._data_gram_top()
        # logistic Hessian lies in [0, Z^T Z / (4m)], with the sup attained at x = 0 and the inf approached
        # as ||x|| -> infinity; adding reg I + E_i shifts both ends (exact when E = 0, a bound otherwise).
        mu_i = self.reg + E_lo
        L_i = gram_top / 4.0 + self.reg + E_hi
        self._mu_local = mu_i
        H0 = self.hessian(np.zeros(d))
        L_f = float(np.linalg.eigvalsh(H0)[-1])
        E_bar_lo = 0.0 if self.E is None else float(np.linalg.eigvalsh(weighted_mean(w, self.E))[0])
        grads_star = self.grads(self.broadcast(x_star))
        zeta2 = float(w @ np.sum(grads_star * grads_star, axis=1))
        exact_delta = self.shared or n == 1
        if self.shared:
            if self.E is None:
                delta_A = delta_B = 0.0
            else:
                delta_A, delta_B = hessian_dissimilarity(self.E, w)
        elif n == 1:
            delta_A = delta_B = 0.0
        else:
            delta_A, delta_B = self._estimate_delta(x_star)
        return Certificate(
            x_star=x_star, f_star=self.value(x_star), mu=float(mu_i.min()), L=float(L_i.max()),
            mu_f=self.reg + E_bar_lo, L_f=L_f, mu_i=mu_i, L_i=L_i, delta_A=float(delta_A),
            delta_B=float(delta_B), zeta2=zeta2, weights=w, kkt_residual=residual, sigma2=self.sigma2,
            exact={"x_star": False, "f_star": False, "mu": True, "L": self.E is None,
                   "delta_A": exact_delta, "delta_B": exact_delta, "zeta2": False},
            notes=("x* by damped Newton (kkt_residual is the achieved relative gradient norm); mu is the "
                   "infimum reg + min lambda_min(E_i); L_i = ||Z_i||^2/(4 m_i) + reg"
                   + (" + lambda_max(E_i) is an upper bound" if self.E is not None else " is attained at x=0")
                   + ("; delta exact (shared data: h_i = f - f_i is quadratic)" if exact_delta else
                      "; delta_A, delta_B are ESTIMATES: max over x*, 0 and 4 sampled points of the Hessian "
                      "dissimilarity (a lower estimate of the sup)")),
            gradient_error=self._gradient_error(x_star, L_i, self.reg + E_bar_lo))

    def _estimate_delta(self, x_star: np.ndarray, n_points: int = 4, seed: int = 0) -> tuple[float, float]:
        rng = np.random.default_rng(seed)
        radius = 1.0 + float(np.linalg.norm(x_star))
        pts = [x_star, np.zeros(self.dim)]
        for _ in range(n_points):
            u = rng.standard_normal(self.dim)
            pts.append(x_star + radius * u / np.linalg.norm(u))
        delta_A = delta_B = 0.0
        for x in pts:
            H = self.hessians(self.broadcast(x))
            a, b = hessian_dissimilarity(H, self.weights)
            delta_A, delta_B = max(delta_A, a), max(delta_B, b)
        return delta_A, delta_B


def _from_pooled(a: np.ndarray, y: np.ndarray, groups: np.ndarray, n_clients: int, partition: str, seed: int,
                 dirichlet_alpha: float, sigma: float, shards_per_client: int) -> FederatedData:
    parts = _partition(partition, groups, n_clients, seed=seed, alpha=dirichlet_alpha, sigma=sigma,
                       shards_per_client=shards_per_client)
    return FederatedData([a[p] for p in parts], [y[p] for p in parts])


def logistic(source: Literal["synthetic", "breast_cancer", "digits"] = "synthetic", n_clients: int = 10, *,
             reg: float = 1e-2, partition: Literal["natural", "iid", "dirichlet", "lognormal", "shards"] | None = None,
             alpha: float | None = None, beta: float | None = None, dim: int | None = None,
             samples: int | Sequence[int] | None = None,
             dirichlet_alpha: float = 0.5, sigma: float = 1.0, shards_per_client: int = 2,
             digits: Literal["one_vs_rest", "two_class"] = "one_vs_rest", positive: int = 0, negative: int = 1,
             weights: WeightsOption | np.ndarray = "size", batch_size: int | None = None,
             seed: int = 0) -> LogisticProblem:
    """A federated binary logistic regression problem with its Newton certificate.

    Sources: ``"synthetic"`` is FedProx's Synthetic(``alpha``, ``beta``) in ``dim`` dimensions with two
    classes (Li et al. 2020, Sec. 5.1; :func:`fedtheory.problems.datasets.synthetic_fedprox`), already split
    by device (``partition="natural"``, the default) with ``samples`` per device (None: the paper's
    lognormal(4, 2) + 50); ``"breast_cancer"`` and ``"digits"`` are scikit-learn's bundled datasets
    (standardised / scaled to [0, 1]; digits as one-vs-rest on ``positive`` or ``positive`` vs ``negative``).

    Partitions (of the pooled data; default ``"iid"`` for the real datasets): ``"iid"``, ``"dirichlet"``
    (label skew, concentration ``dirichlet_alpha``; digits are skewed by digit, not by binary label),
    ``"lognormal"`` (client sizes ~ lognormal(0, ``sigma``^2)), ``"shards"`` (``shards_per_client`` label
    shards each). See :mod:`fedtheory.problems.partition`.

    ``alpha``, ``beta``, ``dim`` and ``samples`` describe the Synthetic data (None: 1.0, 1.0, 60 and the paper's
    sizes) and are refused for the real datasets, where they would be silently meaningless (in particular
    ``alpha`` is not the Dirichlet concentration: that is ``dirichlet_alpha``).
    """
    if source not in ("synthetic", "breast_cancer", "digits"):
        raise ValueError(f"source must be 'synthetic', 'breast_cancer' or 'digits', got {source!r}")
    n_clients = check_int("n_clients", n_clients, low=1)
    seed = check_seed("seed", seed)
    dirichlet_alpha = check_positive("dirichlet_alpha", dirichlet_alpha)
    sigma = check_nonnegative("sigma", sigma)
    shards_per_client = check_int("shards_per_client", shards_per_client, low=1)
    if source != "synthetic":
        for name, value in (("alpha", alpha), ("beta", beta), ("dim", dim), ("samples", samples)):
            if value is not None:
                hint = (" (the concentration of partition='dirichlet' is dirichlet_alpha, in (0, inf))"
                        if name == "alpha" else "")
                raise ValueError(f"{name} describes FedProx's Synthetic data and applies only to "
                                 f"source='synthetic', got {name}={value!r} with source={source!r}{hint}")
    if partition not in (None, "natural", "iid", "dirichlet", "lognormal", "shards"):
        raise ValueError(f"partition must be None or one of 'natural', 'iid', 'dirichlet', 'lognormal', 'shards', "
                         f"got {partition!r}")
    if digits not in ("one_vs_rest", "two_class"):
        raise ValueError(f"digits must be 'one_vs_rest' or 'two_class', got {digits!r}")
    if source == "synthetic":
        sizes = None if samples is None else check_sizes("samples", samples, n_clients)
        data = synthetic_fedprox(1.0 if alpha is None else alpha, 1.0 if beta is None else beta, n_clients,
                                 dim=60 if dim is None else dim, n_classes=2, sizes=sizes, seed=seed)
        if partition not in (None, "natural"):
            a, y = np.concatenate(data.features), np.concatenate(data.labels)
            data = _from_pooled(a, y, y, n_clients, partition, seed, dirichlet_alpha, sigma, shards_per_client)
    elif source in ("breast_cancer", "digits"):
        if partition == "natural":
            raise ValueError("partition='natural' exists only for source='synthetic'; use 'iid', 'dirichlet', "
                             "'lognormal' or 'shards'")
        if source == "breast_cancer":
            a, y = load_breast_cancer()
            groups = y
        else:
            a, y, groups = load_digits(digits, positive=positive, negative=negative)
        data = _from_pooled(a, y, groups, n_clients, partition or "iid", seed, dirichlet_alpha, sigma,
                            shards_per_client)
    return LogisticProblem(data.features, data.labels, reg=reg, weights=weights, batch_size=batch_size)


def logistic_perturbed(n_clients: int, dim: int, *, reg: float = 0.1, delta_A: float | None = None,
                       delta_B: float | None = None, zeta2: float = 0.0, samples: int = 200,
                       weights: np.ndarray | None = None, features: np.ndarray | None = None,
                       labels: np.ndarray | None = None, seed: int = 0) -> LogisticProblem:
    """Exact-delta logistic construction (fedtheory's, docs/problems.md): f_i = phi + 1/2 x^T E_i x + c_i^T x.

    phi(x) = (1/m) sum_j log(1 + exp(-y_j a_j^T x)) + reg/2 ||x||^2 is common to all clients (data: one
    binary Synthetic(1, 1) device with ``samples`` points, or the given ``features``/``labels``). E_i are
    random symmetric with sum_i w_i E_i = 0, scaled so that ``delta_A`` or ``delta_B`` is exact (h_i = f - f_i
    = -(E_i x + c_i) + const is quadratic). With c_i = r_i - E_i x*, sum_i w_i r_i = 0 and
    sum_i w_i ||r_i||^2 = ``zeta2``, the minimiser x* of f = phi is unchanged and zeta2 is exact (up to the
    Newton residual of x*). Clients may be weakly convex (mu = reg + min lambda_min(E_i) < 0) when delta_B
    exceeds reg; f itself is always reg-strongly convex.
    """
    n = check_int("n_clients", n_clients, low=1)
    d = check_int("dim", dim, low=1)
    reg = check_positive("reg", reg)
    zeta2 = check_nonnegative("zeta2", zeta2)
    seed = check_seed("seed", seed)
    which, delta = check_dissimilarity_request(delta_A, delta_B, n_clients=n, zeta2=zeta2)
    w = check_weights(weights, n)
    # E_i and its transpose here, then the certificate's Hessians: measured peak 5.1 arrays of shape (n, d, d)
    check_dense_memory(n, d if features is None else np.shape(features)[-1], 5, what="logistic_perturbed",
                       hint=CROSS_DEVICE_HINT)
    if features is None:
        data = synthetic_fedprox(1.0, 1.0, 1, dim=d, n_classes=2, sizes=check_int("samples", samples, low=1),
                                 seed=seed)
        features, labels = data.features[0], data.labels[0]
    base = LogisticProblem(features, labels, reg=reg, n_clients=n, weights=w)
    x_star = base.certificate.x_star
    rng = np.random.default_rng([seed, 1])
    G = rng.standard_normal((n, d, d))
    G += np.swapaxes(G, 1, 2).copy()
    G_mean = weighted_mean(w, G)
    G -= 0.5 * (G_mean + G_mean.T)
    if delta > 0:
        G *= delta / unit_dissimilarity(G, w, which)
    else:
        G[:] = 0.0
    r = rng.standard_normal((n, d))
    r -= w @ r
    r *= np.sqrt(zeta2 / (w @ np.sum(r * r, axis=1))) if zeta2 > 0 else 0.0
    c = r - batched_matvec(G, np.broadcast_to(x_star, (n, d)))
    return LogisticProblem(features, labels, reg=reg, n_clients=n, weights=w, E=G, c=c)
