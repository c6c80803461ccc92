"""Rates and bounds of Jiang, Rodomanov & Stich (2024), "Federated Optimization with Doubly Regularized Drift
Correction" (DANE, DANE+, FedRed, FedRed-GD), as pure functions of the problem constants.

The paper's formulas were lost in the text conversion; the forms here follow docs/fedred.md Each function
says whether it is the paper's statement as fedtheory reconstructs it or fedtheory's own derived inequality.
Symbols: mu (strong convexity, every f_i), L (smoothness, every f_i), delta_A / delta_B (averaged / bounded
Hessian dissimilarity), lam (proximal weight), eta (FedRed's local-iterate regularization 1/eta), p
(communication probability), D = ||x^0 - x*||, F_0 = f(x^0) - f^inf, eps (target accuracy).
"""
from __future__ import annotations

import math
from typing import Literal, Sequence

from ..validation import check_finite_array, check_int, check_nonnegative, check_positive, check_probability, check_real

__all__ = [
    "dane_contraction", "dane_gap_bound", "dane_rounds_to_eps", "dane_gd_local_steps", "dane_fgd_local_steps",
    "relative_tolerance", "nonconvex_descent_coefficient", "nonconvex_stationarity_bound",
    "fedred_gd_coefficients", "fedred_gd_contraction", "fedred_exact_contraction", "fedred_lyapunov",
    "fedred_balanced_p", "fedred_convex_average_bound", "expected_communications", "gd_rounds",
    "subproblem_condition_number", "table1", "TABLE1_METHODS",
]


def _mu(mu: float) -> float:
    return check_nonnegative("mu", mu)


# ----------------------------------------------------------------------------------------------------------
# DANE (exact local solves): Corollary 21, (B.14)-(B.15)
# ----------------------------------------------------------------------------------------------------------

def dane_contraction(mu: float, lam: float) -> float:
    """Per-round factor of ||x^r - x*||^2 for exact DANE: lam/(lam + mu) (Cor 21 / (B.14); as reconstructed by fedtheory).

    From f(x^{r+1}) - f* + (lam + mu)/2 ||x^{r+1} - x*||^2 <= lam/2 ||x^r - x*||^2 with lam >= 2 delta_A
    (derived by fedtheory; lam >= delta_A suffices for exact solves).
    """
    mu, lam = _mu(mu), check_positive("lam", lam)
    return lam / (lam + mu)


def dane_gap_bound(mu: float, lam: float, D: float, R: int) -> float:
    """f(x^R) - f* <= mu D^2 / (2 [(1 + mu/lam)^R - 1]) <= lam D^2/(2R)  (Cor 21, (B.15); as reconstructed by fedtheory).

    At mu = 0 the bound is its limit lam D^2 / (2R); R = 0 gives +inf (no guarantee without a round).
    """
    mu, lam, D = _mu(mu), check_positive("lam", lam), check_nonnegative("D", D)
    R = check_int("R", R, low=0)
    if R == 0:
        return math.inf
    if mu / lam < 1e-15:
        # The mu -> 0 limit lam D^2/(2R) exceeds the bound by a factor 1 + O(R mu/lam): conservative, and it
        # avoids subnormal arithmetic when mu/lam underflows.
        return lam * D * D / (2.0 * R)
    # expm1/log1p keep the small-mu/lam regime accurate (the bound is continuous in mu).
    t = R * math.log1p(mu / lam)
    if t > 700.0:  # (1 + mu/lam)^R overflows a float; the bound is mu D^2/2 (1 + mu/lam)^{-R} to 1e-304
        return mu * D * D / 2.0 * math.exp(-t)
    return mu * D * D / (2.0 * math.expm1(t))


def dane_rounds_to_eps(mu: float, lam: float, D: float, eps: float) -> int:
    """Rounds after which :func:`dane_gap_bound` is <= eps: ceil(log(1 + mu D^2/(2 eps)) / log(1 + mu/lam))
    (ceil(lam D^2/(2 eps)) at mu = 0). Table 1: O((delta_A/mu) log(1/eps)) and O(delta_A D^2/eps)."""
    mu, lam, D = _mu(mu), check_positive("lam", lam), check_nonnegative("D", D)
    eps = check_positive("eps", eps)
    if mu == 0.0:
        return max(0, math.ceil(lam * D * D / (2.0 * eps)))
    return max(0, math.ceil(math.log1p(mu * D * D / (2.0 * eps)) / math.log1p(mu / lam)))


def relative_tolerance(lam: float, r: int, c: float = math.sqrt(2.0)) -> float:
    """e_r = c lam/(r + 1) of Thm 4's relative rule ||grad F(x_{i,r+1})|| <= e_r ||x_{i,r+1} - x^r||
    (c = sqrt(2) in the authors' code; as reconstructed by fedtheory)."""
    return check_nonnegative("c", c) * check_nonnegative("lam", lam) / (check_int("r", r, low=0) + 1)


def subproblem_condition_number(mu: float, L: float, lam: float, inv_eta: float = 0.0) -> float:
    """Condition number (L + lam + 1/eta)/(mu + lam + 1/eta) of the DANE+/FedRed local subproblem (derived by fedtheory; <= 2
    when 1/eta >= L)."""
    mu = check_real("mu", mu)
    L, lam, inv_eta = check_real("L", L, low=mu), check_nonnegative("lam", lam), check_nonnegative("inv_eta", inv_eta)
    den = mu + lam + inv_eta
    if den <= 0:
        return math.inf
    return (L + lam + inv_eta) / den


def dane_gd_local_steps(mu: float, L: float, lam: float, r: int, c: float = 1.0) -> float:
    """Cor 5, DANE+-GD: local steps at round r <= c ((L + lam)/(mu + lam)) (1 + log((L + lam)(r + 1)/lam)) (as reconstructed by fedtheory).

    From ||grad F(x_K)|| <= (L + lam) exp(-2K/(kappa + 1)) ||x^r - x*_{i,r}|| (Bubeck 2015, Thm 3.12) and
    Thm 4's tolerance e_r = Theta(lam/(r + 1)).
    """
    kappa = subproblem_condition_number(mu, L, lam)
    lam, r, c = check_positive("lam", lam), check_int("r", r, low=0), check_nonnegative("c", c)
    return c * kappa * (1.0 + math.log((L + lam) * (int(r) + 1) / lam))


def dane_fgd_local_steps(mu: float, L: float, lam: float, r: int, c: float = 1.0) -> float:
    """Cor 5, DANE+-FGD: c sqrt((L + lam)/(mu + lam)) (1 + log((L + lam)(r + 1)/lam)) local steps at round r."""
    kappa = subproblem_condition_number(mu, L, lam)
    lam, r, c = check_positive("lam", lam), check_int("r", r, low=0), check_nonnegative("c", c)
    return c * math.sqrt(kappa) * (1.0 + math.log((L + lam) * (int(r) + 1) / lam))


# ----------------------------------------------------------------------------------------------------------
# Non-convex DANE+: Lemma 28, Theorem 1 (derived by fedtheory; constants)
# ----------------------------------------------------------------------------------------------------------

def nonconvex_descent_coefficient(lam: float, delta_B: float) -> float:
    """(lam - delta_B)/2 of Lemma 28: f(x_{i,r+1}) + (lam - delta_B)/2 ||x_{i,r+1} - x^r||^2 <= f(x^r) (derived by fedtheory)."""
    return (check_nonnegative("lam", lam) - check_nonnegative("delta_B", delta_B)) / 2.0


def nonconvex_stationarity_bound(delta_B: float, F0: float, R: int, errors: Sequence[float] = ()) -> float:
    """Thm 1 (derived by fedtheory; form, lam = 2 delta_B): (1/R) sum_{r=1}^R ||grad f(x^r)||^2 <= 36 delta_B F_0/R + (2/R) sum e_r,
    with e_r = max_i ||grad F_{i,r}(x_{i,r+1})||^2."""
    delta_B, F0 = check_nonnegative("delta_B", delta_B), check_nonnegative("F0", F0)
    R = check_int("R", R, low=1)
    errors = check_finite_array("errors", errors, shape=(None,))
    return 36.0 * delta_B * F0 / R + 2.0 * float(errors.sum()) / R


# ----------------------------------------------------------------------------------------------------------
# FedRed and FedRed-GD: Algorithm 3, Lemma 35, Thm 9, Theorem 33
# ----------------------------------------------------------------------------------------------------------

def fedred_gd_coefficients(lam: float, eta: float) -> tuple[float, float, float]:
    """Alg. 3 closed form x_{i,k+1} = a x_{i,k} + b x~_k - s (g + h): (a, b, s) = (1, lam eta, eta)/(1 + lam eta)."""
    lam, eta = check_nonnegative("lam", lam), check_positive("eta", eta)
    q = 1.0 + lam * eta
    return 1.0 / q, lam * eta / q, eta / q


def fedred_lyapunov(A: float, B: float, *, mu: float, lam: float, eta: float, p: float,
                    exact_solver: bool = False) -> float:
    """Phi = c_A A + (lam + mu)/(2p) B with A = mean_i ||x_{i,k} - x*||^2, B = ||x~_k - x*||^2 (derived by fedtheory).

    c_A = 1/(2 eta) for FedRed-GD (Lemma 35) and 1/(2 eta) + mu/2 for the exact solver (Theorem 33).
    """
    mu, lam = _mu(mu), check_nonnegative("lam", lam)
    eta, p = check_positive("eta", eta), check_probability("p", p)
    A, B = check_nonnegative("A", A), check_nonnegative("B", B)
    c_A = 1.0 / (2.0 * eta) + (mu / 2.0 if exact_solver else 0.0)
    return c_A * A + (lam + mu) / (2.0 * p) * B


def fedred_gd_contraction(mu: float, lam: float, eta: float, p: float) -> float:
    """E_theta Phi_{k+1} <= (1 - min{mu eta, p mu/(lam + mu)}) Phi_k for FedRed-GD with lam >= delta_A,
    eta <= 1/L (derived by fedtheory, Lemma 35 form). At mu = 0 the factor is 1 (use the telescoped gap bound)."""
    mu, lam = _mu(mu), check_nonnegative("lam", lam)
    eta, p = check_positive("eta", eta), check_probability("p", p)
    if mu == 0.0:
        return 1.0
    return 1.0 - min(mu * eta, p * mu / (lam + mu))


def fedred_exact_contraction(mu: float, lam: float, eta: float, p: float) -> float:
    """E_theta Phi_{k+1} <= max{1/(1 + mu eta), 1 - p mu/(lam + mu)} Phi_k for Alg. 2 with exact solves and
    lam >= delta_A (derived by fedtheory, Theorem 33; no L needed). ``eta = inf`` is allowed (1/eta = 0)."""
    mu, lam = _mu(mu), check_nonnegative("lam", lam)
    p = check_probability("p", p)
    if not (eta == math.inf):
        eta = check_positive("eta", eta)
    if mu == 0.0:
        return 1.0
    return max(1.0 / (1.0 + mu * eta), 1.0 - p * mu / (lam + mu))


def fedred_balanced_p(mu: float, lam: float, eta: float) -> float:
    """The balanced communication probability p = min(1, (lam + mu) eta) (docs/fedred.md): the two terms of
    :func:`fedred_gd_contraction` coincide and the rate is GD's 1 - mu eta, with a fraction p of communications."""
    return min(1.0, (_mu(mu) + check_nonnegative("lam", lam)) * check_positive("eta", eta))


def fedred_convex_average_bound(D: float, K: int, *, lam: float, eta: float, p: float) -> float:
    """mu = 0: (1/K) sum_{k=1}^K E[f(xbar_k) - f*] <= (1/(2 eta) + lam/(2p)) D^2/K (derived by fedtheory, telescoping Lemma 35)."""
    D, lam = check_nonnegative("D", D), check_nonnegative("lam", lam)
    eta, p = check_positive("eta", eta), check_probability("p", p)
    K = check_int("K", K, low=1)
    return (1.0 / (2.0 * eta) + lam / (2.0 * p)) * D * D / K


def expected_communications(p: float, K: int) -> float:
    """E[#communications] = p K over K iterations (Table 1 footnote 5)."""
    return check_probability("p", p) * check_int("K", K, low=0)


def gd_rounds(mu: float, L: float, D: float, eps: float) -> int:
    """Centralized GD with step 1/L: f(x^R) - f* <= L D^2/2 (1 - mu/L)^{2R} for quadratics with spectrum in
    [mu, L] (and L D^2/(4R)-type for mu = 0: we use L D^2/(2R) rounded up). Table 1's first row."""
    mu, L = _mu(mu), check_positive("L", L)
    D, eps = check_nonnegative("D", D), check_positive("eps", eps)
    if L * D * D / 2.0 <= eps:
        return 0
    if mu == 0.0:
        return math.ceil(L * D * D / (2.0 * eps))
    if mu >= L:
        return 1
    return math.ceil(math.log(2.0 * eps / (L * D * D)) / (2.0 * math.log1p(-mu / L)))


# ----------------------------------------------------------------------------------------------------------
# Table 1 (reconstructed): orders of magnitude with unit constants
# ----------------------------------------------------------------------------------------------------------

Setting = Literal["strongly_convex", "general_convex", "nonconvex"]
TABLE1_METHODS = ("gd", "scaffold", "feddyn", "scaffnew", "sonata", "ce-lgd", "svrp-gd", "dane", "dane+-gd",
                  "dane+-fgd", "fedred-gd")


def table1(method: str, setting: Setting, *, mu: float = 0.0, L: float, delta_A: float = 0.0,
           delta_B: float = 0.0, D: float = 1.0, F0: float = 1.0, eps: float, R: float | None = None
           ) -> dict[str, float | None]:
    """Table 1's complexities with unit constants: ``{"comm": ..., "local_steps": ...}``.

    ``comm`` is the number of communication rounds (expected communications for Scaffnew and FedRed-GD);
    ``local_steps`` the local steps per round (expected steps between communications for Scaffnew/FedRed-GD;
    for DANE+-GD at round R when R is given). ``None`` means "unknown" (no theory) or "-" (exact local
    solves); ``log(1/eps)`` is taken as log(1 + 1/eps) so it is positive. Orders only: compare measured
    counts with these up to a constant, e.g. by fitting slopes or ratios across instances.
    """
    if method not in TABLE1_METHODS:
        raise ValueError(f"method must be one of {TABLE1_METHODS}, got {method!r}")
    if setting not in ("strongly_convex", "general_convex", "nonconvex"):
        raise ValueError(f"setting must be 'strongly_convex', 'general_convex' or 'nonconvex', got {setting!r}")
    mu, L = _mu(mu), check_positive("L", L)
    dA, dB = check_nonnegative("delta_A", delta_A), check_nonnegative("delta_B", delta_B)
    D, F0, eps = check_nonnegative("D", D), check_nonnegative("F0", F0), check_positive("eps", eps)
    log = math.log1p(1.0 / eps)
    sc, gc = setting == "strongly_convex", setting == "general_convex"
    if sc and mu == 0.0:
        raise ValueError("mu must be > 0 for setting='strongly_convex'")
    comm: float | None = None
    local: float | None = None
    if method in ("gd", "scaffold", "feddyn"):
        comm = (L / mu) * log if sc else (L * D * D / eps if gc else L * F0 / eps)
        local = 1.0 if method == "gd" else None
    elif method == "scaffnew":
        if sc:
            comm, local = math.sqrt(L / mu) * log, math.sqrt(L / mu)
    elif method == "sonata":
        if sc:
            comm = (dB / mu) * log
    elif method == "ce-lgd":
        if setting == "nonconvex":
            comm, local = dB * F0 / eps, L / dB if dB > 0 else math.inf
    elif method == "svrp-gd":
        if sc:
            comm = (dA / mu) ** 2 * log
    elif method == "dane":
        if sc:
            comm = (dA / mu) * log
        elif gc:
            comm = dA * D * D / eps
    elif method in ("dane+-gd", "dane+-fgd"):
        comm = (dA / mu) * log if sc else (dA * D * D / eps if gc else dB * F0 / eps)
        if setting == "nonconvex":
            local = L * (R if R is not None else comm) / dB if dB > 0 else math.inf
        else:
            kappa = (L + dA) / (mu + dA) if (mu + dA) > 0 else math.inf
            rr = 1.0 if R is None else float(R)
            logf = math.log((L + dA) * (rr + 1) / dA) if dA > 0 else math.inf
            local = (kappa if method == "dane+-gd" else math.sqrt(kappa)) * max(1.0, logf)
    elif method == "fedred-gd":
        comm = (dA / mu) * log if sc else (dA * D * D / eps if gc else dB * F0 / eps)
        delta = dB if setting == "nonconvex" else dA
        local = L / delta if delta > 0 else math.inf
    return {"comm": comm, "local_steps": local}
