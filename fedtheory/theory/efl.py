"""The bounds of EFL (Ma et al., "Towards Heterogeneous Clients with Elastic Federated Learning"), as pure
functions of the constants: Theorem 1 (eq. 7) with gamma, eta_tau, B_t, C_tau, J; Table 1; Corollary 1
(eqs. 8-9); Theorem 2 (eqs. 10-11) and their corrections.

Garbled constants are read as in docs/efl.md and every reading is labelled:
  * B_t's third bracket, printed  sum p s + theta (sum p - 2) + sum p s^K  (s^K a typo), is read
    ``reading="conservative"``: sum p s + theta (sum p - 2 + sum p s) (matches the paper's existence
    condition; >= the literal one for theta >= 1); ``reading="literal"`` takes s^K = s^k.
  * J, printed  max_tau 32 E sum_k E[p s] / (D_k / mu E[sum p s])  (dimensionally inconsistent), is read
    32 E sum_k E[p_tau^k s_tau^k] D_k / (mu E[sum_k p_tau^k s_tau^k]).
  * r_t's polarity: r_t = 1 iff E[p_t^k s_t^k] / p^k differs across k (§4.3 makes this clear).
"""
from __future__ import annotations

import math
from typing import Literal

import numpy as np

from ..validation import check_finite_array, check_int, check_nonnegative, check_positive

__all__ = [
    "efl_coefficients", "assumption5_theta", "theorem1_gamma", "theorem1_step", "theorem1_schedule",
    "theorem1_B", "theorem1_C", "theorem1_J", "theorem1_bound", "theorem1_H_indicator", "table1_rounds",
    "corollary1_f1", "corollary1_threshold", "corollary1_threshold_scaling",
    "theorem2_departure_bound", "theorem2_arrival_bound", "theorem2_arrival_corrected_bound",
    "theorem2_tight_bound",
]


def efl_coefficients(steps: np.ndarray, p: np.ndarray, E: int,
                     weighting: Literal["efl", "fedavg"] = "efl") -> np.ndarray:
    """p_tau^k: E p^k / s_tau^k (EFL, §4.2) or p^k (FedAvg), 0 for inactive clients (s = 0)."""
    E = check_int("E", E, low=1)
    steps = check_finite_array("steps", steps)
    p = _probabilities(p)
    if weighting not in ("efl", "fedavg"):
        raise ValueError(f"weighting must be 'efl' or 'fedavg', got {weighting!r}")
    if np.any(steps < 0) or np.any(steps > E):
        raise ValueError(f"s (local steps s_tau^k) must be in [0, E={E}], got {steps.tolist()}")
    active = steps > 0
    coef = E * p / np.where(active, steps, 1) if weighting == "efl" else np.broadcast_to(p, steps.shape) * 1.0
    return np.where(active, coef, 0.0)


def _probabilities(p: np.ndarray) -> np.ndarray:
    """Client weights p^k: finite, in (0, 1]."""
    p = check_finite_array("p", p)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError(f"p (client weights p^k) must be in (0, 1], got {p.tolist()}")
    return p


def assumption5_theta(E: int, s_min: int) -> float:
    """Assumption 5's theta for p_tau^k = E p^k / s_tau^k with s >= s_min: max p_tau^k / p^k = E / s_min (inferred)."""
    E = check_int("E", E, low=1)
    s_min = check_int("s_min", s_min, low=1, high=E)
    return E / s_min


def theorem1_gamma(E: int, theta: float, L: float, mu: float, min_expected_ps: float) -> float:
    """gamma = max{ 4 E^2 theta / m, 32 E (1 + theta) L / (mu m) },  m = min_tau E[sum_k p_tau^k s_tau^k] (Thm 1)."""
    E = check_int("E", E, low=1)
    theta = check_positive("theta", theta)
    L = check_positive("L", L)
    mu = check_positive("mu", mu)
    m = check_positive("min_expected_ps", min_expected_ps)
    return max(4.0 * E * E * theta / m, 32.0 * E * (1.0 + theta) * L / (mu * m))


def theorem1_step(tau: int, E: int, mu: float, gamma: float, expected_ps: float) -> float:
    """eta_tau = 16 E / (mu ((tau + 1) E + gamma) E[sum_k p_tau^k s_tau^k]) for round tau = 0, 1, ... (Thm 1)."""
    tau = check_int("tau", tau, low=0)
    E = check_int("E", E, low=1)
    return 16.0 * E / (check_positive("mu", mu) * ((tau + 1) * E + check_nonnegative("gamma", gamma))
                       * check_positive("expected_ps", expected_ps))


def theorem1_schedule(mu: float, E: int, gamma: float, expected_ps: float) -> tuple[float, float]:
    """(step, decay) such that EFL's eta = step / (c + decay) with c = tau + 1 equals :func:`theorem1_step`:
    step = 16 / (mu E[sum p s]), decay = gamma / E."""
    E = check_int("E", E, low=1)
    return 16.0 / (check_positive("mu", mu) * check_positive("expected_ps", expected_ps)), \
        check_nonnegative("gamma", gamma) / E


def theorem1_B(coef: np.ndarray, steps: np.ndarray, p: np.ndarray, sigma2: np.ndarray, D: np.ndarray, *,
               L: float, mu: float, theta: float, E: int, G2: float,
               reading: Literal["conservative", "literal"] = "conservative") -> np.ndarray:
    """B_t of Theorem 1 for draws (coef, steps) of shape (..., n); returns shape (...).

    B_t = sum_k (p_t^k)^2 s_t^k sigma_k^2 + 2 (2 + theta) L sum_k p_t^k s_t^k D_k
          + (2 + mu / (2 (1 + theta) L)) E (E - 1) G^2 [bracket] + 2 E G^2 sum_k (p_t^k)^2 s_t^k / p^k,
    bracket = sum p s + theta (sum p - 2 + sum p s) ("conservative", ) or
              sum p s + theta (sum p - 2) + sum p s ("literal" with s^K read as s^k).
    """
    coef, steps = check_finite_array("coef", coef), check_finite_array("steps", steps)
    p, sigma2, D = _probabilities(p), check_finite_array("sigma2", sigma2), check_finite_array("D", D)
    L, mu, theta = check_positive("L", L), check_positive("mu", mu), check_positive("theta", theta)
    E, G2 = check_int("E", E, low=1), check_nonnegative("G2", G2)
    ps = np.sum(coef * steps, axis=-1)
    psum = np.sum(coef, axis=-1)
    if reading == "conservative":
        bracket = ps + theta * (psum - 2.0 + ps)
    elif reading == "literal":
        bracket = ps + theta * (psum - 2.0) + ps
    else:
        raise ValueError(f"reading must be 'conservative' or 'literal', got {reading!r}")
    return (np.sum(coef ** 2 * steps * sigma2, axis=-1) + 2.0 * (2.0 + theta) * L * np.sum(coef * steps * D, axis=-1)
            + (2.0 + mu / (2.0 * (1.0 + theta) * L)) * E * (E - 1) * G2 * bracket
            + 2.0 * E * G2 * np.sum(coef ** 2 * steps / p, axis=-1))


def theorem1_C(gamma: float, dist0_sq: float, E: int, mu: float, expected_B: np.ndarray,
               expected_ps: np.ndarray) -> np.ndarray:
    """C_tau for tau = 1..T (array over tau) from E[B_t] and E[sum_k p_t^k s_t^k], t = 0..T-1 (Thm 1):
    C_tau = max{ gamma^2 E||w_0 - w*||^2, (16 E / mu)^2 sum_{t < tau} E[B_t] / E[sum p s]_t^2 }."""
    gamma, dist0_sq = check_nonnegative("gamma", gamma), check_nonnegative("dist0_sq", dist0_sq)
    E, mu = check_int("E", E, low=1), check_positive("mu", mu)
    EB = check_finite_array("expected_B", expected_B)
    Eps = check_finite_array("expected_ps", expected_ps)
    if np.any(Eps <= 0):
        raise ValueError("expected_ps (E[sum_k p s] per round) must be in (0, inf)")
    acc = np.cumsum(EB / Eps ** 2) * (16.0 * E / mu) ** 2
    return np.maximum(gamma ** 2 * dist0_sq, acc)


def theorem1_J(E: int, expected_ps_per_client: np.ndarray, D: np.ndarray, mu: float) -> float:
    """J (fedtheory's reading, docs/efl.md): 32 E sum_k E[p^k s^k] D_k / (mu E[sum_k p^k s^k]) for one round's expectations; take
    the max over rounds outside."""
    E = check_int("E", E, low=1)
    eps = check_finite_array("expected_ps_per_client", expected_ps_per_client)
    D = check_finite_array("D", D)
    return float(32.0 * E * np.sum(eps * D) / (check_positive("mu", mu) * eps.sum()))


def theorem1_H_indicator(expected_ps_per_client: np.ndarray, p: np.ndarray, rtol: float = 1e-12) -> int:
    """r_t: 1 iff the ratio E[p_t^k s_t^k] / p^k differs across clients (polarity per §4.3), else 0."""
    rtol = check_nonnegative("rtol", rtol)
    ratio = check_finite_array("expected_ps_per_client", expected_ps_per_client) / _probabilities(p)
    return int(np.ptp(ratio) > rtol * max(1.0, float(np.max(np.abs(ratio)))))


def theorem1_bound(tau: np.ndarray | int, E: int, gamma: float, C_tau: np.ndarray | float,
                   H_tau: np.ndarray | float = 0.0, J: float = 0.0) -> np.ndarray:
    """Eq. (7): E||w^G_{tau E} - w*||^2 <= C_tau / (tau E + gamma)^2 + H_tau J / (tau E + gamma)."""
    tau_arr = np.asarray(tau)
    if tau_arr.dtype.kind not in "iu" or np.any(tau_arr < 0):
        raise ValueError(f"tau must be a round index >= 0 or an array of them, got {tau!r}")
    E, gamma, J = check_int("E", E, low=1), check_nonnegative("gamma", gamma), check_nonnegative("J", J)
    t = tau_arr.astype(np.float64) * E + gamma
    return check_finite_array("C_tau", C_tau) / t ** 2 + check_finite_array("H_tau", H_tau) * J / t


def table1_rounds(*, G2: float, mu: float, S: float, eps: float, L: float, delta: float = 0.0,
                  G: float | None = None, N: float = 1.0, sigma2: float = 0.0) -> dict[str, float]:
    """Table 1: communication rounds to reach eps-accuracy (orders, constants dropped), as printed.

    SCAFFOLD G^2/(mu S eps) + G/(mu sqrt eps) + L/mu; MIME G^2/(mu S eps) + delta/mu; VRL-SGD (non-convex)
    N sigma^2/(S eps^2) + N/eps; FedAMP (non-convex) G^2/(L S eps) + G/eps^{3/2} + L^2/sqrt eps;
    EFL G^2/(mu S eps) + L/(mu sqrt eps). S: clients per round (undefined in the paper; SCAFFOLD's meaning).
    """
    G2, mu, S = check_nonnegative("G2", G2), check_positive("mu", mu), check_positive("S", S)
    eps, L, delta = check_positive("eps", eps), check_positive("L", L), check_nonnegative("delta", delta)
    N, sigma2 = check_positive("N", N), check_nonnegative("sigma2", sigma2)
    G = math.sqrt(G2) if G is None else check_nonnegative("G", G)
    return {
        "SCAFFOLD": G2 / (mu * S * eps) + G / (mu * math.sqrt(eps)) + L / mu,
        "MIME": G2 / (mu * S * eps) + delta / mu,
        "VRL-SGD": N * sigma2 / (S * eps ** 2) + N / eps,
        "FedAMP": G2 / (L * S * eps) + G / eps ** 1.5 + L ** 2 / math.sqrt(eps),
        "EFL": G2 / (mu * S * eps) + L / (mu * math.sqrt(eps)),
    }


def corollary1_f1(T: int, E: int, C: float, gamma: float, tau0: int = 0) -> float:
    """f_1(T) = C_T / (E (T - tau0) + gamma)^2 with C_T = T C (§4.1, the paper's assumption C_tau ~ tau C)."""
    T = check_int("T", T, low=1)
    E = check_int("E", E, low=1)
    tau0 = check_int("tau0", tau0, low=0, high=T - 1)
    return T * check_nonnegative("C", C) / (E * (T - tau0) + check_nonnegative("gamma", gamma)) ** 2


def corollary1_threshold(T: int, E: int, C: float, J: float, gamma: float, tau0: int = 0) -> float:
    """Corollary 1 (eq. 8): abandon client a iff y^a J > f_1(T); the threshold y* = f_1(T) / J."""
    return corollary1_f1(T, E, C, gamma, tau0) / check_positive("J", J)


def corollary1_threshold_scaling(T: int, E: int, C: float, J: float) -> float:
    """Eq. (9): y* = O((C / J) / (T E)), constants dropped."""
    return check_nonnegative("C", C) / check_positive("J", J) / (check_int("T", T, low=1) * check_int("E", E, low=1))


def _theorem2(L: float, mu: float, n_a: float, denom: float, D_hat_a: float, constant: float) -> float:
    return constant * check_positive("L", L) * check_positive("n_a", n_a) ** 2 * check_nonnegative("D_hat_a", D_hat_a) \
        / (check_positive("mu", mu) ** 2 * denom ** 2)


def theorem2_departure_bound(L: float, mu: float, n_a: float, n: float, D_hat_a: float,
                             constant: float = 8.0) -> float:
    """Eq. (10): ||w* - w^*_hat||^2 <= 8 L n_a^2 D_hat_a / (mu^2 n^2) when client a (n_a samples) leaves a
    federation of n samples; D_hat_a = F_a(w^*_hat) - F_a^*. ``constant=2`` is the tight version ()."""
    n, n_a = check_positive("n", n), check_positive("n_a", n_a)
    if n_a > n:
        raise ValueError(f"n_a must be <= n (the departing client's samples are part of n), got {n_a} > {n}")
    return _theorem2(L, mu, n_a, n, D_hat_a, check_positive("constant", constant))


def theorem2_arrival_bound(L: float, mu: float, n_a: float, n: float, D_hat_a: float,
                           constant: float = 8.0) -> float:
    """Eq. (11) as printed: ||w* - w^*_hat||^2 <= 8 L n_a^2 D_hat_a / (mu^2 (n + n_a)^2) when client a joins
    a federation of n samples. False in general (claim ``efl.theorem2.arrival``)."""
    return _theorem2(L, mu, n_a, check_positive("n", n) + check_positive("n_a", n_a), D_hat_a,
                     check_positive("constant", constant))


def theorem2_arrival_corrected_bound(L: float, mu: float, n_a: float, n: float, D_hat_a: float,
                                     constant: float = 8.0) -> float:
    """Corrected eq. (11): 8 L n_a^2 D_hat_a / (mu^2 n^2), n the samples before the arrival (derived: F's
    gradient at w^*_hat is -(n_a / n) grad F_a(w^*_hat); ``constant=2`` is already valid)."""
    return _theorem2(L, mu, n_a, check_positive("n", n), D_hat_a, check_positive("constant", constant))


def theorem2_tight_bound(L: float, mu: float, n_a: float, n: float, D_hat_a: float) -> float:
    """2 L n_a^2 D_hat_a / (mu^2 n^2): the derived bound behind both shifts (n = samples of the objective whose
    strong convexity is used, i.e. the one *before* the shift)."""
    return _theorem2(L, mu, n_a, check_positive("n", n), D_hat_a, 2.0)
