"""Regret bounds and parameter optimisation of OFedIQ (Kwon, Park & Hong; docs/ofediq.md). Pure functions.

Notation: K clients, horizon T, comparator norm ``w2`` = ||w*||^2 (with w_1 = 0; use ||w_1 - w*||^2 otherwise),
``sigma2`` = sigma^2_diff of Definition 1, sampling rates p_k in (0, 1], p_min = min p_k, p_sum = sum p_k,
quantizer variance sigma_q^2, period L, smoothness beta. Logs are base 2 (docs/ofediq.md, 4.9).

* Theorem 1 (OFedAvg; FedOGD is p = 1), eta < p_min/(2 beta):
      regret_T <= K w2/(2 eta) + eta K T sigma2 / p_min.
* Theorem 2 (OFedIQ), R = 1 + sigma_q^2 (p_sum - p_min + 1)/K:
      regret_T <= K w2/(2 eta) + 2 eta L K T sigma2 R / p_min + 3 beta eta^2 L (L - 1) K T sigma2.
  L = 1 (eta < p_min/(4 beta R)) is rigorous. For L > 1 the proof needs eta < p_min/(4 beta L R) and an
  approximation (docs/ofediq.md, 4.5): :func:`theorem2_bound` labels that case ``rigorous=False``.
* Corollary 1: alpha = 2/p (OFedAvg), alpha = 4 L M / p with M = 3p^2(L-1)/8 + 1 + sqrt(D/(b s^2))(p + 1/K)
  (the paper's "1 + C" counts the 1 twice; a typo of the printed statement), regret <= sqrt(alpha w2 K^2 sigma2 T).
* Section 4.2: periodic transmission never helps (:func:`periodic_vs_subsampling`), eq. (15), and
  Algorithm 3 (:func:`algorithm3`), with a corrected variant that is valid for every gamma in (0, 1].
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..compressors.sb_quantizer import sb_sigma2
from ..validation import check_finite_array, check_int, check_nonnegative, check_positive, check_probability, check_real

__all__ = [
    "psi", "transmission_times", "r_factor", "step_bound", "theorem1_bound", "theorem2_bound", "Theorem2Bound",
    "lemma1_rhs", "lemma2_sides", "lemma3_stated_rhs", "lemma3_proof_rhs", "lemma4_sides",
    "corollary1_ofedavg", "corollary1_ofediq", "corollary_m", "table1_alpha", "table1_bits", "ofediq_gamma",
    "ccr", "periodic_vs_subsampling", "eq15_alpha", "Alg3Config", "algorithm3_objective", "algorithm3",
    "algorithm3_corrected", "alpha_ofediq_factor2", "quantizer_sigma2",
]

FLOAT_BITS = 32


def _probs(p: float | Sequence[float] | np.ndarray) -> np.ndarray:
    try:
        arr = np.atleast_1d(np.asarray(p, dtype=np.float64))
    except (TypeError, ValueError):
        raise TypeError(f"p must be a probability in (0, 1] or a sequence of them, got {p!r}") from None
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0) or np.any(arr > 1):
        raise ValueError(f"p must be in (0, 1] (a probability p_k for every client), got {p!r}")
    return arr


def psi(t: int, L: int) -> int:
    """psi_L(t) = floor((t - 1)/L) L + 1 (eq. 1): the start of the period holding time t (1-based)."""
    t = check_int("t", t, low=1)
    L = check_int("L", L, low=1)
    return (t - 1) // L * L + 1


def transmission_times(T: int, L: int) -> np.ndarray:
    """[T]_L = {t in [T] : t mod L = 0}."""
    T = check_int("T", T, low=1)
    L = check_int("L", L, low=1)
    return np.arange(L, T + 1, L)


def quantizer_sigma2(D: int, s: int, b: int) -> float:
    """sigma_q^2 = min(ceil(D/b)/s^2, sqrt(ceil(D/b))/s) (Section 3.3)."""
    return sb_sigma2(D, s, b)


def r_factor(sigma_q2: float, p: float | Sequence[float], n_clients: int | None = None) -> float:
    """R = 1 + sigma_q^2 (p_sum - p_min + 1)/K (Theorem 2). A scalar p means p_k = p for K clients."""
    sigma_q2 = check_nonnegative("sigma_q2", sigma_q2)
    arr = _probs(p)
    if arr.size == 1 and n_clients is not None:
        arr = np.full(check_int("n_clients", n_clients, low=1), arr[0])
    K = arr.size
    return float(1.0 + sigma_q2 * (arr.sum() - arr.min() + 1.0) / K)


def step_bound(beta: float, p: float | Sequence[float], *, sigma_q2: float = 0.0, period: int = 1,
               quantized: bool = True, n_clients: int | None = None) -> float:
    """The largest step the theorems allow (strict inequality eta < bound).

    Theorem 1 (``quantized=False`` and L = 1): p_min/(2 beta). Otherwise p_min/(4 beta L R) (Theorem 2 for
    L = 1; the L > 1 proof's condition (40), stricter by L than the theorem's statement).
    """
    beta = check_positive("beta", beta)
    L = check_int("period", period, low=1)
    arr = _probs(p)
    if not quantized and L == 1:
        return float(arr.min() / (2.0 * beta))
    R = r_factor(sigma_q2 if quantized else 0.0, arr, n_clients)
    return float(arr.min() / (4.0 * beta * L * R))


def theorem1_bound(K: int, w2: float, eta: float, T: int, sigma2: float, p_min: float = 1.0) -> float:
    """Theorem 1: K ||w*||^2/(2 eta) + eta K T sigma2 / p_min (valid for eta < p_min/(2 beta))."""
    K = check_int("K", K, low=1)
    w2 = check_nonnegative("w2", w2)
    eta = check_positive("eta", eta)
    T = check_int("T", T, low=1)
    sigma2 = check_nonnegative("sigma2", sigma2)
    p_min = check_probability("p_min", p_min)
    return K * w2 / (2 * eta) + eta * K * T * sigma2 / p_min


@dataclass(frozen=True)
class Theorem2Bound:
    """Theorem 2's bound, its three terms, and whether it is rigorous (L = 1) or the paper's approximation."""

    value: float
    initial: float
    variance: float
    drift: float
    rigorous: bool
    label: str


def theorem2_bound(K: int, w2: float, eta: float, T: int, sigma2: float, p: float | Sequence[float], *,
                   sigma_q2: float, L: int = 1, beta: float = 0.0, factor: float = 2.0) -> Theorem2Bound:
    """Theorem 2: K w2/(2 eta) + factor eta L K T sigma2 R / p_min + 3 beta eta^2 L (L-1) K T sigma2.

    ``factor=2`` is the paper's statement; ``factor=1`` with sigma_q2 = 0 is the paper's remark for the
    unquantized case. For L > 1, T must be a multiple of L and the result is labelled as the paper's
    approximate bound (not rigorous).
    """
    K = check_int("K", K, low=1)
    L = check_int("L", L, low=1)
    T = check_int("T", T, low=1)
    if T % L != 0:
        raise ValueError(f"T must be a multiple of L = {L} (Theorem 2 assumes L | T), got T = {T}")
    w2 = check_nonnegative("w2", w2)
    eta = check_positive("eta", eta)
    sigma2 = check_nonnegative("sigma2", sigma2)
    beta = check_nonnegative("beta", beta)
    factor = check_positive("factor", factor)
    arr = _probs(p)
    if arr.size == 1:
        arr = np.full(K, arr[0])
    elif arr.size != K:
        raise ValueError(f"p must have K = {K} entries, got {arr.size}")
    R = r_factor(sigma_q2, arr)
    initial = K * w2 / (2 * eta)
    variance = factor * eta * L * K * T * sigma2 * R / float(arr.min())
    drift = 3 * beta * eta**2 * L * (L - 1) * K * T * sigma2
    rigorous = L == 1
    label = "Theorem 2 (L = 1, rigorous)" if rigorous else "Theorem 2 (L > 1, the paper's approximate bound)"
    return Theorem2Bound(initial + variance + drift, initial, variance, drift, rigorous, label)


# ----- lemmas -----
def lemma1_rhs(vi: np.ndarray, vj: np.ndarray, a: float) -> float:
    """Lemma 1: ||vi + vj||^2 <= (1 + a)||vi||^2 + (1 + 1/a)||vj||^2 for a > 0 (returns the right side)."""
    a = check_positive("a", a)
    vi, vj = check_finite_array("vi", vi), check_finite_array("vj", vj)
    return float((1 + a) * np.dot(vi, vi) + (1 + 1 / a) * np.dot(vj, vj))


def lemma2_sides(g_w: np.ndarray, g_star: np.ndarray, loss_w: np.ndarray, loss_star: np.ndarray,
                 w: np.ndarray, w_star: np.ndarray, beta: float) -> tuple[float, float]:
    """Lemma 2 (lhs, rhs) from per-client gradients (K, D) at w and w*, per-client losses (K,):

    (1/K) sum ||g_k(w)||^2 <= (4 beta/K) sum [L_k(w*) - L_k(w)] + (4 beta/K) sum g_k(w)^T (w - w*)
                              + (2/K) sum ||g_k(w*)||^2.
    """
    beta = check_positive("beta", beta)
    g_w, g_star = check_finite_array("g_w", g_w, shape=(None, None)), check_finite_array("g_star", g_star)
    loss_w, loss_star = check_finite_array("loss_w", loss_w), check_finite_array("loss_star", loss_star)
    w, w_star = check_finite_array("w", w), check_finite_array("w_star", w_star)
    K = g_w.shape[0]
    lhs = float(np.einsum("kd,kd->", g_w, g_w)) / K
    rhs = (4 * beta / K * float(np.sum(loss_star - loss_w)) + 4 * beta / K * float(np.sum(g_w @ (w - w_star)))
           + 2 / K * float(np.einsum("kd,kd->", g_star, g_star)))
    return lhs, rhs


def lemma3_stated_rhs(beta: float, eta: float, L: int, grad_sq_sum: float) -> float:
    """Lemma 3 as stated (eq. 45): 3 beta eta^2 L (L-1)/2 * sum ||grad||^2."""
    L, grad_sq_sum = check_int("L", L, low=1), check_nonnegative("grad_sq_sum", grad_sq_sum)
    return 3 * check_positive("beta", beta) * check_positive("eta", eta) ** 2 * L * (L - 1) / 2 * grad_sq_sum


def lemma3_proof_rhs(eta: float, L: int, grad_sq_sum: float) -> float:
    """Lemma 3 as the proof (46) derives it: 3 eta^2 L (L-1) * sum ||grad||^2 (no beta, no 1/2)."""
    L, grad_sq_sum = check_int("L", L, low=1), check_nonnegative("grad_sq_sum", grad_sq_sum)
    return 3 * check_positive("eta", eta) ** 2 * L * (L - 1) * grad_sq_sum


def lemma4_sides(drift_sq: float, grad_sq: np.ndarray, L: int, eta: float) -> tuple[float, float]:
    """Lemma 4 for index l = len(grad_sq) + 1 >= 2: A ||w_t - g_{k,t+l-2}||^2 + B ||grad_{t+l-2}||^2 <=
    sum_{tau=0}^{l-2} B ||grad_{t+l-2-tau}||^2 A^tau, A = 1 + 1/(L-1), B = L eta^2.

    ``grad_sq`` lists ||grad_{k,t}||^2, ..., ||grad_{k,t+l-2}||^2 in time order.
    """
    L = check_int("L", L, low=2)
    eta = check_positive("eta", eta)
    A, B = 1 + 1 / (L - 1), L * eta**2
    drift_sq = check_nonnegative("drift_sq", drift_sq)
    g = check_finite_array("grad_sq", grad_sq, shape=(None,))
    if g.size == 0 or np.any(g < 0):
        raise ValueError("grad_sq must be a non-empty 1-D array of squared norms in [0, inf)")
    lhs = A * drift_sq + B * g[-1]
    rhs = float(np.sum(B * g[::-1] * A ** np.arange(g.size)))
    return float(lhs), rhs


# ----- Corollary 1 and Table I -----
def corollary_m(p: float, L: int, D: int, s: int, b: int, K: int) -> float:
    """M = 3 p^2 (L-1)/8 + 1 + sqrt(D/(b s^2)) (p + 1/K) (Corollary 1, consistent form; a typo of the printed statement)."""
    p = check_probability("p", p)
    L = check_int("L", L, low=1)
    D = check_int("D", D, low=1)
    s = check_int("s", s, low=1)
    b = check_int("b", b, low=1, high=D)
    K = check_int("K", K, low=1)
    return 3 * p**2 * (L - 1) / 8 + 1 + math.sqrt(D / (b * s**2)) * (p + 1 / K)


def corollary1_ofedavg(p: float, w2: float, sigma2: float, T: int) -> tuple[float, float]:
    """(eta, alpha) for OFedAvg: eta = sqrt(p w2/(2 sigma2 T)), alpha = 2/p."""
    p = check_probability("p", p)
    w2, sigma2 = check_positive("w2", w2), check_positive("sigma2", sigma2)
    T = check_int("T", T, low=1)
    return math.sqrt(p * w2 / (2 * sigma2 * T)), 2 / p


def corollary1_ofediq(p: float, L: int, M: float, w2: float, sigma2: float, T: int) -> tuple[float, float]:
    """(eta, alpha) for OFedIQ: eta = sqrt((p/L) w2/(4 sigma2 M T)), alpha = 4 L M / p."""
    p = check_probability("p", p)
    L = check_int("L", L, low=1)
    M = check_positive("M", M)
    w2, sigma2 = check_positive("w2", w2), check_positive("sigma2", sigma2)
    T = check_int("T", T, low=1)
    return math.sqrt((p / L) * w2 / (4 * sigma2 * M * T)), 4 * L * M / p


def table1_alpha(method: str, *, p: float = 1.0, L: int = 1, D: int = 1, s: int = 1, b: int = 1,
                 K: int = 1) -> float:
    """Table I's regret constant alpha: fedogd 2, ofedavg 2/p, ofediq 4 M /(p/L)."""
    if method == "fedogd":
        return 2.0
    if method == "ofedavg":
        return 2.0 / check_probability("p", p)
    if method == "ofediq":
        return 4 * corollary_m(p, L, D, s, b, K) / (p / L)
    raise ValueError(f"method must be 'fedogd', 'ofedavg' or 'ofediq', got {method!r}")


def table1_bits(method: str, *, K: int, D: int, p: float = 1.0, L: int = 1, s: int = 1, b: int = 1) -> float:
    """Table I's uplink bits per time step: 32KD, 32pKD, 32KD/L (periodic), (p/L)K(32b + D(1+log2(s+1)))."""
    K = check_int("K", K, low=1)
    D = check_int("D", D, low=1)
    p = check_probability("p", p)
    L = check_int("L", L, low=1)
    if method == "fedogd":
        return 32.0 * K * D
    if method == "ofedavg":
        return 32.0 * p * K * D
    if method == "periodic":
        return 32.0 * K * D / L
    if method == "ofediq":
        s = check_int("s", s, low=1)
        b = check_int("b", b, low=1, high=D)
        return (p / L) * K * (32 * b + D * (1 + math.log2(s + 1)))
    raise ValueError(f"method must be 'fedogd', 'ofedavg', 'periodic' or 'ofediq', got {method!r}")


def ofediq_gamma(p: float, s: int, b: int, D: int, L: int = 1) -> float:
    """gamma = cost / (32 K D) = (p/L)(32 b/D + 1 + log2(s + 1))/32 (eq. 16 generalised to L)."""
    return table1_bits("ofediq", K=1, D=D, p=p, L=L, s=s, b=b) / (32.0 * D)


def ccr(gamma: float) -> float:
    """Communication-cost reduction in percent: (1 - gamma) 100."""
    return (1.0 - check_real("gamma", gamma, low=0.0)) * 100.0


def periodic_vs_subsampling(L: int, p: float, D: int, s: int, b: int, K: int) -> tuple[float, float]:
    """Section 4.2.1: (alpha(L = 1, p/L), alpha(L, p)) from Table I; same cost, first <= second (= iff L = 1)."""
    L, p = check_int("L", L, low=1), check_probability("p", p)
    return table1_alpha("ofediq", p=p / L, L=1, D=D, s=s, b=b, K=K), table1_alpha("ofediq", p=p, L=L, D=D, s=s,
                                                                                  b=b, K=K)


def eq15_alpha(p: float, K: int) -> tuple[float, float, int]:
    """Eq. (15): (alpha, p', s) for OFedIQ(1, p', s = ceil(40 p), b = D/100) matching OFedAvg(p)'s cost.

    p' = 32 p/(1.32 + log2(1 + s)); alpha = (2/p')[1 + (10/s)(p' + 1/K)] (the paper's factor-2 convention).
    """
    p = check_probability("p", p)
    K = check_int("K", K, low=1)
    s = math.ceil(40 * p)
    pp = 32 * p / (1.32 + math.log2(1 + s))
    return (2 / pp) * (1 + 10 / s * (pp + 1 / K)), pp, s


def alpha_ofediq_factor2(p: float, D: int, s: int, b: int, K: int) -> float:
    """The paper's Section 4.2.2 constant (2/p)[1 + sqrt(D/(b s^2))(p + 1/K)] (factor 2; gives 4.536)."""
    p, D, s = check_probability("p", p), check_int("D", D, low=1), check_int("s", s, low=1)
    b, K = check_int("b", b, low=1, high=D), check_int("K", K, low=1)
    return 2 / p * (1 + math.sqrt(D / (b * s**2)) * (p + 1 / K))


# ----- Algorithm 3 -----
@dataclass(frozen=True)
class Alg3Config:
    """An Algorithm 3 output: L = 1, p, (s, b), rho = (gamma/s)^{2/3}, and the realised cost gamma_actual."""

    gamma: float
    D: int
    s: int
    rho: float
    b: int
    p: float
    gamma_actual: float
    L: int = 1

    @property
    def valid(self) -> bool:
        return 0 < self.p <= 1 and 1 <= self.b <= self.D and self.s >= 1 and self.gamma_actual <= self.gamma * (
            1 + 1e-12)


def algorithm3_objective(s: np.ndarray | int, gamma: float) -> np.ndarray:
    """Eq. (20): log2(s + 1)/16 + 4 (gamma/s)^{2/3}."""
    gamma = check_real("gamma", gamma, low=0.0, low_open=True)
    s_arr = np.asarray(s)
    if s_arr.dtype.kind not in "iu":
        raise TypeError(f"s (quantization levels) must be an integer or an integer array, got {s!r}")
    if np.any(s_arr < 1):
        raise ValueError(f"s (quantization levels) must be in [1, inf), got {s!r}")
    s = s_arr.astype(np.float64)
    return np.log2(s + 1) / 16 + 4 * (gamma / s) ** (2 / 3)


def _alg3_raw(gamma: float, D: int, s_max: int) -> Alg3Config:
    gamma = check_real("gamma", gamma, low=0.0, high=1.0, low_open=True)
    D = check_int("D", D, low=1)
    s_max = check_int("s_max", s_max, low=1)
    grid = np.arange(1, s_max + 1)
    obj = algorithm3_objective(grid, gamma)
    s = int(grid[np.argmin(obj)])
    # Exactness of the finite search: eq. (20) exceeds log2(s + 1)/16, so no s >= 2^(16 min) - 1 can beat the
    # minimum found; for gamma <= 1 that cap is below 1000, far under the default s_max.
    if 2.0 ** (16 * float(obj.min())) - 1 > s_max:
        raise ValueError(f"s_max = {s_max} is too small to certify the integer search of eq. (20)")
    rho = (gamma / s) ** (2 / 3)
    b = int(math.floor(rho * D))
    p = 32 * gamma / (1 + 32 * rho + math.log2(s + 1))
    g_act = p * (32 * b / D + 1 + math.log2(s + 1)) / 32
    return Alg3Config(gamma=gamma, D=D, s=s, rho=rho, b=b, p=p, gamma_actual=g_act)


def algorithm3(gamma: float, D: int, *, s_max: int = 2_000) -> Alg3Config:
    """Algorithm 3 exactly as printed (L = 1): s = argmin eq. (20), b = floor((gamma/s)^{2/3} D),
    p = 32 gamma/(1 + 32 rho + log2(s + 1)).

    Raises ValueError instead of returning an invalid configuration: as printed, the algorithm gives p > 1
    for gamma above about 0.22 and b = 0 when rho D < 1 (small D or gamma). Use :func:`algorithm3_corrected`
    for a configuration valid for every gamma in (0, 1].
    """
    cfg = _alg3_raw(gamma, D, s_max)
    if cfg.p > 1:
        raise ValueError(f"Algorithm 3 as printed gives p = {cfg.p:.6g} > 1 for gamma = {gamma} (not a "
                         "probability); gamma must be small enough, or use algorithm3_corrected")
    if cfg.b < 1:
        raise ValueError(f"Algorithm 3 as printed gives b = floor(rho D) = 0 for gamma = {gamma}, D = {D} "
                         f"(rho = {cfg.rho:.3g}); D must be >= 1/rho, or use algorithm3_corrected")
    return cfg


def algorithm3_raw(gamma: float, D: int, *, s_max: int = 2_000) -> Alg3Config:
    """Algorithm 3's printed arithmetic without validity checks (for reporting counterexamples only)."""
    return _alg3_raw(gamma, D, s_max)


def algorithm3_corrected(gamma: float, D: int, *, s_max: int = 2_000) -> Alg3Config:
    """Algorithm 3 made valid for every gamma in (0, 1] (our correction, not the paper's).

    Same s and rho; b = clip(floor(rho D), 1, D); p recomputed from the realised b so the cost constraint (16)
    holds, and capped at 1 (then gamma_actual < gamma: full participation already fits the budget).
    """
    cfg = _alg3_raw(gamma, D, s_max)
    b = min(max(cfg.b, 1), D)
    per = 32 * b / D + 1 + math.log2(cfg.s + 1)
    p = min(1.0, 32 * cfg.gamma / per)
    return Alg3Config(gamma=cfg.gamma, D=D, s=cfg.s, rho=cfg.rho, b=b, p=p, gamma_actual=p * per / 32)


__all__ += ["algorithm3_raw"]
