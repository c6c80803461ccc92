"""The federated problem contract and its certificate.

A federated problem is f(x) = sum_i w_i f_i(x) over n clients with weights w summing to one. Points are
stacked: a client-wise iterate is an array of shape ``(n, d)``. Every oracle is vectorised over clients and
accepts an optional ``clients`` index array, in which case ``X`` holds only those clients' rows.

The :class:`Certificate` holds everything a theorem needs, *computed* from the generated data, never copied
from the request: a test that compares a run with a theorem reads its constants from here.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np

from ..validation import check_nonnegative

#: Rounding policy (README "Reproducibility"): a computed constant that is mathematically >= 0 and lies within
#: ``max(ROUNDING_ULPS, d) * eps * scale`` of zero is reported as an exact zero. Why this multiple: a
#: backward-stable symmetric eigensolver returns eigenvalues within O(d) eps ||A|| of the exact ones (measured
#: here: at most 12 eps ||A|| for d <= 200 under the SkylakeX, Haswell and Zen OpenBLAS kernels), and the
#: generators' affine maps add a few eps more, so 64 leaves a margin of 5x while staying 10 orders of magnitude
#: below any constant a generator is asked for; the d term keeps the classical O(d) bound for large d.
ROUNDING_ULPS = 64


def rounding_tolerance(scale: float, dim: int) -> float:
    """The absolute rounding-level tolerance ``max(ROUNDING_ULPS, dim) * eps * |scale|`` (0 for a NaN scale)."""
    if not math.isfinite(scale):
        return 0.0
    return max(ROUNDING_ULPS, int(dim)) * float(np.finfo(np.float64).eps) * abs(float(scale))


def gradient_error_bound(dim: int, gradient_scale: float, L: float, mu_f: float, grad_norm_at_x_star: float
                         ) -> float:
    """An upper bound on the error of every computed grad f_i(x*), used to snap zeta2 at a common optimum.

    Two sources: evaluating grad f_i in floating point (``rounding_tolerance(gradient_scale, dim)`` with
    ``gradient_scale`` bounding the magnitudes summed, e.g. ||A_i|| ||x*|| + ||b_i||), and the inexactness
    of the computed x^ itself: ||grad f_i(x^) - grad f_i(x*)|| <= L ||x^ - x*|| <= (L / mu_f) ||grad f(x^)||
    for a mu_f-strongly convex f (the second term is dropped when mu_f <= 0, where it has no bound).
    """
    bound = rounding_tolerance(gradient_scale, dim)
    if mu_f > 0 and math.isfinite(grad_norm_at_x_star) and math.isfinite(L):
        bound += L / mu_f * grad_norm_at_x_star
    return bound


@dataclass(frozen=True)
class Certificate:
    """Computed facts about a problem instance.

    Attributes
    ----------
    x_star, f_star:
        A minimiser of f and the optimal value (``f_star`` is ``f^inf`` for non-convex problems, then only a
        lower bound estimate; ``exact`` says which).
    mu, L:
        Per-client constants as the papers use them: every f_i is mu-strongly convex and L-smooth
        (mu = min_i mu_i, L = max_i L_i). ``mu`` may be negative for non-convex problems (weak convexity).
    mu_f, L_f:
        Constants of the global objective f.
    mu_i, L_i:
        Per-client constants, arrays of shape ``(n,)``.
    delta_A, delta_B:
        Averaged and bounded Hessian dissimilarity (Jiang, Rodomanov & Stich 2024, Defs. 1-2) with
        h_i = f - f_i: ``delta_B = max_i ||E_i||``, ``delta_A = sqrt(lambda_max(sum_i w_i E_i^2))`` for
        quadratics, where E_i = A_i - sum_j w_j A_j.
    zeta2:
        Gradient heterogeneity at the optimum, sum_i w_i ||grad f_i(x*)||^2.
    sigma2:
        Variance of the stochastic oracle, E||g_i - grad f_i||^2 (0 for deterministic problems).
    weights:
        Client weights, shape ``(n,)``, summing to one.
    kkt_residual:
        ||grad f(x_star)|| achieved by the certificate computation (relative to max(1, ||grad f(0)||)).
    exact:
        Which constants are exact (True) and which are estimates (False), by name.
    gradient_error:
        An upper bound on the error of the computed grad f_i(x*) (see :func:`gradient_error_bound`); NaN
        when the problem does not provide one (then zeta2 is not snapped).
    rounding_tolerance:
        Filled in on construction, by the rounding policy: for each constant that is mathematically >= 0 (or
        0 for a merely convex problem) -- mu, mu_f, mu_i, delta_A, delta_B (tolerance
        ``max(64, d) eps max(|L|, |L_f|, |mu|, |mu_f|)``) and zeta2 (tolerance ``gradient_error**2``) -- the
        absolute tolerance under which it was reported as an exact 0. No check may depend on the sign of a
        number below these tolerances.
    """

    x_star: np.ndarray
    f_star: float
    mu: float
    L: float
    mu_f: float
    L_f: float
    mu_i: np.ndarray
    L_i: np.ndarray
    delta_A: float
    delta_B: float
    zeta2: float
    weights: np.ndarray
    kkt_residual: float
    sigma2: float = 0.0
    exact: Mapping[str, bool] = field(default_factory=dict)
    notes: str = ""
    gradient_error: float = float("nan")
    rounding_tolerance: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The rounding policy, applied in one place for every problem class (frozen: set through object).
        dim = int(np.size(self.x_star))
        scales = [abs(v) for v in (self.L, self.L_f, self.mu, self.mu_f) if math.isfinite(v)]
        curvature_tol = rounding_tolerance(max(scales, default=float("nan")), dim)
        tolerances = {name: curvature_tol for name in ("mu", "mu_f", "mu_i", "delta_A", "delta_B")}
        tolerances["zeta2"] = self.gradient_error ** 2 if math.isfinite(self.gradient_error) else 0.0
        for name, tol in tolerances.items():
            value = getattr(self, name)
            if name == "mu_i":
                mu_i = np.asarray(value, dtype=np.float64)
                snapped = np.where(np.abs(mu_i) <= tol, 0.0, mu_i)
                object.__setattr__(self, name, snapped)
            elif math.isfinite(value) and abs(value) <= tol:
                object.__setattr__(self, name, 0.0)
        object.__setattr__(self, "rounding_tolerance", tolerances)

    @property
    def kappa(self) -> float:
        """Per-client condition number L / mu (inf when mu <= 0)."""
        return self.L / self.mu if self.mu > 0 else float("inf")

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly view (arrays as lists)."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                value = value.tolist()
            elif isinstance(value, Mapping):
                value = dict(value)
            out[name] = value
        return out


class NonFiniteInputError(ValueError):
    """An oracle was given a point holding NaN or inf (the message names the argument and the clients).

    A ValueError, so callers that catch bad input keep working; :func:`fedtheory.run.run` catches this class to
    report a run whose iterates overflowed inside a round (e.g. a local step too large) as diverged.
    """


class Problem:
    """Base class of federated problems; subclasses implement the per-client oracles.

    Subclasses must set ``n_clients``, ``dim``, ``weights`` and ``certificate`` and implement
    :meth:`values`, :meth:`grads` and :meth:`solve_local`. The global oracles and the metrics recorded by
    :func:`fedtheory.run` are derived here.
    """

    n_clients: int
    dim: int
    weights: np.ndarray
    certificate: Certificate
    #: Variance of the additive stochastic-gradient noise (see :meth:`stochastic_grads`).
    sigma2: float = 0.0

    # ----- per-client oracles (vectorised over clients) -----
    def values(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        """f_i(X[i]) for every client (or the listed ``clients``); shape ``(m,)``."""
        raise NotImplementedError

    def grads(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        """grad f_i(X[i]) for every client (or the listed ``clients``); shape ``(m, d)``."""
        raise NotImplementedError

    def solve_local(self, lin: np.ndarray, center: np.ndarray, lam: float | np.ndarray, l1: float = 0.0,
                    clients: np.ndarray | None = None) -> np.ndarray:
        """argmin_x f_i(x) + <lin_i, x> + lam/2 ||x - center_i||^2 + l1 ||x - center_i||_1, all clients.

        ``lin`` and ``center`` have shape ``(m, d)``; ``lam`` is a scalar or shape ``(m,)``. This one hook
        covers FedProx, DANE, FedDyn, FedRed and FedElasticNet's exact local solves.
        """
        raise NotImplementedError

    def stochastic_grads(self, X: np.ndarray, rng: np.random.Generator,
                         clients: np.ndarray | None = None) -> np.ndarray:
        """Unbiased gradient estimates with E||g_i - grad f_i||^2 = ``sigma2`` exactly.

        Additive Gaussian noise N(0, sigma2/d I), so Jiang et al. 2024's Assumption 1 holds with equality.
        Finite-sum problems override this with minibatch gradients.
        """
        G = self.grads(X, clients)
        if self.sigma2 == 0.0:
            return G
        return G + rng.normal(scale=np.sqrt(self.sigma2 / self.dim), size=G.shape)

    # ----- the defining arrays (catalogue: ship, checksum, rebuild) -----
    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays (and scalar hyperparameters, as 0-d arrays) that define this problem exactly.

        ``type(self).from_arrays(self.arrays())`` rebuilds the same problem without its generator; the
        catalogue ships these arrays so that a cited instance is the same data on every machine.
        """
        raise NotImplementedError(f"{type(self).__name__} does not define arrays() (cannot be catalogued)")

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> "Problem":
        """Rebuild a problem from :meth:`arrays` (the certificate is recomputed from them)."""
        raise NotImplementedError(f"{cls.__name__} does not define from_arrays() (cannot be catalogued)")

    # ----- oracle entry checks (hot paths: shape comparisons only, no copies, no pass over the data) -----
    def _check_points(self, X: Any, clients: Any = None, name: str = "X") -> int:
        """Check that ``X`` has shape ``(m, d)``, m the number of listed ``clients`` (all clients when None),
        and that ``clients`` is a 1-D integer index into ``range(n_clients)``; return m.

        Every per-client oracle calls this at its entry. It costs one shape comparison (plus, only when clients
        are listed, a min and a max over the m indices) and one pass of :meth:`_check_finite` over ``X``, cheap
        next to any oracle. NaN or inf in ``X`` raises :class:`NonFiniteInputError` naming ``name`` and the
        client: a silently NaN-filled output would only surface far from its cause.
        """
        m = self._check_clients(clients)
        if np.shape(X) != (m, self.dim):
            rows = "listed clients" if clients is not None else "clients"
            raise ValueError(f"{name} must have shape (m, d) = ({m}, {self.dim}) (one row for each of the {m} "
                             f"{rows}), got shape {np.shape(X)}")
        self._check_finite(X, name, clients)
        return m

    @staticmethod
    def _check_finite(X: Any, name: str, clients: Any = None) -> None:
        """Raise :class:`NonFiniteInputError` naming ``name`` (and the clients whose rows are bad) if ``X`` holds
        NaN or inf; TypeError if it is not numeric. One ``np.isfinite(X).all()``: about 5-10 us for 10^4 entries
        (benchmarks/bench_oracles.py measures the oracles with it)."""
        arr = X if isinstance(X, np.ndarray) else np.asarray(X)
        # A broadcast server model (stride 0 over the client axis) has one distinct row: check only that one.
        probe = arr[:1] if arr.ndim == 2 and arr.shape[0] > 1 and arr.strides[0] == 0 else arr
        try:
            finite = bool(np.isfinite(probe).all())
        except TypeError:
            raise TypeError(f"{name} must be a real array, got dtype {arr.dtype}") from None
        if finite:
            return
        if arr.ndim == 2:
            rows = np.unique(np.nonzero(~np.isfinite(arr))[0])
            ids = rows if clients is None else np.asarray(clients)[rows]
            where = (f" in the row(s) of client(s) {ids[:10].tolist()}" + (" ..." if ids.size > 10 else ""))
        else:
            where = ""
        raise NonFiniteInputError(f"{name} must be finite, found NaN or inf{where} (an oracle given a non-finite "
                                  f"point has no meaningful output; fedtheory.run reports a run whose iterates "
                                  f"become non-finite as status='diverged')")

    def _check_clients(self, clients: Any) -> int:
        """Check a ``clients`` selection (None = all) and return how many clients it lists. Only integer indices
        in range pass: numpy would wrap negative ones and truncate floats silently."""
        if clients is None:
            return self.n_clients
        idx = np.asarray(clients)
        if idx.ndim != 1 or (idx.size and (idx.dtype.kind not in "iu" or idx.min() < 0
                                          or idx.max() >= self.n_clients)):
            raise ValueError(f"clients must be a 1-D integer array of client indices in [0, {self.n_clients - 1}], "
                             f"got {clients!r}")
        return idx.size

    def _check_point(self, x: Any, name: str = "x") -> None:
        """Check that the server point ``x`` of a global oracle has shape ``(d,)`` and is finite."""
        if np.shape(x) != (self.dim,):
            raise ValueError(f"{name} must have shape (d,) = ({self.dim},), got shape {np.shape(x)}")
        self._check_finite(x, name)

    def _check_local_args(self, lin: Any, center: Any, lam: Any, clients: Any) -> np.ndarray:
        """Entry check of :meth:`solve_local`: ``lin`` and ``center`` of shape (m, d), ``lam`` a finite scalar
        or shape (m,); returns lam as a float array (range checks are the subclass's: they depend on mu_i)."""
        m = self._check_points(lin, clients, "lin")
        self._check_points(center, clients, "center")
        try:
            lam_arr = np.asarray(lam, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"lam must be a real scalar or an array of shape ({m},), got {lam!r}") from None
        if lam_arr.ndim > 1 or (lam_arr.ndim == 1 and lam_arr.shape != (m,)) or not np.all(np.isfinite(lam_arr)):
            raise ValueError(f"lam must be a finite scalar or a finite array of shape ({m},), got {lam!r}")
        return lam_arr

    # ----- global oracles -----
    def _weights_for(self, clients: np.ndarray | None) -> np.ndarray:
        return self.weights if clients is None else self.weights[clients]

    def broadcast(self, x: np.ndarray) -> np.ndarray:
        """Stack the server point for every client, shape ``(n, d)`` (a read-only view)."""
        return np.broadcast_to(x, (self.n_clients, self.dim))

    def value(self, x: np.ndarray) -> float:
        """f(x) = sum_i w_i f_i(x)."""
        self._check_point(x)
        return float(self.weights @ self.values(self.broadcast(x)))

    def grad(self, x: np.ndarray) -> np.ndarray:
        """grad f(x) = sum_i w_i grad f_i(x)."""
        self._check_point(x)
        return self.weights @ self.grads(self.broadcast(x))

    def gap(self, x: np.ndarray) -> float:
        """f(x) - f*, computed without cancellation where the problem allows it."""
        self._check_point(x)
        return self.value(x) - self.certificate.f_star

    def metrics(self, x: np.ndarray) -> dict[str, float]:
        """Per-round metrics recorded by :func:`fedtheory.run`: gap, squared distance, squared gradient norm."""
        g = self.grad(x)
        diff = x - self.certificate.x_star
        return {"gap": self.gap(x), "dist2": float(diff @ diff), "grad_norm2": float(g @ g)}

    def with_noise(self, sigma2: float) -> "Problem":
        """A copy whose :meth:`stochastic_grads` adds noise of total variance ``sigma2`` per client."""
        sigma2 = check_nonnegative("sigma2", sigma2)
        other = copy.copy(self)
        other.sigma2 = sigma2
        other.certificate = replace(self.certificate, sigma2=sigma2)
        return other
