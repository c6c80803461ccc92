"""FedAvg / Local-(S)GD (McMahan et al. 2017), with client sampling and the transmit threshold.

One round (participating clients S drawn at the top of the round):

    y_i^0 = x,   y_i^{k+1} = y_i^k - eta_l grad f_i(y_i^k)       (k = 0..K-1, i in S; local GD or SGD)
    Delta_i = T_eps(y_i^K - x)                                   (uplink: one vector per client)
    x+ = x + eta_g sum_{i in S} a_i Delta_i,

with a_i = w_i / sum_{j in S} w_j (``normalize="participants"``, the usual mean over the participants) or
a_i = w_i (``normalize="all"``, FedElasticNet Alg. 1 line 8 as printed), and w_i the problem's weights
(n_k / n) or uniform 1/n (``weighting``). Downlink: x to every participant.

On quadratics the K-step local map is affine and the fixed point is
(sum_i a_i M_i)^{-1} sum_i a_i M_i x_i*, M_i = I - (I - eta_l A_i)^K (derived by fedtheory, not stated in the
papers; docs/classic.md), computed by
:func:`fedtheory.theory.classic.fedavg_fixed_point`; K = 1 and eta_g = 1 is gradient descent with step eta_l.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, Literal

import numpy as np

from ..local.gd import local_gd
from ..participation import UniformSubset
from ..problems.base import Problem
from ..validation import check_int, check_nonnegative, check_positive
from .base import RoundLog, register_algorithm
from .federated import (
    Draw,
    FederatedAlgorithm,
    FederatedState,
    aggregation_weights,
    check_choice,
    check_step,
    threshold,
    upload_log,
)

__all__ = ["FedAvg"]


@register_algorithm
@dataclass(frozen=True, kw_only=True)
class FedAvg(FederatedAlgorithm):
    """FedAvg with K local GD/SGD steps (McMahan et al. 2017, Alg. 1; the baseline of Kim et al., Section 3.1,
    and of Jiang, Rodomanov & Stich 2024, Section 2).

    Attributes
    ----------
    local_steps:
        K >= 1 local steps per round.
    local_step:
        eta_l > 0; ``None`` uses 1/L (L = max_i L_i from the certificate).
    server_step:
        eta_g > 0 (1 is plain averaging).
    weighting, normalize:
        Server weights, see :func:`fedtheory.algorithms.federated.aggregation_weights`.
    threshold:
        epsilon >= 0 of the transmit operator T_eps (FedElasticNet; 0 sends Delta as is).
    local_tol:
        Optional per-client stopping tolerance of the local solver (:func:`fedtheory.local.gd.local_gd`).
    """

    local_steps: int = 1
    local_step: float | None = None
    server_step: float = 1.0
    weighting: Literal["problem", "uniform"] = "problem"
    normalize: Literal["participants", "all"] = "participants"
    threshold: float = 0.0
    local_tol: float | None = None
    name: ClassVar[str] = "fedavg"

    def _validate(self) -> None:
        object.__setattr__(self, "local_steps", check_int("local_steps", self.local_steps, low=1))
        object.__setattr__(self, "local_step", check_step("local_step", self.local_step))
        object.__setattr__(self, "server_step", check_positive("server_step", self.server_step))
        check_choice("weighting", self.weighting, ("problem", "uniform"))
        check_choice("normalize", self.normalize, ("participants", "all"))
        object.__setattr__(self, "threshold", check_nonnegative("threshold", self.threshold))
        if self.local_tol is not None:
            object.__setattr__(self, "local_tol", check_nonnegative("local_tol", self.local_tol))

    @classmethod
    def example(cls) -> "FedAvg":
        return cls(local_steps=3, local_step=0.1, participation=UniformSubset(2))

    @classmethod
    def invalid_examples(cls) -> list[tuple[dict, str]]:
        """(kwargs, parameter name) pairs that must raise ValueError/TypeError naming the parameter."""
        return [({"local_step": -0.1}, "local_step"), ({"local_steps": 0}, "local_steps"),
                ({"server_step": 0.0}, "server_step"), ({"threshold": -1e-3}, "threshold"),
                ({"weighting": "size"}, "weighting"), ({"normalize": "none"}, "normalize"),
                *cls._default_participation_examples()]

    # ----- hyperparameters resolved on a problem -----
    def _regularisation(self) -> float:
        return 0.0

    def step_size(self, problem: Problem) -> float:
        """eta_l, defaulting to 1 / (L + prox) (the local objective's smoothness)."""
        if self.local_step is not None:
            return self.local_step
        return 1.0 / (problem.certificate.L + self._regularisation())

    def init(self, problem: Problem, x0: np.ndarray) -> FederatedState:
        self._check_problem(problem)
        return FederatedState(x=np.array(x0, dtype=np.float64))

    # ----- one round -----
    def _local_models(self, problem: Problem, state: FederatedState, clients: np.ndarray,
                      draw: Draw) -> tuple[np.ndarray, int]:
        """Local models y_i of the participants and the number of gradient evaluations spent."""
        start = np.broadcast_to(state.x, (clients.shape[0], problem.dim))
        res = local_gd(problem, start, steps=self.local_steps, step_size=self.step_size(problem),
                       clients=clients, tol=self.local_tol, rng=self._sgd_rng(draw))
        return res.X, res.grad_evals

    def round_given(self, problem: Problem, state: FederatedState, draw: Draw) -> tuple[FederatedState, RoundLog]:
        S = draw.clients
        if S.size == 0:  # Bernoulli participation can select nobody: nothing is sent, nothing changes
            empty = np.zeros((0, problem.dim))
            return replace(state, last_upload=empty, last_clients=S), upload_log(
                problem, [], down_vectors=0, participants=0, grad_evals=0, communicated=False)
        Y, evals = self._local_models(problem, state, S, draw)
        delta = threshold(Y - state.x, self.threshold)
        a = aggregation_weights(problem, S, self.weighting, self.normalize)
        x_new = state.x + self.server_step * (a @ delta)
        log = upload_log(problem, [delta], down_vectors=S.size, participants=S.size, grad_evals=evals,
                         down_vector=state.x, extra=self._extra(delta))
        return replace(state, x=x_new, last_upload=delta, last_clients=S), log
