"""SCAFFOLD (Karimireddy et al. 2020, Alg. 1) and FedElasticNet Algorithm 2 (Kim et al., Section 3.2, eqs. (5)-(7)).

State: server model x, server control variate c, client control variates c_i (all start at 0, so
c = sum_i w_i c_i holds from the start). One round with participants S:

    y_i <- y_i - eta_l (g_i(y_i) - c_i + c + lambda2 (y_i - x) + lambda1 sign(y_i - x))   K times from y_i = x
    option I : c_i+ = g_i(x)                                  (one extra gradient at the server model)
    option II: c_i+ = c_i - c + (x - y_i) / (K eta_l)
    upload Delta y_i = T_eps(y_i - x) and Delta c_i = c_i+ - c_i       (two vectors up per client)
    x+ = x + eta_g sum_{i in S} a_i Delta y_i,     a_i = w_i / sum_{j in S} w_j
    c+ = c + sum_{i in S} w_i Delta c_i

With uniform weights w_i = 1/N this is exactly Karimireddy et al.: x+ = x + eta_g mean_S Delta y and
c+ = c + (|S|/N) mean_S Delta c; for weighted objectives the weights generalise both sums so that
c = sum_i w_i c_i stays an exact invariant under any participation (non-participants keep c_i), and the
fixed point under full participation is x* of the weighted f. lambda1 = lambda2 = 0 is SCAFFOLD; lambda1 > 0
is FedElasticNet Alg. 2 (eq. 7, sign(0) = 0 as printed; ``l1_mode="proximal"`` replaces the sign step by a
soft-threshold). Downlink: x and c to every participant (two vectors). ``state.last_upload`` holds the
thresholded model updates Delta y (the vectors FedElasticNet sparsifies); Delta c is counted in the RoundLog.

Cost: a round with S participants is O(S d) plus the local steps on the S participants: the client control
variates live in a persistent :class:`~fedtheory.algorithms.client_table.ClientTable`, so the non-participants' c_i are
stored, not touched (docs/problems.md, "Cross-device scale").
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

import numpy as np

from ..local.gd import local_gd
from ..participation import UniformSubset
from ..problems.base import Problem
from ..validation import check_int, check_nonnegative, check_positive
from .base import RoundLog, register_algorithm
from .client_table import ClientTable, as_table
from .federated import Draw, FederatedAlgorithm, FederatedState, check_choice, check_step, threshold, upload_log

__all__ = ["Scaffold", "ScaffoldState"]


@dataclass(frozen=True, kw_only=True)
class ScaffoldState(FederatedState):
    """x, server control variate ``c`` (d,), client control variates ``C`` (n, d).

    ``C`` is a :class:`~fedtheory.algorithms.client_table.ClientTable` in the states this class returns (an immutable
    (n, d) array whose round updates cost O(S d)); an ndarray given by a caller is accepted too.
    """

    c: np.ndarray = field(default_factory=lambda: np.zeros(0))
    C: np.ndarray | ClientTable = field(default_factory=lambda: np.zeros((0, 0)))


@register_algorithm
@dataclass(frozen=True, kw_only=True)
class Scaffold(FederatedAlgorithm):
    """SCAFFOLD with options I/II, server step and FedElasticNet Alg. 2's regularisers (see module docstring).

    Attributes
    ----------
    local_steps, local_step, server_step:
        K >= 1, eta_l > 0 (``None``: 1/(L + lambda2)), eta_g > 0.
    option:
        "I" or "II" (control-variate update).
    prox, l1:
        lambda2 >= 0 and lambda1 >= 0 of FedElasticNet Alg. 2 (0 and 0 is SCAFFOLD).
    l1_mode:
        "subgradient" (printed eq. 7) or "proximal".
    threshold:
        epsilon >= 0 applied to the model update Delta y only (Delta c is sent dense: fedtheory's reading of
        Kim et al., Alg. 2, consistent with their Table 2).
    """

    local_steps: int = 10
    local_step: float | None = None
    server_step: float = 1.0
    option: Literal["I", "II"] = "II"
    prox: float = 0.0
    l1: float = 0.0
    l1_mode: Literal["subgradient", "proximal"] = "subgradient"
    threshold: float = 0.0
    name: ClassVar[str] = "scaffold"

    def _validate(self) -> None:
        object.__setattr__(self, "local_steps", check_int("local_steps", self.local_steps, low=1))
        object.__setattr__(self, "local_step", check_step("local_step", self.local_step))
        object.__setattr__(self, "server_step", check_positive("server_step", self.server_step))
        check_choice("option", self.option, ("I", "II"))
        object.__setattr__(self, "prox", check_nonnegative("prox", self.prox))
        object.__setattr__(self, "l1", check_nonnegative("l1", self.l1))
        check_choice("l1_mode", self.l1_mode, ("subgradient", "proximal"))
        object.__setattr__(self, "threshold", check_nonnegative("threshold", self.threshold))

    @classmethod
    def example(cls) -> "Scaffold":
        return cls(local_steps=3, local_step=0.05, participation=UniformSubset(2))

    @classmethod
    def invalid_examples(cls) -> list[tuple[dict, str]]:
        return [({"local_step": -0.1}, "local_step"), ({"local_steps": 0}, "local_steps"),
                ({"server_step": -1.0}, "server_step"), ({"option": "III"}, "option"),
                ({"prox": -1.0}, "prox"), ({"l1": -1.0}, "l1"), ({"threshold": -1.0}, "threshold"),
                *cls._default_participation_examples()]

    def step_size(self, problem: Problem) -> float:
        return self.local_step if self.local_step is not None else 1.0 / (problem.certificate.L + self.prox)

    def init(self, problem: Problem, x0: np.ndarray) -> ScaffoldState:
        self._check_problem(problem)
        return ScaffoldState(x=np.array(x0, dtype=np.float64), c=np.zeros(problem.dim),
                             C=ClientTable.zeros(problem.n_clients, problem.dim))

    def round_given(self, problem: Problem, state: ScaffoldState, draw: Draw) -> tuple[ScaffoldState, RoundLog]:
        S = draw.clients
        if S.size == 0:
            return replace(state, last_upload=np.zeros((0, problem.dim)), last_clients=S), upload_log(
                problem, [], down_vectors=0, participants=0, grad_evals=0, communicated=False)
        m = S.size
        eta = self.step_size(problem)
        x = state.x
        start = np.broadcast_to(x, (m, problem.dim))
        rng = self._sgd_rng(draw)
        table = as_table(state.C)  # the participants' rows only: a round never passes over all n clients
        C_S = table.rows(S)
        res = local_gd(problem, start, steps=self.local_steps, step_size=eta, clients=S, lin=state.c - C_S,
                       prox=self.prox, center=start, l1=self.l1, l1_mode=self.l1_mode, rng=rng)
        evals = res.grad_evals
        if self.option == "I":
            rows = None if m == problem.n_clients else S
            C_new = problem.grads(start, rows) if rng is None else problem.stochastic_grads(start, rng, rows)
            evals += m
        else:
            C_new = C_S - state.c + (x - res.X) / (self.local_steps * eta)
        dy = threshold(res.X - x, self.threshold)
        dc = C_new - C_S
        w = problem.weights[S]
        x_new = x + self.server_step * ((w / w.sum()) @ dy)
        c_new = state.c + w @ dc
        C = table.with_rows(S, C_new)  # O(S d); the old state keeps its own C (persistent table)
        log = upload_log(problem, [dy, dc], down_vectors=2 * m, participants=m, grad_evals=evals,
                         extra=self._extra(dy))
        new = replace(state, x=x_new, c=c_new, C=C, last_upload=dy, last_clients=S)
        return new, log
