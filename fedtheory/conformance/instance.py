"""The problems the conformance kit hands to an implementation: least-squares clients with exact constants.

An :class:`Instance` is built in one call from a small dict of parameters (:func:`make_instance`), so a
shrunk counterexample is reproducible from its parameters alone. Each client i holds data (Z_i, y_i) with
m_i rows and the objective

    f_i(x) = 1/(2 m_i) ||Z_i x - y_i||^2 = 1/2 x^T A_i x - b_i^T x + const,   A_i = Z_i^T Z_i / m_i,
    b_i = Z_i^T y_i / m_i,

where (A_i, b_i) come from :func:`fedtheory.problems.quadratic` (exact mu, L, delta_B, zeta2 for the family's
weights) and the data are a factorisation of them: Z_i = sqrt(m_i) Q_i diag(sqrt(s_i)) V_i^T with
A_i = V_i diag(s_i) V_i^T and Q_i an (m_i, d) matrix with orthonormal columns, y_i = Z_i A_i^{-1} b_i. So the
data an implementation trains on and the closed forms the kit checks against describe the same f_i.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ..problems.quadratic import QuadraticProblem, quadratic

__all__ = ["Client", "Instance", "make_instance", "INSTANCE_KEYS", "ID_SCHEMES", "client_ids", "ids_of", "instance_params_of"]

#: The case keys an instance is built from; "ids" (the clients' ids) is optional: positions 0..n-1 when absent.
INSTANCE_KEYS = ("n", "d", "mu", "L", "delta_frac", "zeta2", "sizes", "weighting", "seed", "ids")
#: How the kit labels clients: ids from 10 on (so an id used as a list index is out of range), sparse ids in an
#: order unrelated to the list's, or the list positions.
ID_SCHEMES = ("offset", "shuffled", "positions")


def client_ids(n: int, scheme: str, seed: int) -> list[int]:
    """The n clients' ids under ``scheme`` (one of :data:`ID_SCHEMES`)."""
    if scheme == "offset":
        return list(range(10, 10 + n))
    if scheme == "shuffled":
        rng = np.random.default_rng(seed + 1)
        return [int(v) for v in 100 + rng.permutation(rng.choice(900, size=n, replace=False))]
    if scheme == "positions":
        return list(range(n))
    raise ValueError(f"scheme must be one of {ID_SCHEMES}, got {scheme!r}")


def instance_params_of(case: Mapping[str, Any]) -> dict:
    """The instance parameters of a case (its :data:`INSTANCE_KEYS`; the round's own draws are left out)."""
    return {k: case[k] for k in INSTANCE_KEYS if k in case}


def ids_of(params: Mapping[str, Any], n: int) -> list[int]:
    """The clients' ids from ``params["ids"]`` (n distinct integers), positions when absent."""
    ids = params.get("ids")
    if ids is None:
        return list(range(n))
    ids = [int(i) for i in ids]
    if len(ids) != n or len(set(ids)) != n:
        raise ValueError(f"ids must be n = {n} distinct integers, got {params['ids']!r}")
    return ids


@dataclass(frozen=True, eq=False)
class Client:
    """What a participating client exposes to the implementation under test.

    ``features`` (m, d) and ``targets`` (m,) are the client's data; ``grad``/``value`` are the full-batch
    gradient and value of f_i(x) = 1/(2m) ||features x - targets||^2; ``num_examples`` = m; ``cid`` is a
    stable identifier (stateful methods key their client state by it).
    """

    cid: int
    features: np.ndarray
    targets: np.ndarray

    @property
    def num_examples(self) -> int:
        return int(self.features.shape[0])

    def grad(self, x: np.ndarray) -> np.ndarray:
        """grad f_i(x) = Z^T (Z x - y) / m."""
        return self.features.T @ (self.features @ np.asarray(x, dtype=np.float64) - self.targets) / self.num_examples

    def value(self, x: np.ndarray) -> float:
        r = self.features @ np.asarray(x, dtype=np.float64) - self.targets
        return float(r @ r) / (2.0 * self.num_examples)

    def shifted(self, s: np.ndarray) -> "Client":
        """The client of f_i(x - s) (targets y + Z s): the translation-equivariance transform."""
        return Client(self.cid, self.features, self.targets + self.features @ s)

    def duplicated(self) -> "Client":
        """The same f_i with every example twice (num_examples doubles, the objective does not change)."""
        return Client(self.cid, np.vstack([self.features, self.features]), np.concatenate([self.targets] * 2))


@dataclass(frozen=True, eq=False)
class Instance:
    """Clients plus the independent closed-form description (A_i, b_i, weights, x*) of the same problem."""

    params: Mapping[str, Any]
    clients: tuple[Client, ...]
    A: np.ndarray          # (n, d, d) client Hessians
    b: np.ndarray          # (n, d)
    sizes: np.ndarray      # (n,) num_examples
    weights: np.ndarray    # (n,) the family's objective weights (num_examples or uniform), summing to one
    x_star: np.ndarray     # minimiser of sum_i weights_i f_i
    x0: np.ndarray         # start point drawn with the instance
    constants: Mapping[str, float] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.clients)

    @property
    def d(self) -> int:
        return int(self.b.shape[1])


def _one_dim(n: int, mu: float, L: float, zeta2: float, w: np.ndarray, rng: np.random.Generator) -> QuadraticProblem:
    """d = 1 (below the generator's range): a_i in [mu, L] with both ends attained, x* = 1, and
    residuals r_i with sum w_i r_i = 0, sum w_i r_i^2 = zeta2 (b_i = a_i - r_i)."""
    a = mu + (L - mu) * rng.random(n)
    a[0], a[-1] = mu, L
    r = rng.standard_normal(n)
    r -= w @ r
    scale = np.sqrt(w @ (r * r))
    r = r * (np.sqrt(zeta2) / scale) if scale > 0 else np.zeros(n)
    return QuadraticProblem(a[:, None], (a - r)[:, None], w)


def make_instance(params: Mapping[str, Any]) -> Instance:
    """Build an :class:`Instance` from ``params`` (keys: n, d, mu, L, delta_frac, zeta2, sizes, weighting, seed,
    optionally ids: the clients' ids, positions by default).

    ``delta_frac`` in [0, 0.4] requests delta_B = delta_frac (L - mu) (always feasible, see
    :func:`fedtheory.strategies.quadratic_params`); ``sizes`` are the clients' num_examples (each >= d);
    ``weighting`` is "num_examples" or "uniform" (the objective the family minimises).
    """
    n, d = int(params["n"]), int(params["d"])
    sizes = np.asarray(params["sizes"], dtype=np.int64)
    if sizes.shape != (n,) or np.any(sizes < d):
        raise ValueError(f"sizes must be n = {n} integers >= d = {d}, got {params['sizes']!r}")
    if params["weighting"] not in ("num_examples", "uniform"):
        raise ValueError(f"weighting must be 'num_examples' or 'uniform', got {params['weighting']!r}")
    w = sizes / sizes.sum() if params["weighting"] == "num_examples" else np.full(n, 1.0 / n)
    mu, L, zeta2, seed = float(params["mu"]), float(params["L"]), float(params["zeta2"]), int(params["seed"])
    rng = np.random.default_rng(seed)
    if d == 1 or n == 1:
        prob = _one_dim(n, mu, L, zeta2, w, rng) if d == 1 else quadratic(1, d, mu=mu, L=L, weights=w, seed=seed)
    else:
        prob = quadratic(n, d, mu=mu, L=L, delta_B=float(params["delta_frac"]) * (L - mu), zeta2=zeta2,
                         weights=w, seed=seed)
    A = prob.A if prob.A.ndim == 3 else np.einsum("nd,de->nde", prob.A, np.eye(d))
    s, V = np.linalg.eigh(A)
    clients, ids = [], ids_of(params, n)
    for i in range(n):  # construction only (not a hot path): one factorisation per client
        Q, _ = np.linalg.qr(rng.standard_normal((int(sizes[i]), d)))
        Z = np.sqrt(sizes[i]) * (Q * np.sqrt(np.maximum(s[i], 0.0))) @ V[i].T
        y = Z @ np.linalg.solve(A[i], prob.b[i])
        clients.append(Client(ids[i], Z, y))
    # The data define the clients; recompute (A_i, b_i) from them so both sides describe exactly one problem
    # (the factorisation is exact up to rounding of order cond(A_i) eps).
    A_data = np.stack([c.features.T @ c.features / c.num_examples for c in clients])
    b_data = np.stack([c.features.T @ c.targets / c.num_examples for c in clients])
    A_data = 0.5 * (A_data + np.swapaxes(A_data, 1, 2))
    cert = QuadraticProblem(A_data, b_data, w).certificate
    x0 = cert.x_star + rng.standard_normal(d) * max(1.0, float(np.linalg.norm(cert.x_star)))
    return Instance(params=dict(params), clients=tuple(clients), A=A_data, b=b_data, sizes=sizes, weights=w,
                    x_star=cert.x_star, x0=x0,
                    constants={"mu": cert.mu, "L": cert.L, "delta_B": cert.delta_B, "zeta2": cert.zeta2})
