"""DoCoFL (Dorfman et al. 2023, Algs. 1-2), one call per round t = 0, 1, ...: if t mod K == 0 the server enqueues
the compressed anchor C_w(w_t) (a queue of V, the oldest dropped); participant i (notified L_i = draw["leads"][cid]
rounds ahead) uses the latest anchor at round max(t - L_i, 0), i.e. y = the anchor of round K floor(max(t-L_i,0)/K),
w_hat = y + C_c(w_t - y), and sends C_g(grad f_i(w_hat)); w_{t+1} = w_t - eta/S sum_i C_g(...) (N p_i = 1, uniform).
The compressors are the kit's grids (hyper `grid`: nearest multiple of its step, 0 = none)."""
from __future__ import annotations

from collections import deque

import numpy as np

from ._common import grid_round


def _grids(grid):
    g = grid or {}
    return g.get("anchor", 0.0), g.get("correction", 0.0), g.get("gradient", 0.0)


def _latest(anchors, r):
    """The anchor with the largest round label <= r (anchors: iterable of (round, vector))."""
    best = None
    for lab, vec in anchors:
        if lab <= r and (best is None or lab > best[0]):
            best = (lab, vec)
    if best is None:
        raise LookupError(f"no anchor at or before round {r}")
    return best[1]


# ---------------------------------------------------------------- correct

def docofl_deque(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                 weighting="uniform", draw=None, **_):
    """Correct: the queue is a deque(maxlen=V) of (round, C_w(w_t)); state = (t, queue)."""
    ga, gc, gg = _grids(grid)
    t, q = state if state is not None else (0, deque(maxlen=queue_size))
    q = deque(q, maxlen=queue_size)
    if t % period == 0:
        q.append((t, grid_round(x, ga)))
    leads = (draw or {}).get("leads", {})
    gsum = np.zeros_like(x)
    for c in clients:
        r = max(t - int(leads.get(c.cid, 0)), 0)
        y = _latest(q, period * (r // period))
        what = y + grid_round(x - y, gc)
        gsum += grid_round(c.grad(what), gg)
    return x - step * gsum / len(clients), (t + 1, q)


class DoCoFLServer:
    """Correct: an object keeping anchors in a dict {round: vector}, evicting the smallest key beyond V; each
    distinct anchor's correction computed once per round (the cheap option of the paper's ambiguity 2, exact here
    since the grid compressor is deterministic)."""

    def __init__(self):
        self.t = 0
        self.anchors = {}

    @staticmethod
    def round(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
              weighting="uniform", draw=None, **_):
        ga, gc, gg = _grids(grid)
        old = state if state is not None else DoCoFLServer()
        srv = DoCoFLServer()
        srv.t, srv.anchors = old.t, dict(old.anchors)
        if srv.t % period == 0:
            srv.anchors[srv.t] = grid_round(x, ga)
            while len(srv.anchors) > queue_size:
                del srv.anchors[min(srv.anchors)]
        leads = (draw or {}).get("leads", {})
        est = {}
        upd = np.zeros_like(x)
        for c in clients:
            a = period * (max(srv.t - leads.get(c.cid, 0), 0) // period)
            if a not in est:
                y = srv.anchors[a]
                est[a] = y + grid_round(x - y, gc)
            upd += grid_round(c.grad(est[a]), gg)
        srv.t += 1
        return x - step / len(clients) * upd, srv


# ---------------------------------------------------------------- wrong

def docofl_evict_newest(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                        weighting="uniform", draw=None, **_):
    """WRONG: when the queue is full the newest anchor is popped (list.pop()) before the new one is appended, so after
    the first eviction (round K V) the queue keeps the oldest anchors; Alg. 1 line 5 dequeues the oldest. A client
    whose anchor was dropped falls back to an older one."""
    ga, gc, gg = _grids(grid)
    st = state or {"t": 0, "queue": []}
    t, queue = st["t"], list(st["queue"])
    if t % period == 0:
        if len(queue) >= queue_size:
            queue.pop()
        queue.append((t, grid_round(x, ga)))
    leads = (draw or {}).get("leads", {})
    g = np.zeros_like(x)
    for c in clients:
        y = _latest(queue, max(t - leads.get(c.cid, 0), 0))
        g += grid_round(c.grad(y + grid_round(x - y, gc)), gg)
    return x - step * g / len(clients), {"t": t + 1, "queue": queue}


def docofl_data_weights(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                        weighting="uniform", draw=None, **_):
    """WRONG: the gradients averaged with data weights n_i / sum_S n_j although weighting="uniform" (N p_i = 1)
    is declared; Alg. 1 line 14 is the plain mean 1/S sum over the participants."""
    ga, gc, gg = _grids(grid)
    t, q = state if state is not None else (0, [])
    q = list(q)
    if t % period == 0:
        q = (q + [(t, grid_round(x, ga))])[-queue_size:]
    leads = (draw or {}).get("leads", {})
    n = float(sum(c.num_examples for c in clients))
    g = np.zeros_like(x)
    for c in clients:
        y = _latest(q, period * (max(t - leads.get(c.cid, 0), 0) // period))
        g += c.num_examples / n * grid_round(c.grad(y + grid_round(x - y, gc)), gg)
    return x - step * g, (t + 1, q)


def docofl_one_based_rounds(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                            weighting="uniform", draw=None, **_):
    """WRONG: rounds counted from 1 with `if not queue or t % K == 0` for the anchor, so anchors are deployed at
    rounds 0, K-1, 2K-1, ... (0-based) instead of every K rounds from 0 (Alg. 1 line 3, t = 0, ..., T-1); the same
    at K = 1, visible from round K - 1 otherwise."""
    ga, gc, gg = _grids(grid)
    t, q = state if state is not None else (1, [])
    q = list(q)
    if not q or t % period == 0:
        q = (q + [(t, grid_round(x, ga))])[-queue_size:]
    leads = (draw or {}).get("leads", {})
    g = np.zeros_like(x)
    for c in clients:
        y = _latest(q, max(t - leads.get(c.cid, 0), 1))
        g += grid_round(c.grad(y + grid_round(x - y, gc)), gg)
    return x - step * g / len(clients), (t + 1, q)


CORRECT = [
    ("docofl_deque", docofl_deque, {}),
    ("docofl_dict_object", DoCoFLServer.round, {}),
]
WRONG = [
    ("docofl_evict_newest", docofl_evict_newest, {}),
    ("docofl_data_weights", docofl_data_weights, {}),
    ("docofl_one_based_rounds", docofl_one_based_rounds, {}),
]
CRASH_IS_THE_BUG: tuple = ()
