"""FedRed's local work: the local solvers of Algorithm 2 (their textbook rates on the subproblem) and Algorithm 3's
closed form (FedRed-GD) with its reductions to GD and to DANE.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ...algorithms.dane import DANE
from ...algorithms.fedred import FedRed
from ...run import run
from ...theory import fedred as th
from ..patterns import relative_error
from ..registry import Evidence, claim
from ..space import InstanceSpace, Param
from ..tolerances import EXACT_REL, ITERATE_REL
from ._shared import LOCAL_DELTA_A_FEASIBLE, describe, local_grad, local_problem, quadratic_instance, start_point

__all__: list[str] = []


# ---------------------------------------------------------------------------------------------------------
# Algorithm 2: the local solvers' rates on FedRed's subproblem
# ---------------------------------------------------------------------------------------------------------


def _fedred_solver_build(point: dict) -> dict:
    """A search point (fast, K, lam, eta, seed) as the check's instance; a default instance passes through."""
    if "solver" in point:
        return dict(point)
    return {"solver": "fgd" if int(point["fast"]) else "gd", "local_steps": int(point["local_steps"]),
            "lam": point["lam"], "eta": point["eta"], "seed": int(point["seed"]), "delta_A": point["delta_A"]}


#: The rates' class: GD or FGD, any K, lam > 0 and eta > 0 (the local objective is then (mu_i + lam + 1/eta)-
#: strongly convex), on the 4-client quadratic family (problem seed and delta_A searched). The rates assume
#: nothing about delta_A; it is searched up to the largest value the generator builds for every seed (the
#: defaults' delta_A = 1 is infeasible for some seeds, e.g. 199).
_FEDRED_SOLVER_SPACE = InstanceSpace(
    params=(Param("fast", 0, 1, integer=True), Param("local_steps", 1, 20, integer=True),
            Param("lam", 0.1, 10.0, log=True), Param("eta", 0.05, 5.0, log=True), Param("seed", 0, 1000, integer=True),
            Param("delta_A", 0.01, LOCAL_DELTA_A_FEASIBLE, log=True)),
    build=_fedred_solver_build,
    defaults=({"solver": "gd", "local_steps": 3}, {"solver": "fgd", "local_steps": 3},
              {"solver": "gd", "local_steps": 500, "local_tol": 1e-9},
              {"solver": "fgd", "local_steps": 500, "local_tol": 1e-9, "default_lam": True}))


@claim(cites=("Algorithm 2",),
       id="fedred.local_solvers.derived", paper="fedred", derived=True,
       reference="inexact local solves; Nesterov 2004, Thms 2.1.15 and 2.2.3",
       statement="(derived by fedtheory) FedRed's local solvers on F_i(x) = f_i(x) + <h_i, x> + (lam + 1/eta)/2 ||x - c_i||^2 (m_i, "
                 "M_i its strong convexity and smoothness): K GD steps (step 1/M_i) give ||x_K - x_i*|| <= (1 - "
                 "m_i/M_i)^K ||x_0 - x_i*||; K FGD steps give F_i(x_K) - F_i* <= (1 - sqrt(m_i/M_i))^K (F_i(x_0) - "
                 "F_i* + m_i/2 ||x_0 - x_i*||^2); with a tolerance, ||grad F_i(x_i)|| <= tol; x_i* by a linear solve",
       kind="bound", space=_FEDRED_SOLVER_SPACE)


def check_fedred_local_solvers(inst: dict) -> Evidence:
    problem = local_problem(inst.get("seed", 3), inst.get("delta_A", 1.0))
    kw = {k: v for k, v in inst.items() if k in ("solver", "local_steps", "local_tol")}
    alg = FedRed(eta=inst.get("eta", 0.5), p=0.5, **({} if inst.get("default_lam") else {"lam": inst.get("lam", 1.0)}),
                 **kw)
    lam, eta = alg.lam_for(problem), alg.eta_for(problem)
    total = lam + 1.0 / eta
    eig = np.array([np.linalg.eigvalsh(A) for A in problem.A])
    m, M = eig.min(axis=1) + total, eig.max(axis=1) + total
    state = alg.init(problem, np.array([2.0, -1.0, 0.5]))
    rng = np.random.default_rng(1)
    for _ in range(3):  # local models away from the server model; Alg. 2's communication done here (the
        # statement is about the local solver at this state: the server is not under test)
        X = alg.local_step(problem, state)[0]
        if rng.random() < 0.3:
            x_ref = problem.weights @ X
            G = problem.grads(problem.broadcast(x_ref))
            state = replace(state, x=x_ref, X=np.array(problem.broadcast(x_ref)) if alg.reset else X,
                            H=problem.weights @ G - G, G=None)
        else:
            state = replace(state, X=X, G=None)
    # control variates (4) at the reference point from the raw A_i, b_i, never the state's: a solver that
    # drops or flips them in its local objective must miss x_i*
    G = np.einsum("nij,j->ni", problem.A, state.x) - problem.b
    C = (lam * state.x + state.X / eta) / total
    rhs = problem.b - (problem.weights @ G - G) + total * C
    X_star = np.linalg.solve(problem.A + total * np.eye(problem.dim), rhs[..., None])[..., 0]

    def gap(X: np.ndarray) -> np.ndarray:
        """F_i(x_i) - F_i* = 1/2 e^T (A_i + total I) e, e = x_i - x_i* (F_i is quadratic): no cancellation."""
        E = X - X_star
        return 0.5 * (np.einsum("ni,nij,nj->n", E, problem.A, E) + total * np.sum(E * E, axis=1))

    X = alg.local_step(problem, state)[0]
    K, X0 = inst["local_steps"], state.X
    # Floating-point floor (docs/design.md): iterates carry errors of ~1e-16 of their size, so distances below
    # 1e-12 of ||x_0|| + ||x_i*|| (and the matching F-gaps, M/2 times their square) are not resolved.
    floor = EXACT_REL * (np.linalg.norm(X0, axis=1) + np.linalg.norm(X_star, axis=1))
    if inst.get("local_tol", 0.0) > 0:
        measured = np.linalg.norm(local_grad(problem, X, state.H, total, C), axis=1)
        allowed = np.full(len(measured), inst["local_tol"])
    elif inst["solver"] == "gd":
        measured = np.linalg.norm(X - X_star, axis=1)
        allowed = np.maximum((1.0 - m / M) ** K * np.linalg.norm(X0 - X_star, axis=1), floor)
    else:
        measured = gap(X)
        allowed = np.maximum((1.0 - np.sqrt(m / M)) ** K * (gap(X0) + m / 2 * np.sum((X0 - X_star) ** 2, axis=1)),
                             M / 2 * floor**2)
    ratio = float(np.max(measured / allowed))
    described = ", ".join(f"{k}={v}" for k, v in inst.items())
    return Evidence(f"FedRed({described}) lam={lam:.3g} eta={eta}", ratio, 1.0, ratio <= 1.0 + ITERATE_REL,
                    tightness=ratio)


# ---------------------------------------------------------------------------------------------------------
# Algorithm 3: FedRed-GD's closed form and reductions
# ---------------------------------------------------------------------------------------------------------


def _fedred_instances(thorough: bool):
    yield dict(n_clients=8, dim=10, mu=1.0, L=100.0, delta_A=1.0, zeta2=1.0, seed=0)
    yield dict(n_clients=5, dim=6, mu=0.2, L=20.0, delta_B=0.5, zeta2=2.0, hessians="diagonal", seed=1)
    if thorough:
        yield from (dict(n_clients=10, dim=12, mu=0.1, L=100.0, delta_A=d, zeta2=1.0, seed=s)
                    for s, d in enumerate((0.3, 3.0, 30.0), start=2))


@claim(cites=("Algorithm 3",),
       id="fedred.fedred_gd.closed_form", paper="fedred",
       statement="FedRed-GD's step is the minimiser of <g + h, x> + lam/2||x - x~||^2 + 1/(2eta)||x - x_i||^2; "
                 "with p = 1 FedRed-GD is GD with step eta/(1+lam eta) (step eta when lam = 0); Alg. 2 with "
                 "p = 1 and 1/eta = 0 is DANE",
       kind="metamorphic", instances=_fedred_instances, runs=("dane", "fedred"))


def check_fedred_gd_closed_form(kw: dict) -> Evidence:
    problem = quadratic_instance(kw)
    c = problem.certificate
    lam, eta = 2.0 * c.delta_A, 1.0 / c.L
    x0 = start_point(problem, kw.get("seed", 0))
    errs = {}
    # (i) optimality of the linearized subproblem at a generic state (non-reset local iterates).
    alg = FedRed(lam=lam, eta=eta, p=0.5)
    state = alg.init(problem, x0)
    rng = np.random.default_rng(1)
    state = replace(state, X=state.X + rng.standard_normal(state.X.shape), G=None)
    X_new, _ = alg.local_step(problem, state)
    resid = problem.grads(state.X) + state.H + lam * (X_new - state.x) + (X_new - state.X) / eta
    errs["subproblem_kkt"] = float(np.max(np.abs(resid)) / (np.max(np.abs(state.H)) + np.max(np.abs(
        problem.grads(state.X))) + 1e-300))
    a, b, s = th.fedred_gd_coefficients(lam, eta)
    direct = a * state.X + b * state.x - s * (problem.grads(state.X) + state.H)
    errs["coefficients"] = relative_error(direct, X_new)
    # (ii) p = 1 reductions to GD over 20 rounds.
    for name, lam_ in (("p1_gd_step_eta/(1+lam eta)", lam), ("p1_lam0_gd_step_eta", 0.0)):
        tr = run(FedRed(lam=lam_, eta=eta, p=1.0), problem, 20, x0=x0)
        x = x0.copy()
        for _ in range(20):
            x = x - eta / (1 + lam_ * eta) * problem.grad(x)
        errs[name] = float(np.linalg.norm(tr.x_final - x) / max(1.0, np.linalg.norm(x)))
    # (iii) Alg. 2, p = 1, 1/eta = 0 versus DANE.
    tr_a = run(FedRed(lam=lam, eta=math.inf, p=1.0, solver="exact"), problem, 10, x0=x0)
    tr_b = run(DANE(lam=lam), problem, 10, x0=x0)
    errs["alg2_p1_vs_dane"] = float(np.linalg.norm(tr_a.x_final - tr_b.x_final) / max(1.0, np.linalg.norm(x0)))
    worst = max(errs.values())
    return Evidence(describe(kw), worst, EXACT_REL, worst <= EXACT_REL, details=errs)
