"""Theorems 3 and 4, Corollary 5 (inexact DANE+): DANE+-GD and DANE+-FGD with the relative stopping rule against
exact DANE, and the accuracy each stopping rule of the local solvers promises.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ...algorithms.dane import DANE, DANEPlus
from ...run import run
from ...theory import fedred as th
from ..registry import Evidence, claim
from ..space import InstanceSpace, Param, quadratic_space
from ..tolerances import ITERATE_REL
from ._shared import (
    LOCAL_DELTA_A_FEASIBLE,
    describe,
    gd_iterations_to_gap,
    local_grad,
    local_problem,
    quadratic_instance,
    start_point,
)

__all__: list[str] = []


# ---------------------------------------------------------------------------------------------------------
# Theorem 4, Corollary 5: inexact DANE+-GD and DANE+-FGD
# ---------------------------------------------------------------------------------------------------------

_INEXACT_SPACE = quadratic_space(
    defaults=(dict(n_clients=8, dim=10, mu=1.0, L=100.0, delta_A=1.0, zeta2=1.0, seed=0),
              dict(n_clients=8, dim=10, mu=0.5, L=200.0, delta_A=2.0, zeta2=1.0, seed=1),
              # unequal weights (f = sum_i w_i f_i, delta_A weighted)
              dict(n_clients=4, dim=6, mu=0.5, L=50.0, delta_A=1.0, zeta2=2.0, weights=(0.1, 0.2, 0.3, 0.4), seed=5)),
    thorough=tuple(dict(n_clients=8, dim=15, mu=1.0, L=L, delta_A=L / 100, zeta2=1.0, seed=s)
                   for s, L in enumerate((100.0, 500.0, 1000.0), start=2)))


@claim(cites=("Theorem 4", "Corollary 5"),
       id="fedred.daneplus_gd.inexact", paper="fedred",
       statement="DANE+-GD (local GD with step 1/(L+lam) until ||grad F|| <= sqrt(2) lam/(r+1) ||x - x^r||, "
                 "lam = 2 delta_A) reaches eps within 2x exact DANE's rounds, with local steps at round r <= "
                 "2 (L+lam)/(mu+lam) (1 + log((L+lam)(r+1)/lam)) and total local steps per client <= "
                 "2 * (GD iterations) * log(R+1); DANE+-FGD likewise with <= 2 sqrt((L+lam)/(mu+lam)) (1 + log(...)) "
                 "local steps per round",
       kind="bound", space=_INEXACT_SPACE,
       derived=True, runs=("dane", "dane+"))


def check_daneplus_gd_inexact(kw: dict) -> Evidence:
    problem = quadratic_instance(kw)
    c = problem.certificate
    lam = 2.0 * c.delta_A
    x0 = start_point(problem, kw.get("seed", 0))
    eps = 1e-10 * problem.gap(x0)
    # lam = 2 delta_A is the algorithms' own default (lam=None, resolved from the certificate): run it as such
    exact = run(DANE(), problem, 2000, x0=x0, tol=eps)
    if exact.status != "converged":
        return Evidence(describe(kw), math.inf, 2.0, False,
                        details={"failure": f"exact DANE did not reach the gap {eps:.3g} ({exact.status} after "
                                            f"{int(exact.round[-1])} rounds)"})
    # The claim allows 2x exact DANE's rounds: a run that needs more is violated, so none runs longer (a broken
    # local solver that never meets its stopping rule would otherwise spend 2000 rounds at the step cap).
    horizon = 2 * int(exact.round[-1])
    inexact = run(DANEPlus(solver="gd", stopping="relative"), problem, horizon, x0=x0, tol=eps)
    R_exact, R_inexact = int(exact.round[-1]), int(inexact.round[-1])
    steps = inexact.local_steps_max[1:]
    per_round = [s / th.dane_gd_local_steps(c.mu, c.L, lam, r) for r, s in enumerate(steps)]
    total_per_client = float(np.sum(steps))
    gd_iters = gd_iterations_to_gap(problem, x0, eps)  # GD (step 1/L_f) to the same gap, exact on quadratics
    total_bound = 2.0 * gd_iters * math.log(R_inexact + 1)
    # DANE+-FGD (Cor. 5, second half): same rounds guarantee, sqrt(kappa) local steps per round.
    fast = run(DANEPlus(solver="fgd", stopping="relative"), problem, horizon, x0=x0, tol=eps)
    R_fast = int(fast.round[-1])
    fast_per_round = [s / th.dane_fgd_local_steps(c.mu, c.L, lam, r) for r, s in enumerate(fast.local_steps_max[1:])]
    ok = (exact.status == inexact.status == fast.status == "converged" and R_inexact <= 2 * R_exact
          and max(per_round) <= 2.0 and total_per_client <= total_bound
          and R_fast <= 2 * R_exact and max(fast_per_round) <= 2.0)
    return Evidence(describe(kw), max(R_inexact, R_fast) / R_exact, 2.0, ok,
                    tightness=max(R_inexact, R_fast) / (2 * R_exact),
                    details={"rounds_exact": R_exact, "rounds_inexact": R_inexact, "rounds_fgd": R_fast,
                             "max_fgd_steps_over_cor5": max(fast_per_round),
                             "max_steps_over_cor5": max(per_round), "total_local_steps_max_client":
                             total_per_client, "gd_iterations": gd_iters, "total_bound": total_bound,
                             "local_not_converged": float(np.nansum(inexact.local_not_converged[1:]))})


# ---------------------------------------------------------------------------------------------------------
# Theorems 3 and 4: what the inexact local solvers return, the accuracy each stopping rule promises
# ---------------------------------------------------------------------------------------------------------

_DANEPLUS_OPTIONS = ("stopping", "tol", "tol_decay", "tol_floor", "solver", "local_step", "step_convention")
_RULES = ("relative", "absolute", "authors")


def _daneplus_accuracy_build(point: dict) -> dict:
    """A search point (rule index, tol, lam, step fraction, fast, seed) as the check's instance; a default
    instance (option names already) passes through."""
    if "stopping" in point:
        return dict(point)
    rule = _RULES[int(point["rule"])]
    inst = {"stopping": rule, "tol": point["tol"], "lam": point["lam"], "seed": int(point["seed"]),
            "delta_A": point["delta_A"]}
    if rule == "authors":  # the authors' rule runs plain GD with the code's semi-implicit step lr
        inst |= {"local_step": point["step_frac"] / (4.0 + point["lam"]), "step_convention": "semi_implicit"}
    elif int(point["fast"]):
        inst["solver"] = "fgd"
    return inst


#: The class of the stopping rules' promise: any rule, tolerance, lam > 0 and step (the local objective's
#: smoothness is L + lam <= 4 + lam here), on the 4-client quadratic family (problem seed searched).
_DANEPLUS_ACCURACY_SPACE = InstanceSpace(
    params=(Param("rule", 0, 2, integer=True), Param("tol", 0.05, 2.0, log=True), Param("lam", 0.1, 10.0, log=True),
            Param("step_frac", 0.1, 1.0), Param("fast", 0, 1, integer=True), Param("seed", 0, 1000, integer=True),
            # the stopping rules assume nothing about delta_A: searched up to the largest value the generator
            # builds for every seed (the defaults' delta_A = 1 is infeasible for some seeds, e.g. 199)
            Param("delta_A", 0.01, LOCAL_DELTA_A_FEASIBLE, log=True)),
    build=_daneplus_accuracy_build,
    defaults=({"stopping": "relative", "tol": 0.5, "tol_floor": 1e-10},
              {"stopping": "relative", "tol": 0.5, "solver": "fgd"},
              {"stopping": "absolute", "tol": 1e-3, "tol_decay": 1.0},
              {"stopping": "authors", "local_step": 0.2, "step_convention": "semi_implicit"},
              {"stopping": "authors", "local_step": 0.15}))


@claim(cites=("Algorithm 1",),
       id="fedred.daneplus.local_accuracy.derived", paper="fedred", derived=True,
       reference="absolute e_r in Theorem 3, relative e_r in Theorem 4; the authors' code's rule (docs/fedred.md)",
       statement="(derived by fedtheory) every client's local model returned by DANE+ meets its stopping rule, checked from the raw "
                 "A_i, b_i: relative ||grad F_i|| <= tol lam/(r+1) ||x_i - x^r|| (or the floor tol_floor "
                 "||grad f(x^0)||), absolute ||grad F_i|| <= tol/(r+1)^tol_decay, and the authors' post-step rule "
                 "q^2 < tol^2 lam^2 ||x_i - x^r||^2/(r+1)^2 + 1e-6, which implies ||grad F_i(x_i)|| <= (1 + L_i lr) "
                 "|q| (lr the code's semi-implicit step; lr = s/(1 - lam s) for an explicit step s)",
       kind="bound", space=_DANEPLUS_ACCURACY_SPACE)


def check_daneplus_local_accuracy(inst: dict) -> Evidence:
    problem = local_problem(inst.get("seed", 3), inst.get("delta_A", 1.0))
    kw = {"solver": "gd", **{k: v for k, v in inst.items() if k in _DANEPLUS_OPTIONS}}
    alg = DANEPlus(lam=inst.get("lam", 1.0), **kw)
    lam = alg.lam_for(problem)
    L_i = np.array([np.linalg.eigvalsh(A).max() for A in problem.A])
    x0 = np.array([2.0, -1.0, 0.5])
    grad0 = float(np.linalg.norm(problem.weights @ (np.einsum("nij,j->ni", problem.A, x0) - problem.b)))
    state = alg.init(problem, x0)
    worst, capped = 0.0, 0.0
    for r in range(12):
        X, _, _, extra = alg.local_models(problem, state)
        # control variate (1) from the raw A_i, b_i, never the solver's own: a solver that drops or flips it
        # in its local objective must fail the rule for the F_i that Alg. 1 defines
        G = np.einsum("nij,j->ni", problem.A, state.x) - problem.b
        h = problem.weights @ G - G
        C = np.broadcast_to(state.x, X.shape)
        g = np.linalg.norm(local_grad(problem, X, h, lam, C), axis=1)
        dist = np.linalg.norm(X - state.x, axis=1)
        if kw["stopping"] == "relative":
            allowed = np.maximum(alg.tol * lam / (r + 1) * dist, alg.tol_floor * grad0)
        elif kw["stopping"] == "absolute":
            allowed = np.full(len(g), max(alg.tol / (r + 1) ** alg.tol_decay, alg.tol_floor * grad0))
        else:
            s = alg.explicit_step(problem)
            lr = s / (1.0 - lam * s)
            allowed = (1.0 + L_i * lr) * np.sqrt((alg.tol * lam / (r + 1) * dist) ** 2 + 1e-6)
        capped += extra.get("local_not_converged", 0.0)
        worst = max(worst, float(np.max(g / allowed)))
        # Alg. 1's standard averaging done here: the statement is about the local solver at the points x^r
        # (frozen or reflected server updates would only move those points), so the server is not under test
        state = replace(state, x=problem.weights @ X, r=state.r + 1)
    described = ", ".join(f"{k}={v}" for k, v in inst.items())
    return Evidence(f"DANE+({described}) 12 rounds", worst, 1.0, worst <= 1.0 + ITERATE_REL and capped == 0,
                    tightness=worst, details={"local_not_converged": capped})
