"""Centralised (full-participation, one local step) gradient descent: x+ = x - eta grad f(x)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from ..problems.base import Problem
from ..validation import check_positive
from .base import RoundLog, State, dense_log, register_algorithm

__all__ = ["GradientDescent"]




@register_algorithm
@dataclass(frozen=True)
class GradientDescent:
    """Gradient descent on f = sum_i w_i f_i; each round every client sends grad f_i(x) (one vector up).

    x^{r+1} = x^r - step * sum_i w_i grad f_i(x^r). ``step=None`` uses 1/L_f from the certificate.
    Reference: Nesterov (2004), Thm 2.1.15: ||x^r - x*|| <= max(|1 - step mu_f|, |1 - step L_f|)^r ||x^0 - x*||
    on quadratics (and for step <= 2/(mu_f + L_f) on mu_f-strongly convex L_f-smooth f).
    """

    step: float | None = None
    name: ClassVar[str] = "gd"

    def __post_init__(self) -> None:
        if self.step is not None:
            object.__setattr__(self, "step", check_positive("step", self.step))

    @classmethod
    def example(cls) -> "GradientDescent":
        return cls()

    def step_size(self, problem: Problem) -> float:
        return self.step if self.step is not None else 1.0 / problem.certificate.L_f

    def init(self, problem: Problem, x0: np.ndarray) -> State:
        return State(x=np.array(x0, dtype=np.float64))

    def round(self, problem: Problem, state: State, rng: np.random.Generator) -> tuple[State, RoundLog]:
        g = problem.grad(state.x)
        x = state.x - self.step_size(problem) * g
        log = dense_log(problem, up_vectors=problem.n_clients, down_vectors=problem.n_clients,
                        participants=problem.n_clients, local_grad_evals=problem.n_clients)
        return replace(state, x=x), log
