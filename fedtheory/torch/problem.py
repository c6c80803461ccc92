"""Federated problems over torch models: one hyperparameter class, two execution backends.

:class:`TorchProblem` is a :class:`fedtheory.problems.base.Problem` whose client objectives are empirical risks
of a flat-parameter model (:mod:`fedtheory.torch.models`):

    f_i(theta) = sum_{j in D_i} l(h(theta; a_j), y_j) / m_i + reg/2 ||theta||^2,    f = sum_i w_i f_i,

with l the cross-entropy of the logits (``loss="cross_entropy"``, labels 0..C-1) or the binary logistic loss
log(1 + exp(-y z)) (``loss="logistic"``, labels in {-1, +1}). Because the *problem* is the backend, every NumPy
algorithm class (FedAvg, FedProx / FedElasticNet Alg. 1 with ``solver="gd"``, SCAFFOLD / Alg. 2, FedDyn / Alg. 3
with ``solver="gd"``, DANE+ with ``solver="gd"``, FedRed-GD / -SGD, DoCoFL, EFL) runs unchanged through
:func:`fedtheory.run.run` on a neural model: the algorithms keep their float64 NumPy state and call the
oracles below, which evaluate all requested clients at once.

Execution
---------
Client data sit in zero-padded stacked tensors ``(n, m_max, in_features)`` with per-sample weights
``mask_ij / m_i`` (padding weighs 0), so one call of ``torch.func.vmap(torch.func.grad(client_loss))`` over the
stacked client parameters ``(n, P)`` computes every client's gradient (``vectorize=True``). ``vectorize=False``
runs the *same* ``client_loss`` in a Python loop over clients on their unpadded data: the reference the tests
and ``benchmarks/bench_torch.py`` compare against. Computation happens on ``device`` in ``dtype`` (float64 by
default, or float32); inputs and outputs are float64 NumPy arrays.

Stochastic gradients (``batch_size`` set): client i draws ``batch_size`` of its samples uniformly *with
replacement* from the NumPy generator the algorithm passes, by exactly the same draw as
:meth:`fedtheory.problems.logistic.LogisticProblem.stochastic_grads` (``floor(U m_i)``, U ~ rng.random), so a
seed reproduces a run bitwise and the two backends consume randomness identically (the cross-check in
:mod:`fedtheory.claims.neural` relies on it).

Certificates for non-convex problems
------------------------------------
There is no x*: ``certificate.x_star`` is NaN, ``f_star = 0`` is the trivial lower bound of a non-negative loss
(``exact["f_star"] = False``), mu, delta_A, delta_B and zeta2 are NaN (algorithms that default to them -- DANE+
and FedRed's lam, FedRed's p -- need them given explicitly), and ``L_i`` / ``L_f`` are *estimates*: the largest
Hessian eigenvalue at the model's initial point (``init_seed``) by power iteration on Hessian-vector products
(``exact["L"] = False``); they only serve as default step sizes 1/L. A ``certificate`` argument replaces all of
this (the cross-check passes the NumPy logistic problem's exact certificate).

:meth:`metrics` (recorded by :func:`fedtheory.run.run` every recorded round) therefore reports
``gap = f(x) - f_star`` = the training loss (with f_star = 0), ``dist2 = ||x - x*||^2`` (NaN without x*),
``grad_norm2 = ||grad f(x)||^2`` (the stationarity measure of the non-convex theory), and as extra columns
``loss`` (= f(x)), ``accuracy`` (pooled training accuracy) and, with a ``test`` set, ``test_loss`` and
``test_accuracy`` of the server model.

Exact local solves (:meth:`solve_local`) do not exist for neural networks: they raise NotImplementedError naming
the inexact option to use instead.
"""
from __future__ import annotations

import copy
from typing import Any, Literal, Sequence

import numpy as np
import torch

from ..problems.base import Certificate, Problem
from ..problems.datasets import FederatedData
from ..validation import check_int, check_nonnegative, check_weights
from .models import FlatModel

__all__ = ["TorchProblem", "DTYPES", "FISHER_CHUNK_BYTES"]

LossName = Literal["cross_entropy", "logistic"]
DTYPES = {"float64": torch.float64, "float32": torch.float32}
#: Memory budget of the per-sample gradients :meth:`TorchProblem.fisher_diag` holds at once.
FISHER_CHUNK_BYTES = 64 * 1024 * 1024

_EXACT_SOLVE_MESSAGE = (
    "exact local solves (problem.solve_local) are not available for neural models: use the inexact local "
    "solver instead -- FedProx/FedElasticNet Alg. 1 and FedDyn/Alg. 3 with solver='gd' (local_steps, local_step, "
    "stochastic=True for local SGD), DANE+ with solver='gd', FedRed with solver='linearized' (FedRed-GD/-SGD)")


def _as_dtype(dtype: Any) -> torch.dtype:
    if isinstance(dtype, torch.dtype) and dtype in DTYPES.values():
        return dtype
    if isinstance(dtype, str) and dtype in DTYPES:
        return DTYPES[dtype]
    raise ValueError(f"dtype must be 'float64' or 'float32' (or the torch dtype), got {dtype!r}")


class TorchProblem(Problem):
    """Empirical-risk federated problem over a :class:`~fedtheory.torch.models.FlatModel` (module docstring).

    Parameters
    ----------
    model:
        The flat-parameter model; ``dim = model.n_params``.
    features, labels:
        Per-client lists of ``(m_i, in_features)`` features and ``(m_i,)`` labels (or a
        :class:`~fedtheory.problems.datasets.FederatedData` as ``features`` with ``labels=None``).
    loss:
        ``"cross_entropy"`` (labels 0..C-1, C = model.n_outputs >= 2) or ``"logistic"`` (one output, labels
        +-1). Default: logistic for one-output models, cross-entropy otherwise.
    reg:
        l2 regularisation reg >= 0 on all parameters.
    weights:
        ``"size"`` (w_i = m_i / M, the pooled empirical risk), ``"uniform"``, or positive weights.
    batch_size:
        Minibatch size of :meth:`stochastic_grads` (None: full gradients plus ``sigma2`` noise, as the base class).
    dtype, device:
        Torch computation dtype (``"float64"`` or ``"float32"``) and device (``"cpu"`` default, e.g. ``"cuda"``).
    vectorize:
        ``True``: one vmapped call over the client axis; ``False``: a Python loop over clients (reference).
    test:
        Optional pooled held-out ``(features, labels)`` for ``test_loss`` / ``test_accuracy`` in :meth:`metrics`.
    certificate:
        Replace the estimated certificate (e.g. with an exact one of an equivalent NumPy problem).
    init_seed:
        Seed of the initial point (:meth:`initial_point`) at which L is estimated.
    origin:
        ``None`` (coordinates are the model parameters theta), ``"init"`` or a vector theta_0: the problem's
        coordinates are offsets x = theta - theta_0 from the model's initialisation under ``init_seed`` (or the
        given theta_0). Then x = 0 is a sensible start, which lets tools that start every run at zeros
        (``fedtheory bench``) train neural models; the l2 term still acts on theta.
    fisher:
        Default kind of :meth:`fisher_diag` (EFL's elastic term): ``"true"`` or ``"empirical"``.
    power_iters:
        Power-iteration steps of the L estimate (0 skips it: L = NaN); the estimate is computed lazily, on the
        first access of :attr:`certificate`.
    """

    def __init__(self, model: FlatModel, features: Sequence[np.ndarray] | FederatedData,
                 labels: Sequence[np.ndarray] | None = None, *, loss: LossName | None = None, reg: float = 0.0,
                 weights: str | np.ndarray = "size", batch_size: int | None = None, dtype: Any = "float64",
                 device: str | torch.device = "cpu", vectorize: bool = True,
                 test: tuple[np.ndarray, np.ndarray] | None = None, certificate: Certificate | None = None,
                 init_seed: int = 0, power_iters: int = 20, sigma2: float = 0.0,
                 origin: str | np.ndarray | None = None, fisher: Literal["true", "empirical"] = "true") -> None:
        if not isinstance(model, FlatModel):
            raise TypeError(f"model must be a fedtheory.torch.FlatModel, got {type(model).__name__}")
        self.model = model
        if isinstance(features, FederatedData):
            if labels is not None:
                raise ValueError("give labels=None when features is a FederatedData")
            features, labels = features.features, features.labels
        if labels is None or len(features) != len(labels) or len(features) == 0:
            raise ValueError("features and labels must be non-empty lists of the same length (one per client)")
        if loss is None:
            loss = "logistic" if model.n_outputs == 1 else "cross_entropy"
        if loss not in ("cross_entropy", "logistic"):
            raise ValueError(f"loss must be 'cross_entropy' or 'logistic', got {loss!r}")
        if loss == "logistic" and model.n_outputs != 1:
            raise ValueError(f"loss='logistic' needs a one-output model, got n_outputs={model.n_outputs}")
        if loss == "cross_entropy" and model.n_outputs < 2:
            raise ValueError("loss='cross_entropy' needs a model with n_outputs >= 2 (logits)")
        self.loss = loss
        self.reg = check_nonnegative("reg", reg)
        self.dtype = _as_dtype(dtype)
        self.device = torch.device(device)
        if not isinstance(vectorize, (bool, np.bool_)):
            raise TypeError(f"vectorize must be a bool, got {type(vectorize).__name__}")
        self.vectorize = bool(vectorize)
        self.batch_size = None if batch_size is None else check_int("batch_size", batch_size, low=1)
        self.sigma2 = check_nonnegative("sigma2", sigma2)

        feats = [self._check_features(a, i) for i, a in enumerate(features)]
        labs = [self._check_labels(y, len(a), i) for i, (a, y) in enumerate(zip(feats, labels))]
        n = len(feats)
        self.n_clients = n
        self.dim = model.n_params
        self.sizes = np.array([len(a) for a in feats], dtype=np.int64)
        m_max = int(self.sizes.max())
        d_in = model.in_features
        X = np.zeros((n, m_max, d_in))
        Y = np.zeros((n, m_max), dtype=np.int64 if loss == "cross_entropy" else np.float64)
        mask = np.zeros((n, m_max))
        for i, (a, y) in enumerate(zip(feats, labs)):  # one-off packing into the padded layout
            X[i, :len(a)], Y[i, :len(a)], mask[i, :len(a)] = a, y, 1.0
        if loss == "logistic":
            Y[mask == 0] = 1.0  # padding label: any valid label (its weight is 0)
        self._X = torch.as_tensor(X, dtype=self.dtype, device=self.device)
        self._Y = torch.as_tensor(Y, device=self.device)
        if loss == "logistic":
            self._Y = self._Y.to(self.dtype)
        self._mask = mask
        self._W = torch.as_tensor(mask / self.sizes[:, None], dtype=self.dtype, device=self.device)
        self._n_samples = int(self.sizes.sum())
        if isinstance(weights, str):
            if weights not in ("size", "uniform"):
                raise ValueError(f"weights must be 'size', 'uniform' or an array, got {weights!r}")
            weights = self.sizes.astype(np.float64) if weights == "size" else None
        self.weights = check_weights(weights, n)

        self._test = None
        if test is not None:
            ta, ty = test
            ta = self._check_features(ta, "test")
            ty = self._check_labels(ty, len(ta), "test")
            self._test = (torch.as_tensor(ta, dtype=self.dtype, device=self.device),
                          torch.as_tensor(ty, device=self.device, dtype=self._Y.dtype),
                          torch.full((len(ta),), 1.0 / len(ta), dtype=self.dtype, device=self.device))

        self._grad = torch.func.grad(self._client_loss)
        self._vgrad = torch.func.vmap(self._grad)
        self._vvalue = torch.func.vmap(self._client_loss)
        self._veval = torch.func.vmap(torch.func.grad_and_value(self._client_loss_acc, has_aux=True))
        self.init_seed = check_int("init_seed", init_seed, low=0)
        if fisher not in ("true", "empirical"):
            raise ValueError(f"fisher must be 'true' or 'empirical', got {fisher!r}")
        self.fisher = fisher
        if origin is None:
            self.origin = None
        elif isinstance(origin, str):
            if origin != "init":
                raise ValueError(f"origin must be None, 'init' or a vector of length {self.dim}, got {origin!r}")
            self.origin = model.init_params(self.init_seed)
        else:
            origin = np.asarray(origin, dtype=np.float64)
            if origin.shape != (self.dim,) or not np.all(np.isfinite(origin)):
                raise ValueError(f"origin must be None, 'init' or a finite vector of length {self.dim}, "
                                 f"got shape {origin.shape}")
            self.origin = origin.copy()
        self._origin = None if self.origin is None else torch.as_tensor(self.origin, dtype=self.dtype,
                                                                         device=self.device)
        self.power_iters = check_int("power_iters", power_iters, low=0)
        if certificate is not None and not isinstance(certificate, Certificate):
            raise TypeError(f"certificate must be a Certificate, got {type(certificate).__name__}")
        # estimated lazily: runs with explicit step sizes never pay for the power iteration
        self._certificate = certificate

    @property
    def certificate(self) -> Certificate:  # type: ignore[override]
        """The given certificate, or the estimate (computed on first access; see the module docstring)."""
        if self._certificate is None:
            self._certificate = self._estimate_certificate(self.power_iters)
        return self._certificate

    @certificate.setter
    def certificate(self, value: Certificate) -> None:
        self._certificate = value

    # ----- validation -----
    def _check_features(self, a: Any, who: Any) -> np.ndarray:
        a = np.asarray(a, dtype=np.float64)
        if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] != self.model.in_features:
            raise ValueError(f"features of client {who} must have shape (m >= 1, in_features="
                             f"{self.model.in_features}), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"features of client {who} must be finite")
        return a

    def _check_labels(self, y: Any, m: int, who: Any) -> np.ndarray:
        y = np.asarray(y)
        if y.shape != (m,):
            raise ValueError(f"labels of client {who} must have shape ({m},), got {y.shape}")
        if self.loss == "logistic":
            if not np.all(np.isin(y, (-1.0, 1.0))):
                raise ValueError(f"labels of client {who} must be in {{-1, +1}} for loss='logistic'")
            return y.astype(np.float64)
        C = self.model.n_outputs
        if not (np.all(np.isfinite(y.astype(np.float64))) and np.all(y == np.round(y))
                and np.all((y >= 0) & (y < C))):
            raise ValueError(f"labels of client {who} must be integers in [0, {C - 1}] for loss='cross_entropy'")
        return y.astype(np.int64)

    # ----- the one per-client function every backend path differentiates -----
    def _sample_losses(self, theta: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = self.model.apply(theta, x)
        if self.loss == "logistic":
            return torch.nn.functional.softplus(-y * out)
        return torch.nn.functional.cross_entropy(out, y, reduction="none")

    def _client_loss(self, theta: torch.Tensor, x: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """sum_j w_j l(h(theta; x_j), y_j) + reg/2 ||theta||^2 (w_j = mask_j / m_i, or 1/b on a minibatch)."""
        value = (self._sample_losses(theta, x, y) * w).sum()
        # reg is fixed per problem: skipping the zero term saves two (n, P) kernels per call in the hot path
        return value + 0.5 * self.reg * torch.dot(theta, theta) if self.reg > 0 else value

    def _correct(self, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if self.loss == "logistic":
            return (y * out > 0).to(out.dtype)
        return (out.argmax(dim=-1) == y).to(out.dtype)

    def _client_loss_acc(self, theta, x, y, w):
        out = self.model.apply(theta, x)
        if self.loss == "logistic":
            losses = torch.nn.functional.softplus(-y * out)
        else:
            losses = torch.nn.functional.cross_entropy(out, y, reduction="none")
        value = (losses * w).sum()
        if self.reg > 0:
            value = value + 0.5 * self.reg * torch.dot(theta, theta)
        # correct predictions counted on real samples only (w > 0)
        return value, (self._correct(out, y) * (w > 0).to(out.dtype)).sum()

    # ----- conversion helpers -----
    def _tensor(self, X: np.ndarray, rows: int) -> torch.Tensor:
        X = np.asarray(X, dtype=np.float64)
        if X.shape != (rows, self.dim):
            raise ValueError(f"X must have shape ({rows}, {self.dim}), got {X.shape}")
        self._check_finite(X, "X")  # the NumPy problems' check: NaN or inf raises NonFiniteInputError
        if not X.flags.writeable:  # broadcast views: torch refuses read-only memory, so copy
            X = X.copy()
        T = torch.as_tensor(X, dtype=self.dtype, device=self.device)
        return T if self._origin is None else T + self._origin

    @staticmethod
    def _numpy(T: torch.Tensor) -> np.ndarray:
        return T.detach().to(dtype=torch.float64, device="cpu").numpy()

    def _rows(self, clients: np.ndarray | None) -> np.ndarray | None:
        if clients is None:
            return None
        self._check_clients(clients)  # the shared check (a float index would otherwise be truncated silently)
        return np.asarray(clients, dtype=np.int64)

    def _data(self, rows: np.ndarray | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if rows is None:
            return self._X, self._Y, self._W
        idx = torch.as_tensor(rows, device=self.device)
        return self._X[idx], self._Y[idx], self._W[idx]

    def _map(self, fn, T: torch.Tensor, Xd: torch.Tensor, Yd: torch.Tensor, Wd: torch.Tensor,
             sizes: np.ndarray | None) -> torch.Tensor:
        """Apply a per-client function over the client axis: vmapped, or looped over unpadded client data."""
        if self.vectorize:
            return torch.func.vmap(fn)(T, Xd, Yd, Wd)
        out = []
        for k in range(T.shape[0]):  # the reference loop (vectorize=False), deliberately per client
            m = Xd.shape[1] if sizes is None else int(sizes[k])
            out.append(fn(T[k], Xd[k, :m], Yd[k, :m], Wd[k, :m]))
        return torch.stack(out)

    # ----- oracles -----
    def values(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        rows = self._rows(clients)
        T = self._tensor(X, self.n_clients if rows is None else rows.size)
        sizes = self.sizes if rows is None else self.sizes[rows]
        return self._numpy(self._map(self._client_loss, T, *self._data(rows), sizes))

    def grads(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        rows = self._rows(clients)
        T = self._tensor(X, self.n_clients if rows is None else rows.size)
        sizes = self.sizes if rows is None else self.sizes[rows]
        return self._numpy(self._map(self._grad, T, *self._data(rows), sizes))

    def stochastic_grads(self, X: np.ndarray, rng: np.random.Generator,
                         clients: np.ndarray | None = None) -> np.ndarray:
        """Minibatch gradients if ``batch_size`` is set (plus additive noise of variance ``sigma2``).

        Client i draws ``batch_size`` sample indices floor(U_ij m_i), U ~ rng.random((m, b)) -- with replacement,
        the draw of :class:`~fedtheory.problems.logistic.LogisticProblem` -- and returns
        (1/b) sum_{j in B_i} grad l_j + reg theta, an unbiased estimate of grad f_i.
        """
        if self.batch_size is None:
            return super().stochastic_grads(X, rng, clients)
        rows = self._rows(clients)
        idx = np.arange(self.n_clients) if rows is None else rows
        T = self._tensor(X, idx.size)
        b = self.batch_size
        m = self.sizes[idx].astype(np.float64)
        pick = np.floor(rng.random((idx.size, b)) * m[:, None]).astype(np.int64)
        r = torch.as_tensor(idx, device=self.device)[:, None]
        p = torch.as_tensor(pick, device=self.device)
        Wb = torch.full((idx.size, b), 1.0 / b, dtype=self.dtype, device=self.device)
        G = self._numpy(self._map(self._grad, T, self._X[r, p], self._Y[r, p], Wb, None))
        if self.sigma2 > 0:
            G = G + rng.normal(scale=np.sqrt(self.sigma2 / self.dim), size=G.shape)
        return G

    def solve_local(self, lin: np.ndarray, center: np.ndarray, lam: float | np.ndarray, l1: float = 0.0,
                    clients: np.ndarray | None = None) -> np.ndarray:
        """Not available for neural models (raises NotImplementedError naming the inexact options)."""
        raise NotImplementedError(_EXACT_SOLVE_MESSAGE)

    def with_minibatch(self, batch_size: int) -> "TorchProblem":
        """A copy whose :meth:`stochastic_grads` uses minibatches of ``batch_size`` samples."""
        other = copy.copy(self)
        other.batch_size = check_int("batch_size", batch_size, low=1)
        return other

    def fisher_diag(self, X: np.ndarray, clients: np.ndarray | None = None, *,
                    kind: Literal["true", "empirical"] | None = None) -> np.ndarray:
        """Diagonal Fisher information of every listed client at X (used by EFL's elastic term), plus ``reg``.

        ``kind="true"``: (1/m_i) sum_j E_{c ~ p_theta(.|a_j)} [(grad l(h(theta; a_j), c))^2], the Fisher of the
        model's predictive distribution (for logistic regression this is exactly the Hessian diagonal the NumPy
        problem gives EFL); ``kind="empirical"``: the same with the observed label instead of the expectation
        (C times cheaper). ``None`` uses the problem's ``fisher`` option. Per-sample gradients are formed for a
        chunk of clients at a time, at most ``FISHER_CHUNK_BYTES`` of them.
        """
        kind = self.fisher if kind is None else kind
        if kind not in ("true", "empirical"):
            raise ValueError(f"kind must be 'true' or 'empirical', got {kind!r}")
        rows = self._rows(clients)
        T = self._tensor(X, self.n_clients if rows is None else rows.size)
        Xd, Yd, Wd = self._data(rows)
        per_client = Xd.shape[1] * self.dim * T.element_size()
        chunk = max(1, FISHER_CHUNK_BYTES // max(per_client, 1))
        parts = [self._fisher_chunk(T[lo:lo + chunk], Xd[lo:lo + chunk], Yd[lo:lo + chunk], Wd[lo:lo + chunk], kind)
                 for lo in range(0, T.shape[0], chunk)]  # chunks of clients bound the (k, m, P) memory
        return self._numpy(torch.cat(parts)) + self.reg

    def _fisher_chunk(self, T: torch.Tensor, Xd: torch.Tensor, Yd: torch.Tensor, Wd: torch.Tensor,
                      kind: str) -> torch.Tensor:

        def per_sample_grad(theta, x, y):
            return torch.func.grad(lambda t: self._sample_losses(t, x[None], y[None])[0])(theta)

        sample_grads = torch.func.vmap(torch.func.vmap(per_sample_grad, in_dims=(None, 0, 0)))
        if kind == "empirical":
            F = torch.einsum("km,kmp->kp", Wd, sample_grads(T, Xd, Yd) ** 2)
        else:
            out = torch.func.vmap(self.model.apply)(T, Xd)  # (k, m[, C])
            F = torch.zeros_like(T)
            if self.loss == "logistic":
                labels = [(torch.sigmoid(out), 1.0), (torch.sigmoid(-out), -1.0)]
            else:
                probs = torch.softmax(out, dim=-1)
                labels = [(probs[..., c], c) for c in range(self.model.n_outputs)]
            for prob, c in labels:  # a loop over the C classes (not clients): memory stays (k, m, P)
                Yc = torch.full_like(Yd, c)
                F = F + torch.einsum("km,kmp->kp", Wd * prob, sample_grads(T, Xd, Yc) ** 2)
        return F

    # ----- global quantities -----
    def initial_point(self, seed: int | None = None) -> np.ndarray:
        """The model's default initialisation under ``seed`` (``init_seed`` by default), float64 of shape (dim,).

        Pass it as ``run(..., x0=problem.initial_point())``: zero initialisation is a saddle for MLPs. With an
        ``origin`` the point is returned in the problem's coordinates (``theta - origin``; zeros for init_seed).
        """
        theta = self.model.init_params(self.init_seed if seed is None else seed)
        return theta if self.origin is None else theta - self.origin

    def evaluate(self, x: np.ndarray) -> dict[str, Any]:
        """One vmapped pass at the server model: per-client values and gradients, f, grad f, accuracies."""
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.dim,):
            raise ValueError(f"x must have shape ({self.dim},), got {x.shape}")
        theta = x if self.origin is None else self.origin + x
        T = torch.as_tensor(theta, dtype=self.dtype, device=self.device).expand(self.n_clients, self.dim)
        (G, (vals, correct)) = self._veval(T, self._X, self._Y, self._W)
        G, vals, correct = self._numpy(G), self._numpy(vals), self._numpy(correct)
        out = {"values": vals, "grads": G, "loss": float(self.weights @ vals), "grad": self.weights @ G,
               "accuracy": float(correct.sum() / self._n_samples)}
        if self._test is not None:
            tx, ty, tw = self._test
            tv, tc = self._client_loss_acc(T[0], tx, ty, tw)
            out["test_loss"] = float(tv) - 0.5 * self.reg * float(theta @ theta)  # the data term only
            out["test_accuracy"] = float(tc) / tx.shape[0]
        return out

    def metrics(self, x: np.ndarray) -> dict[str, float]:
        """gap = f(x) - f_star (the training loss when f_star = 0), dist2 (NaN without x*), grad_norm2, and the
        extra columns loss, accuracy [, test_loss, test_accuracy] (see the module docstring)."""
        ev = self.evaluate(x)
        g = ev["grad"]
        # without a given certificate: x* unknown and f_star = 0, without triggering the L estimate
        cert = self._certificate
        x_star = cert.x_star if cert is not None else np.full(self.dim, np.nan)
        f_star = cert.f_star if cert is not None else 0.0
        diff = x - x_star
        out = {"gap": ev["loss"] - f_star, "dist2": float(diff @ diff),
               "grad_norm2": float(g @ g), "loss": ev["loss"], "accuracy": ev["accuracy"]}
        for key in ("test_loss", "test_accuracy"):
            if key in ev:
                out[key] = ev[key]
        return out

    def accuracy(self, x: np.ndarray) -> float:
        """Pooled training accuracy of the server model x."""
        return self.evaluate(x)["accuracy"]

    # ----- certificate -----
    def _hvp_top(self, theta0: torch.Tensor, iters: int) -> tuple[np.ndarray, float]:
        """Power iteration on H_i(theta0) for every client (vmapped) and on H_f = sum_i w_i H_i."""
        n, P = self.n_clients, self.dim

        def hvp(theta, v, x, y, w):
            return torch.func.jvp(lambda t: self._grad(t, x, y, w), (theta,), (v,))[1]

        vhvp = torch.func.vmap(hvp)
        T = theta0.expand(n, P)
        gen = torch.Generator(device="cpu").manual_seed(self.init_seed)
        V = torch.randn(n, P, generator=gen, dtype=torch.float64).to(dtype=self.dtype, device=self.device)
        V = V / V.norm(dim=1, keepdim=True)
        v = V[0].clone()
        w = torch.as_tensor(self.weights, dtype=self.dtype, device=self.device)
        lam_i = torch.zeros(n, dtype=self.dtype, device=self.device)
        lam_f = torch.zeros((), dtype=self.dtype, device=self.device)
        for _ in range(iters):
            HV = vhvp(T, V, self._X, self._Y, self._W)
            lam_i = (HV * V).sum(dim=1)
            V = HV / HV.norm(dim=1, keepdim=True).clamp_min(1e-300)
            Hv = w @ vhvp(T, v.expand(n, P), self._X, self._Y, self._W)
            lam_f = torch.dot(Hv, v)
            v = Hv / Hv.norm().clamp_min(1e-300)
        return self._numpy(lam_i), float(lam_f)

    def _estimate_certificate(self, power_iters: int) -> Certificate:
        n, d = self.n_clients, self.dim
        nan = float("nan")
        if power_iters > 0:
            theta0 = torch.as_tensor(self.model.init_params(self.init_seed), dtype=self.dtype, device=self.device)
            L_i, L_f = self._hvp_top(theta0, power_iters)
            L_i = np.abs(L_i)
            L_f = abs(L_f)
        else:
            L_i, L_f = np.full(n, nan), nan
        return Certificate(
            x_star=np.full(d, nan), f_star=0.0, mu=nan, L=float(np.max(L_i)), mu_f=nan, L_f=L_f,
            mu_i=np.full(n, nan), L_i=L_i, delta_A=nan, delta_B=nan, zeta2=nan, weights=self.weights,
            kkt_residual=nan, sigma2=self.sigma2,
            exact={"x_star": False, "f_star": False, "mu": False, "L": False, "delta_A": False,
                   "delta_B": False, "zeta2": False},
            notes=(f"non-convex {self.model.name} with {self.loss} loss: no x* (NaN); f_star = 0 is the trivial "
                   f"lower bound of a non-negative loss; L_i, L_f are ESTIMATES: |top Hessian eigenvalue| at the "
                   f"initial point (init_seed={self.init_seed}) by {power_iters} power iterations; mu, delta, zeta2 "
                   f"unknown (NaN)"))

    def __repr__(self) -> str:
        return (f"TorchProblem({self.model.name}, n_clients={self.n_clients}, dim={self.dim}, loss={self.loss!r}, "
                f"dtype={str(self.dtype).replace('torch.', '')}, device={str(self.device)!r}, "
                f"vectorize={self.vectorize}, batch_size={self.batch_size})")
