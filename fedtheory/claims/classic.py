"""Claims about the classic federated algorithms: drift and fixed points, invariants, exact expectations, ProxSkip.

Every check takes one problem (a :class:`~fedtheory.problems.base.Problem`; most need a quadratic for the
closed forms) and picks the algorithm's hyperparameters from the certificate, so the tests in
``tests/test_classic_*.py`` call the same checks on hypothesis-drawn problems.

Statements marked ``derived=True`` are not in a paper: they are this library's corrections of common readings
that turned out to be false (FedAvg's bias is *not* monotone in K), or first-order expansions derived here (the
drift vector v below). The closed-form fixed points of FedAvg and FedProx on quadratics are derived by
fedtheory too (:mod:`fedtheory.theory.classic`, docs/classic.md); the papers only say that both drift.

Derivation of the drift vector (used by two derived claims). Write r_i = -grad f_i(x*) (sum_i w_i r_i = 0)
and v = Abar^{-1} sum_i w_i A_i grad f_i(x*). FedAvg's fixed point solves sum_i w_i N_i (r_i - A_i e) = 0
with N_i = eta sum_{j<K} (I - eta A_i)^j = eta K I - eta^2 K(K-1)/2 A_i + O(eta^3 K^3 L^2), so
e = eta (K-1)/2 v + O((eta K L)^2); FedProx's solves sum_i w_i (A_i + lam I)^{-1}(r_i - A_i e) = 0 with
(A_i + lam I)^{-1} = I/lam - A_i/lam^2 + O(L^2/lam^3), so e = v / lam + O(L^2 / lam^2). v = 0 when all A_i
are equal, which is why equal Hessians give no drift however different the b_i are.
"""
from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from ..algorithms.fedavg import FedAvg
from ..algorithms.feddyn import FedDyn, FedDynState
from ..algorithms.fedprox import FedProx
from ..algorithms.gd import GradientDescent
from ..algorithms.scaffnew import Scaffnew, ScaffnewState
from ..algorithms.scaffold import Scaffold, ScaffoldState
from ..participation import Bernoulli, Full, UniformSubset
from ..problems.base import Problem
from ..problems.quadratic import quadratic
from ..theory.classic import (drift_vector, fedavg_bias, fedavg_fixed_point, fedavg_map, fedprox_bias,
                              fedprox_fixed_point, fedprox_map, proxskip_contraction, proxskip_lyapunov)
from .patterns import expectation, fixed_point_move, trajectory
from .registry import Evidence, claim
from .space import Param, quadratic_space

__all__: list[str] = []

PAPER = "classic"
#: Identity tolerance (relative): an identity holds to 1e-10 of its scale (closed forms against runs).
IDENTITY_TOL = 1e-10


# ---------------------------------------------------------------------------------------------------------
# instances
# ---------------------------------------------------------------------------------------------------------

def _describe(problem: Problem) -> str:
    c = problem.certificate
    # QuadraticProblem.hessians names the storage ("dense"/"diagonal"); on smooth problems it is a method
    kind = problem.hessians if isinstance(getattr(problem, "hessians", None), str) else "smooth"
    return (f"{type(problem).__name__}({kind}) n={problem.n_clients} d={problem.dim} mu={c.mu:.3g} L={c.L:.3g} "
            f"delta_B={c.delta_B:.3g} zeta2={c.zeta2:.3g}")


def _heterogeneous(thorough: bool) -> Iterable[Problem]:
    """Quadratics with heterogeneous Hessians and gradients (where client drift exists)."""
    grid = [dict(n_clients=4, dim=3, mu=0.2, L=2.0, delta_B=0.6, zeta2=1.0, seed=0),
            dict(n_clients=5, dim=4, mu=0.5, L=5.0, delta_A=1.0, zeta2=3.0, hessians="diagonal", seed=1),
            dict(n_clients=3, dim=5, mu=0.1, L=1.0, delta_B=0.3, zeta2=0.5, seed=2)]
    if thorough:
        grid += [dict(n_clients=8, dim=6, mu=0.05, L=5.0, delta_B=1.5, zeta2=4.0, seed=s) for s in range(3, 7)]
    for kw in grid:
        yield quadratic(**kw)


def _equal_hessians(thorough: bool) -> Iterable[Problem]:
    grid = [dict(n_clients=4, dim=3, mu=0.2, L=2.0, zeta2=2.0, seed=3),
            dict(n_clients=5, dim=4, mu=0.5, L=4.0, zeta2=1.0, hessians="diagonal", seed=4)]
    if thorough:
        grid += [dict(n_clients=9, dim=7, mu=0.05, L=3.0, zeta2=5.0, seed=s) for s in range(5, 9)]
    for kw in grid:
        yield quadratic(**kw)


_SMALL = (dict(n_clients=4, dim=3, mu=0.3, L=3.0, delta_B=0.8, zeta2=1.5, seed=5),
          dict(n_clients=3, dim=4, mu=0.5, L=2.0, delta_A=0.4, zeta2=1.0, hessians="diagonal", seed=6))


def _small_enumerable(thorough: bool) -> Iterable[Problem]:
    """Few clients, so every participation outcome can be enumerated (2^n Bernoulli outcomes)."""
    grid = list(_SMALL)
    if thorough:
        grid += [dict(n_clients=6, dim=5, mu=0.1, L=4.0, delta_B=1.0, zeta2=3.0, seed=s) for s in range(7, 10)]
    for kw in grid:
        yield quadratic(**kw)


def _partial_schemes(n: int) -> list:
    return [Full(), UniformSubset(max(1, n // 2)), Bernoulli(0.5)]


def _scale(problem: Problem) -> float:
    return max(1.0, float(np.linalg.norm(problem.certificate.x_star)))


def _rounds_for(rho: float, target: float = 1e-14, cap: int = 20000) -> int:
    """Rounds for a linear rate rho to shrink an error by ``target`` (plus a margin), capped."""
    if rho <= 0.0:
        return 5
    if rho >= 1.0:
        return cap
    return min(cap, int(math.ceil(math.log(target) / math.log(rho))) + 20)


def _iterate(alg: Any, problem: Problem, rounds: int, *, seed: int = 0, state: Any = None, stop_dist: float = 0.0,
             callback=None) -> Any:
    """Run ``rounds`` rounds (or until ||x - x*|| <= stop_dist, checked every 10 rounds); return the state."""
    rng = np.random.default_rng(seed)
    state = alg.init(problem, np.zeros(problem.dim)) if state is None else state
    xs = problem.certificate.x_star
    for r in range(rounds):
        state, log = alg.round(problem, state, rng)
        if callback is not None:
            callback(state, log)
        if stop_dist > 0.0 and r % 10 == 9 and np.linalg.norm(state.x - xs) <= stop_dist:
            break
    return state


# ---------------------------------------------------------------------------------------------------------
# FedAvg / FedProx: identities and closed-form fixed points
# ---------------------------------------------------------------------------------------------------------

@claim(id="classic.fedavg.k1_is_gd", paper=PAPER,
       reference="McMahan et al. 2017, Alg. 1; Jiang, Rodomanov & Stich 2024, Section 2 (centralized GD)",
       statement="FedAvg with K = 1 local step of size eta and server step 1 (full participation) produces the "
                 "same iterates as gradient descent with step eta (1e-12 relative, 30 rounds)",
       kind="metamorphic", instances=_heterogeneous)
def check_fedavg_k1_is_gd(problem: Problem) -> Evidence:
    eta = 1.0 / problem.certificate.L
    fedavg, gd = FedAvg(local_steps=1, local_step=eta), GradientDescent(step=eta)
    rng = np.random.default_rng(0)
    s_a, s_g = fedavg.init(problem, np.zeros(problem.dim)), gd.init(problem, np.zeros(problem.dim))
    worst = 0.0
    for _ in range(30):
        s_a, _ = fedavg.round(problem, s_a, rng)
        s_g, _ = gd.round(problem, s_g, rng)
        worst = max(worst, float(np.linalg.norm(s_a.x - s_g.x)) / _scale(problem))
    return Evidence(_describe(problem), worst, 1e-12, worst <= 1e-12)


def _fixed_point_evidence(problem: Problem, alg: Any, T: np.ndarray, fp: np.ndarray) -> Evidence:
    rho = float(np.max(np.abs(np.linalg.eigvals(T))))
    rounds = _rounds_for(rho)
    state = _iterate(alg, problem, rounds)
    err = float(np.linalg.norm(state.x - fp)) / max(1.0, float(np.linalg.norm(fp)))
    bias = float(np.linalg.norm(fp - problem.certificate.x_star))
    # "Differs from x*" is asserted with a margin far above the identity tolerance.
    biased = bias > 1e-6 * _scale(problem)
    return Evidence(_describe(problem), err, IDENTITY_TOL, err <= IDENTITY_TOL and biased,
                    details={"bias_norm": bias, "spectral_radius": rho, "rounds": rounds})


@claim(id="classic.fedavg.fixed_point", paper=PAPER,
       reference="McMahan et al. 2017, Alg. 1; fixed point derived by fedtheory (docs/classic.md)",
       statement="K-step FedAvg (local GD, full participation) converges to (sum_i w_i M_i)^{-1} sum_i w_i M_i x_i*, "
                 "M_i = I - (I - eta A_i)^K (1e-10 relative), which differs from x* under heterogeneous Hessians "
                 "and gradients",
       kind="fixed_point", instances=_heterogeneous)
def check_fedavg_fixed_point(problem: Problem) -> Evidence:
    eta, K = 1.0 / problem.certificate.L, 5
    T, _ = fedavg_map(problem, K, eta)
    return _fixed_point_evidence(problem, FedAvg(local_steps=K, local_step=eta), T,
                                 fedavg_fixed_point(problem, K, eta))


@claim(id="classic.fedprox.fixed_point", paper=PAPER,
       reference="Li et al. 2020, eq. (2); fixed point derived by fedtheory (docs/classic.md)",
       statement="FedProx with exact local solves converges to [sum_i w_i (A_i + lam I)^{-1} A_i]^{-1} "
                 "sum_i w_i (A_i + lam I)^{-1} b_i (1e-10 relative), which differs from x* under heterogeneous "
                 "Hessians and gradients",
       kind="fixed_point", instances=_heterogeneous)
def check_fedprox_fixed_point(problem: Problem) -> Evidence:
    lam = problem.certificate.L
    T, _ = fedprox_map(problem, lam)
    return _fixed_point_evidence(problem, FedProx(prox=lam), T, fedprox_fixed_point(problem, lam))


@claim(id="classic.drift.equal_hessians_unbiased", paper=PAPER,
       reference="derived by fedtheory (not stated in the papers): the drift vector v vanishes when all A_i are "
                 "equal (module docstring)",
       statement="When all A_i are equal (any b_i), the FedAvg (K = 5) and FedProx fixed points equal x* "
                 "(1e-10 relative) and both algorithms converge to x*",
       kind="fixed_point", instances=_equal_hessians)
def check_equal_hessians_unbiased(problem: Problem) -> Evidence:
    c = problem.certificate
    eta, K, lam = 1.0 / c.L, 5, c.L
    fps = {"fedavg": fedavg_fixed_point(problem, K, eta), "fedprox": fedprox_fixed_point(problem, lam)}
    errs = {k: float(np.linalg.norm(v - c.x_star)) / _scale(problem) for k, v in fps.items()}
    for name, alg, T in (("fedavg_run", FedAvg(local_steps=K, local_step=eta), fedavg_map(problem, K, eta)[0]),
                         ("fedprox_run", FedProx(prox=lam), fedprox_map(problem, lam)[0])):
        state = _iterate(alg, problem, _rounds_for(float(np.max(np.abs(np.linalg.eigvals(T))))))
        errs[name] = float(np.linalg.norm(state.x - c.x_star)) / _scale(problem)
    worst = max(errs.values())
    return Evidence(_describe(problem), worst, IDENTITY_TOL, worst <= IDENTITY_TOL, details=errs)


def _bias_counterexample(thorough: bool) -> Iterable[Problem]:
    # Found by a search over n = 2, d = 2 (seed 51 is the first whose bias curve peaks at K = 7 and then falls).
    yield quadratic(2, 2, mu=0.1, L=1.0, delta_B=0.36, zeta2=1.0, seed=51)


@claim(id="classic.fedavg.bias_monotone_in_K", paper=PAPER,
       reference="a common reading of client drift (Karimireddy et al. 2020, Section 3), not a theorem; fixed "
                 "point derived by fedtheory (docs/classic.md)",
       statement="FedAvg's fixed-point bias ||x_K - x*|| grows with the number K of local steps",
       kind="counterexample", instances=_bias_counterexample, expected="violated")
def check_fedavg_bias_monotone(problem: Problem) -> Evidence:
    """Computes the closed-form bias for K = 1..30 with eta = 1/L; the statement holds iff it never decreases."""
    eta = 1.0 / problem.certificate.L
    bias = np.array([fedavg_bias(problem, K, eta) for K in range(1, 31)])
    drops = np.diff(bias)
    worst = float(drops.min())
    holds = bool(worst >= -1e-12 * bias.max())
    k_peak = int(np.argmax(bias)) + 1
    return Evidence(_describe(problem), worst, 0.0, holds,
                    details={"bias_by_K": bias, "K_peak": k_peak, "bias_peak": float(bias.max()),
                             "bias_K30": float(bias[-1]), "eta": eta,
                             "generator": "quadratic(2, 2, mu=0.1, L=1.0, delta_B=0.36, zeta2=1.0, seed=51)"})


def _bias_rate_instances(thorough: bool) -> Iterable[Problem]:
    yield from _heterogeneous(thorough)


@claim(id="classic.fedavg.bias_monotone_in_K.corrected", paper=PAPER, reference="derived here (module docstring)",
       statement="For small local steps FedAvg's bias grows linearly in K: ||x_K - x*|| = eta (K-1)/2 ||v|| "
                 "(1 + O(eta K L)), v = Abar^{-1} sum_i w_i A_i grad f_i(x*); checked as a first-order rate: the "
                 "relative error is <= 10 eta K L at eta K L = 1e-3 and 1e-4, where the bias is increasing in "
                 "K = 1..10",
       kind="rate", instances=_bias_rate_instances, derived=True)
def check_fedavg_bias_first_order(problem: Problem) -> Evidence:
    """Relative error of the first-order formula at eta K L = 1e-3 and 1e-4 against 10 eta K L.

    (A ratio test between two step sizes is not robust: the error is a x + b x^2 with x = eta K L and can
    change sign, which hypothesis found; an O(x) bound with constant 10 at two scales is what we assert.)
    """
    c = problem.certificate
    nv = float(np.linalg.norm(drift_vector(problem)))
    K = 5
    errs = {}
    for etaKL in (1e-3, 1e-4):
        eta = etaKL / (K * c.L)
        errs[etaKL] = abs(fedavg_bias(problem, K, eta) / (eta * (K - 1) / 2 * nv) - 1.0)
    eta = 1e-3 / (10 * c.L)
    bias = np.array([fedavg_bias(problem, k, eta) for k in range(1, 11)])
    increasing = bool(np.all(np.diff(bias) > 0))
    tight = max(errs[x] / (10 * x) for x in errs)
    holds = tight <= 1.0 and increasing and nv > 0
    return Evidence(_describe(problem), errs[1e-3], 1e-2, holds, tightness=tight,
                    details={"rel_err_etaKL_1e-3": errs[1e-3], "rel_err_etaKL_1e-4": errs[1e-4],
                             "drift_vector_norm": nv, "increasing_K_1_10": increasing})


@claim(id="classic.fedavg.bias_linear_in_zeta", paper=PAPER,
       reference="derived by fedtheory (not stated in the papers; docs/classic.md)",
       statement="At fixed Hessians and fixed direction of the client-gradient heterogeneity, FedAvg's and "
                 "FedProx's fixed-point bias is exactly proportional to zeta = sqrt(zeta2) (1e-10 relative), so it "
                 "grows with zeta2",
       kind="identity", instances=lambda thorough: [dict(n_clients=4, dim=3, mu=0.2, L=2.0, delta_B=0.6, seed=0),
                                                     dict(n_clients=5, dim=4, mu=0.5, L=5.0, delta_A=1.0,
                                                          hessians="diagonal", seed=1)])
def check_bias_linear_in_zeta(kw: dict) -> Evidence:
    """The generator keeps A_i and the direction of grad f_i(x*) fixed for a fixed seed; zeta2 scales them."""
    zetas2 = (0.25, 1.0, 4.0, 16.0)
    problems = [quadratic(zeta2=z, **kw) for z in zetas2]
    eta = 1.0 / problems[0].certificate.L
    per_unit = {"fedavg": [fedavg_bias(p, 5, eta) / math.sqrt(z) for p, z in zip(problems, zetas2)],
                "fedprox": [fedprox_bias(p, 1.0) / math.sqrt(z) for p, z in zip(problems, zetas2)]}
    spread = max((max(v) - min(v)) / max(v) for v in per_unit.values())
    desc = "quadratic(" + ", ".join(f"{k}={v}" for k, v in kw.items()) + ", zeta2 in (0.25, 1, 4, 16))"
    return Evidence(desc, spread, IDENTITY_TOL, spread <= IDENTITY_TOL and min(per_unit["fedavg"]) > 0,
                    details={"bias_over_zeta": per_unit})


@claim(id="classic.fedprox.bias_inverse_lambda.derived", paper=PAPER,
       reference="derived by fedtheory (module docstring; not stated in the papers, which say only that FedProx "
                 "drifts: Li et al. 2020; Kim et al., Section 3)",
       statement="FedProx's bias shrinks like 1/lambda: lambda ||x_lambda - x*|| -> ||v|| (v as for FedAvg); the "
                 "relative error is <= 1e-2 at lambda = 1e3 L kappa_f and <= 1e-3 at 10x that "
                 "lambda (it is O(L/lambda))",
       kind="rate", instances=_heterogeneous, derived=True)
def check_fedprox_bias_rate(problem: Problem) -> Evidence:
    """Relative error of lambda * bias against ||v|| at lambda0 = 1e3 L kappa_f and 10 lambda0."""
    c = problem.certificate
    nv = float(np.linalg.norm(drift_vector(problem)))
    base = 1e3 * c.L * (c.L_f / c.mu_f)
    errs = [abs(lam * fedprox_bias(problem, lam) / nv - 1.0) for lam in (base, 10 * base)]
    tight = max(errs[0] / 1e-2, errs[1] / 1e-3)
    return Evidence(_describe(problem), errs[0], 1e-2, tight <= 1.0, tightness=tight,
                    details={"rel_err": errs, "drift_vector_norm": nv, "lambda": base})


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


def _logistic(thorough: bool) -> Iterable[Problem]:
    """Small synthetic logistic problems (FedProx's Synthetic(1, 1), size-weighted clients; Newton certificate)."""
    from ..problems.logistic import logistic

    grid = [dict(n_clients=4, dim=4, reg=0.3, samples=[20, 25, 30, 35], seed=0),
            dict(n_clients=3, dim=3, reg=0.5, samples=[20, 25, 30], seed=1)]
    if thorough:
        grid += [dict(n_clients=6, dim=8, reg=0.1, samples=[30] * 6, seed=s) for s in range(2, 4)]
    for kw in grid:
        yield logistic("synthetic", **kw)


def _convergence_instances(thorough: bool) -> Iterable[Problem]:
    yield from _heterogeneous(thorough)
    yield from _logistic(thorough)


@claim(id="classic.drift_corrected.converge", paper=PAPER,
       reference="Karimireddy et al. 2020 (SCAFFOLD); Acar et al. 2021 (FedDyn); Mishchenko et al. 2022 (Scaffnew)",
       statement="SCAFFOLD (options I and II), FedDyn (exact and local-GD solves) and Scaffnew converge to x* "
                 "(||x - x*|| <= 1e-10 relative) on heterogeneous problems under full participation, and "
                 "SCAFFOLD and FedDyn also under uniform sampling of n/2 clients and Bernoulli(1/2) participation; "
                 "instances: heterogeneous quadratics and synthetic logistic regression with size-weighted clients",
       kind="fixed_point", instances=_convergence_instances)
def check_drift_corrected_converge(problem: Problem) -> Evidence:
    scale = _scale(problem)
    errs: dict[str, float] = {}
    for scheme in _partial_schemes(problem.n_clients):
        for name, alg in _drift_free_algorithms(problem, scheme).items():
            state = _iterate(alg, problem, 6000, stop_dist=1e-12 * scale)
            err = float(np.linalg.norm(state.x - problem.certificate.x_star)) / scale
            errs[f"{name}/{type(scheme).__name__}"] = err
    worst = max(errs.values())
    return Evidence(_describe(problem), worst, IDENTITY_TOL, worst <= IDENTITY_TOL, details=errs)


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
       kind="fixed_point", instances=lambda thorough: [*_small_enumerable(thorough), *_logistic(False)][
           : None if thorough else 3])
def check_fixed_point_every_draw(problem: Problem) -> Evidence:
    c = problem.certificate
    scale = max(1.0, float(np.abs(problem.grads(problem.broadcast(c.x_star))).max()), _scale(problem))
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
    return Evidence(_describe(problem), worst, 1e-12, worst <= 1e-12, details=worst_by)


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
       kind="invariant", instances=_heterogeneous)
def check_server_state_invariants(problem: Problem) -> Evidence:
    worst_by = {}
    for name, alg in _invariant_algorithms(problem).items():
        errs = []

        def record(state, log, errs=errs):
            server, clients = (state.c, state.C) if isinstance(state, ScaffoldState) else (state.h, state.G)
            mean = problem.weights @ clients
            errs.append(float(np.abs(server - mean).max()) / max(1.0, float(np.abs(clients).max())))

        _iterate(alg, problem, 60, seed=1, callback=record)
        worst_by[name] = max(errs)
    worst = max(worst_by.values())
    return Evidence(_describe(problem), worst, 1e-12, worst <= 1e-12, details=worst_by)


# ---------------------------------------------------------------------------------------------------------
# Exact expectations under partial participation
# ---------------------------------------------------------------------------------------------------------

def _mid_trajectory_state(alg: Any, problem: Problem, rounds: int = 7) -> Any:
    return _iterate(alg, problem, rounds, seed=3)


@claim(id="classic.partial.expected_update", paper=PAPER,
       reference="Acar et al. 2021 (proof of Thm 1: E[gamma^t - gamma^{t-1}]); Karimireddy et al. 2020 Alg. 1; "
                 "McMahan et al. 2017",
       statement="Exact expectations over all participation outcomes (uniform weights): (a) FedAvg with uniform "
                 "S-of-n sampling has E[x+] = the full-participation x+, and with Bernoulli(p) participation and "
                 "normalize='all', E[x+] = x + sum_i p w_i Delta_i; (b) SCAFFOLD with S-of-n sampling has E[x+] = "
                 "full-participation x+ and E[c+] - c = (S/n)(c_full+ - c); (c) FedDyn (exact solves) has "
                 "E[gamma^t] - gamma^{t-1} = -(1/(alpha n)) sum_k grad f_k(theta~_k), gamma = x + h/alpha, from a "
                 "mid-trajectory state (1e-12 relative)",
       kind="identity", instances=_small_enumerable)
def check_partial_expectations(problem: Problem) -> Evidence:
    if not np.allclose(problem.weights, 1.0 / problem.n_clients):
        raise ValueError("this identity is stated for uniform weights")
    c = problem.certificate
    n = problem.n_clients
    S = max(1, n // 2)
    errs = {}
    scale = _scale(problem)

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
    return Evidence(_describe(problem), worst, 1e-12, worst <= 1e-12, details=errs)


# ---------------------------------------------------------------------------------------------------------
# ProxSkip / Scaffnew: expected Lyapunov contraction, exactly over both coins
# ---------------------------------------------------------------------------------------------------------

def _proxskip_make(kw: dict) -> tuple[Problem, float, float, str]:
    problem = quadratic(**{k: v for k, v in kw.items() if k not in ("gamma_L", "p", "h_init")})
    return problem, kw["gamma_L"] / problem.certificate.L, kw["p"], kw.get("h_init", "zero")


#: Theorem 3.6's class: mu-strongly convex L-smooth clients (quadratics), gamma <= 1/L, p in (0, 1]; any start
#: (h_init="gradient" is the authors' code's h^0; docs/fedred.md, "fedtheory vs the authors' code").
_PROXSKIP_SPACE = quadratic_space(
    defaults=tuple({**kw, "gamma_L": 1.0, "p": p} for kw in _SMALL for p in (0.2, 0.5, 1.0))
    + ({**_SMALL[0], "gamma_L": 1.0, "p": 0.5, "h_init": "gradient"},),
    thorough=tuple({**kw, "gamma_L": 0.3, "p": 0.1} for kw in _SMALL),
    extra=(Param("gamma_L", 0.05, 1.0), Param("p", 0.02, 1.0, log=True)), make=_proxskip_make)


@claim(id="classic.scaffnew.expected_contraction", paper=PAPER,
       reference="Mishchenko et al. 2022, Thm 3.6 (ProxSkip) applied to Scaffnew",
       statement="For mu-strongly convex L-smooth f_i, gamma <= 1/L, p in (0, 1]: E[Psi_{t+1} | state_t] <= "
                 "(1 - min{gamma mu, p^2}) Psi_t, Psi = sum_i w_i ||x_i - x*||^2 + (gamma/p)^2 sum_i w_i "
                 "||h_i - grad f_i(x*)||^2; expectation computed exactly over both coin outcomes at 60 states "
                 "along a sampled trajectory (full participation)",
       kind="bound", space=_PROXSKIP_SPACE)
def check_scaffnew_contraction(instance: tuple[Problem, float, float, str]) -> Evidence:
    problem, gamma, p, h_init = instance
    c = problem.certificate
    alg = Scaffnew(step=gamma, p=p, h_init=h_init)
    q = proxskip_contraction(c.mu, c.L, gamma, p)
    xs = c.x_star
    H_star = problem.grads(problem.broadcast(xs))
    w = problem.weights

    def psi(state: ScaffnewState) -> float:
        return proxskip_lyapunov(state.X, state.H, xs, H_star, gamma, p, w)

    worst = 0.0
    for state in trajectory(alg, problem, alg.init(problem, np.zeros(problem.dim)), 60, np.random.default_rng(0),
                            potential=psi):
        worst = max(worst, expectation(alg, problem, state, psi) / psi(state))
    start = "" if h_init == "zero" else f" h_init={h_init}"
    return Evidence(f"{_describe(problem)} gamma={gamma:.3g} p={p}{start}", worst, q, worst <= q * (1 + 1e-12),
                    tightness=worst / q)


@claim(id="classic.scaffnew.partial_participation", paper=PAPER, reference="this library's variant "
       "(fedtheory.algorithms.scaffnew); no theorem",
       statement="Scaffnew with partial participation (participants average among themselves at a communication "
                 "and update their h_i) -- measured: final ||x - x*|| (relative) after 6000 iterations; with a "
                 "single participant no information is exchanged, so it cannot converge",
       kind="qualitative", instances=_heterogeneous, expected="exploratory")
def check_scaffnew_partial(problem: Problem) -> Evidence:
    """Measured only (no theorem); the default instances are the quadratics."""
    scale = _scale(problem)
    errs = {}
    for scheme in (UniformSubset(max(1, problem.n_clients // 2)), UniformSubset(min(2, problem.n_clients)),
                   Bernoulli(0.5)):
        alg = Scaffnew(step=1.0 / problem.certificate.L, p=0.5, participation=scheme)
        state = _iterate(alg, problem, 6000, stop_dist=1e-12 * scale)
        errs[repr(scheme)] = float(np.linalg.norm(state.x - problem.certificate.x_star)) / scale
    worst = max(errs.values())
    return Evidence(_describe(problem), worst, IDENTITY_TOL, worst <= IDENTITY_TOL, details=errs)
