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

The authors' code (mlolab/S-DANE ``src/optimizers/fedred.py``, ``control_variate=2, no_prob=False``; Jiang,
Rodomanov & Stich 2024's experiments) as options, defaults unchanged:

* ``h_init="gradient"``: h_i^0 = grad f_i(x^0) - sum_j w_j grad f_j(x^0) instead of 0 (still sum_i w_i h_i = 0;
  the n gradients at x^0 are computed by ``init`` and not charged to any round).
* ``round_unit="communication"``: one round of :func:`fedtheory.run` is one communication. The draw flips the
  coin after each local step until it comes up heads, so the round has K ~ Geometric(p) local steps on
  {1, 2, ...} (``Draw.local_steps``); the round is K - 1 iterations without communication followed by one
  that communicates -- the same operations as K iterations of the default mode with that coin sequence.
  ``RoundLog.extra["local_steps"]`` = K is the code's count of local steps. ``outcomes()`` is unavailable
  (K has infinite support); pass ``Draw(clients, local_steps=K)`` to ``round_given`` to replay given draws.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Iterator, Literal

import numpy as np

from ..problems.base import Problem
from ..validation import check_int, check_probability
from .base import RoundLog, register_algorithm
from .federated import Draw, FederatedAlgorithm, FederatedState, check_choice, check_step, upload_log

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
    h_init:
        ``"zero"`` (h_i^0 = 0) or ``"gradient"`` (the authors' code: h_i^0 = grad f_i(x^0) - grad f(x^0)).
    round_unit:
        ``"step"`` (one round = one local step and one coin, ProxSkip's iteration) or ``"communication"``
        (the authors' code: Geometric(p) local steps, then communicate; see the module docstring).
    """

    step: float | None = None
    p: float = 0.5
    h_init: Literal["zero", "gradient"] = "zero"
    round_unit: Literal["step", "communication"] = "step"
    name: ClassVar[str] = "scaffnew"

    def _validate(self) -> None:
        object.__setattr__(self, "step", check_step("step", self.step))
        object.__setattr__(self, "p", check_probability("p", self.p))
        check_choice("h_init", self.h_init, ("zero", "gradient"))
        check_choice("round_unit", self.round_unit, ("step", "communication"))

    @classmethod
    def example(cls) -> "Scaffnew":
        return cls(step=0.1, p=0.5)

    @classmethod
    def invalid_examples(cls) -> list[tuple[dict, str]]:
        return [({"step": -0.1}, "step"), ({"step": 0.0}, "step"), ({"p": 0.0}, "p"), ({"p": 1.5}, "p"),
                ({"h_init": "grad"}, "h_init"), ({"round_unit": "epoch"}, "round_unit"),
                *cls._default_participation_examples()]

    def _needs_coin(self) -> bool:
        return self.round_unit == "step"  # a communication round's coins are flipped in draw()

    def _coin_probability(self) -> float:
        return self.p

    def step_size(self, problem: Problem) -> float:
        return self.step if self.step is not None else 1.0 / problem.certificate.L

    def init(self, problem: Problem, x0: np.ndarray) -> ScaffnewState:
        self._check_problem(problem)
        x = np.array(x0, dtype=np.float64)
        X = np.tile(x, (problem.n_clients, 1))
        if self.h_init == "gradient":
            G = problem.grads(X)
            H = G - problem.weights @ G
        else:
            H = np.zeros((problem.n_clients, problem.dim))
        return ScaffnewState(x=x, X=X, H=H)

    def draw(self, problem: Problem, state: Any, rng: np.random.Generator) -> Draw:
        """The round's randomness. With ``round_unit="communication"``: first the coins, one after each local step
        until heads (as the authors' code does), then the clients and the local-SGD seed."""
        if self.round_unit == "step":
            return super().draw(problem, state, rng)
        K = 1
        while not rng.random() < self.p:
            K += 1
        return replace(super().draw(problem, state, rng), local_steps=K)

    def outcomes(self, problem: Problem, state: Any) -> Iterator[tuple[Draw, float]]:
        if self.round_unit == "communication":
            raise ValueError("outcomes() needs round_unit='step': the number of local steps of a communication round "
                             "is unbounded (pass Draw(clients, local_steps=K) to round_given instead)")
        return super().outcomes(problem, state)

    def optimal_state(self, problem: Problem) -> ScaffnewState:
        """The fixed point x_i = x*, h_i = grad f_i(x*) (Psi = 0)."""
        xs = problem.certificate.x_star
        X = np.tile(xs, (problem.n_clients, 1))
        return ScaffnewState(x=xs.copy(), X=X, H=problem.grads(X))

    def round_given(self, problem: Problem, state: ScaffnewState, draw: Draw) -> tuple[ScaffnewState, RoundLog]:
        rng = self._sgd_rng(draw)
        if self.round_unit == "step":
            return self._iteration(problem, state, draw.clients, draw.coin, rng)
        if draw.local_steps is None:
            raise ValueError("round_unit='communication' needs draw.local_steps (use draw(problem, state, rng))")
        K = check_int("draw.local_steps", draw.local_steps, low=1)
        for _ in range(K - 1):
            state, _ = self._iteration(problem, state, draw.clients, False, rng)
        state, log = self._iteration(problem, state, draw.clients, True, rng)
        return state, replace(log, local_grad_evals=K * log.local_grad_evals, extra={**log.extra, "local_steps": K})

    def _iteration(self, problem: Problem, state: ScaffnewState, S: np.ndarray, coin: bool,
                   rng: np.random.Generator | None) -> tuple[ScaffnewState, RoundLog]:
        """One ProxSkip iteration: a local step on every client, then averaging over S if the coin says so."""
        gamma = self.step_size(problem)
        G = problem.grads(state.X) if rng is None else problem.stochastic_grads(state.X, rng)
        X_hat = state.X - gamma * (G - state.H)
        n = problem.n_clients
        if not coin or S.size == 0:
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
