"""FedProx (Li et al. 2020) and FedElasticNet Algorithm 1 (Kim et al., Section 3.1) as one option set.

Local problem of a participating client (center x = the broadcast model):

    y_i = argmin_y f_i(y) + lambda2/2 ||y - x||^2 + lambda1 ||y - x||_1          (eq. 4 of FedElasticNet)

solved exactly by ``problem.solve_local(0, x, lambda2, l1=lambda1)`` (``solver="exact"``), or
approximately by K local steps of :func:`fedtheory.local.gd.local_gd` from y = x (``solver="gd"``), with the
l1 term as a proximal (ISTA) step or as the sign sub-gradient (``l1_mode``). lambda1 = 0 is FedProx with
mu = lambda2; lambda1 = lambda2 = 0 with ``solver="gd"`` is FedAvg. The transmitted update is
Delta_i = T_eps(y_i - x) and the server step and weights are FedAvg's (:class:`fedtheory.algorithms.FedAvg`).

Fixed point on quadratics with lambda1 = 0 and exact solves (derived by fedtheory, not stated in the papers;
docs/classic.md):
[sum_i a_i (A_i + lambda2 I)^{-1} A_i]^{-1} sum_i a_i (A_i + lambda2 I)^{-1} b_i, which differs from x* when
Hessians are heterogeneous, with bias O(1/lambda2) (:func:`fedtheory.theory.classic.fedprox_fixed_point`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from ..local.gd import local_gd
from ..participation import UniformSubset
from ..problems.base import Problem
from ..validation import check_nonnegative
from .base import register_algorithm
from .fedavg import FedAvg
from .federated import Draw, FederatedState, check_choice

__all__ = ["FedProx"]


@register_algorithm
@dataclass(frozen=True, kw_only=True)
class FedProx(FedAvg):
    """FedProx / FedElasticNet Alg. 1: FedAvg with the local objective f_i + lambda2/2 ||.-x||^2 + lambda1 ||.-x||_1.

    Attributes (in addition to :class:`FedAvg`'s)
    ----------
    prox:
        lambda2 >= 0, FedProx's mu (the exact solver needs lambda2 + mu_i > 0).
    l1:
        lambda1 >= 0, FedElasticNet's l1 coefficient on the local update.
    solver:
        "exact" (``problem.solve_local``) or "gd" (K local steps).
    l1_mode:
        For ``solver="gd"``: "proximal" (soft-threshold after each step) or "subgradient" (sign(0) = 0).
    """

    prox: float = 1.0
    l1: float = 0.0
    solver: Literal["exact", "gd"] = "exact"
    l1_mode: Literal["proximal", "subgradient"] = "proximal"
    name: ClassVar[str] = "fedprox"

    def _validate(self) -> None:
        super()._validate()
        object.__setattr__(self, "prox", check_nonnegative("prox", self.prox))
        object.__setattr__(self, "l1", check_nonnegative("l1", self.l1))
        check_choice("solver", self.solver, ("exact", "gd"))
        check_choice("l1_mode", self.l1_mode, ("proximal", "subgradient"))

    @classmethod
    def example(cls) -> "FedProx":
        return cls(prox=1.0, participation=UniformSubset(2))

    @classmethod
    def invalid_examples(cls) -> list[tuple[dict, str]]:
        return [*super().invalid_examples(), ({"prox": -1.0}, "prox"), ({"l1": -0.1}, "l1"),
                ({"solver": "newton"}, "solver"), ({"l1_mode": "sign"}, "l1_mode")]

    def _regularisation(self) -> float:
        return self.prox

    def init(self, problem: Problem, x0: np.ndarray) -> FederatedState:
        if self.solver == "exact":
            # The exact local problem f_i + prox/2 ||y - x||^2 has a unique minimiser only if it is strongly
            # convex, i.e. mu_i + prox > 0; name the clients that fail it and the prox that would do.
            mu_i = np.asarray(problem.certificate.mu_i, dtype=np.float64)
            bad = np.nonzero(mu_i + self.prox <= 0.0)[0]
            if bad.size:
                shown = ", ".join(f"client {i} (mu_i = {mu_i[i]:g})" for i in bad[:5]) + (" ..." if bad.size > 5
                                                                                          else "")
                need = max(0.0, float(-mu_i.min()))
                raise ValueError(
                    f"prox={self.prox:g} with solver='exact': the local problem f_i + prox/2 ||y - x||^2 is not "
                    f"strongly convex (mu_i + prox <= 0) for {shown} ({bad.size} of {problem.n_clients} "
                    f"clients); set prox > {need:g} (e.g. prox={max(1.0, 2 * need):g}) or use solver='gd'")
        return super().init(problem, x0)

    def _local_models(self, problem: Problem, state: FederatedState, clients: np.ndarray,
                      draw: Draw) -> tuple[np.ndarray, int]:
        m = clients.shape[0]
        center = np.broadcast_to(state.x, (m, problem.dim))
        if self.solver == "exact":
            # An exact local solve is not a gradient evaluation: it is counted as zero oracle calls.
            Y = problem.solve_local(np.zeros((m, problem.dim)), center, self.prox, l1=self.l1,
                                    clients=None if m == problem.n_clients else clients)
            return Y, 0
        res = local_gd(problem, center, steps=self.local_steps, step_size=self.step_size(problem), clients=clients,
                       prox=self.prox, center=center, l1=self.l1, l1_mode=self.l1_mode, tol=self.local_tol,
                       rng=self._sgd_rng(draw))
        return res.X, res.grad_evals
