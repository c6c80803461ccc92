"""DANE and DANE+ (Jiang, Rodomanov & Stich 2024, Alg. 1; Shamir, Srebro & Zhang 2014).

One implementation with options. Round r (Jiang, Rodomanov & Stich 2024, Alg. 1 and Appendix B.3):

    h_{i,r} = grad f(x^r) - grad f_i(x^r)                                      control variate (1)
       or   h_{i,r+1} = h_{i,r} + m (x_{i,r+1} - x^{r+1}),  sum_i w_i h_{i,0} = 0  Scaffnew-type (B.84)
    F_{i,r}(x) = f_i(x) + <h_{i,r}, x> + lam/2 ||x - x^r||^2
    x_{i,r+1} ~ argmin F_{i,r}        exact (problem.solve_local), or local GD / Nesterov FGD from x^r until
                                      ||grad F|| <= e_r ||x - x^r||   (Thm 4 / Cor 5, e_r = c lam/(r+1)),
                                      ||grad F|| <= e_r               (Thm 3, e_r = e_0/(r+1)^q),
                                      or K steps returning the min-gradient iterate (Cor 2)
                                      [or, as the authors' code does: K steps returning the last iterate, or
                                       the code's post-step rule; see "The authors' code" below]
    x^{r+1} = sum_i w_i x_{i,r+1}     standard averaging (convex theory)
       or   x^{r+1} = x_{xi_r, r+1}   randomized (xi_r ~ w) or predetermined single client (non-convex theory).

DANE is DANE+ with control variate (1), exact local solves and standard averaging; on quadratics it is the
preconditioned step x^{r+1} = x^r - [sum_i w_i (A_i + lam I)^{-1}] grad f(x^r) (derived by fedtheory, not stated
in the paper).

Accounting (fedtheory's reading of what Alg. 1 sends; the paper counts one communication round per round,
Section 2). With CV (1) the server broadcasts x^r and
grad f(x^r) (2n vectors down), the clients upload grad f_i(x^r) and their models (n + n, or n + 1 with a
single selected client, who alone runs the local solver). With CV (B.84): x^r down, x_{i,r+1} up. Local
gradient evaluations: the n gradients at x^r plus every further local gradient (a local solver that makes
K_i updates evaluates K_i + 1 gradients, the first of which is the shared one; the last-iterate solvers below
evaluate K_i, again sharing the first).

The authors' code (mlolab/S-DANE, ``src/optimizers/fedred.py``, class ``FedRed``) as options (defaults keep
the paper's reading; docs/fedred.md "fedtheory vs the authors' code" lists every difference):

* ``local_step=lr, step_convention="semi_implicit"``: the code's local step
  z_{k+1} = (z_k/lr + lam x^r - (grad f_i(z_k) + h_i))/(1/lr + lam), which is explicit GD on F_i with step
  lr/(1 + lam lr) (h_i in fedtheory's sign; the code stores -h_i and subtracts it).
* ``stopping="authors"``: after computing z_{k+1}, client i stops when
  ||grad f_i(z_k) + h_i + lam (z_{k+1} - x^r)||^2 < tol^2 lam^2 ||z_{k+1} - x^r||^2/(r+1)^2 + 1e-6
  (tol = sqrt(2) gives the code's 2 lam^2; r is the 0-based round), returning z_{k+1}. The code has no cap on
  the steps; ``local_steps`` stays as a safety cap (``extra["local_not_converged"]`` counts clients that hit it).
  ``extra["local_steps_max"]`` is the code's per-round count of local steps (the max over clients).
* ``stopping="steps", local_output="last"``: K steps returning the last iterate (the code's fixed-K DANE+).
* :meth:`DANEPlus.authors_scaffold`: the code's "Scaffold" = DANE+ with lam = 0, K fixed steps, last iterate,
  control variate (1) recomputed at x^r every round, plain (weighted) average.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import ClassVar, Iterator, Literal, Sequence

import numpy as np

from ..local.fgd import AUTHORS_STOP_FLOOR, StopRule, gd_last_iterate, prox_linear_descent
from ..local.gd import local_gd
from ..problems.base import Problem
from ..validation import check_bool, check_int, check_nonnegative, check_positive, check_real
from .base import RoundLog, State, dense_log, register_algorithm

__all__ = ["DANEPlus", "DANE", "DANEState", "DANEDraw"]


def sample_client(weights: np.ndarray, rng: np.random.Generator) -> int:
    """One client index xi ~ weights (inverse-CDF on a single uniform; cheaper than ``rng.choice(p=...)``)."""
    u = rng.random()
    return int(min(np.searchsorted(np.cumsum(weights), u, side="right"), len(weights) - 1))

ControlVariate = Literal["gradient", "scaffnew"]
Averaging = Literal["standard", "random", "fixed"]
Solver = Literal["exact", "gd", "fgd"]
Stopping = Literal["relative", "absolute", "steps", "authors"]
LocalOutput = Literal["min_gradient", "last"]
StepConvention = Literal["explicit", "semi_implicit"]


@dataclass(frozen=True)
class DANEState(State):
    """Server model ``x``, round counter ``r``, and the (n, d) control variates ``h`` for CV (B.84)."""

    r: int = 0
    h: np.ndarray | None = None
    grad0_norm: float = 0.0


@dataclass(frozen=True)
class DANEDraw:
    """The round's randomness: the selected client (None for standard averaging) and, for DANE+-SGD, the seed of
    the local minibatch generator."""

    client: int | None
    seed: int | None = None


@register_algorithm
@dataclass(frozen=True)
class DANEPlus:
    """DANE+ (Alg. 1). See the module docstring for the update.

    Parameters
    ----------
    lam:
        Proximal weight lam >= 0; None uses the theory choice 2 delta_A (standard averaging, convex) or
        2 delta_B (single-client selection, non-convex) from the problem's certificate.
    control_variate:
        ``"gradient"`` (1) or ``"scaffnew"`` (B.84, needs standard averaging).
    m:
        Weight of the (B.84) update; None uses m = lam (fedtheory's choice for exact solves; Appendix B.3
        leaves m free).
    averaging:
        ``"standard"``, ``"random"`` (one client xi ~ weights) or ``"fixed"`` (the predetermined schedule
        ``schedule[r % len(schedule)]``).
    solver:
        ``"exact"`` (problem.solve_local, no refactorisation), ``"gd"`` or ``"fgd"`` (local (fast) GD from x^r
        with step 1/(L_i + lam)).
    stopping, tol, tol_decay, local_steps:
        Inexact solvers stop by ``"relative"`` ||grad F|| <= tol lam/(r+1) ||x - x^r|| (Thm 4, default
        tol = sqrt(2) as in the authors' code), ``"absolute"`` ||grad F|| <= tol/(r+1)^tol_decay (Thm 3), or
        ``"steps"``: exactly ``local_steps`` updates returning the min-gradient iterate (Cor 2), or
        ``"authors"``: the authors' code's post-step rule (module docstring; needs ``solver="gd"``).
        ``local_steps`` also caps the other rules.
    local_output:
        What ``stopping="steps"`` returns: ``"min_gradient"`` (Cor 2; the default for exact gradients) or
        ``"last"`` (the last of the K iterates, as the authors' code; the default and only choice for
        DANE+-SGD). None picks the default. The other rules return the point where they stop.
    tol_floor:
        Floating-point floor of the ``"relative"``/``"absolute"`` rules: a local solver also stops once
        ||grad F|| <= tol_floor ||grad f(x^0)|| (the relative rule cannot be met once ||grad f(x^r)|| is at
        rounding level; the authors' code adds 1e-6 to the squared tolerance for the same reason). 0 disables.
    stochastic, local_step:
        DANE+-SGD (the authors' code; used on neural networks, Appendix C): ``local_steps`` steps of local SGD
        (``problem.stochastic_grads``) on F_i from x^r with step ``local_step`` (None: 1/(L + lam)), returning the
        last iterate (a min-gradient iterate cannot be selected from noisy gradients). Needs ``solver="gd"`` and
        ``stopping="steps"``; the generator is seeded from the round's draw. ``local_step`` also sets the step
        of deterministic local GD (``solver="gd"``; None: 1/(L_i + lam) per client).
    step_convention:
        How ``local_step`` is read: ``"explicit"`` (GD on F_i with step ``local_step``) or ``"semi_implicit"``
        (the authors' code's lr: explicit step lr/(1 + lam lr), module docstring).
    """

    lam: float | None = None
    control_variate: ControlVariate = "gradient"
    m: float | None = None
    averaging: Averaging = "standard"
    schedule: Sequence[int] = (0,)
    solver: Solver = "exact"
    stopping: Stopping = "relative"
    tol: float = math.sqrt(2.0)
    tol_decay: float = 0.0
    local_steps: int = 10_000
    tol_floor: float = 1e-12
    stochastic: bool = False
    local_step: float | None = None
    local_output: LocalOutput | None = None
    step_convention: StepConvention = "explicit"
    name: ClassVar[str] = "dane+"

    def __post_init__(self) -> None:
        if self.lam is not None:
            object.__setattr__(self, "lam", check_nonnegative("lam", self.lam))
        if self.control_variate not in ("gradient", "scaffnew"):
            raise ValueError(f"control_variate must be 'gradient' (1) or 'scaffnew' (B.84), "
                             f"got {self.control_variate!r}")
        if self.m is not None:
            object.__setattr__(self, "m", check_positive("m", self.m))
        if self.averaging not in ("standard", "random", "fixed"):
            raise ValueError(f"averaging must be 'standard', 'random' or 'fixed', got {self.averaging!r}")
        if self.control_variate == "scaffnew" and self.averaging != "standard":
            raise ValueError("control_variate='scaffnew' (B.84) needs averaging='standard' (its update uses "
                             "every client's model)")
        sched = tuple(check_int("schedule", i, low=0) for i in self.schedule)
        if not sched:
            raise ValueError("schedule must list at least one client index")
        object.__setattr__(self, "schedule", sched)
        if self.solver not in ("exact", "gd", "fgd"):
            raise ValueError(f"solver must be 'exact', 'gd' or 'fgd', got {self.solver!r}")
        if self.stopping not in ("relative", "absolute", "steps", "authors"):
            raise ValueError(f"stopping must be 'relative', 'absolute', 'steps' or 'authors', got {self.stopping!r}")
        if self.stopping == "authors" and self.solver != "gd":
            raise ValueError("stopping='authors' (the authors' code's rule) needs solver='gd'")
        object.__setattr__(self, "tol", check_nonnegative("tol", self.tol))
        object.__setattr__(self, "tol_decay", check_real("tol_decay", self.tol_decay, low=0.0))
        object.__setattr__(self, "local_steps", check_int("local_steps", self.local_steps, low=0))
        object.__setattr__(self, "tol_floor", check_nonnegative("tol_floor", self.tol_floor))
        check_bool("stochastic", self.stochastic)
        if self.stochastic and (self.solver, self.stopping) != ("gd", "steps"):
            raise ValueError("stochastic=True (DANE+-SGD) needs solver='gd' and stopping='steps': the gradient-norm "
                             "stopping rules and fast GD need exact gradients")
        if self.local_step is not None:
            object.__setattr__(self, "local_step", check_positive("local_step", self.local_step))
            if self.solver != "gd":
                raise ValueError(f"local_step needs solver='gd' (got solver={self.solver!r}: the exact solver has no "
                                 f"step and fast GD's momentum is tied to its step 1/(L_i + lam))")
        if (self.stopping == "authors" or self.local_output == "last") and self.local_steps < 1:
            raise ValueError(f"local_steps must be >= 1 for the last-iterate local solvers (the authors' code takes at "
                             f"least one step), got {self.local_steps}")
        if self.step_convention not in ("explicit", "semi_implicit"):
            raise ValueError(f"step_convention must be 'explicit' or 'semi_implicit', got {self.step_convention!r}")
        if self.local_output is not None:
            if self.local_output not in ("min_gradient", "last"):
                raise ValueError(f"local_output must be 'min_gradient', 'last' or None, got {self.local_output!r}")
            if self.stopping != "steps" or self.solver == "exact":
                raise ValueError("local_output applies to stopping='steps' with an inexact solver; the other rules "
                                 "return the point where they stop")
            if self.stochastic and self.local_output != "last":
                raise ValueError("local_output must be 'last' for stochastic=True (DANE+-SGD): a min-gradient "
                                 "iterate cannot be selected from noisy gradients")

    @classmethod
    def example(cls) -> "DANEPlus":
        return cls(solver="gd", stopping="relative")

    @classmethod
    def invalid_examples(cls) -> list[tuple[dict, str]]:
        """Invalid settings for the conformance suite: (keyword arguments, parameter named in the error)."""
        return [({"lam": -1.0}, "lam"), ({"m": 0.0}, "m"), ({"control_variate": "x"}, "control_variate"),
                ({"averaging": "mean"}, "averaging"), ({"solver": "newton"}, "solver"),
                ({"stopping": "never"}, "stopping"), ({"tol": -1.0}, "tol"), ({"local_steps": -1}, "local_steps"),
                ({"tol_floor": -1.0}, "tol_floor"), ({"averaging": "fixed", "schedule": (99,)}, "schedule"),
                ({"control_variate": "scaffnew", "averaging": "random"}, "control_variate"),
                ({"stopping": "authors", "solver": "fgd"}, "stopping"), ({"local_step": 0.0}, "local_step"),
                ({"solver": "exact", "local_step": 0.1}, "local_step"), ({"step_convention": "x"}, "step_convention"),
                ({"local_output": "best"}, "local_output"), ({"local_output": "last"}, "local_output"),
                ({"stopping": "authors", "local_steps": 0}, "local_steps")]

    @classmethod
    def authors_scaffold(cls, local_steps: int, local_step: float | None = None) -> "DANEPlus":
        """The authors' code's "Scaffold" (``control_variate=1, lambda_reguriz=0, no_prob=True``): h_i recomputed at
        x^r every round, ``local_steps`` GD steps of size ``local_step`` from x^r, last iterate, plain average."""
        return cls(lam=0.0, solver="gd", stopping="steps", local_steps=local_steps, local_step=local_step,
                   local_output="last")

    # ----- hyperparameters resolved against a problem -----
    def lam_for(self, problem: Problem) -> float:
        if self.lam is not None:
            return self.lam
        c = problem.certificate
        return 2.0 * (c.delta_A if self.averaging == "standard" else c.delta_B)

    def m_for(self, problem: Problem) -> float:
        return self.m if self.m is not None else self.lam_for(problem)

    def explicit_step(self, problem: Problem) -> float | None:
        """The explicit GD step on F_i that ``local_step`` means (None: the solver's default 1/(L_i + lam))."""
        if self.local_step is None:
            return None
        if self.step_convention == "semi_implicit":
            return self.local_step / (1.0 + self.lam_for(problem) * self.local_step)
        return self.local_step

    def returns_last_iterate(self) -> bool:
        """Whether the deterministic local GD returns its last iterate (the code's rule or ``local_output``)."""
        return self.stopping == "authors" or (self.stopping == "steps" and self.local_output == "last")

    def stop_rule(self, problem: Problem, r: int, grad0_norm: float = 0.0) -> StopRule:
        """The local stopping rule of round r (e_r of Thm 4 or Thm 3), with the floating-point floor."""
        floor = self.tol_floor * grad0_norm
        if self.stopping == "relative":
            return StopRule("relative", self.tol * self.lam_for(problem) / (r + 1), floor)
        if self.stopping == "absolute":
            return StopRule("absolute", self.tol / (r + 1) ** self.tol_decay, floor)
        return StopRule("steps")

    # ----- protocol -----
    def init(self, problem: Problem, x0: np.ndarray) -> DANEState:
        x0 = np.array(x0, dtype=np.float64)
        if self.averaging == "fixed" and max(self.schedule) >= problem.n_clients:
            raise ValueError(f"schedule indices must be in [0, {problem.n_clients - 1}], got {self.schedule}")
        h = None
        if self.control_variate == "scaffnew":
            # h_{i,0} = grad f(x^0) - grad f_i(x^0): sums to zero under the weights, as (B.84) requires.
            G = problem.grads(problem.broadcast(x0))
            h = problem.weights @ G - G
        grad0_norm = float(np.linalg.norm(problem.grad(x0))) if self.solver != "exact" else 0.0
        return DANEState(x=x0, r=0, h=h, grad0_norm=grad0_norm)

    def draw(self, problem: Problem, state: DANEState, rng: np.random.Generator) -> DANEDraw:
        if self.averaging == "random":
            client = sample_client(problem.weights, rng)
        elif self.averaging == "fixed":
            client = self.schedule[state.r % len(self.schedule)]
        else:
            client = None
        # drawn after the client, and only for DANE+-SGD, so deterministic variants consume rng as before
        seed = int(rng.integers(0, 2**63 - 1)) if self.stochastic else None
        return DANEDraw(client, seed)

    def outcomes(self, problem: Problem, state: DANEState) -> Iterator[tuple[DANEDraw, float]]:
        """Every possible draw of the next round with its exact probability (the selected client under random
        averaging; one draw otherwise). Only for deterministic local solvers."""
        if self.stochastic:
            raise ValueError("outcomes() needs stochastic=False: DANE+-SGD's gradient noise cannot be enumerated")
        if self.averaging == "random":
            for i, w in enumerate(problem.weights):
                if w > 0:
                    yield DANEDraw(i), float(w)
        else:
            yield self.draw(problem, state, np.random.default_rng(0)), 1.0  # deterministic: no randomness used

    def round(self, problem: Problem, state: DANEState, rng: np.random.Generator) -> tuple[DANEState, RoundLog]:
        return self.round_given(problem, state, self.draw(problem, state, rng))

    def local_models(self, problem: Problem, state: DANEState, clients: np.ndarray | None = None,
                     seed: int | None = None) -> tuple[np.ndarray, np.ndarray, int, dict[str, float]]:
        """x_{i,r+1} for the listed clients (default all): (X, h of all clients, gradient evals, extra).

        Exposed so claims can inspect every client's local model (e.g. Lemma 28 holds for each of them).
        """
        n = problem.n_clients
        lam = self.lam_for(problem)
        x = state.x
        rows = np.arange(n) if clients is None else np.asarray(clients)
        if self.control_variate == "gradient":
            G = problem.grads(problem.broadcast(x))
            h = problem.weights @ G - G
            evals = n
            G_rows = G if clients is None else G[rows]
        else:
            h = state.h
            evals = 0
            G_rows = None
        center = np.broadcast_to(x, (len(rows), problem.dim))
        if self.solver == "exact":
            X = problem.solve_local(h if clients is None else h[rows], center, lam, clients=clients)
            return X, h, evals, {"local_steps_max": 0.0, "local_steps_mean": 0.0}
        if self.stochastic:
            if seed is None:
                raise ValueError("stochastic=True (DANE+-SGD) needs the draw's seed (use draw(problem, state, rng))")
            step = self.explicit_step(problem)
            if step is None:
                step = 1.0 / (problem.certificate.L + lam)
            res_sgd = local_gd(problem, np.array(center), steps=self.local_steps, step_size=step, clients=clients,
                               lin=h[rows], prox=lam, center=center, rng=np.random.default_rng(seed))
            K = float(self.local_steps)
            return res_sgd.X, h, evals + res_sgd.grad_evals, {"local_steps_max": K, "local_steps_mean": K}
        if self.returns_last_iterate():
            # the authors' code: post-step rule e = tol lam/(r+1) with its absolute floor, or fixed K steps
            authors = self.stopping == "authors"
            res = gd_last_iterate(problem, h[rows], center, lam, np.array(center), max_steps=self.local_steps,
                                  step=self.explicit_step(problem), clients=clients, G0=G_rows,
                                  stop_tol=self.tol * lam / (state.r + 1) if authors else None,
                                  stop_floor=AUTHORS_STOP_FLOOR if authors else 0.0)
        else:
            res = prox_linear_descent(problem, h[rows], center, lam, np.array(center),
                                      rule=self.stop_rule(problem, state.r, state.grad0_norm),
                                      max_steps=self.local_steps, fast=self.solver == "fgd", clients=clients,
                                      G0=G_rows, step=self.explicit_step(problem))
        # The first gradient (at x^r) is the control variate's when CV (1) computed it already.
        evals += int(res.grad_evals.sum()) - (len(rows) if G_rows is not None else 0)
        extra = {"local_steps_max": float(res.steps.max()), "local_steps_mean": float(res.steps.mean()),
                 "local_not_converged": float(np.sum(~res.converged))}
        return res.X, h, evals, extra

    def round_given(self, problem: Problem, state: DANEState, draw: DANEDraw) -> tuple[DANEState, RoundLog]:
        """The deterministic update given the round's draw (tests enumerate draws for exact expectations)."""
        n = problem.n_clients
        single = draw.client is not None
        clients = np.array([draw.client]) if single else None
        X, h, evals, extra = self.local_models(problem, state, clients, draw.seed)
        x_new = X[0] if single else problem.weights @ X
        h_new = None
        if self.control_variate == "scaffnew":
            # (B.84): keeps sum_i w_i h_i = 0 because sum_i w_i (x_i - x^{r+1}) = 0.
            h_new = state.h + self.m_for(problem) * (X - x_new)
            up, down = n, n
        else:
            up, down = n + (1 if single else n), 2 * n
        log = dense_log(problem, up_vectors=up, down_vectors=down, participants=n, local_grad_evals=evals,
                        extra=extra)
        return replace(state, x=x_new, r=state.r + 1, h=h_new), log


@register_algorithm
@dataclass(frozen=True)
class DANE(DANEPlus):
    """DANE (Shamir et al. 2014 with eta_D = 1, mu_D = lam): DANE+ with CV (1), exact solves, standard averaging.

    x^{r+1} = sum_i w_i argmin_x {f_i(x) + <grad f(x^r) - grad f_i(x^r), x> + lam/2 ||x - x^r||^2}.
    """

    name: ClassVar[str] = "dane"

    #: DANE+'s options that act only on inexact local solvers or the (B.84) control variate; DANE solves exactly
    #: with control variate (1), so a value other than the default would be silently ignored: refused instead.
    INEXACT_OPTIONS: ClassVar[tuple[str, ...]] = ("m", "schedule", "stopping", "tol", "tol_decay", "local_steps",
                                                  "tol_floor", "stochastic", "local_step", "local_output",
                                                  "step_convention")

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.control_variate, self.averaging, self.solver) != ("gradient", "standard", "exact"):
            raise ValueError("DANE is DANE+ with control_variate='gradient', averaging='standard' and "
                             "solver='exact'; use DANEPlus for other options")
        defaults = {f.name: f.default for f in fields(DANEPlus)}
        for name in self.INEXACT_OPTIONS:
            if getattr(self, name) != defaults[name]:
                raise ValueError(f"{name} does not apply to DANE (exact local solves, control variate (1)); "
                                 f"use DANEPlus(solver='gd' or 'fgd', {name}=...) instead")

    @classmethod
    def example(cls) -> "DANE":
        return cls()

    @classmethod
    def invalid_examples(cls) -> list[tuple[dict, str]]:
        return [({"lam": -1.0}, "lam"), ({"solver": "gd"}, "solver"), ({"averaging": "random"}, "averaging"),
                ({"stopping": "absolute"}, "stopping"), ({"tol": 0.1}, "tol"), ({"m": 1.0}, "m")]
