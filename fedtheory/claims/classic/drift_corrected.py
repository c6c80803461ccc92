"""Drift-corrected methods (SCAFFOLD, FedDyn, Scaffnew): convergence to x*, fixed points, server-state invariants
and exact expected updates under partial participation."""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ...algorithms.fedavg import FedAvg
from ...algorithms.feddyn import FedDyn, FedDynState
from ...algorithms.scaffnew import Scaffnew
from ...algorithms.scaffold import Scaffold, ScaffoldState
from ...participation import Bernoulli, Full, UniformSubset
from ...problems.base import Problem
from ..patterns import expectation, fixed_point_move
from ..registry import Evidence, claim
from ..tolerances import EXACT_REL, IDENTITY_TOL
from ._shared import (
    PAPER,
    describe,
    heterogeneous,
    iterate,
    logistic_instances,
    partial_schemes,
    scale_of,
    small_enumerable,
)

__all__ = ["optimal_state"]


# ---------------------------------------------------------------------------------------------------------
# Drift-corrected methods: convergence to x*, fixed points, invariants
# ---------------------------------------------------------------------------------------------------------

def _drift_free_algorithms(problem: Problem, participation: Any) -> dict[str, Any]:
    c = problem.certificate
    return {
        "scaffold_II": Scaffold(local_steps=5, local_step=0.2 / c.L, participation=participation),
        "scaffold_I": Scaffold(local_steps=5, local_step=0.2 / c.L, option="I", participation=participation),
        "feddyn_exact": FedDyn(alpha=c.L, participation=participation),
        "feddyn_gd": FedDyn(alpha=c.L, solver="gd", local_steps=10, participation=participation),
        # Scaffnew's analysed form is full participation; its partial variant is measured separately.
        **({"scaffnew": Scaffnew(step=1.0 / c.L, p=0.5)} if isinstance(participation, Full) else {}),
    }


def _convergence_instances(thorough: bool) -> Iterable[Problem]:
    yield from heterogeneous(thorough)
    yield from logistic_instances(thorough)


@claim(id="classic.drift_corrected.converge", paper=PAPER,
       reference="Karimireddy et al. 2020 (SCAFFOLD); Acar et al. 2021 (FedDyn); Mishchenko et al. 2022 (Scaffnew)",
       statement="SCAFFOLD (options I and II), FedDyn (exact and local-GD solves) and Scaffnew converge to x* "
                 "(||x - x*|| <= 1e-10 relative) on heterogeneous problems under full participation, and "
                 "SCAFFOLD and FedDyn also under uniform sampling of n/2 clients and Bernoulli(1/2) participation; "
                 "instances: heterogeneous quadratics and synthetic logistic regression with size-weighted clients",
       kind="fixed_point", instances=_convergence_instances, runs=("feddyn", "scaffnew", "scaffold"))
def check_drift_corrected_converge(problem: Problem) -> Evidence:
    scale = scale_of(problem)
    errs: dict[str, float] = {}
    for scheme in partial_schemes(problem.n_clients):
        for name, alg in _drift_free_algorithms(problem, scheme).items():
            state = iterate(alg, problem, 6000, stop_dist=1e-12 * scale)
            err = float(np.linalg.norm(state.x - problem.certificate.x_star)) / scale
            errs[f"{name}/{type(scheme).__name__}"] = err
    worst = max(errs.values())
    return Evidence(describe(problem), worst, IDENTITY_TOL, worst <= IDENTITY_TOL, details=errs)


def optimal_state(alg: Any, problem: Problem) -> Any:
    """The drift-corrected method's fixed point: x*, with c_i / g_i / h_i = grad f_i(x*) and server c, h = 0.

    The server states are set to their exact value 0 = sum_i w_i grad f_i(x*), not to the floating-point sum
    (~1e-17): FedElasticNet Alg. 2's sign(y - x) is discontinuous at 0, so a 1e-17 local direction would
    switch on a full lambda1 step (sign chattering, observed by fedtheory; docs/classic.md).
    """
    xs = problem.certificate.x_star
    G = problem.grads(problem.broadcast(xs))
    if isinstance(alg, Scaffold):
        return ScaffoldState(x=xs.copy(), c=np.zeros(problem.dim), C=G.copy())
    if isinstance(alg, FedDyn):
        return FedDynState(x=xs.copy(), h=np.zeros(problem.dim), G=G.copy())
    if isinstance(alg, Scaffnew):
        return alg.optimal_state(problem)
    raise TypeError(f"no optimal state for {type(alg).__name__}")


@claim(id="classic.drift_corrected.fixed_point_every_draw", paper=PAPER,
       reference="Karimireddy et al. 2020; Acar et al. 2021; Mishchenko et al. 2022; Kim et al., Algs. 2-3; "
                 "fixed points derived by fedtheory (docs/classic.md)",
       statement="Starting at x* with the optimal auxiliary state (c_i = g_i = h_i = grad f_i(x*)), one round of "
                 "SCAFFOLD (I, II, with FedElasticNet's lambda1, lambda2, sub-gradient or ISTA), FedDyn (exact or "
                 "local GD, both sign readings, lambda1 >= 0) and Scaffnew (per step or per communication) leaves "
                 "the state unchanged (1e-12 relative) for every participation draw and coin outcome (enumerated; "
                 "5 sampled draws for a communication round, whose local-step count is geometric)",
       kind="fixed_point", instances=lambda thorough: [*small_enumerable(thorough), *logistic_instances(False)][
           : None if thorough else 3], runs=("feddyn", "scaffnew", "scaffold"))
def check_fixed_point_every_draw(problem: Problem) -> Evidence:
    c = problem.certificate
    scale = max(1.0, float(np.abs(problem.grads(problem.broadcast(c.x_star))).max()), scale_of(problem))
    algs = {}
    for scheme in (Full(), UniformSubset(2), Bernoulli(0.5)):
        tag = type(scheme).__name__
        algs[f"scaffold_II/{tag}"] = Scaffold(local_steps=4, local_step=0.2 / c.L, participation=scheme)
        algs[f"scaffold_I/{tag}"] = Scaffold(local_steps=4, local_step=0.2 / c.L, option="I", participation=scheme)
        algs[f"scaffold_en/{tag}"] = Scaffold(local_steps=4, local_step=0.2 / c.L, prox=0.5, l1=0.1,
                                            participation=scheme)
        algs[f"scaffold_en_ista/{tag}"] = Scaffold(local_steps=4, local_step=0.2 / c.L, prox=0.5, l1=0.1,
                                                 l1_mode="proximal", participation=scheme)
        algs[f"feddyn/{tag}"] = FedDyn(alpha=c.L, participation=scheme)
        algs[f"feddyn_en_printed/{tag}"] = FedDyn(alpha=c.L, l1=0.1, participation=scheme)
        algs[f"feddyn_en_kkt/{tag}"] = FedDyn(alpha=c.L, l1=0.1, sign_at_zero="kkt", participation=scheme)
        algs[f"feddyn_gd/{tag}"] = FedDyn(alpha=c.L, solver="gd", local_steps=5, participation=scheme)
        algs[f"feddyn_gd_en_subgradient/{tag}"] = FedDyn(alpha=c.L, solver="gd", local_steps=5, l1=0.1,
                                                         l1_mode="subgradient", participation=scheme)
        algs[f"scaffnew/{tag}"] = Scaffnew(step=1.0 / c.L, p=0.5, participation=scheme)
        algs[f"scaffnew_per_communication/{tag}"] = Scaffnew(step=1.0 / c.L, p=0.5, round_unit="communication",
                                                             participation=scheme)
    worst_by = {}
    rng = np.random.default_rng(0)
    for name, alg in algs.items():
        start = optimal_state(alg, problem)
        # a communication round has a geometric number of local steps: sampled draws instead of all outcomes
        draws = ([alg.draw(problem, start, rng) for _ in range(5)] if getattr(alg, "round_unit", "step") != "step"
                 else None)
        worst_by[name] = fixed_point_move(alg, problem, start, draws) / scale
    worst = max(worst_by.values())
    return Evidence(describe(problem), worst, EXACT_REL, worst <= EXACT_REL, details=worst_by)


def _invariant_algorithms(problem: Problem) -> dict[str, Any]:
    c = problem.certificate
    n = problem.n_clients
    out = {}
    for scheme in (UniformSubset(max(1, n // 2)), Bernoulli(0.4)):
        tag = type(scheme).__name__
        out[f"scaffold_II/{tag}"] = Scaffold(local_steps=4, local_step=0.2 / c.L, participation=scheme)
        out[f"scaffold_I/{tag}"] = Scaffold(local_steps=4, local_step=0.2 / c.L, option="I", participation=scheme)
        out[f"scaffold_en_eps/{tag}"] = Scaffold(local_steps=4, local_step=0.2 / c.L, l1=0.05, prox=0.5,
                                               threshold=1e-3, participation=scheme)
        out[f"feddyn/{tag}"] = FedDyn(alpha=c.L, participation=scheme)
        out[f"feddyn_gd/{tag}"] = FedDyn(alpha=c.L, solver="gd", local_steps=3, participation=scheme)
        out[f"feddyn_en_printed_eps/{tag}"] = FedDyn(alpha=c.L, l1=0.05, threshold=1e-3, participation=scheme)
        out[f"feddyn_en_kkt/{tag}"] = FedDyn(alpha=c.L, l1=0.05, sign_at_zero="kkt", participation=scheme)
    return out


@claim(id="classic.invariants.server_state_is_mean", paper=PAPER,
       reference="Karimireddy et al. 2020, Alg. 1 (c = mean c_i); Acar et al. 2021; Kim et al., Lemma B.2 "
                 "(h = mean g_i)",
       statement="Every round, SCAFFOLD's server control variate equals sum_i w_i c_i and FedDyn's server state "
                 "equals sum_i w_i g_i (the stored gradient states), under partial participation, options I/II, "
                 "exact or local-GD solves, both sign readings, lambda1 > 0 and eps-thresholding (1e-12 relative)",
       kind="invariant", instances=heterogeneous, runs=("feddyn", "scaffold"))
def check_server_state_invariants(problem: Problem) -> Evidence:
    worst_by = {}
    for name, alg in _invariant_algorithms(problem).items():
        errs = []

        def record(state, log, errs=errs):
            server, clients = (state.c, state.C) if isinstance(state, ScaffoldState) else (state.h, state.G)
            mean = problem.weights @ clients
            errs.append(float(np.abs(server - mean).max()) / max(1.0, float(np.abs(clients).max())))

        iterate(alg, problem, 60, seed=1, callback=record)
        worst_by[name] = max(errs)
    worst = max(worst_by.values())
    return Evidence(describe(problem), worst, EXACT_REL, worst <= EXACT_REL, details=worst_by)


# ---------------------------------------------------------------------------------------------------------
# Exact expectations under partial participation
# ---------------------------------------------------------------------------------------------------------

def _mid_trajectory_state(alg: Any, problem: Problem, rounds: int = 7) -> Any:
    return iterate(alg, problem, rounds, seed=3)


@claim(id="classic.partial.expected_update", paper=PAPER,
       reference="Acar et al. 2021 (proof of Thm 1: E[gamma^t - gamma^{t-1}]); Karimireddy et al. 2020 Alg. 1; "
                 "McMahan et al. 2017",
       statement="Exact expectations over all participation outcomes (uniform weights): (a) FedAvg with uniform "
                 "S-of-n sampling has E[x+] = the full-participation x+, and with Bernoulli(p) participation and "
                 "normalize='all', E[x+] = x + sum_i p w_i Delta_i; (b) SCAFFOLD with S-of-n sampling has E[x+] = "
                 "full-participation x+ and E[c+] - c = (S/n)(c_full+ - c); (c) FedDyn (exact solves) has "
                 "E[gamma^t] - gamma^{t-1} = -(1/(alpha n)) sum_k grad f_k(theta~_k), gamma = x + h/alpha, from a "
                 "mid-trajectory state (1e-12 relative)",
       kind="identity", instances=small_enumerable, runs=("fedavg", "feddyn", "scaffold"))
def check_partial_expectations(problem: Problem) -> Evidence:
    if not np.allclose(problem.weights, 1.0 / problem.n_clients):
        raise ValueError("this identity is stated for uniform weights")
    c = problem.certificate
    n = problem.n_clients
    S = max(1, n // 2)
    errs = {}
    scale = scale_of(problem)

    # (a) FedAvg
    fed_s = FedAvg(local_steps=3, local_step=0.5 / c.L, participation=UniformSubset(S))
    fed_full = FedAvg(local_steps=3, local_step=0.5 / c.L)
    st = _mid_trajectory_state(fed_full, problem)
    full_x = fed_full.round_given(problem, st, fed_full.draw(problem, st, np.random.default_rng(0)))[0].x
    errs["fedavg_subset"] = float(np.linalg.norm(expectation(fed_s, problem, st, lambda s: s.x) - full_x)) / scale
    fed_b = FedAvg(local_steps=3, local_step=0.5 / c.L, participation=Bernoulli(0.3), normalize="all")
    delta_full = full_x - st.x  # = sum_i w_i Delta_i with server step 1
    errs["fedavg_bernoulli"] = float(np.linalg.norm(
        expectation(fed_b, problem, st, lambda s: s.x) - (st.x + 0.3 * delta_full))) / scale

    # (b) SCAFFOLD
    sc_full = Scaffold(local_steps=3, local_step=0.3 / c.L)
    sc_s = Scaffold(local_steps=3, local_step=0.3 / c.L, participation=UniformSubset(S))
    st = _mid_trajectory_state(sc_s, problem)
    full = sc_full.round_given(problem, st, sc_full.draw(problem, st, np.random.default_rng(0)))[0]
    ex = expectation(sc_s, problem, st, lambda s: s.x)
    ec = expectation(sc_s, problem, st, lambda s: s.c)
    errs["scaffold_x"] = float(np.linalg.norm(ex - full.x)) / scale
    cscale = max(1.0, float(np.abs(st.C).max()))
    errs["scaffold_c"] = float(np.linalg.norm((ec - st.c) - (S / n) * (full.c - st.c))) / cscale

    # (c) FedDyn: theta~_k is the local solution client k would compute if sampled (deterministic given the state)
    alpha = c.L
    dyn = FedDyn(alpha=alpha, participation=UniformSubset(S))
    st = _mid_trajectory_state(dyn, problem)
    gamma_prev = st.x + st.h / alpha
    center = problem.broadcast(st.x)
    theta_tilde = problem.solve_local(-st.G, center, alpha)
    predicted = gamma_prev - problem.weights @ problem.grads(theta_tilde) / alpha
    expected = expectation(dyn, problem, st, lambda s: s.x + s.h / alpha)
    errs["feddyn_gamma"] = float(np.linalg.norm(expected - predicted)) / scale
    worst = max(errs.values())
    return Evidence(describe(problem), worst, EXACT_REL, worst <= EXACT_REL, details=errs)

