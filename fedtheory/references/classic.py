"""Reference rounds of the classic algorithms: FedAvg, FedProx, SCAFFOLD, FedDyn, Scaffnew and gradient descent,
with FedElasticNet's Algorithms 1-3 (Kim et al.) as their ``l1``/``threshold`` options.

Each function transcribes one round of the paper's update equations with a plain loop over the clients; the
elastic-net local problem, T_eps and the upload counts come from :mod:`fedtheory.references.fedelasticnet`. Every
quantity of the RoundLog is recomputed: bits and non-zeros of each transmitted vector, vectors each way,
participants, gradient evaluations, whether the round communicated, and the ``upload_metrics`` hook's scalars
(FedElasticNet's entropy) evaluated on the matrix the paper says is transmitted (the hook is a metric of
:mod:`fedtheory.metrics`, certified by its own claims; what is checked here is that it sees the right matrix).
One exception, where the equations do not determine a count: when an entry of a transmitted vector is within
rounding of 0 or of the threshold eps (at or near a fixed point, Delta_i = y_i - x is 0 up to rounding, and one
correct evaluation order gives 0 where another gives 1e-17), the non-zero counts, the bits that depend on them and
the upload metrics are left out of that round's comparison (:func:`_rounding_decides`); every other quantity,
including the transmitted vectors themselves, is still compared.

Hyperparameters and state fields are read by name; defaults are the documented ones (local step 1/(L + lambda2)
with L = ``problem.certificate.L``, the largest client smoothness; GD's step 1/L_f). Randomness comes from the
draw only: participants ``draw.clients``, the coin ``draw.coin``, the number of local steps ``draw.local_steps``
(Scaffnew per communication), and for stochastic gradients a generator ``numpy.random.default_rng(draw.seed)``
consumed by one stacked ``problem.stochastic_grads`` call per local step over the (still active) participants in
increasing order, then (SCAFFOLD option I) one call at the server model x over the participants.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .fedelasticnet import local_argmin, local_path, transmit, upload_cost
from .registry import Expected, reference

__all__ = ["fedavg_round", "scaffold_round", "feddyn_round", "scaffnew_round", "gd_round"]


def _rng(alg: Any, draw: Any) -> np.random.Generator | None:
    if not getattr(alg, "stochastic", False):
        return None
    if draw.seed is None:
        raise ValueError("a stochastic run's draw must carry its seed (draw.seed)")
    return np.random.default_rng(draw.seed)


def _table(value: Any) -> np.ndarray:
    """A per-client table (ndarray or the implementation's persistent table) as a fresh (n, d) array."""
    return np.array(value, dtype=float)


def _log(problem: Any, uploads: list[np.ndarray], *, down: int, down_model: np.ndarray | None, participants: int,
         evals: int, communicated: bool = True, extra: dict[str, float] | None = None,
         rounding_decides: bool = False) -> dict[str, float]:
    """The RoundLog the round's transmissions determine: ``uploads`` are the vectors sent up, ``down`` dense
    vectors go down (each the broadcast model ``down_model``, counted with its non-zeros; d each when None).
    With ``rounding_decides`` (:func:`_rounding_decides`) the non-zero counts, the bits that depend on them and
    the upload metrics are left out: the paper's equations do not determine them beyond rounding."""
    d = problem.dim
    bits, nnz, count = upload_cost(uploads, d)
    down_nnz = d if down_model is None else int(np.count_nonzero(down_model))
    log = {"uplink_bits": bits, "uplink_nnz": nnz, "vectors_up": count, "downlink_bits": 64.0 * d * down,
           "downlink_nnz": down_nnz * down, "vectors_down": down, "local_grad_evals": evals,
           "participants": participants, "communicated": float(communicated)}
    log.update({f"extra.{k}": v for k, v in (extra or {}).items()})
    if rounding_decides:
        for key in ("uplink_bits", "uplink_nnz", "downlink_nnz", *(f"extra.{k}" for k in _metric_keys(extra))):
            log.pop(key, None)
    return log


#: Relative size (to the round's scale) below which an entry's zero-ness, or its side of the threshold eps, is
#: decided by rounding: two correct evaluation orders of the same equations differ by ~1e-15 relative here.
ROUNDING_FLOOR = 1e-10


def _rounding_decides(raw: list[np.ndarray], *, eps: float = 0.0, structural_zeros: bool = False,
                      scale: float = 1.0) -> bool:
    """Whether the non-zero count of the transmitted vectors is decided by rounding rather than by the equations:
    an entry of a vector before T_eps (``raw``) within ROUNDING_FLOOR * scale of 0 or of eps, or an exact 0 that
    no l1 term produced (``structural_zeros`` False: a cancellation, as at a fixed point, where one evaluation
    order gives 0 and another 1e-17). Only there are the counts left out of the comparison."""
    floor = ROUNDING_FLOOR * max(1.0, scale)
    for u in raw:
        a = np.abs(np.asarray(u, dtype=float))
        if np.any((a > 0) & (a <= floor)) or (eps > 0 and np.any(np.abs(a - eps) <= floor)):
            return True
        if not structural_zeros and np.any(a == 0):
            return True
    return False


def _metric_keys(extra: dict[str, float] | None) -> list[str]:
    """The upload-metric entries of ``extra`` (counts and entropies of the transmitted values), not the local-step
    count Scaffnew logs there."""
    return [k for k in (extra or {}) if k != "local_steps"]


def _scale(*arrays: Any) -> float:
    return max(float(np.max(np.abs(np.asarray(a, dtype=float)), initial=0.0)) for a in arrays)


def _hook(alg: Any, sent: np.ndarray) -> dict[str, float]:
    hook = getattr(alg, "upload_metrics", None)
    if hook is None or sent.size == 0:
        return {}
    return {str(k): float(v) for k, v in hook(sent).items()}


def _idle(problem: Any, state: Any, clients: np.ndarray, keep: tuple[str, ...] = ()) -> Expected:
    """Nobody participates (Bernoulli participation): nothing is sent, nothing changes (x and the ``keep`` states)."""
    unchanged = {name: _table(getattr(state, name)) for name in keep}
    return Expected(state={"x": state.x, **unchanged, "last_upload": np.zeros((0, problem.dim)),
                           "last_clients": clients},
                    log=_log(problem, [], down=0, down_model=None, participants=0, evals=0, communicated=False))


def _server_weights(problem: Any, S: np.ndarray, weighting: str = "problem",
                    normalize: str = "participants") -> list[float]:
    """a_i: w_i = n_k/n (the problem's weights) or 1/n, divided by their sum over S (the mean over the
    participants) or not (FedElasticNet Alg. 1 line 8 as printed)."""
    w = [float(problem.weights[i]) if weighting == "problem" else 1.0 / problem.n_clients for i in S]
    total = sum(w)
    return [wi / total for wi in w] if normalize == "participants" and total > 0 else w


@reference("fedavg", "fedprox")
def fedavg_round(alg: Any, problem: Any, state: Any, draw: Any) -> Expected:
    """FedAvg (McMahan et al. 2017, Alg. 1), FedProx (Li et al. 2020, Alg. 2) and FedElasticNet Alg. 1 (Kim et
    al., Section 3.1, eq. (4)):

        y_i = K local (S)GD steps on f_i from x (FedAvg), or argmin f_i + lambda2/2 ||. - x||^2
              + lambda1 ||. - x||_1 (FedProx/Alg. 1 line 5, exact), or K sub-gradient/ISTA steps on it;
        Delta_i = T_eps(y_i - x)                       (uploaded, Alg. 1 line 6)
        x+ = x + eta_g sum_{i in S} a_i Delta_i        (Alg. 1 line 8; a_i of ``weighting``/``normalize``).
    """
    S = np.asarray(draw.clients)
    x = np.asarray(state.x, dtype=float)
    if S.size == 0:
        return _idle(problem, state, S)
    fedprox = type(alg).name == "fedprox"
    lam2 = alg.prox if fedprox else 0.0
    eta = alg.local_step if alg.local_step is not None else 1.0 / (problem.certificate.L + lam2)
    if fedprox and alg.solver == "exact":
        Y, evals = local_argmin(problem, x, S, lam=lam2, l1=alg.l1), 0  # a solve is not a gradient evaluation
    else:
        Y, evals = local_path(problem, x, S, steps=alg.local_steps, eta=eta, prox=lam2,
                              l1=alg.l1 if fedprox else 0.0, l1_mode=alg.l1_mode if fedprox else "subgradient",
                              tol=alg.local_tol, rng=_rng(alg, draw))
    a = _server_weights(problem, S, alg.weighting, alg.normalize)
    deltas = [transmit(Y[k] - x, alg.threshold) for k in range(len(S))]
    x_new = x.copy()
    for a_i, delta in zip(a, deltas):
        x_new = x_new + alg.server_step * a_i * delta
    sent = np.array(deltas)
    return Expected(state={"x": x_new, "last_upload": sent, "last_clients": S},
                    log=_log(problem, deltas, down=len(S), down_model=x, participants=len(S), evals=evals,
                             extra=_hook(alg, sent),
                             rounding_decides=_rounding_decides(
                                 [Y[k] - x for k in range(len(S))], eps=alg.threshold,
                                 # a client stopped by the tolerance before its first step sends exactly 0
                                 structural_zeros=(fedprox and alg.l1 > 0) or alg.local_tol is not None,
                                 scale=_scale(x, Y))))


@reference("scaffold")
def scaffold_round(alg: Any, problem: Any, state: Any, draw: Any) -> Expected:
    """SCAFFOLD (Karimireddy et al. 2020, Alg. 1) and FedElasticNet Alg. 2 (Kim et al., Section 3.2, eqs. (5)-(7)):

        y_i <- y_i - eta_l (g_i(y_i) - c_i + c + lambda2 (y_i - x) + lambda1 sign(y_i - x)), K times from x
              (or the ISTA step on the l1 term, ``l1_mode="proximal"``)
        c_i+ = g_i(x) (option I)  or  c_i - c + (x - y_i) / (K eta_l) (option II)
        Delta y_i = T_eps(y_i - x), Delta c_i = c_i+ - c_i       (both uploaded; T_eps on Delta y only)
        x+ = x + eta_g sum_S (w_i / sum_S w_j) Delta y_i,   c+ = c + sum_S w_i Delta c_i
    (w_i = 1/N is Karimireddy et al.'s |S|/N mean; non-participants keep c_i). Down: x and c to each participant.
    """
    S = np.asarray(draw.clients)
    x = np.asarray(state.x, dtype=float)
    if S.size == 0:
        return _idle(problem, state, S, keep=("c", "C"))
    K = alg.local_steps
    eta = alg.local_step if alg.local_step is not None else 1.0 / (problem.certificate.L + alg.prox)
    c = np.asarray(state.c, dtype=float)
    C = _table(state.C)
    rng = _rng(alg, draw)
    Y, evals = local_path(problem, x, S, steps=K, eta=eta, lin=np.array([c - C[i] for i in S]), prox=alg.prox,
                          l1=alg.l1, l1_mode=alg.l1_mode, rng=rng)
    if alg.option == "I":
        X = np.tile(x, (len(S), 1))
        at_x = problem.grads(X, S) if rng is None else problem.stochastic_grads(X, rng, S)
        evals += len(S)
    C_new, dys, dcs = C.copy(), [], []
    x_new, c_new = x.copy(), c.copy()
    total = sum(float(problem.weights[i]) for i in S)
    for k, i in enumerate(S):
        ci_new = at_x[k] if alg.option == "I" else C[i] - c + (x - Y[k]) / (K * eta)
        dy = transmit(Y[k] - x, alg.threshold)
        dc = ci_new - C[i]
        w = float(problem.weights[i])
        x_new = x_new + alg.server_step * (w / total) * dy
        c_new = c_new + w * dc
        C_new[i] = ci_new
        dys.append(dy)
        dcs.append(dc)
    sent = np.array(dys)
    return Expected(state={"x": x_new, "c": c_new, "C": C_new, "last_upload": sent, "last_clients": S},
                    log=_log(problem, dys + dcs, down=2 * len(S), down_model=None, participants=len(S),
                             evals=evals, extra=_hook(alg, sent),
                             rounding_decides=_rounding_decides(
                                 [Y[k] - x for k in range(len(S))], eps=alg.threshold, structural_zeros=alg.l1 > 0,
                                 scale=_scale(x, Y))
                             or _rounding_decides(dcs, structural_zeros=alg.l1 > 0, scale=_scale(c, C_new))))


@reference("feddyn")
def feddyn_round(alg: Any, problem: Any, state: Any, draw: Any) -> Expected:
    """FedDyn (Acar et al. 2021, Alg. 1) and FedElasticNet Alg. 3 (Kim et al., Section 3.3, eqs. (8)-(12)):

        theta_i = argmin f_i(theta) - <g_i, theta> + alpha/2 ||theta - x||^2 + lambda1 ||theta - x||_1
                  (exact, or K sub-gradient/ISTA steps from x)                                   (eq. 10)
        Delta_i = T_eps(theta_i - x), theta_i = x + Delta_i  (threshold before the state update, as documented)
        s_i = sign(Delta_i) (printed, sign(0) = 0)  or  (g_i - grad f_i(theta_i) - alpha Delta_i) / lambda1 (KKT)
        g_i+ = g_i - alpha Delta_i - lambda1 s_i                                                 (eq. 11)
        h+ = h + sum_S w_i (g_i+ - g_i),   x+ = sum_S (w_i / sum_S w_j) theta_i - h+ / alpha    (Alg. 3 l. 12-13)
    Uploaded: Delta_i (``upload="delta"``) or theta_i (``"model"``); down: x to every participant.
    """
    S = np.asarray(draw.clients)
    x = np.asarray(state.x, dtype=float)
    if S.size == 0:
        return _idle(problem, state, S, keep=("h", "G"))
    alpha, l1 = alg.alpha, alg.l1
    G = _table(state.G)
    lin = np.array([-G[i] for i in S])
    if alg.solver == "exact":
        theta_hat, evals = local_argmin(problem, x, S, lam=alpha, l1=l1, lin=lin), 0
    else:
        eta = alg.local_step if alg.local_step is not None else 1.0 / (problem.certificate.L + alpha)
        theta_hat, evals = local_path(problem, x, S, steps=alg.local_steps, eta=eta, lin=lin, prox=alpha, l1=l1,
                                      l1_mode=alg.l1_mode, rng=_rng(alg, draw))
    deltas = [transmit(theta_hat[k] - x, alg.threshold) for k in range(len(S))]
    thetas = [x + delta for delta in deltas]
    if l1 > 0.0 and alg.sign_at_zero == "kkt":
        at_theta = problem.grads(np.array(thetas), S)
        evals += len(S)
    G_new, h_new = G.copy(), np.asarray(state.h, dtype=float).copy()
    total = sum(float(problem.weights[i]) for i in S)
    average = np.zeros_like(x)
    for k, i in enumerate(S):
        increment = -alpha * deltas[k]
        if l1 > 0.0:
            s = np.sign(deltas[k]) if alg.sign_at_zero == "printed" else \
                (G[i] - at_theta[k] - alpha * deltas[k]) / l1
            increment = increment - l1 * s
        G_new[i] = G[i] + increment
        h_new = h_new + float(problem.weights[i]) * increment
        average = average + float(problem.weights[i]) / total * thetas[k]
    sent = deltas if alg.upload == "delta" else thetas
    return Expected(state={"x": average - h_new / alpha, "h": h_new, "G": G_new, "last_upload": np.array(sent),
                           "last_clients": S},
                    log=_log(problem, sent, down=len(S), down_model=x, participants=len(S), evals=evals,
                             extra=_hook(alg, np.array(sent)),
                             rounding_decides=_rounding_decides(
                                 [theta_hat[k] - x for k in range(len(S))], eps=alg.threshold,
                                 structural_zeros=l1 > 0, scale=_scale(x, theta_hat))
                             or (alg.upload == "model" and _rounding_decides(thetas, scale=_scale(x, theta_hat)))))


def _proxskip_iteration(alg: Any, problem: Any, X: np.ndarray, H: np.ndarray, S: np.ndarray, coin: bool,
                        rng: np.random.Generator | None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One ProxSkip iteration (Mishchenko et al. 2022, Alg. 2 lines 3-9): (X, H, xbar or None)."""
    n = problem.n_clients
    gamma = alg.step if alg.step is not None else 1.0 / problem.certificate.L
    everyone = np.arange(n)
    Gr = problem.grads(X, everyone) if rng is None else problem.stochastic_grads(X, rng, everyone)
    X_hat = np.array([X[i] - gamma * (Gr[i] - H[i]) for i in range(n)])            # line 4
    if not coin or S.size == 0:
        return X_hat, H, None                                                       # line 8: x_i = xhat_i
    total = sum(float(problem.weights[i]) for i in S)
    xbar = sum(float(problem.weights[i]) / total * X_hat[i] for i in S)              # line 6 (server average)
    X_new, H_new = X_hat.copy(), H.copy()
    for i in S:
        X_new[i] = xbar
        H_new[i] = H[i] + alg.p / gamma * (xbar - X_hat[i])                          # line 7
    return X_new, H_new, X_hat[S]


@reference("scaffnew")
def scaffnew_round(alg: Any, problem: Any, state: Any, draw: Any) -> Expected:
    """Scaffnew = ProxSkip on consensus (Mishchenko et al. 2022, Alg. 2), one iteration per round with the coin
    ``draw.coin`` (``round_unit="step"``), or ``draw.local_steps`` = K iterations of which only the last
    communicates (``"communication"``, the authors' code). Uploaded: xhat_i of each participant; down: xbar."""
    S = np.asarray(draw.clients)
    X, H = _table(state.X), _table(state.H)
    rng = _rng(alg, draw)
    n = problem.n_clients
    coins = [draw.coin] if alg.round_unit == "step" else [False] * (draw.local_steps - 1) + [True]
    for coin in coins:
        X, H, sent = _proxskip_iteration(alg, problem, X, H, S, coin, rng)
    extra = {} if alg.round_unit == "step" else {"local_steps": float(len(coins))}
    evals = n * len(coins)
    if sent is None:
        return Expected(state={"x": state.x, "X": X, "H": H, "last_upload": np.zeros((0, problem.dim)),
                               "last_clients": np.zeros(0)},
                        log=_log(problem, [], down=0, down_model=None, participants=0, evals=evals,
                                 communicated=False, extra=extra))
    xbar = X[S[0]]
    return Expected(state={"x": xbar, "X": X, "H": H, "last_upload": sent, "last_clients": S},
                    log=_log(problem, list(sent), down=len(S), down_model=xbar, participants=len(S), evals=evals,
                             extra={**_hook(alg, sent), **extra},
                             rounding_decides=_rounding_decides([*sent, xbar], scale=_scale(sent, xbar))))


@reference("gd")
def gd_round(alg: Any, problem: Any, state: Any, draw: Any) -> Expected:
    """Gradient descent (Nesterov 2004, eq. 2.1.37): x+ = x - eta sum_i w_i grad f_i(x), eta = ``step`` or 1/L_f;
    every client sends its gradient up and receives x (n dense vectors each way). ``draw`` is unused (None)."""
    x = np.asarray(state.x, dtype=float)
    n, d = problem.n_clients, problem.dim
    eta = alg.step if alg.step is not None else 1.0 / problem.certificate.L_f
    grads = problem.grads(np.tile(x, (n, 1)), np.arange(n))
    g = np.zeros(d)
    for i in range(n):
        g = g + float(problem.weights[i]) * grads[i]
    return Expected(state={"x": x - eta * g},
                    log={"uplink_bits": 64.0 * d * n, "downlink_bits": 64.0 * d * n, "uplink_nnz": d * n,
                         "downlink_nnz": d * n, "vectors_up": n, "vectors_down": n, "local_grad_evals": n,
                         "participants": n, "communicated": 1.0})
