"""FedDyn (Acar et al. 2021, Alg. 1) and FedElasticNet Algorithm 3 (Kim et al., Section 3.3, eqs. (8)-(12)).

State: server model x, server state h, stored client "gradient states" g_i (all start at 0: h^0 = 0,
grad L_k(theta_k^0) = 0 in Alg. 3 line 1). One round with participants S (alpha = lambda2 > 0):

    theta_i = argmin_theta f_i(theta) - <g_i, theta> + alpha/2 ||theta - x||^2 + lambda1 ||theta - x||_1   (eq. 10)
    Delta_i = T_eps(theta_i - x),  theta_i = x + Delta_i                 (threshold first, see below)
    g_i+ = g_i - alpha Delta_i - lambda1 s_i                            (i in S; others keep g_i)
    h+   = h - alpha sum_{i in S} w_i Delta_i - lambda1 sum_{i in S} w_i s_i
    x+   = sum_{i in S} a_i theta_i - h+ / alpha,                        a_i = w_i / sum_{j in S} w_j

With uniform weights (w_i = 1/m) these are exactly Acar et al.'s h^t = h^{t-1} - alpha/m sum_{P_t}(theta_k^t -
theta^{t-1}) and theta^t = 1/|P_t| sum_{P_t} theta_k^t - h^t/alpha (Kim et al., Alg. 3 lines 12-13, signs as
printed), and h = sum_i w_i g_i holds every round (Kim et al., Lemma B.2) for any solver, reading and
participation. A round with S participants costs O(S d) besides the S local solves: the g_i live in a
persistent :class:`~fedtheory.algorithms.client_table.ClientTable` (non-participants' rows are stored, not touched).
Thresholding before the client's own state update is fedtheory's reading (the paper does not
say where T_eps is applied): it keeps Lemma B.2's h = sum_i w_i g_i exact.

Sign readings of s_i (``sign_at_zero``):
  * "printed": s_i = sign(Delta_i) with sign(0) = 0 (communication-faithful; the server computes it from
    the sparse Delta);
  * "kkt": s_i = (g_i - grad f_i(theta_i) - alpha Delta_i) / lambda1, the sub-gradient of ||.||_1 the exact
    solve certifies (equal to sign(Delta_i) on non-zero coordinates, in [-1, 1] on zeros); then g_i+ =
    grad f_i(theta_i) exactly, which the proof of Theorem 3.1 needs. It costs one gradient evaluation per
    participant and would need a dense upload (the RoundLog still counts Delta only, as the paper's metric).
lambda1 = 0 is FedDyn, where both readings coincide. ``solver="gd"`` replaces the exact solve by K local
steps of :func:`fedtheory.local.gd.local_gd` from theta = x (the stored-state updates are unchanged, so
Lemma B.2 still holds exactly). Uplink: Delta_i (``upload="delta"``) or the local model theta_i
(``upload="model"``, the original FedDyn); downlink: x.
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

__all__ = ["FedDyn", "FedDynState"]


@dataclass(frozen=True, kw_only=True)
class FedDynState(FederatedState):
    """x, server state ``h`` (d,), stored client gradient states ``G`` (n, d).

    ``G`` is a :class:`~fedtheory.algorithms.client_table.ClientTable` in the states this class returns (an immutable
    (n, d) array whose round updates cost O(S d)); an ndarray given by a caller is accepted too.
    """

    h: np.ndarray = field(default_factory=lambda: np.zeros(0))
    G: np.ndarray | ClientTable = field(default_factory=lambda: np.zeros((0, 0)))


@register_algorithm
@dataclass(frozen=True, kw_only=True)
class FedDyn(FederatedAlgorithm):
    """FedDyn / FedElasticNet Alg. 3 (see the module docstring for the update equations).

    Attributes
    ----------
    alpha:
        alpha = lambda2 > 0, the dynamic regulariser's coefficient.
    l1:
        lambda1 >= 0 (FedElasticNet Alg. 3).
    sign_at_zero:
        "printed" (sign(0) = 0) or "kkt" (exact sub-gradient reading).
    solver:
        "exact" (``problem.solve_local``) or "gd" (``local_steps`` steps of size ``local_step``).
    l1_mode:
        For ``solver="gd"``: "proximal" or "subgradient".
    threshold:
        epsilon >= 0 of the transmit operator, applied before the state updates (keeps Lemma B.2 exact).
    upload:
        "delta" (Delta_i) or "model" (theta_i, original FedDyn) -- what the uplink counts.
    """

    alpha: float = 1.0
    l1: float = 0.0
    sign_at_zero: Literal["printed", "kkt"] = "printed"
    solver: Literal["exact", "gd"] = "exact"
    local_steps: int = 10
    local_step: float | None = None
    l1_mode: Literal["proximal", "subgradient"] = "proximal"
    threshold: float = 0.0
    upload: Literal["delta", "model"] = "delta"
    name: ClassVar[str] = "feddyn"

    def _validate(self) -> None:
        object.__setattr__(self, "alpha", check_positive("alpha", self.alpha))
        object.__setattr__(self, "l1", check_nonnegative("l1", self.l1))
        check_choice("sign_at_zero", self.sign_at_zero, ("printed", "kkt"))
        check_choice("solver", self.solver, ("exact", "gd"))
        object.__setattr__(self, "local_steps", check_int("local_steps", self.local_steps, low=1))
        object.__setattr__(self, "local_step", check_step("local_step", self.local_step))
        check_choice("l1_mode", self.l1_mode, ("proximal", "subgradient"))
        object.__setattr__(self, "threshold", check_nonnegative("threshold", self.threshold))
        check_choice("upload", self.upload, ("delta", "model"))

    @classmethod
    def example(cls) -> "FedDyn":
        return cls(alpha=1.0, participation=UniformSubset(2))

    @classmethod
    def invalid_examples(cls) -> list[tuple[dict, str]]:
        return [({"alpha": 0.0}, "alpha"), ({"alpha": -1.0}, "alpha"), ({"l1": -1.0}, "l1"),
                ({"sign_at_zero": "one"}, "sign_at_zero"), ({"solver": "newton"}, "solver"),
                ({"local_steps": 0}, "local_steps"), ({"local_step": -1.0}, "local_step"),
                ({"threshold": -1.0}, "threshold"), ({"upload": "both"}, "upload"),
                *cls._default_participation_examples()]

    def step_size(self, problem: Problem) -> float:
        return self.local_step if self.local_step is not None else 1.0 / (problem.certificate.L + self.alpha)

    def init(self, problem: Problem, x0: np.ndarray) -> FedDynState:
        self._check_problem(problem)
        return FedDynState(x=np.array(x0, dtype=np.float64), h=np.zeros(problem.dim),
                           G=ClientTable.zeros(problem.n_clients, problem.dim))

    def round_given(self, problem: Problem, state: FedDynState, draw: Draw) -> tuple[FedDynState, RoundLog]:
        S = draw.clients
        if S.size == 0:  # FedDyn's server average over an empty set is undefined: the round is skipped
            return replace(state, last_upload=np.zeros((0, problem.dim)), last_clients=S), upload_log(
                problem, [], down_vectors=0, participants=0, grad_evals=0, communicated=False)
        m = S.size
        rows = None if m == problem.n_clients else S
        x = state.x
        center = np.broadcast_to(x, (m, problem.dim))
        table = as_table(state.G)
        # all clients: a read-only view of the whole table (only read before the update below, so no copy);
        # otherwise only the participants' rows
        G_S = table.peek() if rows is None else table.rows(S)
        if self.solver == "exact":
            theta_hat = problem.solve_local(-G_S, center, self.alpha, l1=self.l1, clients=rows)
            evals = 0
        else:
            res = local_gd(problem, center, steps=self.local_steps, step_size=self.step_size(problem), clients=S,
                           lin=-G_S, prox=self.alpha, center=center, l1=self.l1, l1_mode=self.l1_mode,
                           rng=self._sgd_rng(draw))
            theta_hat, evals = res.X, res.grad_evals
        delta = threshold(theta_hat - x, self.threshold)
        theta = x + delta
        increment = -self.alpha * delta
        if self.l1 > 0.0:
            if self.sign_at_zero == "printed":
                s = np.sign(delta)
            else:
                s = (G_S - problem.grads(theta, rows) - self.alpha * delta) / self.l1
                evals += m
            increment = increment - self.l1 * s
        w = problem.weights[S]
        if rows is None:
            G = ClientTable.from_array(G_S + increment, copy=False)
        else:
            G = table.with_rows(S, G_S + increment)  # O(S d); the old state keeps its own G
        h_new = state.h + w @ increment
        x_new = (w / w.sum()) @ theta - h_new / self.alpha
        sent = delta if self.upload == "delta" else theta
        log = upload_log(problem, [sent], down_vectors=m, participants=m, grad_evals=evals, down_vector=x,
                         extra=self._extra(sent))
        return replace(state, x=x_new, h=h_new, G=G, last_upload=sent, last_clients=S), log
