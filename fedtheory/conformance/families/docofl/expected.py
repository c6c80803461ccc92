"""Expected side for DoCoFL (Dorfman, Vargaftik, Ben-Itzhak & Levy 2023, Algs. 1-2) on quadratics.

The kit supplies deterministic grid compressors C(x) = h round(x / h) (h = 0: identity) for the anchors C_w,
the corrections C_c and the uplink C_g, so every round is a closed-form function of the participants and their
notification leads. Round t (0-based):

* t mod K = 0: enqueue C_w(w_t) (Alg. 1 lines 3-5); the queue keeps the V latest anchors;
* client i notified L_i rounds ahead holds the anchor y_i of round K floor(max(t - L_i, 0) / K) (Alg. 2
  line 2, downloaded offline);
* w_hat_i = y_i + C_c(w_t - y_i) (Alg. 2 lines 3-4, the correction against the compressed anchor, footnote 3);
* w_{t+1} = w_t - eta (1/S) sum_{i in S_t} N p_i C_g(grad f_i(w_hat_i)) (Alg. 1 line 9), p_i = the weights.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ...instance import Instance

__all__ = ["grid", "docofl_round"]


def grid(x: np.ndarray, h: float) -> np.ndarray:
    """Deterministic grid compressor h round(x / h); identity for h = 0."""
    return np.array(x, dtype=np.float64) if not h else h * np.round(np.asarray(x, dtype=np.float64) / h)


def docofl_round(inst: Instance, w: np.ndarray, t: int, anchors: Mapping[int, np.ndarray], S: np.ndarray,
                 leads: np.ndarray, *, step: float, period: int, queue_size: int, h: Mapping[str, float]):
    """(w_{t+1}, anchors after round t) given the anchors {round: C_w(w_round)} held before round t."""
    anchors = dict(anchors)
    if t % period == 0:
        anchors[t] = grid(w, h["anchor"])
        anchors = {r: a for r, a in anchors.items() if r > t - period * queue_size}
    rounds = period * (np.maximum(t - np.asarray(leads), 0) // period)
    Y = np.stack([anchors[int(r)] for r in rounds])
    W_hat = Y + grid(w[None] - Y, h["correction"])
    G = np.einsum("nij,nj->ni", inst.A[S], W_hat) - inst.b[S]
    U = grid(G, h["gradient"])
    g = (inst.n * inst.weights[S]) @ U / len(S)
    return w - step * g, anchors
