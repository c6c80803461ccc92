"""Machinery shared by the classic client-server algorithms (FedAvg, FedProx, SCAFFOLD, FedDyn, Scaffnew).

* :class:`Draw` -- everything random in a round, drawn at its top: the participating clients, the
  communication coin (Scaffnew) and the seed of the local stochastic-gradient generator (local SGD).
* :class:`FederatedAlgorithm` -- the common hyperparameters (participation, stochastic gradients, the
  transmit threshold epsilon, the upload-metrics hook) and ``draw`` / ``round_given`` / ``round`` /
  ``outcomes``: ``round(problem, state, rng) == round_given(problem, state, draw(problem, state, rng))``,
  and ``outcomes(problem, state)`` lists every draw with its exact probability (deterministic local solvers
  only), so a test takes exact expectations over client subsets and coins.
* :func:`threshold` -- FedElasticNet's transmit operator T_eps (Kim et al., Section 3: zero every coordinate
  with |v_i| <= eps, inclusive).
* :func:`upload_log` -- the RoundLog of a round from the matrices actually transmitted.

Communication accounting
------------------------
Uploads are counted from what was sent: ``uplink_nnz`` is the number of non-zero coordinates of all
transmitted vectors (FedElasticNet's metric, Kim et al., Section 4 and Table 2); ``uplink_bits`` encodes every
transmitted vector in the cheaper of a dense float64 array (64 d bits) and a coordinate list
(nnz (64 + ceil(log2 d)) bits) -- an encoder would choose the cheaper one. Downloads are dense float64
vectors (64 d bits each). The matrix the clients transmitted in the last round is kept in the state
(``last_upload``, rows in the order of ``last_clients``) and passed to the ``upload_metrics`` hook, whose
scalar results land in ``RoundLog.extra`` (this is where FedElasticNet's entropy of the transmitted values is
computed, see :mod:`fedtheory.compressors.entropy`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from ..participation import Full, Participation, UniformSubset, as_participation
from ..problems.base import Problem
from ..validation import check_bool, check_positive
from .base import FLOAT_BITS, RoundLog, State

__all__: list[str] = []

#: Signature of the upload-metrics hook: transmitted matrix (rows = vectors) -> named scalars.
UploadMetrics = Callable[[np.ndarray], Mapping[str, float]]


@dataclass(frozen=True)
class Draw:
    """Randomness of one round: participating clients (sorted), communication coin, local-SGD seed, and the
    number of local steps for algorithms that draw it (Scaffnew with ``round_unit="communication"``)."""

    clients: np.ndarray
    coin: bool = True
    seed: int | None = None
    local_steps: int | None = None


@dataclass(frozen=True, kw_only=True)
class FederatedState(State):
    """Server model ``x`` plus the last transmitted matrix (rows ordered as ``last_clients``)."""

    last_upload: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    last_clients: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def threshold(V: np.ndarray, eps: float) -> np.ndarray:
    """T_eps(v)_i = 0 if |v_i| <= eps else v_i (inclusive, Kim et al., Section 3). eps = 0 zeroes only zeros."""
    if eps <= 0.0:
        return V
    return np.where(np.abs(V) <= eps, 0.0, V)


def vector_bits(nnz: np.ndarray | int, dim: int) -> np.ndarray:
    """Bits of vectors with ``nnz`` non-zeros: min(dense 64 d, coordinate list nnz (64 + ceil(log2 d)))."""
    index_bits = max(1, math.ceil(math.log2(dim))) if dim > 1 else 1
    nnz = np.asarray(nnz)
    return np.minimum(FLOAT_BITS * dim, nnz * (FLOAT_BITS + index_bits))


def upload_log(problem: Problem, uploads: Sequence[np.ndarray], *, down_vectors: float, participants: int,
               grad_evals: int, communicated: bool = True, down_vector: np.ndarray | None = None,
               extra: Mapping[str, float] | None = None) -> RoundLog:
    """RoundLog from the transmitted matrices ``uploads`` (each of shape (vectors, d)).

    ``down_vectors`` dense vectors are sent down in total; their non-zeros are counted from ``down_vector``
    (the broadcast model) when given, otherwise as d each.
    """
    d = problem.dim
    up_nnz = 0
    up_bits = 0.0
    up_vectors = 0
    for U in uploads:
        if U.size == 0:
            continue
        nnz = np.count_nonzero(U)  # one pass without an axis: several times faster than the per-row count
        if nnz == U.size:  # dense rows (the usual upload): every row costs the dense encoding, 64 d bits
            up_nnz += int(nnz)
            up_bits += float(U.shape[0] * int(vector_bits(d, d)))
        else:
            per_row = np.count_nonzero(U, axis=1)
            up_nnz += int(per_row.sum())
            up_bits += float(vector_bits(per_row, d).sum())
        up_vectors += U.shape[0]
    down_nnz = d if down_vector is None else int(np.count_nonzero(down_vector))
    return RoundLog(uplink_bits=up_bits, downlink_bits=float(FLOAT_BITS * d * down_vectors),
                    uplink_nnz=up_nnz, downlink_nnz=int(round(down_nnz * down_vectors)),
                    vectors_up=float(up_vectors), vectors_down=float(down_vectors),
                    local_grad_evals=int(grad_evals), participants=int(participants),
                    communicated=bool(communicated), extra=dict(extra or {}))


@dataclass(frozen=True, kw_only=True)
class FederatedAlgorithm:
    """Common hyperparameters and the draw / round_given split (see the module docstring).

    Attributes
    ----------
    participation:
        :class:`~fedtheory.participation.Full` (default), ``UniformSubset(size)`` or ``Bernoulli(p)``.
    stochastic:
        Use ``problem.stochastic_grads`` in local steps (local SGD); the generator is seeded from the draw.
    upload_metrics:
        Optional hook called with the transmitted matrix every round; its scalars go to ``RoundLog.extra``.
    """

    participation: Participation = field(default_factory=Full)
    stochastic: bool = False
    upload_metrics: UploadMetrics | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "participation", as_participation(self.participation))
        check_bool("stochastic", self.stochastic)
        if self.upload_metrics is not None and not callable(self.upload_metrics):
            raise TypeError("upload_metrics must be callable (matrix -> mapping of scalars) or None")
        self._validate()

    def _validate(self) -> None:  # subclasses check their own hyperparameters here
        pass

    # ----- randomness -----
    def _needs_coin(self) -> bool:
        return False

    def _coin_probability(self) -> float:
        return 1.0

    def draw(self, problem: Problem, state: Any, rng: np.random.Generator) -> Draw:
        """Draw the round's randomness, in a fixed order: coin, clients, local-SGD seed."""
        coin = bool(rng.random() < self._coin_probability()) if self._needs_coin() else True
        clients = self.participation.draw(problem.n_clients, rng)
        seed = int(rng.integers(0, 2**63 - 1)) if self.stochastic else None
        return Draw(clients=clients, coin=coin, seed=seed)

    def outcomes(self, problem: Problem, state: Any) -> Iterator[tuple[Draw, float]]:
        """Every possible draw with its exact probability (only without stochastic gradients)."""
        if self.stochastic:
            raise ValueError("outcomes() needs stochastic=False: local SGD noise cannot be enumerated")
        coins = [(True, self._coin_probability()), (False, 1.0 - self._coin_probability())] \
            if self._needs_coin() else [(True, 1.0)]
        for coin, pc in coins:
            if pc <= 0.0:
                continue
            for clients, ps in self.participation.outcomes(problem.n_clients):
                yield Draw(clients=clients, coin=coin), pc * ps

    def round(self, problem: Problem, state: Any, rng: np.random.Generator) -> tuple[Any, RoundLog]:
        return self.round_given(problem, state, self.draw(problem, state, rng))

    def round_given(self, problem: Problem, state: Any, draw: Draw) -> tuple[Any, RoundLog]:
        raise NotImplementedError

    # ----- helpers for subclasses -----
    def _check_problem(self, problem: Problem) -> None:
        self.participation.validate(problem.n_clients)

    def _sgd_rng(self, draw: Draw) -> np.random.Generator | None:
        if not self.stochastic:
            return None
        if draw.seed is None:
            raise ValueError("a stochastic algorithm needs draw.seed (use draw(problem, state, rng))")
        return np.random.default_rng(draw.seed)

    def _extra(self, upload: np.ndarray) -> dict[str, float]:
        if self.upload_metrics is None or upload.size == 0:
            return {}
        return {str(k): float(v) for k, v in self.upload_metrics(upload).items()}

    @staticmethod
    def _default_participation_examples() -> list[tuple[dict, str]]:
        """Invalid participation settings every algorithm shares (S > n is checked at ``init``)."""
        return [({"participation": UniformSubset(10**6)}, "participation.size"),
                ({"participation": "some"}, "participation")]


def check_step(name: str, value: float | None) -> float | None:
    """A positive step size, or None for the certificate-based default."""
    return None if value is None else check_positive(name, value)


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def aggregation_weights(problem: Problem, clients: np.ndarray, weighting: str, normalize: str) -> np.ndarray:
    """Server weights a_i of the participating clients.

    ``weighting``: "problem" uses the problem's w_i (n_k / n for data problems), "uniform" uses 1/n.
    ``normalize``: "participants" divides by their sum over the participants (standard FedAvg, mean over
    S); "all" keeps w_i as is (FedElasticNet Alg. 1 line 8 as printed, Kim et al., Section 3.1:
    sum_{k in P_t} n_k/n Delta_k with n the data of all clients, a damped step under partial participation).
    """
    w = problem.weights[clients] if weighting == "problem" else np.full(clients.shape[0], 1.0 / problem.n_clients)
    if normalize == "participants":
        total = w.sum()
        return w / total if total > 0 else w
    return w
