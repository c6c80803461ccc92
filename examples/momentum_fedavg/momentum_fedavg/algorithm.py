"""FedAvg with server momentum (FedAvgM; Hsu, Qi & Brown 2019), written with fedtheory's public API only.

One round, with the participants S drawn at its top by fedtheory's participation options:

    y_i = x after K local GD steps of size eta_l on f_i          (i in S)
    Delta = sum_{i in S} a_i (y_i - x),   a_i = w_i / sum_{j in S} w_j
    v+ = beta v + Delta,                  x+ = x + eta_g v+

beta = 0 is FedAvg; with K = 1 and full participation it is the heavy-ball method on f with step
eta_g eta_l and momentum beta.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from fedtheory.algorithms import Draw, FederatedAlgorithm, FederatedState, RoundLog, aggregation_weights, upload_log
from fedtheory.local import local_gd
from fedtheory.problems import Problem


@dataclass(frozen=True, kw_only=True)
class MomentumState(FederatedState):
    """The server model x and the server's momentum buffer v."""

    velocity: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True, kw_only=True)
class FedAvgMomentum(FederatedAlgorithm):
    """FedAvg with server momentum: ``local_steps`` K >= 1, ``local_step`` eta_l > 0, ``server_step``
    eta_g > 0, ``momentum`` beta in [0, 1); ``participation`` as every fedtheory algorithm."""

    local_steps: int = 1
    local_step: float = 0.1
    server_step: float = 1.0
    momentum: float = 0.9
    name: ClassVar[str] = "fedavg_momentum"

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.local_steps, bool) or not isinstance(self.local_steps, int) or self.local_steps < 1:
            raise ValueError(f"local_steps must be an integer >= 1, got {self.local_steps!r}")
        for name in ("local_step", "server_step"):
            if not np.isfinite(getattr(self, name)) or getattr(self, name) <= 0:
                raise ValueError(f"{name} must be a finite number > 0, got {getattr(self, name)!r}")
        if not 0.0 <= self.momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {self.momentum!r}")

    def init(self, problem: Problem, x0: np.ndarray) -> MomentumState:
        self.participation.validate(problem.n_clients)
        return MomentumState(x=np.array(x0, dtype=np.float64), velocity=np.zeros(problem.dim))

    def round_given(self, problem: Problem, state: MomentumState, draw: Draw) -> tuple[MomentumState, RoundLog]:
        S = draw.clients
        if S.size == 0:  # Bernoulli participation can select nobody: nothing is sent, nothing moves
            return state, upload_log(problem, [], down_vectors=0, participants=0, grad_evals=0, communicated=False)
        start = np.broadcast_to(state.x, (S.size, problem.dim))
        local = local_gd(problem, start, steps=self.local_steps, step_size=self.local_step, clients=S)
        delta = local.X - state.x
        velocity = self.momentum * state.velocity + aggregation_weights(problem, S, "problem", "participants") @ delta
        new = replace(state, x=state.x + self.server_step * velocity, velocity=velocity, last_upload=delta,
                      last_clients=S)
        return new, upload_log(problem, [delta], down_vectors=S.size, participants=S.size,
                               grad_evals=local.grad_evals)
