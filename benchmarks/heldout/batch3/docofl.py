"""DoCoFL (Dorfman et al. 2023, Algs. 1-2): at rounds t = 0 mod K the PS enqueues C_w(w_t) (queue of V, oldest
dropped); participant i, notified L_i rounds ahead, uses the latest anchor at its notification round
s = max(t - L_i, 0), i.e. the anchor of round K floor(s/K); w^_i = y + C_c(w_t - y); w_{t+1} = w_t - eta/S
sum_i N p_i C_g(grad f_i(w^_i)) (uniform: N p_i = 1). C_* are the kit's grid compressors (nearest multiple)."""
from __future__ import annotations

from collections import deque

import numpy as np

from ._common import grid as _grid


def docofl_deque(x, clients, *, state=None, rng=None, draw=None, step=0.1, period=2, queue_size=3, grid=None,
                 **_):
    """Correct: a deque(maxlen=V) of (round, anchor) in a tuple state."""
    g = grid or {}
    t, Q = (0, deque(maxlen=queue_size)) if state is None else state
    if t % period == 0:
        Q.append((t, _grid(x, g.get("anchor", 0.0))))
    leads = (draw or {}).get("leads", {})
    gsum = np.zeros_like(x)
    for c in clients:
        s = max(t - leads.get(c.cid, 0), 0)
        a = period * (s // period)
        y = dict(Q)[a]
        w_hat = y + _grid(x - y, g.get("correction", 0.0))
        gsum += _grid(c.grad(w_hat), g.get("gradient", 0.0))
    return x - step * gsum / len(clients), (t + 1, Q)



def docofl_dict_queue(x, clients, *, state=None, rng=None, draw=None, step=0.1, period=2, queue_size=3, grid=None,
                      **_):
    """Correct: the queue as a dict {round: anchor} pruned to the V newest, the state a dict with a counter."""
    g = grid or {}
    if state is None:
        state = {"t": 0, "anchors": {}}
    t = state["t"]
    if t % period == 0:
        state["anchors"][t] = _grid(x, g.get("anchor", 0.0))
        for r in sorted(state["anchors"])[:-queue_size]:
            del state["anchors"][r]
    leads = (draw or {}).get("leads", {})
    ups = []
    for c in clients:
        s = max(t - leads.get(c.cid, 0), 0)
        y = state["anchors"][max(r for r in state["anchors"] if r <= s)]
        ups.append(_grid(c.grad(y + _grid(x - y, g.get("correction", 0.0))), g.get("gradient", 0.0)))
    state["t"] = t + 1
    return x - step * np.mean(ups, axis=0), state


def docofl_oldest_anchor(x, clients, *, state=None, rng=None, draw=None, step=0.1, period=2, queue_size=3,
                         grid=None, **_):
    """WRONG: every participant uses the oldest anchor in the queue (the proof sketch's simplification
    y = w_{t - K V}), where Alg. 2 line 2 downloads Q.top(), the latest anchor at its notification round."""
    g = grid or {}
    t, Q = (0, deque(maxlen=queue_size)) if state is None else state
    if t % period == 0:
        Q.append((t, _grid(x, g.get("anchor", 0.0))))
    y = Q[0][1]
    ups = [_grid(c.grad(y + _grid(x - y, g.get("correction", 0.0))), g.get("gradient", 0.0)) for c in clients]
    return x - step * np.mean(ups, axis=0), (t + 1, Q)


def docofl_negative_index(x, clients, *, state=None, rng=None, draw=None, step=0.1, period=2, queue_size=3,
                          grid=None, **_):
    """WRONG: the anchor index (t - L_i) // K is not clamped at 0, and a negative index into the list of all
    anchors wraps around to the newest one; a client notified before round 0 should use anchor 0
    (s = max(t - L_i, 0))."""
    g = grid or {}
    t, anchors = (0, []) if state is None else state
    if t % period == 0:
        anchors = anchors + [_grid(x, g.get("anchor", 0.0))]
    leads = (draw or {}).get("leads", {})
    ups = []
    for c in clients:
        y = anchors[(t - leads.get(c.cid, 0)) // period]
        ups.append(_grid(c.grad(y + _grid(x - y, g.get("correction", 0.0))), g.get("gradient", 0.0)))
    return x - step * np.mean(ups, axis=0), (t + 1, anchors)


def docofl_anchor_cached_per_client(x, clients, *, state=None, rng=None, draw=None, step=0.1, period=2,
                                    queue_size=3, grid=None, **_):
    """WRONG: a client downloads an anchor at its first participation and keeps it (cached by cid) for every
    later participation, where Alg. 2 obtains the latest anchor at each notification round; its correction is
    then taken against an anchor that may have left the queue."""
    g = grid or {}
    if state is None:
        state = {"t": 0, "Q": deque(maxlen=queue_size), "mine": {}}
    t = state["t"]
    if t % period == 0:
        state["Q"].append((t, _grid(x, g.get("anchor", 0.0))))
    leads = (draw or {}).get("leads", {})
    ups = []
    for c in clients:
        if c.cid not in state["mine"]:
            s = max(t - leads.get(c.cid, 0), 0)
            state["mine"][c.cid] = dict(state["Q"])[period * (s // period)]
        y = state["mine"][c.cid]
        ups.append(_grid(c.grad(y + _grid(x - y, g.get("correction", 0.0))), g.get("gradient", 0.0)))
    state["t"] = t + 1
    return x - step * np.mean(ups, axis=0), state


CORRECT = [("deque_tuple_state", docofl_deque, {}),
           ("dict_queue", docofl_dict_queue, {})]
WRONG = [("oldest_anchor_for_all", docofl_oldest_anchor, {}),
         ("negative_anchor_index_wraps", docofl_negative_index, {}),
         ("anchor_cached_per_client", docofl_anchor_cached_per_client, {})]
