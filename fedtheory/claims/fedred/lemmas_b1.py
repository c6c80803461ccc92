"""DANE+'s convex proof chain (App. B.1): Lemmas 19, 20, 22, Theorems 23, 24 and Corollary 25 of Jiang, Rodomanov &
Stich (ICML 2024), in the forms fedtheory reconstructs from the steps their proofs name (docs/fedred.md).

Each claim runs DANE+ (``fedtheory.algorithms.dane.DANEPlus``) on quadratics and evaluates both sides of the
statement at every round, for every client, with every constant computed exactly from the instance; the local
gradients grad F_{i,r} are recomputed from the problem's oracle, never taken from the algorithm's bookkeeping.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ...algorithms.dane import DANEPlus
from ...problems.quadratic import QuadraticProblem
from ..registry import Evidence, claim
from ..space import InstanceSpace, Param, quadratic_space
from ..tolerances import EXACT_REL, ITERATE_REL, SQUARED_CONVERGED_REL, SQUARED_STOP_REL
from ._shared import client_hessians, describe, quadratic_instance, weighted_mean_sq

__all__ = ["LOCAL_VARIANTS", "daneplus_convex_run", "lemma20_sides", "lemma20_worst_point", "lemma22_terms",
           "weighted_average_bound", "gd_steps_relative_rule"]


# ---------------------------------------------------------------------------------------------------------
# Lemmas 19, 20, 22, Theorems 23, 24, Corollary 25: DANE+'s convex proof chain
# ---------------------------------------------------------------------------------------------------------


def daneplus_convex_run(kw: dict, *, stopping: str, tol: float = 0.0, local_steps: int = 3,
                        rounds: int | None = None, floor: float = SQUARED_CONVERGED_REL, tol_decay: float = 0.0,
                        server: bool = True) -> tuple[QuadraticProblem, float, list[dict]]:
    """Run DANE+ (CV (1), standard averaging, local GD) with lam = lam_factor delta_A and record, per round,
    x^r, every local model x_{i,r+1}, grad F_{i,r}(x_{i,r+1}) (recomputed here from the oracle), x^{r+1}, and
    the local GD steps. Stops early when ||x^r - x*||^2 falls below ``floor`` times its start (rounding; the
    relative rule's own floating-point floor, 1e-12 ||grad f(x^0)||, must stay out of reach). With
    ``server=False`` the standard averaging x^{r+1} = sum_i w_i x_{i,r+1} is done here rather than by the
    algorithm's round (for statements about the local solver at the points x^r: the server is not under test)."""
    problem = quadratic_instance(kw)
    c = problem.certificate
    lam = float(kw["lam_factor"]) * c.delta_A
    # At the theorems' lam = 2 delta_A the algorithm's own default (lam=None, resolved from the certificate) runs,
    # so a slip in that resolution meets the lam computed here. ``kw["local"]`` overrides the local solver (the
    # statements about any local output run every solver and stopping rule of Alg. 1, LOCAL_VARIANTS).
    options = dict(solver="gd", stopping=stopping, tol=tol, tol_decay=tol_decay, local_steps=local_steps)
    alg = DANEPlus(lam=None if float(kw["lam_factor"]) == 2.0 else lam, **{**options, **kw.get("local", {})})
    rng = np.random.default_rng(kw["seed"])
    state = alg.init(problem, c.x_star + float(kw.get("x0_scale", 3.0)) * rng.standard_normal(problem.dim))
    d0 = float(np.sum((state.x - c.x_star) ** 2))
    records = []
    for r in range(int(kw.get("rounds", 20) if rounds is None else rounds)):
        if float(np.sum((state.x - c.x_star) ** 2)) <= floor * d0:
            break
        X, h, _, extra = alg.local_models(problem, state)
        G = problem.grads(problem.broadcast(state.x))
        h_ref = problem.weights @ G - G  # control variate (1), recomputed independently of the algorithm
        gradF = problem.grads(X) + h_ref + lam * (X - state.x)
        new = alg.round_given(problem, state, alg.draw(problem, state, rng))[0] if server else \
            replace(state, x=problem.weights @ X, r=state.r + 1)
        records.append(dict(x=state.x, X=X, gradF=gradF, h=h_ref, x_new=new.x,
                            steps=extra.get("local_steps_max", 0.0), r=r))
        state = new
    return problem, lam, records


def _convex_space(extra_defaults: dict, lam_low: float = 2.0, weighted: bool = True) -> InstanceSpace:
    """The convex chain's class; with ``weighted`` the last default has unequal weights (f = sum_i w_i f_i,
    delta_A weighted), lam = 3 delta_A (the lemmas' lam >= 2 delta_A) and 10 rounds."""
    base = (dict(n_clients=6, dim=8, mu=0.5, L=50.0, delta_A=1.0, zeta2=1.0, seed=0),
            dict(n_clients=8, dim=10, mu=0.0, L=20.0, delta_A=0.5, zeta2=2.0, seed=1),
            dict(n_clients=5, dim=6, mu=0.05, L=200.0, delta_B=5.0, zeta2=1.0, hessians="diagonal", seed=2))
    weighted = dict(n_clients=4, dim=4, mu=0.2, L=30.0, delta_A=1.0, zeta2=2.0, weights=(0.1, 0.2, 0.3, 0.4), seed=5,
                    rounds=10)
    return quadratic_space(defaults=tuple({**b, **extra_defaults} for b in base)
                           + (({**weighted, **extra_defaults, "lam_factor": 3.0},) if weighted else ()),
                           thorough=(dict(n_clients=10, dim=12, mu=0.01, L=1000.0, delta_A=10.0, zeta2=5.0, seed=3,
                                          **extra_defaults),),
                           extra=(Param("lam_factor", lam_low, 10.0), Param("local_steps", 1, 20, integer=True)),
                           mu_low=1e-3)


#: The local solvers and stopping rules of Alg. 1 (DANE+ admits any local solver): fast GD with the relative rule
#: at its default tol, GD with the absolute rule (decaying, with a floating-point floor other than the default),
#: the authors' code's semi-implicit step with its post-step rule, and the exact solve. The statements about any
#: local output (Lemmas 20, 22) run each of them on the first default instance.
LOCAL_VARIANTS = ({"solver": "fgd", "stopping": "relative", "tol": math.sqrt(2.0), "local_steps": 10_000},
                  {"stopping": "absolute", "tol": 2.0, "tol_decay": 1.0, "tol_floor": 1e-10, "local_steps": 50},
                  {"stopping": "authors", "local_step": 0.02, "step_convention": "semi_implicit",
                   "tol": math.sqrt(2.0), "local_steps": 10_000},
                  {"solver": "exact"})


def _with_local_variants(space: InstanceSpace, variants: tuple[dict, ...] = LOCAL_VARIANTS) -> InstanceSpace:
    first = space.defaults[0]  # three rounds each: every path is exercised (and certified: the first three rounds
    # of every run are), at a small fraction of the claim's cost
    return replace(space, defaults=space.defaults + tuple({**first, "rounds": 3, "local": v} for v in variants))


#: Lemma 19 is about the local output alone (its inequality is the same quadratic form at any point: the claim is
#: non-discriminating), so it adds only the exact solve and the randomized selection; Lemmas 20/22 run the rest.
_L19_SPACE = _with_local_variants(_convex_space(dict(lam_factor=2.0, local_steps=2), lam_low=0.0, weighted=False),
                                  ({"solver": "exact"}, {"averaging": "random"}))


@claim(cites=("Lemma 19",),
       id="fedred.appendix.daneplus_strong_convexity.derived", paper="fedred", derived=True,
       reference="eqs. (B.1)-(B.2) (form derived by fedtheory from its proof (B.3))",
       statement="(derived by fedtheory; the form of Lemma 19) Alg. 1 with mu-convex f_i, any local outputs: for "
                 "every client, round and x, F_{i,r}(x) >= F_{i,r}(x_{i,r+1}) + <grad F_{i,r}(x_{i,r+1}), x - "
                 "x_{i,r+1}> + (mu + lam)/2 ||x - x_{i,r+1}||^2, F_{i,r}(x) = f_i(x) + <h_{i,r}, x> + "
                 "lam/2||x - x^r||^2; equality along the client's lowest-curvature direction",
       kind="bound", space=_L19_SPACE,
       non_discriminating="the (mu + lam)-strong convexity of F_{i,r} written at the local output: F_{i,r}(x) - "
                          "F_{i,r}(y) - <grad F_{i,r}(y), x - y> is the same quadratic form in x - y for every y, "
                          "control variate h_{i,r} and center x^r, so it holds at whatever point any local solver "
                          "returns and no server or local-solver variant can violate it; Lemma 20 "
                          "(fedred.appendix.daneplus_one_round.derived), which rests on it, rejects them",
       runs=("dane+",))


def check_daneplus_strong_convexity(kw: dict) -> Evidence:
    problem, lam, records = daneplus_convex_run(kw, stopping="steps", local_steps=int(kw["local_steps"]),
                                                rounds=int(kw.get("rounds", 10)))
    mu = problem.certificate.mu
    _, V = np.linalg.eigh(client_hessians(problem))
    rng = np.random.default_rng(kw["seed"] + 1)
    n, d = problem.n_clients, problem.dim
    worst, ratio = -np.inf, 0.0
    argmin_client = int(np.argmin(problem.certificate.mu_i))
    for rec in records:
        def F(Z: np.ndarray) -> np.ndarray:
            return problem.values(Z) + np.sum(rec["h"] * Z, axis=1) + 0.5 * lam * np.sum((Z - rec["x"]) ** 2, axis=1)

        for t in range(4):
            D = rng.standard_normal((n, d)) * np.exp(rng.uniform(-2, 1))
            if t == 0:  # the client with mu_i = mu along its lowest eigenvector: equality
                D[argmin_client] = V[argmin_client, :, 0]
            Z = rec["X"] + D
            lin = F(rec["X"]) + np.sum(rec["gradF"] * D, axis=1)
            quad = 0.5 * (mu + lam) * np.sum(D * D, axis=1)
            lhs = F(Z)
            scale = np.abs(lhs) + np.abs(lin) + quad
            worst = max(worst, float(np.max((lin + quad - lhs) / scale)))
            ratio = max(ratio, float(np.max(quad / np.maximum(lhs - lin, 1e-300))))
    return Evidence(describe(kw), worst, 0.0, worst <= ITERATE_REL, tightness=ratio,
                    details={"rounds_checked": len(records), "lam": lam, "mu": mu})


def lemma20_sides(problem: QuadraticProblem, lam: float, rec: dict, x: np.ndarray) -> tuple[float, float, float]:
    """Both sides of fedtheory's Lemma 20 at x, and their scale:

        f(x^{r+1}) - f(x) + (lam + mu)/2 sum_i w_i ||x_{i,r+1} - x||^2 + lam/4 sum_i w_i ||x_{i,r+1} - x^r||^2
            <= lam/2 ||x^r - x||^2 + sum_i w_i <grad F_{i,r}(x_{i,r+1}), x_{i,r+1} - x>.

    f differences are taken as gap differences (f - f*), which is exact for quadratics and avoids
    cancellation."""
    w, mu = problem.weights, problem.certificate.mu
    X = rec["X"]
    df = problem.gap(rec["x_new"]) - problem.gap(x)
    t1 = 0.5 * (lam + mu) * weighted_mean_sq(w, X - x)
    t2 = 0.25 * lam * weighted_mean_sq(w, X - rec["x"])
    r1 = 0.5 * lam * float(np.sum((rec["x"] - x) ** 2))
    r2 = float(w @ np.sum(rec["gradF"] * (X - x), axis=1))
    scale = abs(problem.gap(rec["x_new"])) + abs(problem.gap(x)) + t1 + t2 + r1 + abs(r2)
    return df + t1 + t2, r1 + r2, scale


def lemma20_worst_point(problem: QuadraticProblem, lam: float, rec: dict) -> np.ndarray:
    """The x maximising lhs - rhs of :func:`lemma20_sides` on a quadratic: the stationarity condition
    (Abar - mu I) x = bbar - (lam + mu) xbar + lam x^r + gbar, with xbar = sum_i w_i x_{i,r+1} and gbar =
    sum_i w_i grad F_{i,r}(x_{i,r+1}) (least squares when mu = lambda_min(Abar))."""
    w, mu = problem.weights, problem.certificate.mu
    Abar = problem.A_bar if problem.A_bar.ndim == 2 else np.diag(problem.A_bar)
    bbar = w @ problem.b
    rhs = bbar - (lam + mu) * (w @ rec["X"]) + lam * rec["x"] + w @ rec["gradF"]
    return np.linalg.lstsq(Abar - mu * np.eye(problem.dim), rhs, rcond=None)[0]


#: Lemma 20's space with a fourth default: few clients with very different minimisers (zeta2 = 10), small
#: L/lam and 20 local steps, so the local models move far enough for the control variate to matter (with 1-2
#: local GD steps of size 1/(L_i + lam) it cancels in the average to first order: sum_i w_i h_i = 0); a
#: round that drops it (local prox steps on f_i: FedProx) or does not average the local models is then
#: rejected. 60 rounds and local errors decaying as 1/(r+1)^2 let Theorem 23's bound fall below FedProx's
#: stationary gap.
_L20_SPACE = _convex_space(dict(lam_factor=2.0, local_steps=2))
_L20_SPACE = replace(_L20_SPACE, defaults=_L20_SPACE.defaults + (
    dict(n_clients=4, dim=4, mu=1.0, L=4.0, delta_A=0.5, zeta2=10.0, seed=3, lam_factor=2.0, local_steps=20,
         rounds=60, tol_decay=2.0),))


#: Lemmas 20 and 22 hold for any local outputs: their defaults add every local solver of Alg. 1.
_L20_LOCAL_SPACE = _with_local_variants(_L20_SPACE)


@claim(cites=("Lemma 20",),
       id="fedred.appendix.daneplus_one_round.derived", paper="fedred", derived=True,
       reference="eq. (B.4) (form derived by fedtheory from its proof (B.5)-(B.13): Lemma 19, mu-convexity, Lemma 14,"
                 " splitting the lam term in halves and lam >= 2 delta_A)",
       statement="(derived by fedtheory; the form of Lemma 20) Alg. 1 with CV (1), standard averaging, mu-convex "
                 "f_i with delta_A-AHD and lam >= 2 delta_A, any local outputs: for every round and every x, "
                 "f(x^{r+1}) - f(x) + (lam+mu)/2 mean_i ||x_{i,r+1} - x||^2 + lam/4 mean_i ||x_{i,r+1} - x^r||^2 <= "
                 "lam/2 ||x^r - x||^2 + mean_i <grad F_{i,r}(x_{i,r+1}), x_{i,r+1} - x>",
       kind="bound", space=_L20_LOCAL_SPACE, runs=("dane+",))


def check_daneplus_one_round(kw: dict) -> Evidence:
    """Inexact local solves (``local_steps`` GD steps, so grad F != 0); x = x*, x^r, 4 random points and the
    worst x (lhs - rhs is a concave quadratic in x, maximised by a linear solve)."""
    problem, lam, records = daneplus_convex_run(kw, stopping="steps", local_steps=int(kw["local_steps"]))
    rng = np.random.default_rng(kw["seed"] + 2)
    worst, ratio = -np.inf, 0.0
    for rec in records:
        points = [problem.certificate.x_star, rec["x"]] + [rec["x"] + 3 * rng.standard_normal(problem.dim)
                                                           for _ in range(4)]
        points.append(lemma20_worst_point(problem, lam, rec))
        for x in points:
            lhs, rhs, scale = lemma20_sides(problem, lam, rec, x)
            worst = max(worst, (lhs - rhs) / scale)
            if rhs > 0:
                ratio = max(ratio, lhs / rhs)
    return Evidence(describe(kw), worst, 0.0, worst <= ITERATE_REL, tightness=ratio,
                    details={"rounds_checked": len(records), "lam/delta_A": kw["lam_factor"]})


def lemma22_terms(problem: QuadraticProblem, lam: float, records: list[dict]) -> dict[str, np.ndarray]:
    """Per round: Delta_{r+1} = f(x^{r+1}) - f*, A_{r+1} = mean_i ||x_{i,r+1} - x*||^2, B = mean_i ||x_{i,r+1} -
    x^r||^2, d_r^2 = ||x^r - x*||^2, eps_r = sqrt(mean_i ||grad F_{i,r}(x_{i,r+1})||^2) and the relative accuracy
    e_r = max_i ||grad F_{i,r}(x_{i,r+1})|| / ||x_{i,r+1} - x^r||."""
    w, xs = problem.weights, problem.certificate.x_star
    out = {k: [] for k in ("Delta", "A", "B", "d2", "eps", "erel")}
    for rec in records:
        out["Delta"].append(problem.gap(rec["x_new"]))
        out["A"].append(weighted_mean_sq(w, rec["X"] - xs))
        out["B"].append(weighted_mean_sq(w, rec["X"] - rec["x"]))
        out["d2"].append(float(np.sum((rec["x"] - xs) ** 2)))
        out["eps"].append(math.sqrt(weighted_mean_sq(w, rec["gradF"])))
        steps = np.linalg.norm(rec["X"] - rec["x"], axis=1)
        out["erel"].append(float(np.max(np.linalg.norm(rec["gradF"], axis=1) / np.maximum(steps, 1e-300))))
    return {k: np.array(v) for k, v in out.items()}


@claim(cites=("Lemma 22",),
       id="fedred.appendix.daneplus_inexact_recursion.derived", paper="fedred", derived=True,
       reference="eq. (B.24) (form derived by fedtheory from its proof (B.25)-(B.30): Lemma 20 at x*, Cauchy-Schwarz,"
                 " then Lemma 12)",
       statement="(derived by fedtheory; the form of Lemma 22) DANE+ with CV (1), standard averaging, lam >= 2 "
                 "delta_A, any local outputs, eps_r = sqrt(mean_i ||grad F_{i,r}(x_{i,r+1})||^2): (i) f(x^{r+1}) "
                 "- f* + (lam+mu)/2 A_{r+1} + lam/4 mean_i||x_{i,r+1} - x^r||^2 <= lam/2 ||x^r - x*||^2 + eps_r "
                 "sqrt(A_{r+1}), A_{r+1} = mean_i ||x_{i,r+1} - x*||^2; (ii) ||x^R - x*|| <= sqrt(A_R) <= "
                 "||x^0 - x*|| + (2/lam) sum_{r<R} eps_r for every R",
       kind="bound", space=_L20_LOCAL_SPACE, runs=("dane+",))


def check_daneplus_inexact_recursion(kw: dict) -> Evidence:
    problem, lam, records = daneplus_convex_run(kw, stopping="steps", local_steps=int(kw["local_steps"]))
    mu = problem.certificate.mu
    t = lemma22_terms(problem, lam, records)
    lhs = t["Delta"] + 0.5 * (lam + mu) * t["A"] + 0.25 * lam * t["B"]
    rhs = 0.5 * lam * t["d2"] + t["eps"] * np.sqrt(t["A"])
    worst1 = float(np.max((lhs - rhs) / (lhs + rhs)))
    D = math.sqrt(t["d2"][0])
    bound = D + (2 / lam) * np.cumsum(t["eps"])
    dist = np.sqrt(np.array([float(np.sum((rec["x_new"] - problem.certificate.x_star) ** 2)) for rec in records]))
    worst2 = float(np.max((np.maximum(dist, np.sqrt(t["A"])) - bound) / bound))
    jensen = float(np.max(dist ** 2 - t["A"]))
    worst = max(worst1, worst2)
    return Evidence(describe(kw), worst, 0.0, worst <= ITERATE_REL and jensen <= ITERATE_REL * float(np.max(t["A"])),
                    tightness=float(np.max(lhs / rhs)),
                    details={"per_round_slack": worst1, "distance_bound_slack": worst2, "rounds": len(records)})


def weighted_average_bound(mu: float, lam: float, D: float, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """fedtheory's Theorem 23 bound for R = 1..len(eps), and the weights q^r of the averaged iterate:

        f(xbar_R) - f* <= lam / (2 S_R) [D^2 + (2/lam) Dhat_R sum_{r<R} q^r eps_r],
        q = 1 + mu/lam, S_R = sum_{r<R} q^r (so lam/(2 S_R) = mu / (2((1 + mu/lam)^R - 1)), or lam/(2R) at mu = 0),
        Dhat_R = D + (2/lam) sum_{r<R} eps_r,    xbar_R = sum_{r<R} q^r x^{r+1} / S_R."""
    q = 1.0 + mu / lam
    qr = q ** np.arange(len(eps))
    S = np.cumsum(qr)
    Dhat = D + (2 / lam) * np.cumsum(eps)
    return lam / (2 * S) * (D ** 2 + (2 / lam) * Dhat * np.cumsum(qr * eps)), qr


#: Theorem 23's defaults add the adversarial search's family (lam = 10 delta_A, mu/lam ~ 0.2, two local steps:
#: ratio 0.37) with constant absolute accuracy (tol_decay = 0, e_r = tol for every r: the bound then grows with R).
_T23_SPACE = replace(_L20_SPACE, defaults=_L20_SPACE.defaults + (
    dict(n_clients=4, dim=4, mu=0.06, L=0.3, delta_A=0.032, zeta2=6.6, seed=1, lam_factor=10.0, local_steps=2,
         tol_decay=0.0),))
#: Theorem 24's defaults add the adversarial search's worst instance (lam = 10 delta_A, mu/lam ~ 0.6: ratio 0.49).
_T24_SPACE = replace(_L20_SPACE, defaults=_L20_SPACE.defaults + (
    dict(n_clients=6, dim=3, mu=0.8, L=49.0, delta_A=0.13, zeta2=7.7, seed=0, lam_factor=10.0, local_steps=12),))


@claim(cites=("Theorem 23", "Theorem 3"),
       id="fedred.appendix.daneplus_absolute_accuracy.derived", paper="fedred", derived=True,
       reference="eq. (B.35) (form derived by fedtheory from its proof (B.36)-(B.38) on Lemma 22)",
       statement="(derived by fedtheory; the form of Theorem 23) DANE+ with CV (1), standard averaging, lam = 2 "
                 "delta_A, local errors eps_r = sqrt(mean_i ||grad F_{i,r}(x_{i,r+1})||^2): f(xbar_R) - f* <= "
                 "mu/(2[(1+mu/lam)^R - 1]) [D^2 + (2/lam)(D + (2/lam) sum_{r<R} eps_r) sum_{r<R} (1+mu/lam)^r "
                 "eps_r] (lam/(2R) for mu = 0), xbar_R the (1+mu/lam)^r-weighted average of x^1..x^R",
       kind="bound", space=_T23_SPACE, runs=("dane+",),
       non_discriminating=(
           "only measured, no ceiling proven: the bound stacks Jensen over the weighted average, Lemma 22's "
           "three-point inequality and Cauchy-Schwarz on each error term, and no instance found makes all of them "
           "tight at once; the worst-case search's 198 evaluations over the space never exceeded 0.40 (the "
           "defaults reach 0.37)"))


def check_daneplus_absolute_accuracy(kw: dict) -> Evidence:
    """Absolute rule ||grad F_{i,r}|| <= tol/(r+1)^p (tol = 0.1 ||grad f(x^0)||, p = ``tol_decay``, 1 unless
    given), so the errors decrease as the bound requires to fall."""
    problem0 = quadratic_instance(kw)
    rng = np.random.default_rng(kw["seed"])
    x0 = problem0.certificate.x_star + float(kw.get("x0_scale", 3.0)) * rng.standard_normal(problem0.dim)
    tol = 0.1 * float(np.linalg.norm(problem0.grad(x0)))
    problem, lam, records = daneplus_convex_run(kw, stopping="absolute", tol=tol, local_steps=200,
                                                tol_decay=float(kw.get("tol_decay", 1.0)))
    c = problem.certificate
    t = lemma22_terms(problem, lam, records)
    D = math.sqrt(t["d2"][0])
    bound, qr = weighted_average_bound(c.mu, lam, D, t["eps"])
    Xn = np.array([rec["x_new"] for rec in records])
    xbar = np.cumsum(qr[:, None] * Xn, axis=0) / np.cumsum(qr)[:, None]
    gaps = np.array([problem.gap(x) for x in xbar])
    ratio = gaps / bound
    worst = float(ratio.max())
    return Evidence(describe(kw), worst, 1.0, worst <= 1 + ITERATE_REL, tightness=worst,
                    details={"rounds": len(records), "sum_eps": float(t["eps"].sum()), "D": D})


@claim(cites=("Theorem 24", "Theorem 4"),
       id="fedred.appendix.daneplus_relative_accuracy.derived", paper="fedred", derived=True,
       reference="eq. (B.39) (form derived by fedtheory from its proof (B.40)-(B.43) on Lemma 22)",
       statement="(derived by fedtheory; the form of Theorem 24) DANE+ with CV (1), standard averaging, lam = 2 "
                 "delta_A and the relative rule ||grad F_{i,r}(x_{i,r+1})|| <= e_r ||x_{i,r+1} - x^r||: with q_r "
                 "= 1 + mu/lam - 2 e_r^2/lam^2 > 0 and P_r = prod_{k<r} q_k, f(xbar_R) - f* <= lam D^2 / (2 "
                 "sum_{r<R} P_r), xbar_R the P_r-weighted average of x^1..x^R (e_r = 0 gives Cor. 21's bound)",
       kind="bound", space=_T24_SPACE, runs=("dane+",),
       non_discriminating=(
           "only measured, no ceiling proven: the worst-case search's 198 evaluations over the space never "
           "exceeded 0.489, and 54 variations of its worst point (seed, lam/delta_A, mu) never exceeded 0.487 "
           "(the defaults reach 0.486): with e_r -> 0 the bound is Corollary 21's on the weighted average, where "
           "Jensen over the average and the per-round contraction each leave room"))


def check_daneplus_relative_accuracy(kw: dict) -> Evidence:
    """Local GD with the relative rule e_r = lam/(2(r+1)) (tol 0.5); the bound uses the realised e_r."""
    problem, lam, records = daneplus_convex_run(kw, stopping="relative", tol=0.5, local_steps=10_000, floor=SQUARED_STOP_REL)
    c = problem.certificate
    t = lemma22_terms(problem, lam, records)
    q = 1.0 + c.mu / lam - 2.0 * t["erel"] ** 2 / lam ** 2
    if np.any(q <= 0):
        return Evidence(describe(kw), float(q.min()), 0.0, False, details={"reason": "q_r <= 0: outside the regime"})
    P = np.concatenate(([1.0], np.cumprod(q)[:-1]))
    D2 = t["d2"][0]
    bound = lam * D2 / (2 * np.cumsum(P))
    Xn = np.array([rec["x_new"] for rec in records])
    xbar = np.cumsum(P[:, None] * Xn, axis=0) / np.cumsum(P)[:, None]
    gaps = np.array([problem.gap(x) for x in xbar])
    ratio = float(np.max(gaps / bound))
    return Evidence(describe(kw), ratio, 1.0, ratio <= 1 + ITERATE_REL, tightness=ratio,
                    details={"rounds": len(records), "min_q_r": float(q.min()), "max_e_r/lam": float(t["erel"].max() / lam)})


def gd_steps_relative_rule(mu: float, L: float, lam: float, e: float) -> int:
    """Local GD steps (step 1/(L_i + lam), from x^r) after which ||grad F(x_K)|| <= e ||x_K - x^r|| is
    guaranteed on a (mu+lam)-strongly convex, (L+lam)-smooth quadratic F (derived by fedtheory, Cor. 25's
    argument (B.47)-(B.54)): with rho = 1 - (mu+lam)/(L+lam), ||x_K - x_F*|| <= rho^K ||x^r - x_F*||,
    ||grad F(x_K)|| <= (L+lam)||x_K - x_F*|| and ||x_K - x^r|| >= (1 - rho^K)||x^r - x_F*||, so
    rho^K <= e/(L + lam + e) suffices: K = ceil(log((L+lam+e)/e) / log(1/rho))."""
    rho = 1.0 - (mu + lam) / (L + lam)
    if rho <= 0:
        return 1
    return max(1, math.ceil(math.log((L + lam + e) / e) / -math.log(rho)))


_C25_SPACE = quadratic_space(
    defaults=(dict(n_clients=6, dim=8, mu=0.5, L=50.0, delta_A=1.0, zeta2=1.0, seed=0, lam_factor=2.0,
                   tol=math.sqrt(2.0)),
              dict(n_clients=8, dim=10, mu=0.0, L=20.0, delta_A=0.5, zeta2=2.0, seed=1, lam_factor=2.0, tol=0.5),
              dict(n_clients=4, dim=6, mu=0.2, L=30.0, delta_A=1.0, zeta2=2.0, weights=(0.1, 0.2, 0.3, 0.4), seed=5,
                   lam_factor=3.0, tol=1.0)),
    thorough=(dict(n_clients=10, dim=12, mu=0.01, L=1000.0, delta_A=10.0, zeta2=5.0, seed=3, lam_factor=2.0,
                   tol=1.414),),
    extra=(Param("lam_factor", 2.0, 10.0), Param("tol", 0.1, 2.0)), mu_low=1e-3)


@claim(cites=("Corollary 25", "Corollary 5"),
       id="fedred.appendix.daneplus_gd_local_steps.derived", paper="fedred", derived=True,
       reference="eq. (B.45), DANE+-GD (count derived by fedtheory from its proof (B.47)-(B.54))",
       statement="(derived by fedtheory; the DANE+-GD count of Corollary 25) local GD with step 1/(L_i + lam) "
                 "from x^r meets the relative rule ||grad F_{i,r}|| <= e_r ||x - x^r||, e_r = tol lam/(r+1), "
                 "within K_r = ceil(log((L+lam+e_r)/e_r) / -log(1 - (mu+lam)/(L+lam))) steps at every round "
                 "(about (L+lam)/(mu+lam) log((L+lam)(r+1)/lam)); the returned x_{i,r+1} meets the rule for "
                 "F_{i,r} with control variate (1)",
       kind="bound", space=_C25_SPACE)


def check_daneplus_gd_local_steps(kw: dict) -> Evidence:
    """The step count against K_r, and the rule itself at the returned models with grad F_{i,r} recomputed from
    the oracle (control variate (1)), up to the solver's documented floor 1e-12 ||grad f(x^0)||: a count is
    only a statement about the rule if the models it counts to meet it."""
    problem, lam, records = daneplus_convex_run(kw, stopping="relative", tol=float(kw["tol"]), local_steps=100_000,
                                                rounds=15, floor=SQUARED_STOP_REL, server=False)
    c = problem.certificate
    floor = EXACT_REL * float(np.linalg.norm(problem.grad(records[0]["x"])))
    worst, rule = 0.0, 0.0
    for rec in records:
        e = float(kw["tol"]) * lam / (rec["r"] + 1)
        worst = max(worst, rec["steps"] / gd_steps_relative_rule(c.mu, c.L, lam, e))
        allowed = np.maximum(e * np.linalg.norm(rec["X"] - rec["x"], axis=1), floor)
        rule = max(rule, float(np.max(np.linalg.norm(rec["gradF"], axis=1) / allowed)))
    return Evidence(describe(kw), worst, 1.0, worst <= 1.0 and rule <= 1.0 + ITERATE_REL, tightness=worst,
                    details={"rounds": len(records), "rule_ratio": rule})
