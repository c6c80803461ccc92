"""FedElasticNet's convergence theory (Kim, Woo, Seo & Kim, "Communication-Efficient and Drift-Robust Federated
Learning via Elastic Net") as pure functions of the constants.

Notation: m clients, P = |P_t| sampled per round, d = dim(theta), every L_k convex and beta-smooth, lambda2 the
l2 coefficient (FedDyn's alpha), lambda1 the l1 coefficient. With r = lambda2 / beta:

    kappa   = (10 m / P) (1/lambda2) (lambda2 + beta) / (lambda2^2 - 25 beta^2)
    kappa0  = (2 / lambda2) (lambda2^2 - 25 lambda2 beta - 50 beta^2) / (lambda2^2 - 25 beta^2)
    kappa'  = (5 / lambda2) (lambda2 + beta) / (lambda2^2 - 25 beta^2) = kappa P / (2m)

Theorem 3.1 / B.1 (eq. 13/18) bounds the gap of the averaged gamma iterate. Two versions are provided:

* ``theorem31_rhs_printed``: exactly as printed (C0 *unsquared*, sign term without 1/kappa0). The main-text
  Theorem 3.1 also omits the assumption lambda2 > 27 beta, so this function accepts any lambda2 > 0 except the
  pole lambda2 = 5 beta (it evaluates the printed formula; it is not a guarantee).
* ``theorem31_rhs_corrected``: what the proof gives (docs/fedelasticnet.md): C0 squared and the sign
  term divided by kappa0; valid when kappa0 > 0 and kappa >= 0, i.e. lambda2 > r0 beta with
  r0 = (25 + sqrt(825)) / 2 derived symbolically by :func:`kappa0_threshold`.

Theorem B.6 (the per-round Lyapunov inequality) is :func:`theorem_b6_rhs` (with the factor d the proof line
has; the printed statement omits it, ``with_d=False`` reproduces the print).
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from ..validation import check_finite_array, check_int, check_nonnegative, check_positive, check_real

__all__ = ["kappa", "kappa0", "kappa_prime", "C0_printed", "C0_corrected", "theorem31_rhs_printed",
           "theorem31_rhs_corrected", "theorem_b6_rhs", "lemma_b4_rhs", "lemma_b5_rhs", "bound28_rhs",
           "kappa0_threshold", "kappa0_threshold_symbolic", "lambda2_ratio_valid", "floor_corrected",
           "hoeffding_bound"]


def _check_sampling(m: int, P: int) -> tuple[int, int]:
    m = check_int("m", m, low=1)
    P = check_int("P", P, low=1, high=m)
    return m, P


def _den(lambda2: float, beta: float) -> float:
    den = lambda2 * lambda2 - 25.0 * beta * beta
    if den == 0.0:
        raise ValueError(f"lambda2 must differ from 5*beta = {5 * beta:g} (kappa, kappa0 have a pole there)")
    return den


def kappa(lambda2: float, beta: float, m: int, P: int) -> float:
    """kappa = (10 m/P) (1/lambda2) (lambda2 + beta)/(lambda2^2 - 25 beta^2) (Theorem 3.1; eq. 13)."""
    lambda2 = check_positive("lambda2", lambda2)
    beta = check_positive("beta", beta)
    m, P = _check_sampling(m, P)
    return 10.0 * m / P / lambda2 * (lambda2 + beta) / _den(lambda2, beta)


def kappa0(lambda2: float, beta: float) -> float:
    """kappa0 = (2/lambda2)(lambda2^2 - 25 lambda2 beta - 50 beta^2)/(lambda2^2 - 25 beta^2) (Theorem 3.1)."""
    lambda2 = check_positive("lambda2", lambda2)
    beta = check_positive("beta", beta)
    num = lambda2 * lambda2 - 25.0 * lambda2 * beta - 50.0 * beta * beta
    return 2.0 / lambda2 * num / _den(lambda2, beta)


def kappa_prime(lambda2: float, beta: float) -> float:
    """kappa' = (5/lambda2)(lambda2 + beta)/(lambda2^2 - 25 beta^2) = kappa P/(2m) (Theorem 3.1)."""
    lambda2 = check_positive("lambda2", lambda2)
    beta = check_positive("beta", beta)
    return 5.0 / lambda2 * (lambda2 + beta) / _den(lambda2, beta)


def _grad_diffs(grads0: np.ndarray, grads_star: np.ndarray) -> np.ndarray:
    G0 = check_finite_array("grads0", grads0)
    Gs = check_finite_array("grads_star", grads_star)
    if G0.ndim != 2 or G0.shape != Gs.shape:
        raise ValueError(f"grads0 and grads_star must both have shape (m, d), got {G0.shape} and {Gs.shape}")
    return G0 - Gs


def C0_printed(grads0: np.ndarray, grads_star: np.ndarray) -> float:
    """C0 as printed in Theorem 3.1: (1/m) sum_k ||grad L_k(theta_k^0) - grad L_k(theta*)|| (unsquared).

    ``grads0`` is the stored initial gradient state (Alg. 3 line 1: zero), ``grads_star`` the true client
    gradients at theta*; both ``(m, d)``.
    """
    D = _grad_diffs(grads0, grads_star)
    return float(np.mean(np.linalg.norm(D, axis=1)))


def C0_corrected(grads0: np.ndarray, grads_star: np.ndarray) -> float:
    """C0 = C_t at t = 0 with C_t of eq. (20): (1/m) sum_k ||grad L_k(theta_k^0) - grad L_k(theta*)||^2."""
    D = _grad_diffs(grads0, grads_star)
    return float(np.mean(np.sum(D * D, axis=1)))


def _common(T: int, dist0_sq: float, C0: float, lambda1: float, lambda2: float, beta: float, m: int, P: int,
            d: int) -> tuple[int, float, float, float, float, float, float, int]:
    T = check_int("T", T, low=1)
    dist0_sq = check_nonnegative("dist0_sq", dist0_sq)
    C0 = check_nonnegative("C0", C0)
    lambda1 = check_nonnegative("lambda1", lambda1)
    d = check_int("d", d, low=1)
    k = kappa(lambda2, beta, m, P)
    k0 = kappa0(lambda2, beta)
    kp = kappa_prime(lambda2, beta)
    return T, dist0_sq, C0, lambda1, k, k0, kp, d


def theorem31_rhs_printed(T: int, dist0_sq: float, C0: float, lambda1: float, lambda2: float, beta: float,
                          m: int, P: int, d: int, sign_sum: float = 0.0) -> float:
    """Right-hand side of eq. (13) exactly as printed (main-text Theorem 3.1 and Theorem B.1).

        (1/T)(1/kappa0)(||gamma^0 - theta*||^2 + kappa C0) + (kappa'/kappa0) lambda1^2 d
            - (1/T)(2 lambda1/lambda2) sum_{t=1}^T <gamma^{t-1} - theta*, (1/m) sum_k E sign(...)>

    ``C0`` should be :func:`C0_printed` (unsquared) to reproduce the print; ``sign_sum`` is the sum over
    t = 1..T of the inner products. No condition on lambda2 is enforced (the main text states none).
    """
    T, dist0_sq, C0, lambda1, k, k0, kp, d = _common(T, dist0_sq, C0, lambda1, lambda2, beta, m, P, d)
    sign_sum = check_real("sign_sum", sign_sum)
    return (dist0_sq + k * C0) / (T * k0) + kp / k0 * lambda1 ** 2 * d - 2.0 * lambda1 / lambda2 * sign_sum / T


def lambda2_ratio_valid(lambda2: float, beta: float) -> bool:
    """True iff kappa0 > 0 and kappa > 0, i.e. lambda2 / beta > r0 = (25 + sqrt(825))/2 (derived)."""
    lambda2, beta = check_positive("lambda2", lambda2), check_positive("beta", beta)
    return lambda2 / beta > kappa0_threshold()


def theorem31_rhs_corrected(T: int, dist0_sq: float, C0: float, lambda1: float, lambda2: float, beta: float,
                            m: int, P: int, d: int, sign_sum: float = 0.0) -> float:
    """Right-hand side of Theorem B.1 as its proof gives it (docs/fedelasticnet.md, typos 1-2).

        (1/T)(1/kappa0)(||gamma^0 - theta*||^2 + kappa C0) + (kappa'/kappa0) lambda1^2 d
            - (1/T)(1/kappa0)(2 lambda1/lambda2) sum_{t=1}^T <gamma^{t-1} - theta*, s_bar^t>

    with ``C0`` squared (:func:`C0_corrected`) and s_bar^t = (1/m) sum_k E[s_k^t], s the l1 sub-gradient of
    eq. (11). Requires lambda2 > r0 beta (kappa0 > 0 and kappa > 0), else ValueError.
    """
    T, dist0_sq, C0, lambda1, k, k0, kp, d = _common(T, dist0_sq, C0, lambda1, lambda2, beta, m, P, d)
    sign_sum = check_real("sign_sum", sign_sum)
    if not lambda2_ratio_valid(lambda2, beta):
        raise ValueError(f"lambda2 / beta must exceed (25 + sqrt(825))/2 = {kappa0_threshold():.6f} for the "
                         f"corrected Theorem B.1, got {lambda2 / beta:g}")
    return (dist0_sq + k * C0 - 2.0 * lambda1 / lambda2 * sign_sum) / (T * k0) + kp / k0 * lambda1 ** 2 * d


def floor_corrected(lambda1: float, lambda2: float, beta: float, d: int) -> float:
    """The T -> infinity floor (kappa'/kappa0) lambda1^2 d = 5 (lambda2 + beta) lambda1^2 d / (2 D)."""
    lambda1 = check_nonnegative("lambda1", lambda1)
    d = check_int("d", d, low=1)
    return kappa_prime(lambda2, beta) / kappa0(lambda2, beta) * lambda1 ** 2 * d


def theorem_b6_rhs(V_prev: float, V_next: float, lambda1: float, lambda2: float, beta: float, d: int,
                   sign_inner: float, *, m: int = 1, P: int = 1, with_d: bool = True) -> float:
    """Right-hand side of Theorem B.6 (the one-round Lyapunov inequality):

        (V_{t-1} - E V_t) + kappa' lambda1^2 d - (2 lambda1/lambda2) <gamma^{t-1} - theta*, s_bar^t>,

    with V_t = ||gamma^t - theta*||^2 + kappa C_t (the caller forms V with :func:`kappa`). The inequality is
    kappa0 (R(gamma^{t-1}) - R*) <= this. ``with_d=False`` uses kappa P/(2m) lambda1^2 as printed in the
    statement of Theorem B.6 (the proof line has the d; a typo of the printed statement); ``m, P`` are only used to form
    kappa P / (2m) = kappa' there, so they do not change the value.
    """
    lambda1 = check_nonnegative("lambda1", lambda1)
    d = check_int("d", d, low=1)
    _check_sampling(m, P)
    # measured quantities: any finite real (a Lyapunov value or inner product may be rounding-level negative)
    V_prev, V_next = check_real("V_prev", V_prev), check_real("V_next", V_next)
    sign_inner = check_real("sign_inner", sign_inner)
    kp = kappa_prime(lambda2, beta)
    return V_prev - V_next + kp * lambda1 ** 2 * (d if with_d else 1) - 2.0 * lambda1 / lambda2 * sign_inner


def lemma_b4_rhs(dist_prev_sq: float, gap_prev: float, eps_t: float, step_sq: float, lambda1: float,
                 lambda2: float, beta: float, sign_inner: float) -> float:
    """Lemma B.4: E||gamma^t - theta*||^2 <= ||gamma^{t-1} - theta*||^2 - (2/lambda2) gap_{t-1}
    + (beta/lambda2) eps_t + E||gamma^t - gamma^{t-1}||^2 - (2 lambda1/lambda2) <gamma^{t-1} - theta*, s_bar^t>."""
    lambda2 = check_positive("lambda2", lambda2)
    lambda1, beta = check_nonnegative("lambda1", lambda1), check_positive("beta", beta)
    # measured quantities: any finite real (rounding may make a mathematically non-negative one slightly < 0)
    dist_prev_sq, gap_prev = check_real("dist_prev_sq", dist_prev_sq), check_real("gap_prev", gap_prev)
    eps_t, step_sq = check_real("eps_t", eps_t), check_real("step_sq", step_sq)
    sign_inner = check_real("sign_inner", sign_inner)
    return (dist_prev_sq - 2.0 / lambda2 * gap_prev + beta / lambda2 * eps_t + step_sq
            - 2.0 * lambda1 / lambda2 * sign_inner)


def lemma_b5_rhs(C_prev: float, gap_prev: float, lambda1: float, lambda2: float, beta: float, d: int) -> float:
    """Lemma B.5 solved for eps_t: eps_t <= [10 C_{t-1}/lambda2^2 + 10 beta gap/lambda2^2 + 5 lambda1^2 d/lambda2^2]
    / (1 - 5 beta^2/lambda2^2), valid when lambda2 > sqrt(5) beta."""
    lambda2 = check_positive("lambda2", lambda2)
    beta = check_positive("beta", beta)
    lambda1, d = check_nonnegative("lambda1", lambda1), check_int("d", d, low=1)
    C_prev, gap_prev = check_real("C_prev", C_prev), check_real("gap_prev", gap_prev)  # measured: any finite real
    factor = 1.0 - 5.0 * beta ** 2 / lambda2 ** 2
    if factor <= 0:
        raise ValueError(f"lambda2 must exceed sqrt(5)*beta = {math.sqrt(5) * beta:g} for Lemma B.5")
    return (10.0 * C_prev + 10.0 * beta * gap_prev + 5.0 * lambda1 ** 2 * d) / lambda2 ** 2 / factor


def bound28_rhs(C_prev: float, eps_t: float, gap_prev: float, beta: float, m: int, P: int) -> float:
    """Eq. (28), imported from FedDyn: C_t <= (1 - P/m) C_{t-1} + (2 beta^2 P/m) eps_t + (4 beta P/m) gap_{t-1}."""
    m, P = _check_sampling(m, P)
    beta = check_positive("beta", beta)
    C_prev, eps_t = check_real("C_prev", C_prev), check_real("eps_t", eps_t)  # measured: any finite real
    gap_prev = check_real("gap_prev", gap_prev)
    return (1.0 - P / m) * C_prev + 2.0 * beta ** 2 * P / m * eps_t + 4.0 * beta * P / m * gap_prev


@lru_cache(maxsize=1)
def kappa0_threshold_symbolic() -> Any:
    """The exact infimum r0 of {r = lambda2/beta > 0 : kappa0 > 0 and kappa > 0}, derived with sympy.

    The formulas for kappa and kappa0 are entered symbolically, lambda2 = r beta substituted, and the
    solution set of the two rational inequalities over r in (0, oo) computed by ``solveset``; the function
    checks the set is an unbounded interval (r0, oo) and returns r0 as a sympy number. Nothing about the
    value is typed in: the test compares it with fedtheory's (25 + sqrt(825))/2.
    """
    import sympy as sp  # here, not at the top: sympy adds about 1.4 s to `import fedtheory.claims`

    lam2, beta, r, m, P = sp.symbols("lambda2 beta r m P", positive=True)
    kappa_expr = 10 * m / P / lam2 * (lam2 + beta) / (lam2 ** 2 - 25 * beta ** 2)
    kappa0_expr = 2 / lam2 * (lam2 ** 2 - 25 * lam2 * beta - 50 * beta ** 2) / (lam2 ** 2 - 25 * beta ** 2)
    domain = sp.Interval.open(0, sp.oo)
    sets = []
    for name, expr in (("kappa0", kappa0_expr), ("kappa", kappa_expr)):
        # After lambda2 = r beta each constant is (positive factor free of r) * (rational function of r), so
        # its sign is that of the r-dependent part alone.
        in_r = sp.factor(expr.subs(lam2, r * beta))
        coeff, dependent = in_r.as_independent(r, as_Add=False)
        if coeff.is_positive is not True or dependent.free_symbols != {r}:
            raise RuntimeError(f"could not split {name} = {in_r} into a positive factor and a function of r")
        sets.append(sp.solveset(dependent > 0, r, domain))
    sol = sp.Intersection(*sets)
    if not (isinstance(sol, sp.Interval) and sol.sup == sp.oo and sol.left_open):
        raise RuntimeError(f"unexpected solution set for kappa0 > 0 and kappa > 0: {sol}")
    return sp.radsimp(sol.inf)


@lru_cache(maxsize=1)
def kappa0_threshold() -> float:
    """r0 = inf{lambda2/beta : kappa0 > 0 and kappa > 0} as a float (see :func:`kappa0_threshold_symbolic`)."""
    return float(kappa0_threshold_symbolic())


def hoeffding_bound(m: int, delta: float) -> float:
    """Hoeffding for the mean of m IID Rademacher signs: P[mean > delta] <= exp(-m delta^2/2) (Appendix B.3)."""
    m = check_int("m", m, low=1)
    delta = check_positive("delta", delta)
    return math.exp(-m * delta * delta / 2.0)
