"""DoCoFL (Dorfman, Vargaftik, Ben-Itzhak & Levy, ICML 2023), Algorithms 1-2 (and the App. C meta-algorithm,
Alg. 3, which is DoCoFL with K = 1, V = tau + 1 and lead tau), transcribed client by client.

Round t (0-based), from the paper:

* Alg. 1 lines 3-5: if t mod K = 0 the server enqueues the anchor C_w(w_t); the queue keeps the V latest anchors.
* Sec. 3.2: a participant i is notified L_i rounds ahead (L_i = T_s for the first round(frac N) "strongly
  connected" clients, T_w for the others) and downloads at notification round s_i = max(t - L_i, 0) the newest
  anchor then in the queue, the one of round K floor(s_i / K) (Alg. 2 line 2, offline download).
* Alg. 2 lines 3-4: at round t it receives Delta_i = C_c(w_t - y_i) and forms w_hat_i = y_i + Delta_i (the
  correction is taken against the *compressed* anchor, footnote 3).
* Alg. 2 line 5 and Alg. 1 lines 7-9: it sends C_g(g^i(w_hat_i)); w_{t+1} = w_t - eta (1/S) sum_i N p_i C_g(g_i)
  (p_i the problem's weight, 1/N for the paper's uniform f).
* Sec. 3.1 baseline (``naive``): every participant receives a fresh C_w(w_t), no anchor, no correction.

Randomness, in the implementation's documented order (algorithms/docofl.py, ``draw``): the draw carries the
participants and a seed; a generator seeded with it feeds the anchor compression (when one is enqueued), the
corrections of all participants in one call (rows in participant order), the problem's stochastic gradients at
the estimates (one oracle call, participant order) and the uplink compression of all gradients (one call).
The participants' leads are *recomputed* here from the participation's class sizes (Sec. 3.2), not read from
the draw. Logged quantities (Sec. 7.3): online downlink = correction bits, anchor (offline) downlink = the bits
of each participant's anchor, uplink = C_g bits, their non-zeros, and the estimation diagnostics of App. B.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .compression import compress
from .registry import Expected, reference

__all__ = ["docofl_round", "notification_leads"]


def notification_leads(participation: Any, n_clients: int, clients: np.ndarray) -> np.ndarray:
    """Sec. 3.2: client i is strongly connected (lead T_s) iff i < round(frac N), else weakly (lead T_w)."""
    n_strong = int(round(participation.strong_fraction * n_clients))
    return np.array([participation.lead_strong if i < n_strong else participation.lead_weak for i in clients],
                    dtype=np.int64)


@reference("docofl")
def docofl_round(alg: Any, problem: Any, state: Any, draw: Any) -> Expected:
    """One round of Algs. 1-2 (module docstring), every participant in turn."""
    N, d = problem.n_clients, problem.dim
    S = N if alg.n_sampled is None else alg.n_sampled
    eta = alg.step if alg.step is not None else 1.0 / problem.certificate.L_f
    K, V, t, w = alg.period, alg.queue_size, state.t, np.asarray(state.x, dtype=np.float64)
    clients = np.asarray(draw.clients, dtype=np.int64)
    rng = np.random.default_rng(draw.noise_seed)

    anchors, raw = np.array(state.anchors, dtype=np.float64), np.array(state.raw_anchors, dtype=np.float64)
    rounds, abits = np.array(state.anchor_rounds, dtype=np.int64), np.array(state.anchor_bits, dtype=np.float64)
    if rounds.size != V:
        raise ValueError(f"the anchor queue has {rounds.size} slots, Alg. 1 keeps V = {V} anchors")
    if not alg.naive and t % K == 0:  # Alg. 1 lines 3-5: the oldest anchor leaves when the queue is full
        y, bits = compress(alg.anchor_compressor, w[None, :], rng)
        # the new anchor takes a free slot, else the oldest anchor's (the implementation's ring position)
        slot = int(np.flatnonzero(rounds < 0)[0]) if np.any(rounds < 0) else int(np.argmin(rounds))
        anchors[slot], raw[slot], rounds[slot], abits[slot] = y[0], w, t, bits[0]

    m = clients.size
    Y = np.zeros((m, d))
    anchor_bits = np.zeros(m)
    staleness = np.zeros(m)
    if alg.naive:  # Sec. 3.1: a fresh compressed model per participant
        W_hat, anchor_bits = compress(alg.anchor_compressor, np.tile(w, (m, 1)), rng)
        Y = W_hat
        corr_bits = np.zeros(m)
    else:
        leads = notification_leads(alg.participation, N, clients)
        for j in range(m):  # Alg. 2 line 2: the anchor the client took at its notification round
            s = max(t - int(leads[j]), 0)
            r = K * (s // K)
            held = np.flatnonzero(rounds == r)
            if held.size != 1:
                raise ValueError(f"client {clients[j]}'s anchor (round {r}) is not in the queue at round {t}")
            Y[j], anchor_bits[j], staleness[j] = anchors[held[0]], abits[held[0]], t - r
        D, corr_bits = compress(alg.correction_compressor, w[None, :] - Y, rng)  # Alg. 2 line 3
        W_hat = np.zeros((m, d))
        for j in range(m):
            W_hat[j] = Y[j] + D[j]  # Alg. 2 line 4

    if alg.stochastic:
        G = np.asarray(problem.stochastic_grads(W_hat, rng, clients=clients), dtype=np.float64)
    else:
        G = np.asarray(problem.grads(W_hat, clients=clients), dtype=np.float64)
    Cg, up_bits = compress(alg.uplink_compressor, G, rng)  # Alg. 2 line 5
    g = np.zeros(d)
    for j in range(m):  # Alg. 1 line 9: g_hat = (1/S) sum_i N p_i C_g(g_i)
        g += N * problem.weights[clients[j]] * Cg[j] / S
    x_new = w - eta * g

    online, offline = float(np.sum(corr_bits)), float(np.sum(anchor_bits))
    log = {"uplink_bits": float(np.sum(up_bits)), "downlink_bits": online + offline,
           "uplink_nnz": float(np.count_nonzero(Cg)), "downlink_nnz": float(np.count_nonzero(W_hat)),
           "vectors_up": float(S), "vectors_down": float(S if alg.naive else 2 * S),
           "local_grad_evals": float(S), "participants": float(S),
           "extra.online_downlink_bits": online, "extra.anchor_downlink_bits": offline,
           "extra.estimation_error": float(np.mean([np.sum((W_hat[j] - w) ** 2) for j in range(m)])),
           "extra.correction_norm2": float(np.mean([np.sum((w - Y[j]) ** 2) for j in range(m)])),
           "extra.max_staleness": float(staleness.max()),
           "extra.queue_length": float(np.count_nonzero(rounds >= 0))}
    new_state = {"x": x_new, "t": t + 1, "anchors": anchors, "raw_anchors": raw, "anchor_rounds": rounds,
                 "anchor_bits": abits}
    return Expected(state=new_state, log=log)
