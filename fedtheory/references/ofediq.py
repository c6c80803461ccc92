"""FedOGD (Alg. 1), OFedAvg and OFedIQ (Alg. 2) of Kwon, Park & Hong (online federated learning), transcribed
client by client.

Time step t (0-based; the paper's t + 1), period L, step eta, sampling probabilities p_k, every client k:

* eq. (6): g_{k,t} = w (the global model in use) at the first step of a period, else the local iterate theta_{k,t};
* eq. (7): theta_{k,t+1} = g_{k,t} - eta grad L_{k,t}(g_{k,t}); the period's gradients accumulate;
* eq. (8): at the last step of a period (paper time t + 1 in [T]_L), a client whose coin is 1 (probability p_k)
  sends m_k = Q(sum of its period's gradients / p_k), Q the (s, b)-quantizer of Definition 2 (identity without
  quantization), its uniforms the draw's row k;
* eq. (9): w <- w - eta sum_{k sampled} a_k m_k with a_k = 1/K (the server divides by K, not by |S_t|; for a
  static weighted problem a_k is the problem's weight w_k, whose loss sum is K sum_k w_k f_k).
FedOGD is OFedIQ(L = 1, p = 1, no quantization) (eq. 5), OFedAvg(p) is OFedIQ(1, p, no quantization) (eq. 24).

Logged (recomputed exactly): ``loss`` = sum_k L_{k,t}(w) at the model in use, ``cum_loss`` its running sum,
``regret`` (eq. (3)) = cum_loss - min_w sum_{tau <= t} sum_k L_{k,tau}(w) (the stream's exact prefix comparator;
(t + 1) K f* for a static problem), ``time`` = t + 1; bits (Table I, 32-bit reals): 32 D per unquantized vector,
32 b + D (1 + log2(s + 1)) per quantized one, for every sampled client at a transmission step.

Default step (``eta=None``): half the theorems' largest step, p_min/(2 beta) (Theorem 1, L = 1, no quantization)
or p_min/(4 beta L R), R = 1 + sigma_q^2 (sum p - p_min + 1)/K (Theorem 2; the L > 1 proof's condition), with
sigma_q^2 = min(ceil(D/b)/s^2, sqrt(ceil(D/b))/s) and beta the per-sample smoothness (max_i L_i when static).
Randomness: the draw's coins and quantizer uniforms (no other draw).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..problems.online import OnlineProblem, stream_grads, stream_losses
from .compression import sb_quantize_row
from .registry import Expected, reference

__all__ = ["online_round", "online_options", "online_step"]


def online_options(alg: Any, n_clients: int) -> tuple[float, np.ndarray, int, int | None, int]:
    """(eta-or-None, p (K,), L, s, b) of FedOGD / OFedAvg / OFedIQ, read by attribute name."""
    p = getattr(alg, "p", 1.0)
    p = np.asarray(p, dtype=np.float64) * np.ones(n_clients)
    s = getattr(alg, "s", None)
    b = getattr(alg, "b", None) or 1
    return alg.eta, p, int(getattr(alg, "period", 1)), s, b


def online_step(alg: Any, problem: Any) -> float:
    """The step in use: ``eta``, or the default of the module docstring."""
    eta, p, L, s, b = online_options(alg, problem.n_clients)
    if eta is not None:
        return float(eta)
    beta = float(problem.beta) if isinstance(problem, OnlineProblem) else float(problem.certificate.L)
    if s is None and L == 1:
        return 0.5 * p.min() / (2.0 * beta)
    n_big = -(-problem.dim // b)
    sigma2 = 0.0 if s is None else min(n_big / s**2, math.sqrt(n_big) / s)
    R = 1.0 + sigma2 * (p.sum() - p.min() + 1.0) / p.size
    return 0.5 * p.min() / (4.0 * beta * L * R)


def _loss_sum(problem: Any, t: int, w: np.ndarray) -> float:
    values = stream_losses(problem, t, w)
    if isinstance(problem, OnlineProblem):
        return float(sum(values[k] for k in range(problem.n_clients)))
    return float(problem.n_clients * sum(problem.weights[k] * values[k] for k in range(problem.n_clients)))


def _comparator(problem: Any, t: int) -> float:
    if isinstance(problem, OnlineProblem):
        return float(problem.prefix_min_values[t])
    return float((t + 1) * problem.n_clients * problem.certificate.f_star)


@reference("ofediq", "fedogd", "ofedavg")
def online_round(alg: Any, problem: Any, state: Any, draw: Any) -> Expected:
    """One time step of eqs. (6)-(9), every client in turn (module docstring)."""
    t, K, D = state.t, problem.n_clients, problem.dim
    _, p, L, s, b = online_options(alg, K)
    eta = online_step(alg, problem)
    w = np.asarray(state.x, dtype=np.float64)
    start = t % L == 0
    G0 = np.array([w if start else state.theta[k] for k in range(K)])  # eq. (6)
    grads = stream_grads(problem, t, G0)  # the oracle of L_{k,t} at every client's point
    theta = np.zeros((K, D))
    acc = np.zeros((K, D))
    for k in range(K):
        theta[k] = G0[k] - eta * grads[k]  # eq. (7)
        acc[k] = grads[k] if start else state.acc[k] + grads[k]
    transmit = (t + 1) % L == 0
    w_new, sent, nnz = w.copy(), 0, 0
    if transmit:
        for k in range(K):  # eqs. (8)-(9)
            coin = True if np.all(p == 1.0) else bool(draw.participate[k])
            if not coin:
                continue
            u = acc[k] / p[k]
            m = u if s is None else sb_quantize_row(u, draw.uniforms[k], s, b)
            w_new = w_new - eta * problem.weights[k] * m
            sent += 1
            nnz += int(np.count_nonzero(m))
    bits_per = 32.0 * D if s is None else 32.0 * b + D * (1.0 + math.log2(s + 1))
    loss = _loss_sum(problem, t, w)
    cum = state.cum_loss + loss
    log = {"uplink_bits": sent * bits_per, "downlink_bits": 0.0, "uplink_nnz": float(nnz),
           "downlink_nnz": float(D * K if transmit else 0), "vectors_up": float(sent),
           "vectors_down": float(K if transmit else 0), "local_grad_evals": float(K), "participants": float(sent),
           "communicated": float(transmit),
           "extra.loss": loss, "extra.cum_loss": cum, "extra.regret": cum - _comparator(problem, t),
           "extra.time": float(t + 1)}
    return Expected(state={"x": w_new, "t": t + 1, "theta": theta, "acc": acc, "cum_loss": cum}, log=log)
