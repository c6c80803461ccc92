"""Table 1 and Figure 1 as scalings: exact DANE's rounds do not depend on L and grow like delta_A/mu (Corollary 21),
FedRed-GD communicates a fraction p of GD's iterations (Theorem 9), FedRed-GD's local work is at most DANE+-GD's,
and the non-convex methods' rounds do not depend on L (Theorem 8, Corollary 2).
"""
from __future__ import annotations

import math

import numpy as np

from ...algorithms.dane import DANE, DANEPlus
from ...algorithms.fedred import FedRed
from ...problems.constructions import vary_L
from ...problems.quadratic import QuadraticProblem, quadratic
from ...run import run
from ...theory import fedred as th
from ..patterns import run_failure
from ..registry import Evidence, claim
from ..tolerances import CONVERGED_REL, Z_MONTE_CARLO
from ._shared import describe, gd_iterations_to_gap, quadratic_instance, start_point

__all__ = ["gd_iterations_exact", "delta_scaling_problem", "gd_iterations_to_gap"]


# ---------------------------------------------------------------------------------------------------------
# Table 1, Corollary 21: exact DANE's rounds, independent of L and linear in delta_A/mu
# ---------------------------------------------------------------------------------------------------------


def _rounds_to(trace, rel2: float) -> int:
    hit = np.nonzero(trace.dist2 <= rel2 * trace.dist2[0])[0]
    return int(trace.round[hit[0]]) if hit.size else -1


def gd_iterations_exact(problem: QuadraticProblem, x0: np.ndarray, rel2: float, step: float,
                        max_iter: int = 10**9) -> int:
    """GD iterations to ||x - x*||^2 <= rel2 ||x0 - x*||^2, computed in Abar's eigenbasis (exact for quadratics):
    ||e_R||^2 = sum_j (1 - step s_j)^{2R} c_j^2. Bisection on R (the error is monotone for step <= 1/L_f)."""
    s, V = np.linalg.eigh(problem.A_bar) if problem.A_bar.ndim == 2 else (problem.A_bar, None)
    e0 = x0 - problem.certificate.x_star
    coef2 = (V.T @ e0) ** 2 if V is not None else e0 ** 2
    target = rel2 * coef2.sum()
    log_f = np.log(np.abs(1.0 - step * s) + 1e-300)

    def err(R: int) -> float:
        return float(np.sum(coef2 * np.exp(2 * R * log_f)))

    lo, hi = 0, 1
    while err(hi) > target:
        lo, hi = hi, hi * 2
        if hi > max_iter:
            return -1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if err(mid) > target else (lo, mid)
    return hi


def _L_instances(thorough: bool):
    yield dict(n_clients=8, dim=10, mu=1.0, L=100.0, delta_A=1.0, zeta2=1.0, seed=0,
               L_targets=(1e2, 1e3, 1e4, 1e5))
    if thorough:
        yield from (dict(n_clients=8, dim=10, mu=0.5, L=100.0, delta_A=2.0, zeta2=1.0, seed=s,
                         L_targets=(1e2, 1e3, 1e4, 1e5)) for s in range(1, 5))


@claim(cites=("Table 1", "Corollary 21"),
       id="fedred.dane.L_independence", paper="fedred",
       statement="At fixed E_i and mu, exact DANE's rounds to ||x-x*|| <= 1e-8 ||x0-x*|| vary by at most +-1 when "
                 "L grows from 1e2 to 1e5, while GD's iterations (step 1/L_f) grow about linearly with L",
       kind="rate", instances=_L_instances,
       narrower="the independence of exact DANE's round count from L (Table 1's DANE row), not Corollary 21's bound",
       runs=("dane",))


def check_dane_L_independence(kw: dict) -> Evidence:
    base = quadratic_instance(kw)
    c0 = base.certificate
    lam = 2.0 * c0.delta_A
    x0 = start_point(base, kw.get("seed", 0))
    rel2 = 1e-16
    dane_rounds, gd_iters, Ls, deltas = [], [], [], []
    for L_target in kw["L_targets"]:
        problem = vary_L(base, max(L_target, c0.L))
        c = problem.certificate
        trace = run(DANE(lam=lam), problem, 500, x0=x0)
        dane_rounds.append(_rounds_to(trace, rel2))
        gd_iters.append(gd_iterations_exact(problem, x0, rel2, 1.0 / c.L_f))
        Ls.append(c.L)
        deltas.append(c.delta_A)
    spread = max(dane_rounds) - min(dane_rounds)
    slope = float(np.polyfit(np.log(Ls), np.log(gd_iters), 1)[0])
    holds = min(dane_rounds) > 0 and spread <= 2 and slope >= 0.8
    # Tightness: how close each part comes to what the claim allows, the nearer one reported: DANE's spread over
    # the allowed 2 rounds (0, 1/2 or 1: integers) and GD's allowed slope 0.8 over the measured one (a lower
    # limit, so allowed/measured). A factor common to every L moves neither part: the round counts themselves
    # are bounded by fedred.dane.delta_scaling.
    tightness = max(spread / 2.0, 0.8 / slope if slope > 0 else math.inf)
    return Evidence(describe({k: v for k, v in kw.items() if k != "L_targets"}), spread, 2.0, holds,
                    tightness=tightness, details={"L": Ls, "dane_rounds": dane_rounds, "gd_iterations": gd_iters,
                             "gd_loglog_slope_vs_L": slope, "delta_A": deltas})


def delta_scaling_problem(n: int, d: int, *, mu: float, L: float, delta_A: float, zeta2: float = 1.0,
                          seed: int = 0) -> QuadraticProblem:
    """A_i = diag(mu, B_i): the direction e_1 has curvature mu for every client, and the dissimilarity lives
    in the other block (B_i from :func:`quadratic` in dimension d-1 with curvature in [mu_block, L]).

    Then mu = mu_f = mu exactly and DANE's contraction along e_1 is exactly lam/(lam + mu): the worst case of
    Cor. 21, where rounds grow like delta_A/mu. (On generic generator instances the smallest eigenvalue of
    Abar exceeds min_i lambda_min(A_i) by about delta, and DANE's rounds track lam/mu_f instead.)
    """
    mu_block = max(4.0 * mu, min(1.0, L / 2))
    block = quadratic(n, d - 1, mu=mu_block, L=L, delta_A=delta_A, zeta2=zeta2, seed=seed)
    A = np.zeros((n, d, d))
    A[:, 0, 0] = mu
    A[:, 1:, 1:] = block.A if block.A.ndim == 3 else np.einsum("nd,de->nde", block.A, np.eye(d - 1))
    rng = np.random.default_rng(seed + 1)
    r = rng.standard_normal(n)
    b = np.concatenate([(mu * rng.standard_normal() + r - r.mean())[:, None], block.b], axis=1)
    return QuadraticProblem(A, b)


#: Why rounds/bound stays below 1/2 here (0.43 at eps = 1e-8 gap(x0)): along e_1 every client has curvature mu,
#: so DANE contracts the distance by m = lam/(lam + mu) and the gap by m^2 per round, while Cor. 21's count is
#: log(1 + mu D^2/(2 eps)) / log(1/m); the ratio is (1/2) log(gap_1(x0)/eps) / log(mu D^2/(2 eps)) < 1/2. On
#: commuting client Hessians no direction contracts more slowly (Jensen: m(a) <= lam/(a + lam)), so no such
#: instance reaches 1/2 (fedtheory's arithmetic; docs/fedred.md).
def _delta_instances(thorough: bool):
    yield dict(n_clients=8, dim=10, mu=0.05, L=100.0, zeta2=1.0, seed=0, deltas=(0.5, 1.0, 2.0, 4.0, 8.0))
    if thorough:
        yield from (dict(n_clients=8, dim=12, mu=0.02, L=200.0, zeta2=1.0, seed=s,
                         deltas=(0.2, 0.5, 1.0, 2.0, 5.0, 10.0)) for s in range(1, 4))


@claim(cites=("Table 1", "Corollary 21"),
       id="fedred.dane.delta_scaling", paper="fedred",
       statement="Exact DANE with lam = 2 delta_A reaches f - f* <= eps within ceil(log(1 + mu D^2/(2eps)) / "
                 "log(1 + mu/lam)) rounds, and its rounds grow linearly in delta_A/mu (log-log slope in [0.7, 1.3]) "
                 "on instances where a direction of curvature mu is shared by all clients (the worst case)",
       kind="rate", instances=_delta_instances,
       narrower=("the round count implied by Corollary 21's reconstructed rate and its linear growth in delta_A/mu "
                 "(Table 1's DANE row)"), runs=("dane",),
       non_discriminating=(
           "proven for commuting client Hessians (every direction contracting by m >= 0): "
           "each eigendirection of Abar contracts by m <= lam/(a + lam), whence f(x^r) - f* <= mu D^2 v^(-r)/(2(v^r "
           "- 1)), v = 1 + mu/lam (the gap bound's proof, sharpened), so DANE needs at most ceil(log((1 + sqrt(1 + "
           "4Q))/2)/log v) rounds against the bound's ceil(log(1 + Q)/log v), Q = mu D^2/(2 eps) >= 1e8 mu/L here: "
           "rounds/bound <= 1/2 + 1/bound + o(1) as Q grows, so no instance of that class comes materially above "
           "1/2; the family shares only the slowest eigenvector e_1 (its other block is the generator's "
           "non-commuting clients), along which the ratio is (1/2) log(gap_1(x0)/eps)/log(1 + Q) < 1/2 up to the "
           "ceilings: measured 0.43, and non-commuting clients are only measured"))


def check_dane_delta_scaling(kw: dict) -> Evidence:
    rounds, bounds, ratios = [], [], []
    for delta in kw["deltas"]:
        problem = delta_scaling_problem(kw["n_clients"], kw["dim"], mu=kw["mu"], L=kw["L"], delta_A=delta,
                                        zeta2=kw["zeta2"], seed=kw.get("seed", 0))
        c = problem.certificate
        lam = 2.0 * c.delta_A
        x0 = start_point(problem, kw.get("seed", 0))
        D = float(np.linalg.norm(x0 - c.x_star))
        eps = 1e-8 * problem.gap(x0)
        bound = th.dane_rounds_to_eps(c.mu, lam, D, eps)
        trace = run(DANE(lam=lam), problem, bound + 5, x0=x0, tol=eps)
        rounds.append(int(trace.round[-1]) if trace.status == "converged" else -1)
        bounds.append(bound)
        ratios.append(c.delta_A / c.mu)
    slope = float(np.polyfit(np.log(ratios), np.log(rounds), 1)[0]) if min(rounds) > 0 else float("nan")
    within = all(0 < r <= b for r, b in zip(rounds, bounds))
    holds = within and 0.7 <= slope <= 1.3
    return Evidence(describe({k: v for k, v in kw.items() if k != "deltas"}), slope, 1.0, holds,
                    tightness=max(r / b for r, b in zip(rounds, bounds)) if within else None,
                    details={"delta_A/mu": ratios, "rounds": rounds, "bound_rounds": bounds})


# ---------------------------------------------------------------------------------------------------------
# Theorem 9, Table 1, Figure 1: FedRed-GD's communications; Table 1: FedRed-GD vs DANE+-GD local work
# ---------------------------------------------------------------------------------------------------------


def _savings_instances(thorough: bool):
    yield dict(n_clients=8, dim=10, mu=1.0, L=100.0, L_over_delta=30.0, zeta2=1.0, seeds=(0, 1, 2, 3, 4))
    yield dict(n_clients=8, dim=10, mu=1.0, L=300.0, L_over_delta=300.0, zeta2=1.0, seeds=(0, 1, 2, 3, 4))
    if thorough:
        yield dict(n_clients=8, dim=10, mu=1.0, L=1000.0, L_over_delta=3000.0, zeta2=1.0, seeds=tuple(range(5)))
        yield dict(n_clients=8, dim=10, mu=1.0, L=1000.0, L_over_delta=30.0, zeta2=1.0, seeds=tuple(range(5)))


def _savings_problem(kw: dict, seed: int) -> QuadraticProblem:
    return quadratic(kw["n_clients"], kw["dim"], mu=kw["mu"], L=kw["L"], delta_A=kw["L"] / kw["L_over_delta"],
                     zeta2=kw["zeta2"], seed=seed)


@claim(cites=("Theorem 9", "Table 1", "Figure 1"),
       id="fedred.fedred_gd.comm_savings", paper="fedred",
       statement="FedRed-GD (eta = 1/L, lam = 2 delta_A, p = (lam+mu) eta) reaches eps with #communications ~ "
                 "p * #iterations (binomial, z <= 5), #iterations <= 3x GD's (step 1/L), and #communications <= "
                 "3 (lam+mu)/L x GD's rounds",
       kind="rate", instances=_savings_instances,
       narrower=("communications about p times the iterations and iterations within 3x GD's on quadratics: Theorem "
                 "9's orders with fedtheory's factor 3 (its constants are lost), and Figure 1's comparison on one "
                 "instance family"), runs=("fedred",))


def check_fedred_gd_comm_savings(kw: dict) -> Evidence:
    iters, comms, gd, ps, zs = [], [], [], [], []
    for seed in kw["seeds"]:
        problem = _savings_problem(kw, seed)
        c = problem.certificate
        x0 = start_point(problem, seed)
        eps = 1e-10 * problem.gap(x0)
        lam, eta = 2 * c.delta_A, 1.0 / c.L
        p = th.fedred_balanced_p(c.mu, lam, eta)
        gd_K = gd_iterations_to_gap(problem, x0, eps, step=1.0 / c.L)
        tr = run(FedRed(lam=lam, eta=eta, p=p), problem, 20 * gd_K, x0=x0, tol=eps, seed=seed)
        if tr.status != "converged":
            return Evidence(describe(kw), math.inf, 3.0, False, details={"seed": seed, "status": tr.status})
        K = int(tr.round[-1])
        m = float(np.sum(tr.communicated))
        iters.append(K), comms.append(m), gd.append(gd_K), ps.append(p)
        zs.append((m - p * K) / math.sqrt(max(K * p * (1 - p), 1e-300)) if p < 1 else 0.0)
    iter_ratio = float(np.mean(iters) / np.mean(gd))
    comm_ratio = float(np.mean(comms) / (np.mean(ps) * np.mean(gd)))
    # The binomial z-score of the pooled communication count (stopping time makes it approximate).
    z = float(np.sum(np.array(zs)) / math.sqrt(len(zs)))
    holds = iter_ratio <= 3.0 and comm_ratio <= 3.0 and abs(z) <= Z_MONTE_CARLO
    return Evidence(describe({k: v for k, v in kw.items() if k != "seeds"}), iter_ratio, 3.0, holds,
                    tightness=iter_ratio / 3.0,
                    details={"iterations": iters, "communications": comms, "gd_rounds": gd, "p": ps[0],
                             "comm_over_p_gd": comm_ratio, "binomial_z": z})


def _vs_instances(thorough: bool):
    yield dict(n_clients=8, dim=10, mu=1.0, L=100.0, L_over_delta=30.0, zeta2=1.0, seeds=(0, 1, 2, 3, 4))
    yield dict(n_clients=8, dim=10, mu=1.0, L=300.0, L_over_delta=300.0, zeta2=1.0,
               seeds=tuple(range(5)) if thorough else (0, 1, 2))
    if thorough:
        yield dict(n_clients=8, dim=10, mu=1.0, L=1000.0, L_over_delta=3000.0, zeta2=1.0, seeds=tuple(range(5)))


@claim(cites=("Table 1",),
       id="fedred.fedred_gd.vs_daneplus_gd", paper="fedred", reference="the local steps",
       statement="At equal accuracy, FedRed-GD's local gradient evaluations are at most DANE+-GD's (relative stopping "
                 "rule; median over seeds), and both use far fewer communications than GD (< GD's / 3)",
       narrower=("one comparison of Table 1's rows (FedRed-GD's local work against DANE+-GD's, and both against "
                 "GD's communications) on strongly convex quadratics (8 clients, d = 10), not the table's round "
                 "counts and local steps for the strongly convex, convex and non-convex classes"),
       kind="qualitative", instances=_vs_instances, runs=("dane+", "fedred"))


def check_fedred_vs_daneplus(kw: dict) -> Evidence:
    ratios, comm_ok = [], True
    rows = []
    for seed in kw["seeds"]:
        problem = _savings_problem(kw, seed)
        c = problem.certificate
        x0 = start_point(problem, seed)
        eps = 1e-10 * problem.gap(x0)
        lam, eta = 2 * c.delta_A, 1.0 / c.L
        gd_K = gd_iterations_to_gap(problem, x0, eps, step=1.0 / c.L)
        fr = run(FedRed(lam=lam, eta=eta), problem, 20 * gd_K, x0=x0, tol=eps, seed=seed)
        # the claim requires fewer than gd_K / 3 rounds of DANE+-GD: a run that needs more fails it, so it
        # stops there rather than at 2000 rounds (a stalled DANE+ then ends in seconds)
        dp = run(DANEPlus(lam=lam, solver="gd"), problem, min(2000, math.ceil(gd_K / 3)), x0=x0, tol=eps)
        # "at equal accuracy": a run that diverged or never reached eps has no count to compare
        failure = run_failure(fr, "FedRed-GD", need_target=True) or run_failure(dp, "DANE+-GD", need_target=True)
        if failure is not None:
            return Evidence(describe({k: v for k, v in kw.items() if k != "seeds"}), math.inf, 1.0, False,
                            details={"failure": f"seed {seed}: {failure}", "runs": rows})
        fr_evals, dp_evals = float(np.sum(fr.local_grad_evals)), float(np.sum(dp.local_grad_evals))
        ratios.append(fr_evals / dp_evals)
        fr_comm, dp_comm = float(np.sum(fr.communicated)), float(np.sum(dp.communicated))
        comm_ok &= fr_comm < gd_K / 3 and dp_comm < gd_K / 3
        rows.append({"seed": seed, "fedred_evals": fr_evals, "daneplus_evals": dp_evals, "fedred_comms": fr_comm,
                     "daneplus_rounds": dp_comm, "gd_rounds": gd_K})
    med = float(np.median(ratios))
    return Evidence(describe({k: v for k, v in kw.items() if k != "seeds"}), med, 1.0, med <= 1.0 and comm_ok,
                    tightness=med, details={"runs": rows})


# ---------------------------------------------------------------------------------------------------------
# Theorem 8, Corollary 2, Table 1: the non-convex methods at fixed delta_B, varying L
# ---------------------------------------------------------------------------------------------------------


def _nc_scaling_instances(thorough: bool):
    yield dict(n_clients=8, dim=10, mu=1.0, L=100.0, delta_B=1.0, zeta2=1.0, seed=0, L_targets=(1e2, 1e3),
               seeds=(0, 1))
    if thorough:
        yield dict(n_clients=8, dim=10, mu=0.5, L=100.0, delta_B=2.0, zeta2=1.0, seed=1, L_targets=(1e2, 1e3, 3e3),
                   seeds=(0, 1, 2, 3, 4))


@claim(cites=("Theorem 8", "Corollary 2", "Table 1"),
       id="fedred.nonconvex.L_scaling", paper="fedred",
       statement="Under the non-convex theory's settings (randomized single-model selection, lam = 2 delta_B), at "
                 "fixed delta_B and growing L: FedRed-GD (eta = 1/L, p = lam eta) keeps its expected communications to "
                 "||grad f||^2 <= 1e-8 ||grad f(x0)||^2 within a factor 2 while its iterations grow >= L-ratio/2; "
                 "DANE+-GD (K = ceil(L/delta_B) local steps, min-gradient iterate) keeps its rounds within a factor "
                 "2 while its local gradients grow like L R/delta_B (Table 1)",
       kind="rate", instances=_nc_scaling_instances,
       notes="Constants of Thm 8 / Cor 2 are lost; only the scaling in L is checked. Instances are quadratics "
             "(L-smooth with delta_B-BHD, a special case of the non-convex assumptions), built with vary_L so that "
             "delta_B is unchanged exactly.",
       narrower=("only the scaling in L at fixed delta_B (the constants of Theorem 8 and Corollary 2 are lost), on "
                 "quadratics"), runs=("dane+", "fedred"))


def check_nonconvex_L_scaling(kw: dict) -> Evidence:
    base = quadratic_instance(kw)
    # Start orthogonally to the direction q that vary_L stiffens (q = top eigenvector of Abar): then F_0 and
    # grad f(x0) are the same at every L, so the target ||grad f||^2 <= 1e-8 ||grad f(x0)||^2 is one fixed eps.
    q = (np.linalg.eigh(base.A_bar)[1][:, -1] if base.A_bar.ndim == 2
         else np.eye(base.dim)[int(np.argmax(base.A_bar))])
    z = start_point(base, kw.get("seed", 0)) - base.certificate.x_star
    x0 = base.certificate.x_star + z - (q @ z) * q
    instance = describe({k: v for k, v in kw.items() if k not in ("L_targets", "seeds")})
    rows = []
    for L_target in kw["L_targets"]:
        problem = vary_L(base, max(L_target, base.certificate.L))
        c = problem.certificate
        lam, eta = 2 * c.delta_B, 1.0 / c.L
        g0 = float(np.sum(problem.grad(x0) ** 2))
        K = math.ceil(c.L / c.delta_B)
        # Caps, so that a broken algorithm ends with a verdict, not in the time budget: FedRed-GD needs about
        # 5 L/delta_B iterations here (580 at L = 100, 4556 at L = 1000), so 50 L/delta_B is 10x that; at the
        # later L values, communications or DANE+ rounds beyond twice the first L's already violate the claim;
        # DANE+-GD needs 8 rounds at the first L: 200 is 25x that.
        iteration_cap = 50 * K
        comm_cap = 2 * rows[0]["fedred_comms"] if rows else math.inf
        round_cap = 2 * rows[0]["daneplus_rounds"] if rows else 200
        comms, iters = [], []
        for seed in kw["seeds"]:
            alg = FedRed(lam=lam, eta=eta, p=min(1.0, lam * eta), selection="random")
            state, rng, m, k = alg.init(problem, x0), np.random.default_rng(seed), 0, 0
            done = False
            while not done:
                if k >= iteration_cap or m > comm_cap:
                    return Evidence(instance, math.inf, 2.0, False, details={
                        "failure": f"FedRed-GD (seed {seed}) at L = {c.L:.4g} did not reach the target within "
                                   f"{k} iterations and {m} communications (caps: {iteration_cap} iterations, "
                                   f"{comm_cap:g} communications)", "runs": rows})
                state, log = alg.round(problem, state, rng)
                m, k = m + int(log.communicated), k + 1
                # x~ moves only when communicating: test the stopping criterion only then
                done = log.communicated and float(np.sum(problem.grad(state.x) ** 2)) <= CONVERGED_REL * g0
            comms.append(m), iters.append(k)
        dp = DANEPlus(lam=lam, averaging="random", solver="gd", stopping="steps", local_steps=K)
        state, rng, R, evals = dp.init(problem, x0), np.random.default_rng(0), 0, 0
        while float(np.sum(problem.grad(state.x) ** 2)) > CONVERGED_REL * g0:
            if R >= round_cap:
                return Evidence(instance, math.inf, 2.0, False, details={
                    "failure": f"DANE+-GD at L = {c.L:.4g} did not reach the target within {R} rounds (cap)",
                    "runs": rows})
            state, log = dp.round(problem, state, rng)
            R, evals = R + 1, evals + log.local_grad_evals
            if not np.all(np.isfinite(state.x)):
                return Evidence(instance, math.inf, 2.0, False,
                                details={"failure": f"DANE+-GD diverged at round {R}"})
        rows.append({"L": c.L, "F0": problem.gap(x0), "fedred_comms": float(np.mean(comms)), "fedred_iterations": float(np.mean(iters)),
                     "daneplus_rounds": R, "daneplus_local_evals_per_client": evals / problem.n_clients})
    first, last = rows[0], rows[-1]
    L_ratio = last["L"] / first["L"]
    comm_ratio = last["fedred_comms"] / first["fedred_comms"]
    iter_ratio = last["fedred_iterations"] / first["fedred_iterations"]
    round_ratio = last["daneplus_rounds"] / first["daneplus_rounds"]
    eval_ratio = last["daneplus_local_evals_per_client"] / first["daneplus_local_evals_per_client"]
    holds = (0.5 <= comm_ratio <= 2.0 and iter_ratio >= L_ratio / 2 and 0.5 <= round_ratio <= 2.0
             and eval_ratio >= L_ratio / 2)
    # Tightness: how close the nearest of the four ratios comes to its allowed limit (measured/upper limit,
    # lower limit/measured): a count that moves 2x at one L against the others reaches a limit. A factor common
    # to every L moves no ratio (the constants of Theorem 8 and Corollary 2 are lost, see notes).
    parts = (comm_ratio / 2.0, 0.5 / comm_ratio, (L_ratio / 2) / iter_ratio, round_ratio / 2.0, 0.5 / round_ratio,
             (L_ratio / 2) / eval_ratio)
    return Evidence(instance, comm_ratio, 2.0,
                    holds, tightness=max(parts), details={"runs": rows, "L_ratio": L_ratio, "fedred_iteration_ratio": iter_ratio,
                                    "daneplus_round_ratio": round_ratio, "daneplus_eval_ratio": eval_ratio})
