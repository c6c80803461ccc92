"""DoCoFL (Dorfman et al. 2023, Algs. 1-2), from the paper and docs/conformance.md only.

Round t (t = 0 from state=None): if t mod K == 0 the server enqueues the compressed anchor C_w(w_t) (queue of
capacity V, the oldest dropped). Client i, notified L_i rounds ahead (draw["leads"]), uses the latest anchor
at round t - L_i: y_i = anchor of round K floor(max(t - L_i, 0)/K); correction C_c(w_t - y_i);
w_hat = y_i + C_c(w_t - y_i); it sends C_g(grad f_i(w_hat)). Server: w_{t+1} = w_t - eta/S sum_i N p_i C_g(.)
(uniform weights: N p_i = 1). The compressors are the kit's grids: C(v) = h round(v/h), identity when h = 0.
"""
from __future__ import annotations

from collections import deque

import numpy as np


def _grid(v, h):
    return v.copy() if not h else h * np.round(v / h)


def docofl_deque(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None, draw=None,
                 **_):
    """Correct. A dict state with the round counter and a deque(maxlen=V) of (round, anchor)."""
    grid = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}
    st = state if state is not None else {"t": 0, "queue": deque(maxlen=int(queue_size))}
    t = st["t"]
    if t % period == 0:
        st["queue"].append((t, _grid(x, grid["anchor"])))
    anchors = dict(st["queue"])
    leads = (draw or {}).get("leads", {})
    total = np.zeros_like(x)
    for c in clients:
        r = period * (max(t - int(leads.get(c.cid, 0)), 0) // period)
        y = anchors[r]
        w_hat = y + _grid(x - y, grid["correction"])
        total += _grid(c.grad(w_hat), grid["gradient"])
    st["t"] = t + 1
    return x - step / len(clients) * total, st


class _Server:
    def __init__(self):
        self.round = 0
        self.anchors = {}


def docofl_object_dict_queue(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                             draw=None, **_):
    """Correct. An opaque server object whose queue is a dict {round: anchor}, evicting the smallest round when
    it holds more than V anchors; the gradients stacked and averaged at once."""
    grid = grid or {}
    srv = state if state is not None else _Server()
    t = srv.round
    if t % period == 0:
        srv.anchors[t] = _grid(x, grid.get("anchor", 0.0))
        while len(srv.anchors) > queue_size:
            del srv.anchors[min(srv.anchors)]
    leads = draw["leads"] if draw is not None and "leads" in draw else {}
    G = []
    for c in clients:
        s = max(t - leads.get(c.cid, 0), 0)
        y = srv.anchors[s - s % period]
        G.append(_grid(c.grad(y + _grid(x - y, grid.get("correction", 0.0))), grid.get("gradient", 0.0)))
    srv.round += 1
    return x - step * np.mean(G, axis=0), srv


def docofl_anchor_by_position(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                              draw=None, **_):
    """WRONG: the client's anchor is taken by position, floor(L_i / K) anchors back from the newest, as if the
    staleness were a function of the lead alone. The latest anchor at round t - L_i is floor(t/K) -
    floor((t - L_i)/K) anchors back, which differs from floor(L_i/K) whenever t mod K < L_i mod K (and near
    the start the index is clamped to the oldest anchor)."""
    grid = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}
    st = state if state is not None else {"t": 0, "q": []}
    t = st["t"]
    if t % period == 0:
        st["q"].append(_grid(x, grid["anchor"]))
        if len(st["q"]) > queue_size:
            st["q"].pop(0)
    leads = (draw or {}).get("leads", {})
    total = np.zeros_like(x)
    for c in clients:
        back = int(leads.get(c.cid, 0)) // period
        y = st["q"][max(len(st["q"]) - 1 - back, 0)]
        total += _grid(c.grad(y + _grid(x - y, grid["correction"])), grid["gradient"])
    st["t"] = t + 1
    return x - step * total / len(clients), st


def docofl_compress_average(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                            draw=None, **_):
    """WRONG: the clients' gradients are averaged first and the average is compressed once, C_g(mean g_i),
    instead of each client sending C_g(g_i) and the server averaging them (Alg. 1 line 14). Identical without
    gradient compression."""
    grid = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}
    st = state if state is not None else {"t": 0, "queue": deque(maxlen=int(queue_size))}
    t = st["t"]
    if t % period == 0:
        st["queue"].append((t, _grid(x, grid["anchor"])))
    anchors = dict(st["queue"])
    leads = (draw or {}).get("leads", {})
    gs = []
    for c in clients:
        r = period * (max(t - int(leads.get(c.cid, 0)), 0) // period)
        y = anchors[r]
        gs.append(c.grad(y + _grid(x - y, grid["correction"])))
    st["t"] = t + 1
    return x - step * _grid(np.mean(gs, axis=0), grid["gradient"]), st


def docofl_counter_first(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                         draw=None, **_):
    """WRONG: the round counter is incremented before the anchor test (`t += 1; if t % K == 0`), with a guard
    that enqueues an anchor when the queue is empty. Anchors are then deployed at rounds 0, K - 1, 2K - 1, ...
    instead of 0, K, 2K, ... (Alg. 1 line 3), and the clients' anchors are looked up with the shifted rounds."""
    grid = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}
    st = state if state is not None else {"t": 0, "queue": deque(maxlen=int(queue_size))}
    st["t"] += 1
    t = st["t"]
    if t % period == 0 or not st["queue"]:
        st["queue"].append((t - 1, _grid(x, grid["anchor"])))
    leads = (draw or {}).get("leads", {})
    total = np.zeros_like(x)
    for c in clients:
        notified = max(t - 1 - int(leads.get(c.cid, 0)), 0)
        cands = [(r, a) for r, a in st["queue"] if r <= notified] or [st["queue"][0]]
        y = cands[-1][1]
        total += _grid(c.grad(y + _grid(x - y, grid["correction"])), grid["gradient"])
    return x - step * total / len(clients), st



def docofl_capacity_from_period(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                                draw=None, **_):
    """WRONG (invisible when V = K + 1, e.g. the defaults K = 2, V = 3): the queue capacity is written
    period + 1 instead of V, and a client whose anchor was evicted falls back to the oldest one kept. With
    K + 1 < V the anchor a lead reaches back to (up to K (V - 1) rounds, still in Alg. 1's queue of V) is gone
    after the first evictions and the client corrects against a newer anchor."""
    grid = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}
    st = state if state is not None else {"t": 0, "queue": deque(maxlen=int(period) + 1)}
    t = st["t"]
    if t % period == 0:
        st["queue"].append((t, _grid(x, grid["anchor"])))
    anchors = dict(st["queue"])
    leads = (draw or {}).get("leads", {})
    total = np.zeros_like(x)
    for c in clients:
        r = period * (max(t - int(leads.get(c.cid, 0)), 0) // period)
        y = anchors.get(r, st["queue"][0][1])
        total += _grid(c.grad(y + _grid(x - y, grid["correction"])), grid["gradient"])
    st["t"] = t + 1
    return x - step / len(clients) * total, st


CORRECT = [
    ("docofl_deque", docofl_deque, {}),
    ("docofl_object_dict_queue", docofl_object_dict_queue, {}),
]
WRONG = [
    ("docofl_capacity_from_period", docofl_capacity_from_period, {}),
    ("docofl_anchor_by_position", docofl_anchor_by_position, {}),
    ("docofl_compress_average", docofl_compress_average, {}),
    ("docofl_counter_first", docofl_counter_first, {}),
]
