"""FedElasticNet, properties of Algorithm 3 (FedDyn + l1) and of the exact local solves of Algorithms 1 and 3: the
KKT condition eq. (11), the fixed point theta* (invariance, convergence, the counterexample for small lambda2),
and the dead zone of the printed sign.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...algorithms.fedprox import FedProx
from ...problems.quadratic import QuadraticProblem
from ..patterns import fixed_point_move
from ..registry import Evidence, claim
from ..tolerances import APPROX_REL, CONVERGED_REL, EXACT_REL, IDENTITY_TOL, ITERATE_REL
from ._shared import all_clients, describe_alg3
from .instances import algorithm3, spec_problem

__all__ = ["local_kkt_residuals", "alg3_limit"]


# ---------------------------------------------------------------------------------------------------------
# Eq. (11): the KKT condition of every exact local solve (Algorithms 1 and 3)
# ---------------------------------------------------------------------------------------------------------

def _kkt_instances(thorough: bool):
    for s in range(3 if thorough else 1):
        problem = spec_problem(m=5, d=4, seed=s)
        beta = problem.certificate.L
        for l1 in (0.01, 0.3, 2.0):
            yield problem, algorithm3(beta, l1, "printed", 3), 30
            yield problem, algorithm3(beta, l1, "kkt"), 30
        yield problem, FedProx(prox=beta, l1=0.3), 30


def local_kkt_residuals(problem, state, lin: np.ndarray, lam2: float, lam1: float, theta: np.ndarray) -> dict:
    """Eq. (11) for exact local solves of all clients: r = grad L_k(theta_k) + lin_k + lam2 Delta_k must equal
    -lam1 sign(Delta) where Delta != 0, satisfy |r| <= lam1 where Delta = 0, and Delta = 0 iff
    ||grad L_k(theta^{t-1}) + lin_k||_inf <= lam1. ``lin`` is -g_k (Alg. 3) or 0 (Alg. 1)."""
    delta = theta - state.x
    r = problem.grads(theta) + lin + lam2 * delta
    scale = max(1.0, lam1, float(np.abs(problem.grads(problem.broadcast(state.x))).max()))
    nz = delta != 0
    on_support = float(np.abs(np.where(nz, r + lam1 * np.sign(delta), 0.0)).max()) / scale
    off_support = float(np.maximum(np.where(nz, 0.0, np.abs(r) - lam1), 0.0).max()) / scale
    p = np.abs(problem.grads(problem.broadcast(state.x)) + lin).max(axis=1)
    zero = ~np.any(nz, axis=1)
    decided = np.abs(p - lam1) > ITERATE_REL * scale  # the boundary case ||p|| = lam1 is not decidable in floats
    iff_ok = bool(np.all((zero == (p <= lam1))[decided]))
    return {"on_support": on_support, "off_support": off_support, "iff": iff_ok,
            "zero_updates": int(zero.sum())}


@claim(cites=("Algorithm 1", "Algorithm 3"),
       id="fedelasticnet.local_kkt_eq11", paper="fedelasticnet", reference="eqs. (11)-(12); Algorithm 1 line 5, "
                                                                           "Algorithm 3 line 5",
       statement="every exact local solve satisfies eq. (11): r = grad L_k(theta_k^t) - g_k^{t-1} + lambda2 Delta "
                 "equals -lambda1 sign(Delta_i) where Delta_i != 0 and |r_i| <= lambda1 where Delta_i = 0 (to 1e-10), "
                 "and Delta = 0 iff ||grad L_k(theta^{t-1}) - g_k^{t-1}||_inf <= lambda1; the same for Alg. 1 with g = 0",
       kind="identity", instances=_kkt_instances, runs=("feddyn", "fedprox"))
def check_local_kkt(inst) -> Evidence:
    problem, alg, T = inst
    state = alg.init(problem, np.zeros(problem.dim))
    rng = np.random.default_rng(2)
    worst = 0.0
    iff = True
    zeros = 0
    for _ in range(T):
        if isinstance(alg, FedProx):
            lin, lam2 = np.zeros((problem.n_clients, problem.dim)), alg.prox
        else:
            lin, lam2 = -state.G, alg.alpha
        full, _ = alg.round_given(problem, state, all_clients(problem))
        theta = state.x + full.last_upload
        res = local_kkt_residuals(problem, state, lin, lam2, alg.l1, theta)
        worst = max(worst, res["on_support"], res["off_support"])
        iff &= res["iff"]
        zeros += res["zero_updates"]
        state, _ = alg.round(problem, state, rng)
    name = "Alg. 1" if isinstance(alg, FedProx) else describe_alg3(problem, alg)
    return Evidence(f"{name} lambda1={alg.l1:g}", worst, IDENTITY_TOL, worst <= IDENTITY_TOL and iff,
                    details={"iff_condition": iff, "zero_update_solves": zeros})


# ---------------------------------------------------------------------------------------------------------
# Algorithm 3: the fixed point theta* (one-round invariance, convergence, and where it fails)
# ---------------------------------------------------------------------------------------------------------

def _invariance_instances(thorough: bool):
    problem = spec_problem(m=4, d=3, seed=1)
    beta = problem.certificate.L
    for reading in ("printed", "kkt"):
        for l1, eps in ((0.0, 0.0), (0.1, 0.0), (0.1, 0.01)):
            for P in (None, 2):
                yield problem, algorithm3(beta, l1, reading, P, eps)


@claim(cites=("Algorithm 3",),
       id="fedelasticnet.fixed_point.invariance", paper="fedelasticnet", reference="one-round invariance",
       statement="the state (theta*, g_k = grad L_k(theta*), h = 0) is left unchanged by one round of FedDyn / "
                 "Alg. 3 for every participation outcome (all subsets enumerated), either sign reading, with or "
                 "without epsilon; for lambda1 > 0 every update is exactly zero",
       kind="fixed_point", instances=_invariance_instances, runs=("feddyn",))
def check_alg3_invariance(inst) -> Evidence:
    problem, alg = inst
    xs = problem.certificate.x_star
    st0 = alg.init(problem, xs.copy())
    st0 = replace(st0, G=problem.grads(problem.broadcast(xs)).copy())
    scale = max(1.0, float(np.abs(st0.G).max()), float(np.abs(xs).max()))
    worst = fixed_point_move(alg, problem, st0) / scale
    exact_zero = not (alg.l1 > 0 or alg.threshold > 0) or not any(
        np.any(alg.round_given(problem, st0, draw)[0].last_upload) for draw, _ in alg.outcomes(problem, st0))
    return Evidence(describe_alg3(problem, alg) + f" eps={alg.threshold:g}", worst, EXACT_REL,
                    worst <= EXACT_REL and exact_zero, details={"updates_exactly_zero": bool(exact_zero)})


def _fixed_point_instances(thorough: bool):
    """(problem, algorithm, max rounds); lambda2 is a multiple of L_f (> 1/2 when lambda1 > 0), or any for FedDyn."""
    problem = spec_problem(m=5, d=4, seed=0)
    L_f = problem.certificate.L_f
    grid = [(0.3, 0.0), (1.0, 0.0), (0.55, 0.1), (1.0, 0.5), (3.0, 0.01)]
    if thorough:
        grid = [(r, l1) for r in (0.55, 1.0, 3.0, 30.0) for l1 in (0.0, 0.01, 0.1, 0.5)] + [(0.1, 0.0)]
    for r, l1 in grid:
        yield problem, algorithm3(r * L_f, l1, "kkt"), 2000


def alg3_limit(problem, alg, T: int) -> tuple[float, int | None, int]:
    """Run Alg. 3 up to T rounds; returns (||theta - theta*||, first round since which every update is exactly
    zero (None if the last round had a non-zero update), rounds run). Stops once converged to 1e-12."""
    xs = problem.certificate.x_star
    state = alg.init(problem, np.zeros(problem.dim))
    rng = np.random.default_rng(0)
    first_all_zero = None
    scale = max(1.0, float(np.linalg.norm(xs)))
    for t in range(1, T + 1):
        state, _ = alg.round(problem, state, rng)
        zero = not np.any(state.last_upload)
        if zero and first_all_zero is None:
            first_all_zero = t
        if not zero:
            first_all_zero = None
        dist = float(np.linalg.norm(state.x - xs))
        if dist <= EXACT_REL * scale and (alg.l1 == 0.0 or (first_all_zero is not None and t - first_all_zero >= 5)):
            break
    return float(np.linalg.norm(state.x - xs)), first_all_zero, t


@claim(id="fedelasticnet.fixed_point.corrected", paper="fedelasticnet", reference="eqs. (9), (12) and Section 3.3 "
                                                                                  "('drift is resolved'), restricted",
       statement="FedDyn (any lambda2 > 0) and Alg. 3 (sub-gradient reading, exact solves, full participation, "
                 "lambda2 > L_f/2) converge to theta* (||theta^T - theta*|| <= 1e-8), and for lambda1 > 0 every "
                 "client update is exactly zero after finitely many rounds (the l1 term does not bias the fixed "
                 "point; the theorem's lambda1^2 d floor is a proof artefact). Once every update is zero, Alg. 3 is "
                 "gradient descent on R with step 1/lambda2, hence lambda2 > L_f/2",
       kind="fixed_point", derived=True, instances=_fixed_point_instances, runs=("feddyn",))
def check_alg3_fixed_point(inst) -> Evidence:
    problem, alg, T = inst
    dist, first_all_zero, t = alg3_limit(problem, alg, T)
    sparse_ok = alg.l1 == 0.0 or first_all_zero is not None
    return Evidence(describe_alg3(problem, alg) + f" lambda2/L_f={alg.alpha / problem.certificate.L_f:.3g}", dist,
                    CONVERGED_REL, dist <= CONVERGED_REL and sparse_ok, details={"rounds_run": t, "all_updates_zero_since": first_all_zero})


def _any_lambda2_instances(thorough: bool):
    # m = 2 identical clients L_k(x) = x^2/2 - x (d = 1, beta = L_f = 1, theta* = 1), lambda2 = beta/2.
    problem = QuadraticProblem(np.array([[1.0], [1.0]]), np.array([[1.0], [1.0]]))
    yield problem, algorithm3(0.5, 0.05, "kkt"), 400


@claim(id="fedelasticnet.fixed_point.derived", paper="fedelasticnet", reference="docs/fedelasticnet.md ('any lambda2 "
                                                                                "> 0 (including lambda2 < 27 beta)')",
       statement="Alg. 3 with the sub-gradient reading converges to theta* for any lambda2 > 0 and lambda1 > 0",
       kind="fixed_point", derived=True, expected="violated", instances=_any_lambda2_instances,
       false_kind="ours", runs=("feddyn",))
def check_any_lambda2(inst) -> Evidence:
    """Minimal counterexample (m = 2, d = 1, lambda2 = beta/2, lambda1 = 0.05): after 3 rounds every update is
    exactly zero, the stored states become true gradients and h = grad R(theta^{t-1}), so theta^t =
    theta^{t-1} - grad R(theta^{t-1})/lambda2 is gradient descent with step 2/L: a 2-cycle around theta*
    that stays inside the dead zone ||grad L_k(theta^{t-1}) - g_k||_inf <= lambda1 forever."""
    problem, alg, T = inst
    dist, first_all_zero, t = alg3_limit(problem, alg, T)
    return Evidence("m=2 d=1 L_k = x^2/2 - x lambda2=beta/2 lambda1=0.05", dist, CONVERGED_REL, dist <= CONVERGED_REL,
                    details={"rounds_run": t, "all_updates_zero_since": first_all_zero})


# ---------------------------------------------------------------------------------------------------------
# Algorithm 3 as printed (sign(0) = 0): the dead zone, and Section 3.3's '+-lambda1 is negligible'
# ---------------------------------------------------------------------------------------------------------

def _dead_zone_run(problem, lam2: float, lam1: float, reading: str, T: int, burn: int) -> dict:
    alg = algorithm3(lam2, lam1, reading)
    state = alg.init(problem, np.zeros(problem.dim))
    rng = np.random.default_rng(0)
    max_grad_inf = max_gap = 0.0
    for t in range(1, T + 1):
        state, _ = alg.round(problem, state, rng)
        if t > burn:
            max_grad_inf = max(max_grad_inf, float(np.abs(problem.grad(state.x)).max()))
            max_gap = max(max_gap, problem.gap(state.x))
    return {"last_gap": problem.gap(state.x), "max_tail_gap": max_gap, "max_tail_grad_inf": max_grad_inf}


def _dead_zone_instances(thorough: bool):
    yield spec_problem(m=5, d=4, seed=0), (0.01, 0.1, 0.5), 600 if thorough else 200


@claim(cites=("Algorithm 3",),
       id="fedelasticnet.dead_zone.printed_sign", paper="fedelasticnet", reference="as printed (sign(0) = 0); "
                                                                                   "docs/fedelasticnet.md, reading "
                                                                                   "(a); observational",
       statement="with the printed sign, Alg. 3 does not reach theta*: after burn-in ||grad R(theta^t)||_inf <= "
                 "lambda1 and R(theta^t) - R* <= d lambda1^2/(2 mu), with the gap scaling like lambda1^2",
       kind="qualitative", expected="exploratory", instances=_dead_zone_instances, runs=("feddyn",))
def check_dead_zone(inst) -> Evidence:
    """Exploratory: not a theorem of the paper. Measured: the log-log slope of the tail gap against lambda1."""
    problem, lams, T = inst
    beta, mu = problem.certificate.L, problem.certificate.mu_f
    rows = {lam1: _dead_zone_run(problem, beta, lam1, "printed", T, T // 2) for lam1 in lams}
    gaps = np.array([rows[l]["max_tail_gap"] for l in lams])
    slope = float(np.polyfit(np.log(lams), np.log(gaps), 1)[0]) if np.all(gaps > 0) else float("nan")
    in_zone = all(rows[l]["max_tail_grad_inf"] <= l * (1 + APPROX_REL) for l in lams)
    below = all(rows[l]["max_tail_gap"] <= problem.dim * l ** 2 / (2 * mu) for l in lams)
    return Evidence(f"test quadratic lambda2=beta lambda1 in {lams}", slope, 2.0,
                    bool(in_zone and below and abs(slope - 2.0) <= 0.3),
                    details={"per_lambda1": {str(l): v for l, v in rows.items()},
                             "gap_over_lambda1_sq": (gaps / np.array(lams) ** 2).tolist(),
                             "grad_in_dead_zone": in_zone, "below_d_lambda1sq_over_2mu": below})


def _negligible_instances(thorough: bool):
    yield spec_problem(m=5, d=4, seed=0), (1e-4, 1e-3, 1e-2), 600 if thorough else 200


@claim(id="fedelasticnet.pm_lambda1_negligible", paper="fedelasticnet", reference="Section 3.3 after eq. (12): 'the "
                                                                                  "impact of +-lambda1 would be "
                                                                                  "negligible' (observational)",
       statement="the last-iterate gap of Alg. 3 under the printed sign differs from the sub-gradient reading by "
                 "O(lambda1^2); at lambda1 = 1e-4 the difference is below 1e-7 of R(theta^0) - R*",
       kind="qualitative", expected="exploratory", instances=_negligible_instances, runs=("feddyn",))
def check_negligible(inst) -> Evidence:
    problem, lams, T = inst
    beta = problem.certificate.L
    gap0 = problem.gap(np.zeros(problem.dim))
    diffs = []
    for lam1 in lams:
        a = _dead_zone_run(problem, beta, lam1, "printed", T, T - 1)["last_gap"]
        b = _dead_zone_run(problem, beta, lam1, "kkt", T, T - 1)["last_gap"]
        diffs.append(abs(a - b))
    diffs = np.array(diffs)
    slope = float(np.polyfit(np.log(lams), np.log(np.maximum(diffs, 1e-300)), 1)[0])
    rel = float(diffs[0] / gap0)
    return Evidence(f"test quadratic lambda2=beta lambda1 in {lams}", rel, 1e-7, bool(rel <= 1e-7),
                    details={"gap_differences": diffs.tolist(), "loglog_slope": slope, "gap0": gap0})
