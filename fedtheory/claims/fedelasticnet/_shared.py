"""Machinery several FedElasticNet claim modules share: Algorithm 3's exact per-round quantities (expectations over
the client sample by enumeration), the Lyapunov margins of Theorem B.6's proof, and Algorithm 3's instance space.
"""
from __future__ import annotations

import numpy as np

from ...algorithms.federated import Draw
from ...participation import Bernoulli
from ...theory import fedelasticnet as th
from ..space import InstanceSpace, Param
from ..tolerances import EXACT_REL, TINY
from .instances import algorithm3, spec_problem

__all__ = ["all_clients", "local_solutions", "alg3_round_terms", "expected_participants", "describe_alg3",
           "lyapunov_margins", "alg3_build", "alg3_point", "alg3_space", "l1_representable", "b6_regime",
           "b4_regime"]


def all_clients(problem):
    return Draw(clients=np.arange(problem.n_clients, dtype=np.int64))


def local_solutions(problem, alg, state):
    """theta~_k^t for every client (what k would compute if sampled), Delta~ and the two sign vectors.

    ``s_kkt`` is the l1 sub-gradient certified by the exact solve (eq. 11): s = (g - grad L(theta~) - l2 Delta)/l1;
    ``s_sign`` is sign(Delta~) with sign(0) = 0 (the printed reading).
    """
    full, _ = alg.round_given(problem, state, all_clients(problem))
    delta = full.last_upload if alg.upload == "delta" else full.last_upload - state.x
    theta = state.x + delta
    grads = problem.grads(theta)
    if alg.l1 > 0:
        s_kkt = (state.G - grads - alg.alpha * delta) / alg.l1
    else:
        s_kkt = np.zeros_like(delta)
    return theta, delta, grads, s_kkt, np.sign(delta)


def alg3_round_terms(problem, alg, state) -> dict:
    """Every quantity of Lemmas B.3-B.5, eqs. (27)-(29) and Theorem B.6 at one round, given the state at t-1.

    Expectations over the round's client sample are exact: :meth:`outcomes` enumerates every subset with its
    probability and the deterministic ``round_given`` is applied to each (docs/fedelasticnet.md).
    """
    c = problem.certificate
    xs, w = c.x_star, problem.weights
    lam2 = alg.alpha
    gamma_prev = state.x + state.h / lam2
    theta, delta, grads, s_kkt, s_sign = local_solutions(problem, alg, state)
    g_star = problem.grads(problem.broadcast(xs))
    E_dist = E_C = E_step = 0.0
    E_gamma = np.zeros(problem.dim)
    worst_27 = -np.inf
    for draw, p in alg.outcomes(problem, state):
        new, _ = alg.round_given(problem, state, draw)
        g = new.x + new.h / lam2
        C_t = float(w @ np.sum((new.G - g_star) ** 2, axis=1))
        E_dist += p * float((g - xs) @ (g - xs))
        E_C += p * C_t
        E_step += p * float((g - gamma_prev) @ (g - gamma_prev))
        E_gamma += p * g
        worst_27 = max(worst_27, float(new.h @ new.h) - C_t)  # (27) holds outcome by outcome
    return {
        "gamma_prev": gamma_prev, "gap_prev": problem.gap(gamma_prev),
        "dist_prev": float((gamma_prev - xs) @ (gamma_prev - xs)),
        "C_prev": float(w @ np.sum((state.G - g_star) ** 2, axis=1)),
        "eps_t": float(w @ np.sum((theta - gamma_prev) ** 2, axis=1)),
        "E_dist": E_dist, "E_C": E_C, "E_step": E_step, "E_gamma": E_gamma, "worst_27": worst_27,
        "theta": theta, "delta": delta, "grads": grads, "s_kkt": s_kkt, "s_sign": s_sign,
        "sbar_kkt": w @ s_kkt, "sbar_sign": w @ s_sign,
    }


def expected_participants(alg, problem) -> int:
    return int(round(alg.participation.expected_participants(problem.n_clients)))


def describe_alg3(problem, alg) -> str:
    beta = problem.certificate.L
    return (f"m={problem.n_clients} d={problem.dim} P={expected_participants(alg, problem)} "
            f"lambda2/beta={alg.alpha / beta:.4g} lambda1={alg.l1:g} sign={alg.sign_at_zero}")


def lyapunov_margins(problem, alg, rounds: int, seed: int = 0, x0: np.ndarray | None = None,
                     stop_on_violation: str | None = None) -> dict:
    """Run Alg. 3 for ``rounds`` rounds and record, every round, LHS - RHS of (27), (28), (29), B.4, B.5, B.6
    (with d, and as printed without d), in conditional expectation given the previous state.

    Rounds whose gap has fallen below 1e-12 of its start are skipped (floating-point floor, docs/design.md).
    Returns the worst (largest) margin of each, the B.6 tightness max kappa0 gap / RHS and the B.4 tightness
    max E||gamma^t - theta*||^2 / RHS.
    """
    n, d = problem.n_clients, problem.dim
    beta = problem.certificate.L
    lam2, lam1 = alg.alpha, alg.l1
    P = expected_participants(alg, problem)
    k, k0 = th.kappa(lam2, beta, n, P), th.kappa0(lam2, beta)
    state = alg.init(problem, np.zeros(d) if x0 is None else x0)
    rng = np.random.default_rng(seed)
    names = ("27", "28", "29", "B4", "B5", "B6", "B6_without_d")
    worst = {name: -np.inf for name in names}
    first_violation: dict = {}
    tight = tight4 = 0.0
    gap0 = None
    checked = 0
    for t in range(1, rounds + 1):
        q = alg3_round_terms(problem, alg, state)
        gap0 = q["gap_prev"] if gap0 is None else gap0
        scale = max(1.0, q["dist_prev"], q["C_prev"])
        if q["gap_prev"] >= EXACT_REL * gap0 or lam1 > 0:
            sbar = q["sbar_kkt"] if alg.sign_at_zero == "kkt" else q["sbar_sign"]
            inner = float((q["gamma_prev"] - problem.certificate.x_star) @ sbar)
            V_prev = q["dist_prev"] + k * q["C_prev"]
            V_next = q["E_dist"] + k * q["E_C"]
            rhs6 = th.theorem_b6_rhs(V_prev, V_next, lam1, lam2, beta, d, inner)
            rhs4 = th.lemma_b4_rhs(q["dist_prev"], q["gap_prev"], q["eps_t"], q["E_step"], lam1, lam2, beta, inner)
            margins = {
                "27": q["worst_27"] / scale,
                "28": (q["E_C"] - th.bound28_rhs(q["C_prev"], q["eps_t"], q["gap_prev"], beta, n, P)) / scale,
                "29": (q["E_step"] - q["eps_t"]) / scale,
                "B4": (q["E_dist"] - rhs4) / scale,
                # Lemma B.5 needs lambda2 > sqrt(5) beta; below it the lemma says nothing (margin -inf), while
                # B.4 (any lambda2 > 0) is still checked on the same run.
                "B5": ((q["eps_t"] - th.lemma_b5_rhs(q["C_prev"], q["gap_prev"], lam1, lam2, beta, d)) / scale
                       if lam2 * lam2 > 5 * beta * beta else -np.inf),
                "B6": (k0 * q["gap_prev"] - rhs6) / scale,
                "B6_without_d": (k0 * q["gap_prev"] - th.theorem_b6_rhs(V_prev, V_next, lam1, lam2, beta, d, inner,
                                                                        with_d=False)) / scale,
            }
            for name, v in margins.items():
                if v > worst[name]:
                    worst[name] = v
                if v > EXACT_REL and name not in first_violation:
                    first_violation[name] = {"round": t, "margin": v}
            if rhs6 > 0:
                tight = max(tight, k0 * q["gap_prev"] / rhs6)
            if rhs4 > 0:
                tight4 = max(tight4, q["E_dist"] / rhs4)
            checked += 1
            if stop_on_violation and stop_on_violation in first_violation:
                break
        state, _ = alg.round(problem, state, rng)
    return {"worst": worst, "first_violation": first_violation, "b6_tightness": tight, "b4_tightness": tight4,
            "rounds_checked": checked}


def alg3_build(point: dict):
    """A point of Algorithm 3's class as the (problem, algorithm, rounds) the checks take: fedtheory's
    quadratic (m clients in R^d, ``seed``), lambda2 = lambda_ratio x beta, lambda1 = l1, the sign reading, and
    P sampled clients per round (None or P >= m: full participation), or with ``q`` each client independently
    with probability q; ``lambda2`` (when given) replaces lambda_ratio x beta."""
    problem = spec_problem(m=int(point["m"]), d=int(point["d"]), seed=int(point["seed"]))
    P = point.get("P")
    P = None if P is None or int(P) >= int(point["m"]) else int(P)
    kw = {}
    if point.get("q") is not None:  # each client joins independently with probability q (P is then unused)
        kw["participation"] = Bernoulli(float(point["q"]))
    # ``lambda2`` gives lambda2 itself (FedDyn's default alpha = 1, say) instead of lambda_ratio x beta; the point
    # then carries lambda_ratio = lambda2/beta rounded, for the regime
    lam2 = float(point["lambda2"]) if "lambda2" in point else float(point["lambda_ratio"]) * problem.certificate.L
    return problem, algorithm3(lam2, float(point["l1"]), point.get("reading", "kkt"), P, **kw), int(point["T"])


def alg3_point(ratio: float, l1: float, reading: str, T: int, m: int = 5, P: int | None = None) -> dict:
    return dict(m=m, d=4, seed=0, lambda_ratio=ratio, l1=l1, reading=reading, P=P, T=T)


def alg3_space(defaults, thorough=(), *, ratio_low: float, regime, reading: str = "kkt",
                T: tuple[int, int] = (5, 100), partial: bool = True, m_high: int = 8,
                max_evaluations: int | None = None) -> InstanceSpace:
    """Algorithm 3's class (convex beta-smooth clients: here fedtheory's quadratics, exact local solves):
    m clients in R^d, lambda2/beta, lambda1 >= 0, P sampled clients of m (P >= m: all; only when ``partial``,
    else full participation), T rounds."""
    sampled = (Param("P", 1, m_high, integer=True),) if partial else ()
    return InstanceSpace(
        params=(Param("m", 2, m_high, integer=True), Param("d", 1, 6, integer=True),
                Param("lambda_ratio", ratio_low, 300.0, log=True), Param("l1", 0.0, 1.0), *sampled,
                Param("T", T[0], T[1], log=True, integer=True)),
        fixed={"seed": 0, "reading": reading}, build=alg3_build, regime=regime, defaults=tuple(defaults),
        thorough=tuple(thorough), max_evaluations=max_evaluations)


def l1_representable(l1: float) -> bool:
    # Alg. 3 and the checks recover the l1 sub-gradient as residual / lambda1; for a subnormal lambda1 (which
    # hypothesis draws: 5e-324) 1/lambda1 overflows to inf and the run is NaN. Not a restriction of the theorem:
    # lambda1 = 0 and every normal float lambda1 > 0 are in the space.
    return l1 == 0 or l1 >= TINY


def b6_regime(point: dict) -> bool:
    # Theorem B.6 (and B.1) need kappa0 > 0 and kappa > 0, i.e. lambda2/beta > (25 + sqrt(825))/2 = 26.86 (derived by
    # fedtheory, docs/fedelasticnet.md; the paper's "lambda2 > 27 beta" rounds this up), and lambda1 >= 0.
    return th.lambda2_ratio_valid(float(point["lambda_ratio"]), 1.0) and l1_representable(point["l1"])


def b4_regime(point: dict) -> bool:
    # Lemma B.4 assumes only convex beta-smooth clients and exact local solves (it uses Lemma B.3 and (15)),
    # no condition on lambda2 > 0.
    return point["lambda_ratio"] > 0 and l1_representable(point["l1"])
