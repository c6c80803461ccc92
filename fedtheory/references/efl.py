"""Elastic Federated Learning, EFL (Ma, Lu, Lu, Li, Yi & Cui, "Towards Heterogeneous Clients with Elastic Federated
Learning"), Alg. 1 with the ST compressor of Alg. 2, transcribed client by client in fedtheory's implementable
reading (docs/efl.md, "Deviations from the paper": each option below is one of its readings).

Round tau (1-based), learning rate eta_tau = step, or step / (c + decay) with c the rounds since the last restart
(restart at the listed rounds, and at tau0 + 1 for an arrival at tau0 when ``restart_on_arrival``). A client k is
active iff it belongs to the federation at tau (not departed after its tau0, arrived after its tau0) and its drawn
s_tau^k > 0 (s_tau^k in [s_min^k, s_max^k] when active). Every active client, in turn:

    start:   w^k + b_{tau-1} if it took part in round tau - 1, else the server model w^G (catch-up download)
    local:   s_tau^k steps w <- w - eta_tau [g_k(w; xi) + lam (U o w - V)]                              (eqs. 3-4)
    update:  Delta^k = R^k + raw^k, raw^k = w - start (``scaling="server"``) or p_tau^k (w - start) ("client");
             c^k = ST(Delta^k) (identity for q = None); R^k <- Delta^k - c^k                            (eq. 5)
    fisher:  u^k = diag I_k(w), v^k = u^k o w (only when lam > 0)

with p_tau^k = E p^k / s_tau^k ("efl", Section 4.2), p^k ("fedavg") or E p^k / (s_tau^k pi^k) ("efl_ipw"), p^k the
problem's weight and pi^k the activity probability. Server (eq. 6): Delta^G = R^G + sum_k a_k sent^k with a_k =
p_tau^k (server scaling) or 1 (client scaling) and sent^k = c^k ("consistent") or Delta^k ("printed", Alg. 1
literally); b = ST(Delta^G); R^G <- Delta^G - b; w^G <- w^G + b ("consistent") or + Delta^G ("printed").
U, V = the sums of this round's u^k, v^k ("reporters"; 0 when nobody reported) or of every client's latest
("cached").

Randomness and order: the draw's s-vector and noise seed; a generator seeded with it gives the stochastic
gradients, local step j for all clients still running at j in one oracle call (client order), j = 0, 1, ...
The Fisher diagonal is fedtheory's recipe (the paper gives none, docs/efl.md): the problem's ``fisher_diag``,
else a quadratic's Hessian diagonal, else the diagonal of ``hessians``, else central differences of the gradient.

Logged (recomputed): uplink bits = ST's bits (k (ceil(log2 d) + 1) + 64 per vector; 64 d uncompressed) plus
2 x 64 d for (u, v) when lam > 0, per active client; downlink = the broadcast's bits (+ 2 x 64 d) per active
client; non-zeros likewise; ``eta``, ``coef_sum`` = sum_k p_tau^k, ``ps_sum`` = sum_k p_tau^k s_tau^k.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .compression import st_row
from .registry import Expected, reference

__all__ = ["efl_round", "efl_coefficient", "efl_active"]

F64 = 64


def _per_client(value: Any, n: int) -> np.ndarray:
    return np.asarray(value, dtype=np.float64) * np.ones(n)


def efl_active(alg: Any, n: int, tau: int, steps: np.ndarray) -> np.ndarray:
    """Whether each client is active at round tau: present in the federation and s_tau^k > 0."""
    present = np.ones(n, dtype=bool)
    for client, tau0 in alg.departures:
        present[client] &= tau <= tau0
    for client, tau0 in alg.arrivals:
        present[client] &= tau > tau0
    return present & (np.asarray(steps) > 0)


def efl_coefficient(alg: Any, k: int, s: int, weight: float, n: int) -> float:
    """p_tau^k of an active client with s local steps (Section 4.2 and the options of the module docstring)."""
    if alg.weighting == "fedavg":
        return weight
    coef = alg.E * weight / s
    if alg.weighting == "efl_ipw":
        coef /= _per_client(alg.participation, n)[k]
    return coef


def _fisher(problem: Any, w: np.ndarray, k: int) -> np.ndarray:
    """diag I_k(w), fedtheory's recipe (module docstring)."""
    X, c = w[None, :], np.array([k])
    if hasattr(problem, "fisher_diag"):
        return np.asarray(problem.fisher_diag(X, c), dtype=np.float64)[0]
    A = getattr(problem, "A", None)
    if isinstance(A, np.ndarray) and A.ndim in (2, 3) and A.shape[0] == problem.n_clients:
        return np.array(A[k] if A.ndim == 2 else np.diag(A[k]), dtype=np.float64)
    if callable(getattr(problem, "hessians", None)):
        return np.diag(problem.hessians(X, c)[0]).copy()
    out = np.zeros(w.size)
    for j in range(w.size):
        h = 1e-5 * (1.0 + abs(w[j]))
        wp, wm = w.copy(), w.copy()
        wp[j] += h
        wm[j] -= h
        out[j] = (problem.grads(wp[None], c)[0, j] - problem.grads(wm[None], c)[0, j]) / (2 * h)
    return out


def _st(x: np.ndarray, q: float | None) -> tuple[np.ndarray, float]:
    """(ST(x), its bits), or (x, 64 d) without compression."""
    d = x.size
    if q is None:
        return x.copy(), float(F64 * d)
    out = st_row(x, q)
    per_entry = (math.ceil(math.log2(d)) + 1) if d > 1 else 1
    return out, float(np.count_nonzero(out) * per_entry + F64)


@reference("efl")
def efl_round(alg: Any, problem: Any, state: Any, draw: Any) -> Expected:
    """One round of Alg. 1 (module docstring), every active client in turn."""
    n, d = problem.n_clients, problem.dim
    tau = state.tau + 1
    restart = tau in alg.restarts or (alg.restart_on_arrival and any(t0 + 1 == tau for _, t0 in alg.arrivals))
    clock = 1 if restart else state.clock + 1
    eta = alg.step if alg.decay is None else alg.step / (clock + alg.decay)
    steps = np.asarray(draw.steps, dtype=np.int64)
    active = efl_active(alg, n, tau, steps)
    act = [k for k in range(n) if active[k]]
    x = np.asarray(state.x, dtype=np.float64)
    client_x, client_res = np.array(state.client_x, dtype=np.float64), np.array(state.client_res, dtype=np.float64)
    u_cache, v_cache = np.array(state.u_cache, dtype=np.float64), np.array(state.v_cache, dtype=np.float64)
    client_end = np.array(state.client_end, dtype=np.float64) if state.client_end is not None else None
    last_seen = np.array(state.last_seen, dtype=np.int64)

    start = {k: (client_x[k] + state.broadcast if last_seen[k] == tau - 1 else x.copy()) for k in act}
    W = {k: start[k].copy() for k in act}
    rng = np.random.default_rng(draw.noise_seed)
    for j in range(max((int(steps[k]) for k in act), default=0)):  # eq. (4), local step j of every client
        running = [k for k in act if steps[k] > j]
        G = problem.stochastic_grads(np.array([W[k] for k in running]), rng, clients=np.array(running))
        for i, k in enumerate(running):
            g = G[i] + (alg.lam * (state.U * W[k] - state.V) if alg.lam > 0 else 0.0)  # eq. (3)
            W[k] = W[k] - eta * g

    delta_g = np.array(state.server_res, dtype=np.float64)
    coef_sum = ps_sum = up_bits = 0.0
    up_nnz = 0
    c_rows = {}
    for k in act:  # eq. (5) at the client, eq. (6) at the server
        coef = efl_coefficient(alg, k, int(steps[k]), float(problem.weights[k]), n)
        coef_sum += coef
        ps_sum += coef * int(steps[k])
        raw = coef * (W[k] - start[k]) if alg.scaling == "client" else W[k] - start[k]
        delta = client_res[k] + raw
        c, bits = _st(delta, alg.q)
        c_rows[k] = c
        up_bits += bits
        up_nnz += int(np.count_nonzero(c))
        client_res[k] = delta - c
        sent = delta if alg.variant == "printed" else c
        delta_g = delta_g + (1.0 if alg.scaling == "client" else coef) * sent
    b, down_bits = _st(delta_g, alg.q)
    x_new = x + (delta_g if alg.variant == "printed" else b)

    U, V = np.asarray(state.U, dtype=np.float64), np.asarray(state.V, dtype=np.float64)
    uv = alg.lam > 0 and len(act) > 0
    if uv:
        for k in act:
            u_cache[k] = _fisher(problem, W[k], k)
            v_cache[k] = u_cache[k] * W[k]
        rows = range(n) if alg.uv_sum == "cached" else act
        U = sum((u_cache[k] for k in rows), np.zeros(d))
        V = sum((v_cache[k] for k in rows), np.zeros(d))
    elif alg.lam > 0 and alg.uv_sum == "reporters":
        U, V = np.zeros(d), np.zeros(d)
    for k in act:
        client_x[k] = start[k]
        last_seen[k] = tau
        if client_end is not None:
            client_end[k] = W[k]

    m = len(act)
    uv_bits = 2.0 * F64 * d if uv else 0.0
    state_out = {"x": x_new, "client_x": client_x, "client_res": client_res, "server_res": delta_g - b,
                 "broadcast": b, "U": U, "V": V, "u_cache": u_cache, "v_cache": v_cache, "last_seen": last_seen,
                 "tau": tau, "clock": clock}
    if client_end is not None:
        state_out["client_end"] = client_end
    log = {"uplink_bits": up_bits + uv_bits * m, "downlink_bits": (down_bits + uv_bits) * m,
           "uplink_nnz": float(up_nnz + (2 * d * m if uv else 0)),
           "downlink_nnz": float((np.count_nonzero(b) + (2 * d if uv else 0)) * m),
           "vectors_up": float(m * (3 if uv else 1)), "vectors_down": float(m * (3 if uv else 1)),
           "local_grad_evals": float(sum(int(steps[k]) for k in act)), "participants": float(m),
           "extra.eta": eta, "extra.coef_sum": coef_sum, "extra.ps_sum": ps_sum}
    return Expected(state=state_out, log=log)
