"""FedRed, FedRed-GD and FedRed-SGD (Jiang, Rodomanov & Stich 2024, Algs. 2 and 3).

Doubly regularized drift correction. Iteration k (Algs. 2-3), with reference point x~_k, local iterates x_{i,k}
and control variates h_{i,k} = grad f(x~_k) - grad f_i(x~_k) (4):

    F_{i,k}(x) = f_i(x) + <h_{i,k}, x> + lam/2 ||x - x~_k||^2 + 1/(2 eta) ||x - x_{i,k}||^2
    x_{i,k+1} = argmin F_{i,k}                                         Alg. 2, solver="exact"
    x_{i,k+1} ~ argmin F_{i,k} by local GD / FGD from x_{i,k}          Alg. 2, solver="gd" / "fgd"
    x_{i,k+1} = 1/(1+lam eta) x_{i,k} + lam eta/(1+lam eta) x~_k
                - eta/(1+lam eta) (g_{i,k} + h_{i,k})                  Alg. 3, solver="linearized"
                (g_{i,k} = grad f_i(x_{i,k}), or a stochastic gradient for FedRed-SGD)
    theta_k ~ Bernoulli(p), one coin shared by all clients:
    theta_k = 1: x~_{k+1} = sum_i w_i x_{i,k+1} (or x_{xi_k,k+1}, xi_k ~ w, for the non-convex theory);
                 optional reset x_{i,k+1} <- x~_{k+1}; h_{i,k+1} = grad f(x~_{k+1}) - grad f_i(x~_{k+1})
    theta_k = 0: x~_{k+1} = x~_k, h_{i,k+1} = h_{i,k}.

``eta = inf`` means 1/eta = 0 (Alg. 2 with p = 1 is then DANE+ with exact solves). The two proximal terms of
Alg. 2 merge into one, (lam + 1/eta)/2 ||x - c_i||^2 with c_i = (lam x~ + x_i/eta)/(lam + 1/eta), so the exact
solve is a single call of ``problem.solve_local`` (cached eigendecomposition for quadratics).

Accounting (Table 1, footnote 5: the expected number of communications): nothing is sent when theta_k = 0
(``communicated=False``); when theta_k = 1 the clients upload x_{i,k+1} and grad f_i(x~_{k+1}) and the server
broadcasts x~_{k+1} and grad f(x~_{k+1}). FedRed-GD evaluates one local gradient per client per iteration: with the reset,
x_{i,k+1} = x~_{k+1}, so the gradient computed for the control variate is the next step's gradient (it is
cached in the state and charged once). Without the reset, or with stochastic steps, the control-variate
gradients are extra and are charged when computed. The exact solver (Alg. 2) is charged only the control
variate's gradients (its solve is counted in ``extra["exact_solves"]``); the inexact local solvers are charged
the K_i + 1 gradients they evaluate, plus the control variate's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar, Iterator, Literal

import numpy as np

from ..local.fgd import StopRule, prox_linear_descent
from ..problems.base import Problem
from ..validation import check_int, check_nonnegative, check_probability, check_real
from .base import RoundLog, State, dense_log, register_algorithm
from .dane import sample_client

__all__ = ["FedRed", "FedRedState", "FedRedDraw"]

Solver = Literal["exact", "linearized", "gd", "fgd"]
Selection = Literal["standard", "random"]


@dataclass(frozen=True)
class FedRedState(State):
    """``x`` is the reference point x~_k (the server model); ``X`` the local iterates (n, d); ``H`` the control
    variates (4) (n, d); ``G`` the local gradients at ``X`` when already known (reset after communication);
    ``k`` the iteration counter."""

    X: np.ndarray | None = None
    H: np.ndarray | None = None
    G: np.ndarray | None = None
    k: int = 0


@dataclass(frozen=True)
class FedRedDraw:
    """One iteration's randomness: the shared coin theta_k, the selected client (randomized selection; None for
    standard averaging) and the stochastic gradients of FedRed-SGD (None for deterministic steps)."""

    communicate: bool
    client: int | None = None
    grads: np.ndarray | None = None


@register_algorithm
@dataclass(frozen=True)
class FedRed:
    """FedRed (Alg. 2, ``solver="exact"``) and FedRed-GD / FedRed-SGD (Alg. 3, ``solver="linearized"``).

    Parameters
    ----------
    lam:
        Reference-point regularization lam >= 0; None uses 2 delta_A (standard averaging) or 2 delta_B
        (randomized selection) from the certificate.
    eta:
        Local-iterate regularization 1/eta (eta > 0, ``math.inf`` for 1/eta = 0, exact solver only); None uses
        eta = 1/L.
    p:
        Communication probability in (0, 1]; None uses the balanced choice p = min(1, (lam + mu) eta)
        (derived by fedtheory from FedRed-GD's expected contraction; the paper takes p of order lam eta,
        Section 4.3).
    reset:
        Reset x_{i,k+1} <- x~_{k+1} after communicating (the authors' code does; the analysis holds either way).
    selection:
        ``"standard"`` averaging or ``"random"`` single-model selection xi_k ~ weights (non-convex theory).
    local_steps, local_tol:
        For ``solver="gd"``/``"fgd"`` (Alg. 2 with an approximate local solver): at most ``local_steps`` (fast)
        GD steps of size 1/(L_i + lam + 1/eta) from x_{i,k}, stopping once ||grad F_{i,k}|| <= ``local_tol``
        (``local_tol=0``: exactly ``local_steps`` steps, returning the min-gradient iterate). With 1/eta >= L the
        subproblem's condition number is <= 2, so a few steps suffice (the key idea of Alg. 2, Section 4;
        the bound 2 = (L + lam + 1/eta)/(lam + 1/eta) at 1/eta >= L is fedtheory's arithmetic).
    stochastic:
        Use ``problem.stochastic_grads`` for the local steps (FedRed-SGD; linearized solver only). The control
        variate always uses full gradients (Section 4.3).
    """

    lam: float | None = None
    eta: float | None = None
    p: float | None = None
    solver: Solver = "linearized"
    reset: bool = True
    selection: Selection = "standard"
    stochastic: bool = False
    local_steps: int = 20
    local_tol: float = 0.0
    name: ClassVar[str] = "fedred"

    def __post_init__(self) -> None:
        if self.lam is not None:
            object.__setattr__(self, "lam", check_nonnegative("lam", self.lam))
        if self.eta is not None:
            if isinstance(self.eta, (int, float)) and not isinstance(self.eta, bool) and self.eta == math.inf:
                object.__setattr__(self, "eta", math.inf)
            else:
                object.__setattr__(self, "eta", check_real("eta", self.eta, low=0.0, low_open=True))
        if self.p is not None:
            object.__setattr__(self, "p", check_probability("p", self.p))
        if self.solver not in ("exact", "linearized", "gd", "fgd"):
            raise ValueError(f"solver must be 'exact', 'gd', 'fgd' (Alg. 2) or 'linearized' (Alg. 3), "
                             f"got {self.solver!r}")
        object.__setattr__(self, "local_steps", check_int("local_steps", self.local_steps, low=0))
        object.__setattr__(self, "local_tol", check_nonnegative("local_tol", self.local_tol))
        if self.selection not in ("standard", "random"):
            raise ValueError(f"selection must be 'standard' or 'random', got {self.selection!r}")
        if not isinstance(self.reset, bool):
            raise TypeError(f"reset must be a bool, got {type(self.reset).__name__}")
        if not isinstance(self.stochastic, bool):
            raise TypeError(f"stochastic must be a bool, got {type(self.stochastic).__name__}")
        if self.solver != "exact" and self.eta == math.inf:
            raise ValueError("eta must be finite in (0, inf) unless solver='exact' (Alg. 3 takes a step of "
                             "size eta/(1 + lam eta))")
        if self.stochastic and self.solver != "linearized":
            raise ValueError("stochastic=True needs solver='linearized' (FedRed-SGD is Alg. 3)")

    @classmethod
    def example(cls) -> "FedRed":
        return cls()

    @classmethod
    def invalid_examples(cls) -> list[tuple[dict, str]]:
        """Invalid settings for the conformance suite: (keyword arguments, parameter named in the error)."""
        return [({"lam": -1.0}, "lam"), ({"eta": -0.1}, "eta"), ({"eta": math.inf}, "eta"), ({"p": 0.0}, "p"),
                ({"p": 1.5}, "p"), ({"solver": "newton"}, "solver"), ({"selection": "all"}, "selection"),
                ({"reset": 1}, "reset"), ({"stochastic": "yes"}, "stochastic"),
                ({"solver": "exact", "stochastic": True}, "stochastic"), ({"local_steps": -1}, "local_steps"),
                ({"local_tol": -1.0}, "local_tol"), ({"solver": "gd", "eta": math.inf}, "eta")]

    # ----- hyperparameters resolved against a problem -----
    def lam_for(self, problem: Problem) -> float:
        if self.lam is not None:
            return self.lam
        c = problem.certificate
        return 2.0 * (c.delta_A if self.selection == "standard" else c.delta_B)

    def eta_for(self, problem: Problem) -> float:
        return self.eta if self.eta is not None else 1.0 / problem.certificate.L

    def p_for(self, problem: Problem) -> float:
        if self.p is not None:
            return self.p
        eta = self.eta_for(problem)
        return min(1.0, (self.lam_for(problem) + max(problem.certificate.mu, 0.0)) * eta)

    # ----- protocol -----
    def _control_variates(self, problem: Problem, x_ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        G = problem.grads(problem.broadcast(x_ref))
        return problem.weights @ G - G, G

    def init(self, problem: Problem, x0: np.ndarray) -> FedRedState:
        x0 = np.array(x0, dtype=np.float64)
        H, G = self._control_variates(problem, x0)
        X = np.array(problem.broadcast(x0))
        return FedRedState(x=x0, X=X, H=H, G=G, k=0)

    def draw(self, problem: Problem, state: FedRedState, rng: np.random.Generator) -> FedRedDraw:
        communicate = bool(rng.random() < self.p_for(problem))
        client = None
        if self.selection == "random" and communicate:  # the selected model matters only when communicating
            client = sample_client(problem.weights, rng)
        grads = problem.stochastic_grads(state.X, rng) if self.stochastic else None
        return FedRedDraw(communicate, client, grads)

    def outcomes(self, problem: Problem, state: FedRedState) -> Iterator[tuple[FedRedDraw, float]]:
        """Every possible draw of the next iteration with its exact probability: the coin (p), and on
        communication the selected client (w_i) under random selection. Only without stochastic gradients."""
        if self.stochastic:
            raise ValueError("outcomes() needs stochastic=False: FedRed-SGD's gradient noise cannot be enumerated")
        p = self.p_for(problem)
        if p < 1.0:
            yield FedRedDraw(False), 1.0 - p
        if p > 0.0:
            if self.selection == "random":
                for i, w in enumerate(problem.weights):
                    if w > 0:
                        yield FedRedDraw(True, i), p * float(w)
            else:
                yield FedRedDraw(True), p

    def round(self, problem: Problem, state: FedRedState, rng: np.random.Generator
              ) -> tuple[FedRedState, RoundLog]:
        return self.round_given(problem, state, self.draw(problem, state, rng))

    def local_step(self, problem: Problem, state: FedRedState, grads: np.ndarray | None = None
                   ) -> tuple[np.ndarray, int]:
        """x_{i,k+1} for every client, and the local gradient evaluations it cost."""
        lam, eta = self.lam_for(problem), self.eta_for(problem)
        n = problem.n_clients
        if self.solver in ("exact", "gd", "fgd"):
            inv_eta = 0.0 if eta == math.inf else 1.0 / eta
            total = lam + inv_eta
            # lam/2||x - x~||^2 + 1/(2eta)||x - x_i||^2 = total/2 ||x - c_i||^2 + const (one proximal term).
            center = (lam * state.x + inv_eta * state.X) / total if total > 0 else state.X
            if self.solver == "exact":
                return problem.solve_local(state.H, center, total), 0
            rule = StopRule("absolute", self.local_tol) if self.local_tol > 0 else StopRule("steps")
            res = prox_linear_descent(problem, state.H, center, total, state.X, rule=rule,
                                      max_steps=self.local_steps, fast=self.solver == "fgd", G0=state.G)
            return res.X, int(res.grad_evals.sum())
        if self.stochastic:
            if grads is None:
                raise ValueError("stochastic=True: pass the drawn stochastic gradients (see draw())")
            G = grads
        else:
            G = state.G if state.G is not None else problem.grads(state.X)
        # One gradient per client per iteration; a cached gradient was computed for the control variate
        # after a reset and is charged here, where it is used.
        evals = n
        # Closed form of argmin <g + h, x> + lam/2||x - x~||^2 + 1/(2 eta)||x - x_i||^2 (Alg. 3).
        X = (state.X + lam * eta * state.x - eta * (G + state.H)) / (1.0 + lam * eta)
        return X, evals

    def round_given(self, problem: Problem, state: FedRedState, draw: FedRedDraw
                    ) -> tuple[FedRedState, RoundLog]:
        """The deterministic update given the iteration's draw (enumerate both coin outcomes for exact
        expectations)."""
        n = problem.n_clients
        X, evals = self.local_step(problem, state, draw.grads)
        extra = {"exact_solves": float(n if self.solver == "exact" else 0)}
        if not draw.communicate:
            log = RoundLog(local_grad_evals=evals, participants=n, communicated=False, extra=extra)
            return replace(state, X=X, G=None, k=state.k + 1), log
        x_ref = X[draw.client] if draw.client is not None else problem.weights @ X
        H, G_ref = self._control_variates(problem, x_ref)
        cache = None
        if self.reset:
            X = np.array(problem.broadcast(x_ref))
            if self.solver != "exact" and not self.stochastic:
                cache = G_ref  # the next local step's gradient: charged when that step uses it
        if cache is None:
            evals += n
        up = (1 if draw.client is not None else n) + n
        log = dense_log(problem, up_vectors=up, down_vectors=2 * n, participants=n, local_grad_evals=evals,
                        extra=extra)
        return replace(state, x=x_ref, X=X, H=H, G=cache, k=state.k + 1), log
