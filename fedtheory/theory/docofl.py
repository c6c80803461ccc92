"""DoCoFL's bounds as pure functions of the constants (Dorfman et al., ICML 2023, App. C).

Convention: every function takes ``nmse`` = the paper's omega^2 (the constant with
E||C_c(x) - x||^2 <= omega^2 ||x||^2, i.e. ``compressor.omega(d)`` in fedtheory's registry); the paper's omega
(which enters theta = omega T + 1 unsquared) is sqrt(nmse). ``staleness`` is the App. C constant T (T = K V for
DoCoFL); ``rounds`` is the horizon T of the theorem (written ``rounds`` to keep the two apart).
"""
from __future__ import annotations

import math

import numpy as np

from ..validation import check_finite_array, check_int, check_nonnegative, check_positive, check_real

__all__ = [
    "effective_noise", "heterogeneity_factor", "theta", "theorem1_step", "theorem1_bound", "pretuning_bound",
    "descent_noise_term", "lemma_c1_bound", "bias_bound", "recursion_constants", "lemma_c5", "lemma_c6",
    "lemma_c7", "lemma_c8", "lemma_c9", "lemma_c10", "appendix_a_limit", "appendix_a_mean",
    "naive_variance_floor", "naive_second_moment", "stale_second_moments", "bandwidth_reduction",
    "one_direction_bytes",
]


def _np(nmse: float) -> float:
    return math.sqrt(check_nonnegative("nmse", nmse))


def effective_noise(sigma2: float, G2: float, n_sampled: int, n_clients: int) -> float:
    """sigma_tilde^2 = sigma^2 + 4 (1 - S/N) G^2 (Theorem 3.4)."""
    S = check_int("n_sampled", n_sampled, low=1)
    N = check_int("n_clients", n_clients, low=S)
    return check_nonnegative("sigma2", sigma2) + 4.0 * (1.0 - S / N) * check_nonnegative("G2", G2)


def heterogeneity_factor(B2: float, n_sampled: int, n_clients: int) -> float:
    """gamma = 1 + (1 - S/N) B^2 / S (Theorem 3.4)."""
    S = check_int("n_sampled", n_sampled, low=1)
    N = check_int("n_clients", n_clients, low=S)
    return 1.0 + (1.0 - S / N) * check_nonnegative("B2", B2) / S


def theta(nmse: float, staleness: int) -> float:
    """theta = omega T + 1 with omega = sqrt(nmse) (Theorem 1)."""
    return _np(nmse) * check_int("staleness", staleness, low=0) + 1.0


def theorem1_step(M: float, beta: float, sigma_tilde2: float, n_sampled: int, rounds: int, nmse: float,
                  staleness: int, gamma: float = 1.0) -> float:
    """eta = min{1/(30 gamma beta theta), sqrt(2 M S/(beta sigma~^2 T)), (M S/(12 beta^2 omega^2 T~ sigma~^2 T))^(1/3)};
    a min-term with a zero denominator is +inf (drops out)."""
    M, beta = check_positive("M", M), check_positive("beta", beta)
    s2 = check_nonnegative("sigma_tilde2", sigma_tilde2)
    S, T = check_int("n_sampled", n_sampled, low=1), check_int("rounds", rounds, low=1)
    gamma = check_real("gamma", gamma, low=1.0)
    th = theta(nmse, staleness)
    eta1 = 1.0 / (30.0 * gamma * beta * th)
    eta2 = math.sqrt(2.0 * M * S / (beta * s2 * T)) if s2 > 0 else math.inf
    den3 = 12.0 * beta**2 * nmse * staleness * s2 * T
    eta3 = (M * S / den3) ** (1.0 / 3.0) if den3 > 0 else math.inf
    return min(eta1, eta2, eta3)


def theorem1_bound(M: float, beta: float, sigma_tilde2: float, n_sampled: int, rounds: int, nmse: float,
                   staleness: int, gamma: float = 1.0) -> float:
    """RHS of Theorem 1 (eq. (11)) bounding E[(1/T) sum_t ||grad f(w_t)||^2]:

    4 sqrt(2 M beta sigma~^2/(T S)) + 8 (12 M^2 beta^2 omega^2 T~ sigma~^2)^(1/3)/(T^(2/3) S^(1/3))
    + 120 gamma M beta theta / T.
    """
    M, beta = check_positive("M", M), check_positive("beta", beta)
    s2 = check_nonnegative("sigma_tilde2", sigma_tilde2)
    S, T = check_int("n_sampled", n_sampled, low=1), check_int("rounds", rounds, low=1)
    gamma = check_real("gamma", gamma, low=1.0)
    Tt = check_int("staleness", staleness, low=0)
    th = theta(nmse, Tt)
    return (4.0 * math.sqrt(2.0 * M * beta * s2 / (T * S))
            + 8.0 * (12.0 * M**2 * beta**2 * nmse * Tt * s2) ** (1.0 / 3.0) / (T ** (2.0 / 3.0) * S ** (1.0 / 3.0))
            + 120.0 * gamma * M * beta * th / T)


def pretuning_bound(eta: float, M: float, beta: float, sigma_tilde2: float, n_sampled: int, rounds: int,
                    nmse: float, staleness: int, gamma: float = 1.0) -> float:
    """4M/(eta T) + 2 beta sigma~^2 eta / S + 48 beta^2 omega^2 T~ sigma~^2 eta^2 / S, valid for every
    eta <= 1/(30 gamma beta theta) (App. C.1, before tuning eta)."""
    eta = check_positive("eta", eta)
    limit = 1.0 / (30.0 * check_real("gamma", gamma, low=1.0) * check_positive("beta", beta)
                   * theta(nmse, staleness))
    if eta > limit * (1 + 1e-12):
        raise ValueError(f"eta must be in (0, 1/(30 gamma beta theta)] = (0, {limit}], got {eta}")
    S, T = check_int("n_sampled", n_sampled, low=1), check_int("rounds", rounds, low=1)
    s2 = check_nonnegative("sigma_tilde2", sigma_tilde2)
    return (4.0 * check_positive("M", M) / (eta * T) + 2.0 * beta * s2 * eta / S
            + 48.0 * beta**2 * nmse * staleness * s2 * eta**2 / S)


def descent_noise_term(eta: float, beta: float, sigma_tilde2: float, n_sampled: int, rounds: int, nmse: float,
                       staleness: int) -> float:
    """(beta eta^2/2 + 12 beta^2 omega^2 T~ eta^3) T sigma~^2 / S, the noise term of eq. (18):
    E[f(w_T) - f(w_0)] <= -(eta/4) sum_t E||grad_t||^2 + descent_noise_term."""
    eta, beta = check_positive("eta", eta), check_positive("beta", beta)
    nmse, staleness = check_nonnegative("nmse", nmse), check_int("staleness", staleness, low=0)
    return ((beta * eta**2 / 2.0 + 12.0 * beta**2 * nmse * staleness * eta**3)
            * check_int("rounds", rounds, low=1) * check_nonnegative("sigma_tilde2", sigma_tilde2)
            / check_int("n_sampled", n_sampled, low=1))


def lemma_c1_bound(sigma2: float, G2: float, B2: float, n_sampled: int, n_clients: int, grad_norm2: float,
                   beta: float, mean_estimation_error: float) -> float:
    """Lemma C.1 (eq. (19)): E||g_hat_t||^2 <= sigma~^2/S + 4 gamma ||grad_t||^2 + 2 beta^2 (1/N) sum_i ||w_hat^i - w_t||^2."""
    s2 = effective_noise(sigma2, G2, n_sampled, n_clients)
    gamma = heterogeneity_factor(B2, n_sampled, n_clients)
    return (s2 / n_sampled + 4.0 * gamma * check_nonnegative("grad_norm2", grad_norm2)
            + 2.0 * check_positive("beta", beta) ** 2 * check_nonnegative("mean_estimation_error",
                                                                         mean_estimation_error))


def bias_bound(beta: float, mean_estimation_error: float) -> float:
    """Eq. (13): ||grad_t - (1/N) sum_i grad f_i(w_hat^i)||^2 <= beta^2 (1/N) sum_i ||w_hat^i - w_t||^2."""
    return check_positive("beta", beta) ** 2 * check_nonnegative("mean_estimation_error", mean_estimation_error)


def recursion_constants(eta: float, beta: float, nmse: float, staleness: int, gamma: float = 1.0
                        ) -> dict[str, float]:
    """alpha = 4 omega^2 eta^2 T, nu = 28 gamma omega^2 eta^2 T, rho = 20 beta^2 omega^2 eta^2 T (eqs. (28)/(30)),
    plus rho T and sum_k k (rho T)^k = rho T / (1 - rho T)^2 (eq. (15))."""
    eta, beta = check_positive("eta", eta), check_positive("beta", beta)
    T = check_int("staleness", staleness, low=0)
    nmse = check_nonnegative("nmse", nmse)
    gamma = check_nonnegative("gamma", gamma)
    rho = 20.0 * beta**2 * nmse * eta**2 * T
    rT = rho * T
    return {"alpha": 4.0 * nmse * eta**2 * T, "nu": 28.0 * gamma * nmse * eta**2 * T, "rho": rho, "rhoT": rT,
            "sum_k_rhoT_k": rT / (1.0 - rT) ** 2 if rT < 1 else math.inf}


# ---------------- technical lemmas C.5 - C.10: each returns (lhs, rhs) of "lhs <= rhs" ----------------

def lemma_c5(U: np.ndarray) -> tuple[float, float]:
    """C.5: ||sum_i u_i||^2 <= N sum_i ||u_i||^2 for rows u_i of U (N, d)."""
    U = np.atleast_2d(check_finite_array("U", U))
    s = U.sum(axis=0)
    return float(s @ s), float(U.shape[0] * np.sum(U * U))


def lemma_c6(x: np.ndarray, t: int, tau: int) -> tuple[float, float, float]:
    """C.6 for t >= tau + 1, x_l >= 0: (sum_{k=0}^{t-tau} sum_{l<k} x_l, sum_{k<t-tau} (t-tau-k) x_k,
    t sum_{k<t-tau} x_k); the first two are equal, the second is <= the third."""
    x = check_finite_array("x", x, shape=(None,))
    t, tau = check_int("t", t, low=1), check_int("tau", tau, low=0)
    if t < tau + 1:
        raise ValueError(f"t must be >= tau + 1 = {tau + 1}, got {t}")
    n = t - tau
    if x.size < n or np.any(x < 0):
        raise ValueError(f"x must hold at least t - tau = {n} non-negative values")
    csum = np.concatenate(([0.0], np.cumsum(x[:n])))
    lhs = float(np.sum(csum[: n + 1]))                     # sum_{k=0}^{n} sum_{l<k} x_l
    mid = float(np.sum((n - np.arange(n)) * x[:n]))
    return lhs, mid, float(t * np.sum(x[:n]))


def lemma_c7(a: float, terms: int = 100000) -> tuple[float, float]:
    """C.7: partial sum sum_{k=1}^{terms} k a^k and the closed form a/(1-a)^2 (a in [0, 1))."""
    a = check_real("a", a, low=0.0, high=1.0, high_open=True)
    k = np.arange(1, check_int("terms", terms, low=1) + 1, dtype=np.float64)
    return float(np.sum(k * a**k)), a / (1.0 - a) ** 2


def lemma_c8(x: np.ndarray, a: float, staleness: int) -> tuple[float, float]:
    """C.8: sum_{t=1}^T sum_{k<t} a^ceil((t-k)/T~) x_k <= T~ a/(1-a) sum_{k<T} x_k (a in (0,1), x >= 0)."""
    x = check_finite_array("x", x, shape=(None,))
    if x.size == 0 or np.any(x < 0):
        raise ValueError("x must be a non-empty 1-D array of non-negative numbers")
    a = check_real("a", a, low=0.0, high=1.0, low_open=True, high_open=True)
    Tt = check_int("staleness", staleness, low=1)
    T = x.size
    t = np.arange(1, T + 1)[:, None]
    k = np.arange(T)[None, :]
    w = np.where(k < t, a ** np.ceil(np.maximum(t - k, 1) / Tt), 0.0)
    return float(np.sum(w * x[None, :])), Tt * a / (1.0 - a) * float(x.sum())


def lemma_c9(eta: float, gamma: float, beta: float, theta_: float) -> tuple[float, float]:
    """C.9: -eta/2 + 2 gamma beta eta^2 + 160 gamma beta^2 theta^2 eta^3 <= -eta/4 for eta <= 1/(30 gamma beta theta)."""
    eta, beta = check_positive("eta", eta), check_positive("beta", beta)
    gamma, theta_ = check_real("gamma", gamma, low=1.0), check_real("theta_", theta_, low=1.0)
    lhs = -eta / 2 + 2 * gamma * beta * eta**2 + 160 * gamma * beta**2 * theta_**2 * eta**3
    return lhs, -eta / 4


def lemma_c10(A: float, B: float, C: float, eta1: float, eta2: float, eta3: float) -> tuple[float, float]:
    """C.10: with eta = min(eta1, eta2, eta3): A/eta + B eta + C eta^2 <= A (1/eta1 + 1/eta2 + 1/eta3) + B eta2 + C eta3^2
    (etas may be +inf, in which case 1/eta = 0 and the B, C terms with an infinite eta must have zero weight)."""
    A, B, C = (check_positive(n, v) for n, v in (("A", A), ("B", B), ("C", C)))
    etas = [math.inf if v == math.inf else check_positive(n, v)  # NaN and strings fail check_positive
            for n, v in (("eta1", eta1), ("eta2", eta2), ("eta3", eta3))]
    eta = min(etas)
    lhs = A / eta + B * eta + C * eta**2
    rhs = A * sum(1.0 / e for e in etas) + B * etas[1] + C * etas[2] ** 2
    return lhs, rhs


# ---------------- Appendix A and the exact (inferred) scalar dynamics of docs/docofl.md ----------------

def appendix_a_limit(scale: float) -> float:
    """Limit of E[w_t] for naive weight-compressed GD on f(w) = (w-1)^2/2 + [w-1]_+^2/2 with eps = +-omega
    (derived by fedtheory): w~ = 3/(3 + omega) < w* = 1 (``scale`` = omega in (0, 1))."""
    om = check_real("scale", scale, low=0.0, high=1.0, low_open=True, high_open=True)
    return 3.0 / (3.0 + om)


def appendix_a_mean(t: np.ndarray | int, eta: float, scale: float, w0: float = 1.0) -> np.ndarray:
    """E[w_t] = w~ + (1 - eta (3 + omega)/2)^t (w0 - w~) for w0 in [1/(1+omega), 1/(1-omega)] and
    eta < 1/(2 (1 + omega)) (the mean field is affine on that invariant interval)."""
    om = check_real("scale", scale, low=0.0, high=1.0, low_open=True, high_open=True)
    eta = check_real("eta", eta, low=0.0, high=1.0 / (2.0 * (1.0 + om)), low_open=True, high_open=True)
    w0 = check_real("w0", w0)
    t_arr = np.asarray(t)
    if t_arr.dtype.kind not in "iu":
        raise TypeError(f"t must be an integer or an integer array (round counts), got {t!r}")
    if np.any(t_arr < 0):
        raise ValueError(f"t must be in [0, inf) (round counts), got {t!r}")
    if not (1.0 / (1.0 + om) <= w0 <= 1.0 / (1.0 - om)):
        raise ValueError(f"w0 must be in [1/(1+omega), 1/(1-omega)] = [{1 / (1 + om)}, {1 / (1 - om)}], got {w0}")
    wt = appendix_a_limit(om)
    return wt + (1.0 - eta * (3.0 + om) / 2.0) ** np.asarray(t, dtype=np.float64) * (w0 - wt)


def naive_variance_floor(a: float, eta: float, nmse: float, w_star: float) -> float:
    """Stationary E(w - w*)^2 of naive weight compression on f = a/2 (w - w*)^2 (derived by fedtheory):
    eta a omega^2 w*^2 / (2 - eta a - eta a omega^2); needs (1 - eta a)^2 + (eta a)^2 omega^2 < 1."""
    a, eta = check_positive("a", a), check_positive("eta", eta)
    nmse = check_nonnegative("nmse", nmse)
    w_star = check_real("w_star", w_star)
    if (1 - eta * a) ** 2 + (eta * a) ** 2 * nmse >= 1:
        raise ValueError("the second moment does not converge: need (1 - eta a)^2 + (eta a)^2 nmse < 1")
    return eta * a * nmse * w_star**2 / (2.0 - eta * a - eta * a * nmse)


def naive_second_moment(rounds: int, a: float, eta: float, nmse: float, w_star: float, w0: float) -> np.ndarray:
    """Exact E(w_t - w*)^2, t = 0..rounds, for naive compression w_hat = w + eps w (E eps = 0, E eps^2 = nmse):
    u' = (1 - eta a) u - eta a eps (u + w*), so m' = (1 - eta a) m and
    q' = ((1 - eta a)^2 + (eta a)^2 nmse) q + (eta a)^2 nmse (2 w* m + w*^2)."""
    T = check_int("rounds", rounds, low=0)
    a, eta, nmse = check_positive("a", a), check_positive("eta", eta), check_nonnegative("nmse", nmse)
    w_star, w0 = check_real("w_star", w_star), check_real("w0", w0)
    c = eta * a
    m, q = w0 - w_star, (w0 - w_star) ** 2
    out = [q]
    for _ in range(T):
        q = ((1 - c) ** 2 + c**2 * nmse) * q + c**2 * nmse * (2 * w_star * m + w_star**2)
        m = (1 - c) * m
        out.append(q)
    return np.array(out)


def stale_second_moments(rounds: int, a: float, eta: float, nmse: float, sigma2: float, staleness: int,
                         u0: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact E u_t^2 and E (w_t - y_t)^2, t = 0..rounds, for the App. C meta-algorithm on f = a/2 (w - w*)^2 with
    fixed staleness tau (y_t = w_{t-tau}, w_{-k} = w_0), C_c(x) = x (1 + omega s) and gradient noise of variance
    sigma2 (docs/docofl.md): z_t = (u_t, ..., u_{t-tau}), z' = (A0 + s A1) z - eta zeta e1,
    P' = A0 P A0^T + A1 P A1^T + eta^2 sigma2 e1 e1^T."""
    T = check_int("rounds", rounds, low=0)
    tau = check_int("staleness", staleness, low=0)
    a, eta, u0 = check_positive("a", a), check_positive("eta", eta), check_real("u0", u0)
    om = _np(nmse)
    n = tau + 1
    A0 = np.zeros((n, n))
    A0[0, 0] = 1 - eta * a
    A0[np.arange(1, n), np.arange(n - 1)] = 1.0
    A1 = np.zeros((n, n))
    A1[0, 0] -= eta * a * om
    A1[0, tau] += eta * a * om
    P = np.full((n, n), float(u0) ** 2)
    E1 = np.zeros((n, n))
    E1[0, 0] = eta**2 * check_nonnegative("sigma2", sigma2)
    u2, corr = [P[0, 0]], [P[0, 0] - 2 * P[0, tau] + P[tau, tau]]
    for _ in range(T):
        P = A0 @ P @ A0.T + A1 @ P @ A1.T + E1
        u2.append(P[0, 0])
        corr.append(P[0, 0] - 2 * P[0, tau] + P[tau, tau])
    return np.array(u2), np.array(corr)


# ---------------- bandwidth arithmetic (Sec. 7.3 / Table 3) ----------------

def bandwidth_reduction(b_w: float, b_c: float, b_g: float, baseline_bits: float = 32.0) -> dict[str, float]:
    """Reduction factors versus FedAvg at ``baseline_bits`` per coordinate both ways (Sec. 7.3):
    online downlink 32/b_c, total downlink 32/(b_w + b_c), uplink 32/b_g."""
    b_w, b_c, b_g = (check_positive(n, v) for n, v in (("b_w", b_w), ("b_c", b_c), ("b_g", b_g)))
    base = check_positive("baseline_bits", baseline_bits)
    return {"online": base / b_c, "total": base / (b_w + b_c), "uplink": base / b_g}


def one_direction_bytes(params: float, clients_per_round: float, rounds: float, bits: float = 32.0) -> float:
    """Bytes sent in one direction: params x clients x rounds x bits / 8 (the intro's McMahan et al. example)."""
    return (check_positive("params", params) * check_positive("clients_per_round", clients_per_round)
            * check_positive("rounds", rounds) * check_positive("bits", bits) / 8.0)
