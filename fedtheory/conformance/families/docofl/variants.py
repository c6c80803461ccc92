"""DoCoFL (Dorfman et al. 2023, Algs. 1-2)
written as framework code (a loop over client objects, in a chosen ``dtype``), with ``slip`` options:
the power test's wrong implementations and differently written correct ones."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...statekit import sealed

__all__ = ["docofl", "TEXTBOOK", "WRONG", "CORRECT"]


def docofl(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, weighting="uniform",
           num_clients=None, draw=None, grid=None, slip=None, **_):
    """DoCoFL (Dorfman et al. 2023, Algs. 1-2) with a dict queue {round: anchor} and the kit's grid compressors."""
    g = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}

    def C(v, h):
        return v.copy() if not h else h * np.round(v / h)

    st = state or {"t": 0, "queue": {}, "raw": {}}
    t = int(st["t"])
    queue, raw = dict(st["queue"]), dict(st["raw"])
    if t % period == 0 or slip == "anchor_every_round":
        queue[t], raw[t] = C(x, g["anchor"]), x.copy()
        keep = queue_size - 1 if slip == "queue_one_short" else queue_size
        evict = sorted(queue)[:-keep]
        if slip == "evicts_second_oldest" and evict:
            evict = [sorted(queue)[1]]  # the first eviction (round K V) drops the wrong anchor
        for r in evict:
            queue.pop(r), raw.pop(r)
    total = np.zeros_like(x)
    for c in clients:
        lead = 0 if slip == "ignore_lead" else int(draw["leads"][c.cid])
        s = max(t - lead, 0)
        r = period * (s // period)
        if slip == "negative_round_wraps" and t - lead < 0:
            # the notification round t - L_i < 0 not clamped: as a negative index into the anchors it counts
            # from the newest end (Python's wrap-around), where Alg. 2 gives anchor 0
            rounds = sorted(queue)
            r = rounds[max((t - lead) // period, -len(rounds))]
        if r not in queue:
            r = min(queue)  # the anchor left the queue: take the oldest one still there
        y = queue[r]
        if slip == "no_correction":
            w_hat = y
        elif slip == "correction_vs_raw_anchor":
            w_hat = y + C(x - raw[r], g["correction"])
        else:
            w_hat = y + C(x - y, g["correction"])
        grad_at = x if slip == "gradient_at_server_model" else w_hat
        total += C(c.grad(grad_at), g["gradient"])
    denom = num_clients if slip == "divide_by_N" else len(clients)
    return x - step * total / denom, {"t": t + 1, "queue": queue, "raw": raw}


TEXTBOOK = docofl
WRONG: list[Variant] = [
    Variant("docofl", "anchor_every_round", partial(docofl, slip="anchor_every_round")),
    Variant("docofl", "queue_one_short", partial(docofl, slip="queue_one_short")),
    Variant("docofl", "ignore_lead", partial(docofl, slip="ignore_lead")),
    Variant("docofl", "no_correction", partial(docofl, slip="no_correction")),
    Variant("docofl", "correction_vs_raw_anchor", partial(docofl, slip="correction_vs_raw_anchor")),
    Variant("docofl", "gradient_at_server_model", partial(docofl, slip="gradient_at_server_model")),
    Variant("docofl", "divide_by_N", partial(docofl, slip="divide_by_N")),
    # a negative notification round used as a list index: a newer anchor where Alg. 2 gives anchor 0
    Variant("docofl", "negative_round_wraps", partial(docofl, slip="negative_round_wraps")),
    Variant("docofl", "evicts_second_oldest_K4_V3", partial(docofl, slip="evicts_second_oldest"),
            {"period": 4, "queue_size": 3}),
]
CORRECT: list[Variant] = [
    Variant("docofl", "dict_queue", docofl, {"period": 1, "queue_size": 4}),
    Variant("docofl", "sealed_state", sealed(docofl), {"period": 2, "queue_size": 3}),
]
