"""DoCoFL (Dorfman et al. 2023, Algs. 1-2), one call per round t = 0, 1, ...: if t mod K = 0 the PS enqueues
C_w(w_t) (queue of V, oldest dropped); client i (lead L_i from the kit's draw["leads"]) uses the anchor
deployed at K floor(max(t - L_i, 0)/K) (the latest at its notification round, footnote 3: compressed),
w_hat = y + C_c(w_t - y), sends C_g(grad f_i(w_hat)); w_{t+1} = w_t - eta/S sum_i C_g(...) (uniform p_i)."""
from __future__ import annotations

from collections import deque

import numpy as np

from ._common import grid


def docofl_deque(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None, draw=None,
                 **_):
    """Correct: a dict state with a deque of (round, compressed anchor)."""
    g = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}
    state = state or {"t": 0, "queue": deque(maxlen=queue_size)}
    t, Q = state["t"], deque(state["queue"], maxlen=queue_size)
    if t % period == 0:
        Q.append((t, _grid(x, g["anchor"])))
    anchors = dict(Q)
    leads = (draw or {}).get("leads", {})
    total = np.zeros_like(x)
    for c in clients:
        a = period * (max(t - int(leads.get(c.cid, 0)), 0) // period)
        y = anchors.get(a, Q[0][1])
        w_hat = y + _grid(x - y, g["correction"])
        total += _grid(c.grad(w_hat), g["gradient"])
    return x - step / len(clients) * total, {"t": t + 1, "queue": Q}


_grid = grid


def docofl_anchor_round_ceil(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                             draw=None, **_):
    """WRONG: the anchor round rounded up, K ceil((t - L)/K) (capped at the last deployed), i.e. an anchor
    deployed after the notification round; Alg. 2 line 2 takes the latest anchor at the notification round."""
    g = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}
    state = state or {"t": 0, "queue": []}
    t, Q = state["t"], list(state["queue"])
    if t % period == 0:
        Q = (Q + [(t, _grid(x, g["anchor"]))])[-queue_size:]
    anchors = dict(Q)
    leads = (draw or {}).get("leads", {})
    total = np.zeros_like(x)
    for c in clients:
        s = max(t - int(leads.get(c.cid, 0)), 0)
        a = min(period * -(-s // period), period * (t // period))
        y = anchors.get(a, Q[0][1])
        total += _grid(c.grad(y + _grid(x - y, g["correction"])), g["gradient"])
    return x - step / len(clients) * total, {"t": t + 1, "queue": Q}


def docofl_grid_keys_swapped(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                             draw=None, **_):
    """WRONG: the anchor compressed on the correction grid and the correction on the anchor grid (C_w and C_c
    swapped); Alg. 1 line 4 uses C_w for anchors, Alg. 2 line 3 C_c for corrections."""
    g = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}
    state = state or {"t": 0, "queue": []}
    t, Q = state["t"], list(state["queue"])
    if t % period == 0:
        Q = (Q + [(t, _grid(x, g["correction"]))])[-queue_size:]
    anchors = dict(Q); leads = (draw or {}).get("leads", {})
    total = np.zeros_like(x)
    for c in clients:
        a = period * (max(t - int(leads.get(c.cid, 0)), 0) // period)
        y = anchors.get(a, Q[0][1])
        total += _grid(c.grad(y + _grid(x - y, g["anchor"])), g["gradient"])
    return x - step / len(clients) * total, {"t": t + 1, "queue": Q}


def docofl_negative_lead_latest(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, grid=None,
                                draw=None, **_):
    """WRONG: the notification round t - L_i is not clamped at 0; for L_i > t its anchor round is negative,
    not in the queue, and the code falls back to the latest anchor (the client was notified before round 0,
    so its latest anchor is w_0's)."""
    g = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}
    state = state or {"t": 0, "queue": []}
    t, Q = state["t"], list(state["queue"])
    if t % period == 0:
        Q = (Q + [(t, _grid(x, g["anchor"]))])[-queue_size:]
    anchors = dict(Q); leads = (draw or {}).get("leads", {})
    total = np.zeros_like(x)
    for c in clients:
        a = period * ((t - int(leads.get(c.cid, 0))) // period)
        y = anchors.get(a, Q[-1][1])
        total += _grid(c.grad(y + _grid(x - y, g["correction"])), g["gradient"])
    return x - step / len(clients) * total, {"t": t + 1, "queue": Q}


CORRECT = [("dict_state_deque", docofl_deque, {})]
WRONG = [("anchor_round_rounded_up", docofl_anchor_round_ceil, {}),
         ("anchor_and_correction_grids_swapped", docofl_grid_keys_swapped, {}),
         ("negative_notification_round_takes_latest", docofl_negative_lead_latest, {})]
