"""Worst cases over whole function classes: performance estimation (PEP) with PEPit (docs/worst-case.md).

Exact for GD, FedAvg and Scaffnew; for DANE and FedRed-GD an upper bound over a two-client relaxation of the
delta-similar class (:func:`_impose_similarity`).

A performance-estimation problem asks for the largest value of a performance measure (here a distance or a
Lyapunov function after one or two rounds) over *every* function of a class (L-smooth, mu-strongly convex, ...)
and every starting point in an initial set; Drori & Teboulle (2014) and Taylor, Hendrickx & Glineur (2017) turn
it into a semidefinite program whose value is exact for the classes used here (their interpolation conditions
are necessary and sufficient). PEPit (Goujaud et al. 2024; package ``pepit``, the optional ``worst-case`` extra)
builds the SDP; cvxpy solves it with the interior-point solver CLARABEL (installed with cvxpy >= 1.4), not cvxpy's
default first-order SCS, whose values here were off by 1e-6 (GD) to 4e-3 (DANE, two rounds) relative. Measured
against the closed forms (GD's max((1 - gamma mu)^2, (1 - gamma L)^2) and Scaffnew's max(1 - p^2, (1 - gamma mu)^2)
over grids, ``tests/test_pep.py``), CLARABEL's values are accurate to :data:`SOLVER_REL_ACCURACY` relative.

PEPit ships no federated example. The formulations (docs/worst-case.md has them in full):

* :func:`gd_contraction`: one GD step on f in F(mu, L): max ||x1 - x*||^2 / ||x0 - x*||^2; closed form
  max((1 - gamma mu)^2, (1 - gamma L)^2).
* :func:`fedavg_round`: n clients f_i in F(mu, L), f = mean f_i with minimiser x*, heterogeneity
  mean_i ||grad f_i(x*)||^2 <= zeta2; from ||x0 - x*||^2 <= 1, K local GD steps per client, x1 = mean of the
  local models; max ||x1 - x*||^2. Exact for n clients.
* :func:`proxskip_lyapunov`: Scaffnew (ProxSkip) with n clients f_i in F(mu, L), any local models x_i and control
  variates h_i with sum_i h_i = 0 (the invariant Scaffnew keeps); max E[Psi_{t+1}] / Psi_t over both coin
  outcomes, Psi = mean_i ||x_i - x*||^2 + (gamma/p)^2 mean_i ||h_i - grad f_i(x*)||^2 (the ledger's
  ``classic.scaffnew.expected_contraction``).
* :func:`dane_rounds`: two clients f_1 = f + h, f_2 = f - h with f in F(mu, L) and h delta-smooth (any
  curvature in [-delta, delta], so ||grad^2 f_i - grad^2 f|| <= delta and sum_i h_i = 0 exactly: delta-Hessian
  similarity with delta_A = delta_B = delta); DANE with exact local solves (an implicit step, the local
  optimality condition imposed on new points); max ||x_R - x*||^2 / ||x_0 - x*||^2 for R = 1, 2 rounds.
* :func:`fedred_gd_lyapunov`: the same two-client class; one FedRed-GD iteration (linearised local step,
  communication with probability p, standard averaging, optional reset); max E[Phi_{k+1}] / Phi_k over both coin
  outcomes, Phi = mean_i ||x_i - x*||^2/(2 eta) + (lam + mu)/(2p) ||x~ - x*||^2 (the ledger's
  ``fedred.fedred_gd.lyapunov.derived``), with or without the reset (``reset=``).

Every function returns the SDP's optimal value (a float). A ledger claim with a PEP counterpart declares it at its
decorator, ``@claim(..., pep=fn)`` with fn: instance -> (PEP value, the claim's bound at that instance) built from
these functions (e.g. ``classic.gd.contraction`` in fedtheory/claims/classic/gd.py); :func:`claim_pep_tightness`
reports the largest, over the claim's default points, of PEP value / bound (the bound's exact tightness over the
whole function class; for DANE and FedRed-GD an upper bound on it, over the two-client relaxation). This module imports nothing from :mod:`fedtheory.claims`.
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any

from .validation import check_int, check_positive

__all__ = ["SOLVER", "SOLVER_REL_ACCURACY", "available", "gd_contraction", "fedavg_round", "proxskip_lyapunov", "dane_rounds", "fedred_gd_lyapunov",
           "claim_pep_tightness"]


#: The SDP solver: CLARABEL, an interior-point method (cvxpy's default for these problems would be SCS, a
#: first-order method accurate only to about 1e-4 of its residuals).
SOLVER = "CLARABEL"

#: The relative accuracy of every value this module returns, stated with margin: the largest relative error
#: measured against closed forms (GD over F(mu, L) and Scaffnew's Lyapunov factor, on the grids of
#: ``tests/test_pep.py``) is 6e-8; 1e-6 leaves a factor 15 for other parameters and solver versions.
SOLVER_REL_ACCURACY = 1e-6


def available() -> bool:
    """Whether PEPit (the ``worst-case`` extra) is installed."""
    try:
        import PEPit  # noqa: F401
    except ImportError:
        return False
    return True


def _pepit():
    try:
        from PEPit import PEP, Expression, Point
        from PEPit.functions import SmoothFunction, SmoothStronglyConvexFunction
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("fedtheory.pep needs PEPit: pip install 'fedtheory[worst-case]'") from exc
    return PEP, Point, Expression, SmoothFunction, SmoothStronglyConvexFunction


def _check_class(mu: float, L: float) -> tuple[float, float]:
    mu = check_positive("mu", mu)
    L = check_positive("L", L)
    if L < mu:
        raise ValueError(f"L must be >= mu, got L={L} < mu={mu}")
    return float(mu), float(L)


def _solve(problem: Any) -> float:
    """The PEP's worst-case value (PEPit's dual value) by :data:`SOLVER`. CLARABEL sometimes stops at "almost
    solved" (cvxpy's ``optimal_inaccurate``: a feasibility residual above its tolerance); such a value is returned
    only when the duality gap (PEPit's dual value against cvxpy's primal objective) is within
    :data:`SOLVER_REL_ACCURACY`, and any other status is an error."""
    import cvxpy  # here, not at the top: cvxpy takes 0.9 s to import; only a solve needs it

    if SOLVER not in cvxpy.installed_solvers():
        raise ImportError(f"fedtheory.pep solves with {SOLVER}, which cvxpy does not find: pip install clarabel")
    with warnings.catch_warnings():
        # the status is checked below, with the duality gap
        warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
        value = problem.solve(wrapper="cvxpy", solver=SOLVER, verbose=0)
    status, primal = problem.wrapper.prob.status, problem.wrapper.prob.value
    if value is None or not math.isfinite(value) or status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"the PEP's SDP did not solve ({SOLVER} status {status}, value {value})")
    if status == "optimal_inaccurate" and not abs(primal - value) <= SOLVER_REL_ACCURACY * max(1.0, abs(value)):
        raise RuntimeError(f"the PEP's SDP solved inaccurately ({SOLVER}): primal {primal} and dual {value} differ "
                           f"by more than {SOLVER_REL_ACCURACY:g} relative")
    return float(value)


@functools.lru_cache(maxsize=256)
def gd_contraction(mu: float, L: float, gamma: float) -> float:
    """max ||x1 - x*||^2 / ||x0 - x*||^2 of x1 = x0 - gamma grad f(x0) over f in F(mu, L), gamma in (0, 2/L)."""
    mu, L = _check_class(mu, L)
    gamma = check_positive("gamma", gamma)
    if gamma >= 2.0 / L:
        raise ValueError(f"gamma must be in (0, 2/L) = (0, {2.0 / L}), got {gamma}")
    if L == mu:  # F(mu, mu) holds one function up to shifts, mu/2 ||x - x*||^2 (PEPit's conditions divide by L - mu)
        return (1.0 - gamma * mu) ** 2
    PEP, _, _, _, Strong = _pepit()
    p = PEP()
    f = p.declare_function(Strong, mu=mu, L=L)
    xs = f.stationary_point()
    x0 = p.set_initial_point()
    p.set_initial_condition((x0 - xs) ** 2 <= 1)
    p.set_performance_metric((x0 - gamma * f.gradient(x0) - xs) ** 2)
    return _solve(p)


@functools.lru_cache(maxsize=256)
def fedavg_round(mu: float, L: float, gamma: float, K: int, n: int = 2, zeta2: float = 0.0) -> float:
    """max ||x1 - x*||^2 over n clients f_i in F(mu, L) with mean_i ||grad f_i(x*)||^2 <= zeta2 (x* the minimiser
    of f = mean f_i), ||x0 - x*||^2 <= 1, and one FedAvg round: K local GD steps of size gamma, x1 = mean."""
    mu, L = _check_class(mu, L)
    gamma = check_positive("gamma", gamma)
    K, n = check_int("K", K, low=1), check_int("n", n, low=1)
    if zeta2 < 0 or not math.isfinite(zeta2):
        raise ValueError(f"zeta2 must be a finite number >= 0, got {zeta2}")
    PEP, _, _, _, Strong = _pepit()
    p = PEP()
    fs = [p.declare_function(Strong, mu=mu, L=L) for _ in range(n)]
    total = fs[0]
    for f in fs[1:]:
        total = total + f
    xs = total.stationary_point()
    x0 = p.set_initial_point()
    p.set_initial_condition((x0 - xs) ** 2 <= 1)
    heterogeneity = fs[0].gradient(xs) ** 2
    for f in fs[1:]:
        heterogeneity = heterogeneity + f.gradient(xs) ** 2
    p.add_constraint(heterogeneity <= n * zeta2)
    models = []
    for f in fs:
        y = x0
        for _ in range(K):
            y = y - gamma * f.gradient(y)
        models.append(y)
    x1 = models[0]
    for y in models[1:]:
        x1 = x1 + y
    p.set_performance_metric((x1 / n - xs) ** 2)
    return _solve(p)


def _sum(points: list) -> Any:
    total = points[0]
    for q in points[1:]:
        total = total + q
    return total


@functools.lru_cache(maxsize=256)
def proxskip_lyapunov(mu: float, L: float, gamma: float, p: float, n: int = 2) -> float:
    """max E[Psi_{t+1}] / Psi_t for Scaffnew with n clients f_i in F(mu, L), step gamma <= 1/L, coin p, over every
    state (x_i, h_i) with sum_i h_i = 0; Psi = mean ||x_i - x*||^2 + (gamma/p)^2 mean ||h_i - grad f_i(x*)||^2."""
    mu, L = _check_class(mu, L)
    gamma = check_positive("gamma", gamma)
    if gamma > 1.0 / L:
        raise ValueError(f"gamma must be in (0, 1/L] = (0, {1.0 / L}], got {gamma}")
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p must be in (0, 1], got {p}")
    n = check_int("n", n, low=2)
    PEP, _, _, _, Strong = _pepit()
    pep = PEP()
    fs = [pep.declare_function(Strong, mu=mu, L=L) for _ in range(n)]
    xs = _sum(fs).stationary_point()
    hs_star = [f.gradient(xs) for f in fs]
    X = [pep.set_initial_point() for _ in range(n)]
    H = [pep.set_initial_point() for _ in range(n - 1)]
    H.append(-1 * _sum(H))  # sum_i h_i = 0, exactly

    def psi(models: list, cvs: list) -> Any:
        return (_sum([(x - xs) ** 2 for x in models]) + (gamma / p) ** 2 * _sum(
            [(h - hs) ** 2 for h, hs in zip(cvs, hs_star)])) / n

    pep.set_initial_condition(psi(X, H) <= 1)
    X_hat = [x - gamma * (f.gradient(x) - h) for f, x, h in zip(fs, X, H)]
    x_bar = _sum(X_hat) / n
    communicate = psi([x_bar] * n, [h + (p / gamma) * (x_bar - xh) for h, xh in zip(H, X_hat)])
    skip = psi(X_hat, H)
    pep.set_performance_metric(p * communicate + (1 - p) * skip)
    return _solve(pep)


def _similar_clients(pep: Any, mu: float, L: float) -> tuple[Any, Any]:
    """Two clients f_1, f_2 in F(mu, L) (each mu-strongly convex and L-smooth, as the theorems assume)."""
    _, _, _, _, Strong = _pepit()
    return pep.declare_function(Strong, mu=mu, L=L), pep.declare_function(Strong, mu=mu, L=L)


def _impose_similarity(pep: Any, f1: Any, f2: Any, points: list, delta: float) -> None:
    """delta-Hessian similarity of two clients at the evaluated points: h = (f_1 - f_2)/2 = f_1 - f (and
    f - f_2) satisfies the interpolation conditions of delta-smooth functions (PEPit's SmoothFunction, Taylor et
    al. 2017), h_i - h_j >= -delta/4 ||x_i - x_j||^2 + 1/2 <g_i + g_j, x_i - x_j> + 1/(4 delta) ||g_i - g_j||^2,
    for every pair of points. For two clients with equal weights this is delta_A = delta_B = delta (the
    Hessians of quadratic f_1, f_2 satisfy ||A_i - Abar|| <= delta). Conditions on a combination of two
    functions are necessary, not sufficient: the PEP is then a relaxation, an upper bound on the worst case."""
    data = []
    for x in points:
        g1, v1 = f1.oracle(x)
        g2, v2 = f2.oracle(x)
        data.append((x, (g1 - g2) / 2, (v1 - v2) / 2))
    for i, (xi, gi, hi) in enumerate(data):
        for j, (xj, gj, hj) in enumerate(data):
            if i != j:
                pep.add_constraint(hi - hj >= -delta / 4 * (xi - xj) ** 2 + 1 / 2 * (gi + gj) * (xi - xj)
                                   + 1 / (4 * delta) * (gi - gj) ** 2)


def _check_similarity(mu: float, L: float, delta: float, lam: float) -> tuple[float, float, float, float]:
    mu, L = _check_class(mu, L)
    delta = check_positive("delta", delta)
    lam = check_positive("lam", lam)
    return mu, L, delta, lam


@functools.lru_cache(maxsize=256)
def dane_rounds(mu: float, L: float, delta: float, lam: float, rounds: int = 1, measure: str = "distance") -> float:
    """The worst case of exact DANE over two clients f_1, f_2 in F(mu, L) with delta-Hessian similarity
    (:func:`_impose_similarity`; an upper bound): x_i = argmin f_i(x) + <grad f(x^r) - grad f_i(x^r), x> +
    lam/2 ||x - x^r||^2, x^{r+1} = (x_1 + x_2)/2, f = (f_1 + f_2)/2.

    ``measure="distance"``: max ||x_R - x*||^2 / ||x_0 - x*||^2 after R = ``rounds`` rounds.
    ``measure="lyapunov"`` (one round): max [f(x^1) - f* + (lam + mu)/2 mean_i ||x_i - x*||^2] / (lam/2 ||x^0 -
    x*||^2), the ratio of the two sides of (B.14) that the ledger's ``fedred.dane.lyapunov`` measures."""
    mu, L, delta, lam = _check_similarity(mu, L, delta, lam)
    rounds = check_int("rounds", rounds, low=1)
    if measure not in ("distance", "lyapunov"):
        raise ValueError(f"measure must be 'distance' or 'lyapunov', got {measure!r}")
    if measure == "lyapunov" and rounds != 1:
        raise ValueError("measure='lyapunov' is the one-round inequality (B.14): rounds must be 1")
    PEP, Point, Expression, _, _ = _pepit()
    pep = PEP()
    f1, f2 = _similar_clients(pep, mu, L)
    xs = (f1 + f2).stationary_point()
    x = pep.set_initial_point()
    pep.set_initial_condition((x - xs) ** 2 <= (1 if measure == "distance" else 2 / lam))
    points = [xs, x]
    for _ in range(rounds):
        g1, g2 = f1.gradient(x), f2.gradient(x)
        g_mean = (g1 + g2) / 2
        local = []
        for f_i, g_i in ((f1, g1), (f2, g2)):
            # x_i solves grad f_i(x_i) - grad f_i(x^r) + grad f(x^r) + lam (x_i - x^r) = 0: an implicit step on a
            # new point whose gradient PEPit's interpolation conditions tie to f_i
            g_new = Point()
            x_i = x - (g_new - g_i + g_mean) / lam
            f_i.add_point((x_i, g_new, Expression()))
            local.append(x_i)
        x = (local[0] + local[1]) / 2
        points += [*local, x]
    _impose_similarity(pep, f1, f2, points, delta)
    if measure == "distance":
        pep.set_performance_metric((x - xs) ** 2)
    else:
        f_gap = (f1(x) + f2(x) - f1(xs) - f2(xs)) / 2
        pep.set_performance_metric(f_gap + (lam + mu) / 4 * ((local[0] - xs) ** 2 + (local[1] - xs) ** 2))
    return _solve(pep)


@functools.lru_cache(maxsize=256)
def fedred_gd_lyapunov(mu: float, L: float, delta: float, lam: float, eta: float, p: float,
                       reset: bool = True) -> float:
    """max E[Phi_{k+1}] / Phi_k of one FedRed-GD iteration over two clients f_1, f_2 in F(mu, L) with
    delta-Hessian similarity (an upper bound, :func:`_impose_similarity`), over every state (x~, x_1, x_2):
    local step x_i+ = (x_i + lam eta x~ - eta (grad f_i(x_i) + h_i)) / (1 + lam eta), h_i = grad f(x~) -
    grad f_i(x~); with probability p, x~+ = mean x_i+ and, with ``reset`` (Alg. 3's optional reset), x_i+ <- x~+;
    without it the clients keep x_i+; Phi = mean ||x_i - x*||^2/(2 eta) + (lam + mu)/(2p) ||x~ - x*||^2."""
    mu, L, delta, lam = _check_similarity(mu, L, delta, lam)
    eta = check_positive("eta", eta)
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p must be in (0, 1], got {p}")
    if not isinstance(reset, bool):
        raise TypeError(f"reset must be a bool, got {type(reset).__name__}")
    PEP, _, _, _, _ = _pepit()
    pep = PEP()
    f1, f2 = _similar_clients(pep, mu, L)
    xs = (f1 + f2).stationary_point()
    xt = pep.set_initial_point()
    X = [pep.set_initial_point() for _ in range(2)]

    def phi(models: list, server: Any) -> Any:
        return ((models[0] - xs) ** 2 + (models[1] - xs) ** 2) / (4 * eta) + (lam + mu) / (2 * p) * (server - xs) ** 2

    pep.set_initial_condition(phi(X, xt) <= 1)
    server_grads = [f1.gradient(xt), f2.gradient(xt)]
    mean_grad = (server_grads[0] + server_grads[1]) / 2
    new = [(X[i] + lam * eta * xt - eta * (f.gradient(X[i]) + mean_grad - server_grads[i])) / (1 + lam * eta)
           for i, f in enumerate((f1, f2))]
    _impose_similarity(pep, f1, f2, [xs, xt, *X], delta)
    server_new = (new[0] + new[1]) / 2
    after_communication = phi([server_new, server_new] if reset else new, server_new)
    pep.set_performance_metric(p * after_communication + (1 - p) * phi(new, xt))
    return _solve(pep)


def claim_pep_tightness(claim: Any) -> float | None:
    """max over the claim's default instances of PEP value / the paper's bound (None when the claim declares no
    ``pep`` formulation, none applies at its instances, or PEPit is not installed): the bound's exact tightness
    over its whole function class (an upper bound on it, over the two-client relaxation, for DANE and FedRed-GD). The formulation is the claim's own ``pep=`` (:attr:`Claim.pep`), declared at
    its ``@claim`` decorator with the functions of this module."""
    formulation = getattr(claim, "pep", None)
    if formulation is None or not available():
        return None
    ratios = []
    for instance in claim.instances(False):
        pair = formulation(instance)
        if pair is not None and pair[1] > 0:
            ratios.append(pair[0] / pair[1])
    return max(ratios) if ratios else None
