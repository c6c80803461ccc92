"""Scaffnew = ProxSkip applied to consensus (Mishchenko, Malinovsky, Stich & Richtarik 2022, Alg. 2).

Every client keeps a local model x_i and a control variate h_i (h_i = 0 initially, so sum_i w_i h_i = 0).
One iteration (one "round" of :func:`fedtheory.run`; communication happens only when the coin says so):

    xhat_i = x_i - gamma (g_i(x_i) - h_i)                    (all clients, one local (S)GD step)
    coin theta ~ Bernoulli(p)
    theta = 1:  xbar = sum_{i in S} a_i xhat_i;  x_i = xbar (i in S);  h_i += (p/gamma)(x_i - xhat_i)
    theta = 0:  x_i = xhat_i                                  (no communication: RoundLog.communicated = False)

With full participation this is ProxSkip with psi = the consensus indicator in the w-weighted norm: its prox
step is xbar = sum_j w_j (xhat_j - (gamma/p) h_j), which equals sum_j w_j xhat_j because sum_j w_j h_j = 0 is
preserved by the h update. The ProxSkip theorem (Mishchenko et al. 2022, Thm 3.6 applied to the lifted
problem sum_i w_i f_i(x_i)) gives, for mu-strongly convex L-smooth f_i and 0 < gamma <= 1/L, 0 < p <= 1,

    E Psi_T <= (1 - zeta)^T Psi_0,   zeta = min{gamma mu, p^2},
    Psi = sum_i w_i ||x_i - x*||^2 + (gamma^2/p^2) sum_i w_i ||h_i - grad f_i(x*)||^2,

with uniform w the paper's statement divided by n on both terms (so the contraction is the same); see
:func:`fedtheory.theory.classic.proxskip_lyapunov`.

Partial participation (``UniformSubset``/``Bernoulli``) is *not* in the paper. Our variant averages the
participants only and updates their h_i; it keeps sum_i w_i h_i = 0 and the fixed point
(x_i = x*, h_i = grad f_i(x*)), but no theorem covers it (TAMUNA / 5GCS are the analysed variants). The server
model ``x`` reported to the trace is the last consensus point xbar. Communication per coin = 1: each
participant uploads xhat_i and downloads xbar (one vector each way). Every iteration costs one gradient per
client.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from .._validation import check_probability
from ..problems.base import Problem
from ._local import Draw, FederatedAlgorithm, FederatedState, check_step, upload_log
from .base import RoundLog, register_algorithm

__all__ = ["Scaffnew", "ScaffnewState"]


@dataclass(frozen=True, kw_only=True)
class ScaffnewState(FederatedState):
    """Server model ``x`` (last consensus), client models ``X`` (n, d), control variates ``H`` (n, d)."""

    X: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    H: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))


@register_algorithm
@dataclass(frozen=True, kw_only=True)
class Scaffnew(FederatedAlgorithm):
    """Scaffnew / ProxSkip (see the module docstring).

    Attributes
    ----------
    step:
        gamma > 0 (``None``: 1/L, the largest step the theorem allows).
    p:
        Communication probability in (0, 1] (the theory's choice is sqrt(gamma mu) ~ 1/sqrt(kappa)).
    """

    step: float | None = None
    p: float = 0.5
    name: ClassVar[str] = "scaffnew"

    def _validate(self) -> None:
        object.__setattr__(self, "step", check_step("step", self.step))
        object.__setattr__(self, "p", check_probability("p", self.p))

    @classmethod
    def example(cls) -> "Scaffnew":
        return cls(step=0.1, p=0.5)

    @classmethod
    def invalid_examples(cls) -> list[tuple[dict, str]]:
        return [({"step": -0.1}, "step"), ({"step": 0.0}, "step"), ({"p": 0.0}, "p"), ({"p": 1.5}, "p"),
                *cls._default_participation_examples()]

    def _needs_coin(self) -> bool:
        return True

    def _coin_probability(self) -> float:
        return self.p

    def step_size(self, problem: Problem) -> float:
        return self.step if self.step is not None else 1.0 / problem.certificate.L

    def init(self, problem: Problem, x0: np.ndarray) -> ScaffnewState:
        self._check_problem(problem)
        x = np.array(x0, dtype=np.float64)
        return ScaffnewState(x=x, X=np.tile(x, (problem.n_clients, 1)), H=np.zeros((problem.n_clients, problem.dim)))

    def optimal_state(self, problem: Problem) -> ScaffnewState:
        """The fixed point x_i = x*, h_i = grad f_i(x*) (Psi = 0)."""
        xs = problem.certificate.x_star
        X = np.tile(xs, (problem.n_clients, 1))
        return ScaffnewState(x=xs.copy(), X=X, H=problem.grads(X))

    def round_given(self, problem: Problem, state: ScaffnewState, draw: Draw) -> tuple[ScaffnewState, RoundLog]:
        gamma = self.step_size(problem)
        rng = self._sgd_rng(draw)
        G = problem.grads(state.X) if rng is None else problem.stochastic_grads(state.X, rng)
        X_hat = state.X - gamma * (G - state.H)
        n = problem.n_clients
        S = draw.clients
        if not draw.coin or S.size == 0:
            log = upload_log(problem, [], down_vectors=0, participants=0, grad_evals=n, communicated=False)
            return replace(state, X=X_hat, last_upload=np.zeros((0, problem.dim)),
                           last_clients=np.zeros(0, dtype=np.int64)), log
        w = problem.weights[S]
        xbar = (w / w.sum()) @ X_hat[S]
        X = X_hat.copy()
        X[S] = xbar
        H = state.H.copy()
        H[S] += (self.p / gamma) * (xbar - X_hat[S])
        sent = X_hat[S]
        log = upload_log(problem, [sent], down_vectors=S.size, participants=S.size, grad_evals=n,
                         down_vector=xbar, extra=self._extra(sent))
        return replace(state, x=xbar, X=X, H=H, last_upload=sent, last_clients=S), log
