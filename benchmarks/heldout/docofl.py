"""DoCoFL (Dorfman et al. 2023, Algs. 1-2): held-out implementations, from the spec only.

One call = one round t (t = 0 on state=None). If t mod K == 0, enqueue C_w(w_t) (queue of capacity V, drop the
oldest). Participant i was notified L_i rounds ahead (the kit's draw={"leads": {cid: L_i}}) and uses the latest
anchor deployed by round max(t - L_i, 0), i.e. the one of round K floor(max(t - L_i, 0)/K); w_hat = y + C_c(w_t - y);
w_{t+1} = w_t - eta/S sum_i N p_i C_g(grad f_i(w_hat)) (uniform p_i = 1/N). Compressors: rounding to the kit's
grids (grid={"anchor", "correction", "gradient"}: a step, 0 = identity).
"""
from __future__ import annotations

from collections import deque

import numpy as np


def _grid(v, step):
    return v if not step else step * np.round(v / step)


def docofl_dict_queue(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                      draw=None, **_):
    """Correct: the queue as a dict {deploy round: anchor}, eviction of the smallest key, readable-ish state."""
    grid = grid or {}
    st = {"t": 0, "Q": {}} if state is None else {"t": state["t"], "Q": dict(state["Q"])}
    t = st["t"]
    if t % period == 0:
        st["Q"][t] = _grid(x, grid.get("anchor", 0))
        while len(st["Q"]) > queue_size:
            del st["Q"][min(st["Q"])]
    leads = (draw or {}).get("leads", {})
    g = np.zeros_like(x)
    for c in clients:
        s = max(t - leads.get(c.cid, 0), 0)
        y = st["Q"][period * (s // period)]
        w_hat = y + _grid(x - y, grid.get("correction", 0))
        g += _grid(c.grad(w_hat), grid.get("gradient", 0))
    st["t"] = t + 1
    return x - step * g / len(clients), st


class _PS:
    def __init__(self, V):
        self.t = 0
        self.q = deque(maxlen=V)


def docofl_deque_opaque(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                        draw=None, **_):
    """Correct: deque(maxlen=V) of (round, anchor) pairs in an opaque object; anchor looked up by its round."""
    grid = grid or {}
    ps = state or _PS(queue_size)
    if ps.t % period == 0:
        ps.q.append((ps.t, _grid(x.copy(), grid.get("anchor", 0))))
    leads = (draw or {}).get("leads", {})
    ups = []
    for c in clients:
        notified = max(ps.t - leads.get(c.cid, 0), 0)
        y = [a for r, a in ps.q if r <= notified][-1]
        ups.append(_grid(c.grad(y + _grid(x - y, grid.get("correction", 0))), grid.get("gradient", 0)))
    ps.t += 1
    return x - step * np.mean(ups, axis=0), ps


# ---------------------------------------------------------------- wrong
def _make(**bug):
    def impl(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None, draw=None, **_):
        grid = grid or {}
        st = {"t": 0, "Q": {}} if state is None else {"t": state["t"], "Q": dict(state["Q"])}
        t = st["t"]
        deploy = (t + 1) % period == 0 if bug.get("deploy_off_by_one") else t % period == 0
        late = bug.get("enqueue_after_clients") and deploy and st["Q"]
        if (deploy or not st["Q"]) and not late:
            st["Q"][t] = _grid(x, grid.get("anchor", 0))
            while len(st["Q"]) > queue_size:
                del st["Q"][min(st["Q"])]
        leads = (draw or {}).get("leads", {})
        if bug.get("positional"):
            order = sorted(st["Q"])          # positions in the queue, as if nothing was ever evicted
        ups = []
        for c in clients:
            if bug.get("positional"):
                s = max(t - leads.get(c.cid, 0), 0)
                y = st["Q"][order[min(s // period, len(order) - 1)]]
            elif bug.get("top_at_participation"):
                y = st["Q"][max(st["Q"])]
            else:
                s = max(t - leads.get(c.cid, 0), 0)
                y = st["Q"][max(k for k in st["Q"] if k <= s)]
            w_hat = y + _grid(x - y, grid.get("correction", 0))
            ups.append(c.grad(w_hat) if bug.get("compress_mean") else _grid(c.grad(w_hat), grid.get("gradient", 0)))
        g = np.mean(ups, 0)
        if late:            # the new anchor is enqueued only after the clients fetched theirs
            st["Q"][t] = _grid(x, grid.get("anchor", 0))
            while len(st["Q"]) > queue_size:
                del st["Q"][min(st["Q"])]
        if bug.get("compress_mean"):
            g = _grid(g, grid.get("gradient", 0))
        st["t"] = t + 1
        return x - step * g, st
    return impl


CORRECT = [
    ("dict_queue", docofl_dict_queue, {}),
    ("deque_opaque", docofl_deque_opaque, {}),
    ("dict_queue K=3 V=2", docofl_dict_queue, {"period": 3, "queue_size": 2}),
]
WRONG = [
    ("latest_anchor_ignores_lead", _make(top_at_participation=True), {}),
    ("anchor_deployed_at_t_mod_K_eq_K-1", _make(deploy_off_by_one=True), {}),
    ("gradient_compressed_after_averaging", _make(compress_mean=True), {}),
    ("anchor_by_queue_position (shows after eviction)", _make(positional=True), {}),
    ("anchor_enqueued_after_client_fetch", _make(enqueue_after_clients=True), {}),
]
