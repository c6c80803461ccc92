"""FedAvg (McMahan et al. 2017, Alg. 1): held-out implementations, written from the paper only.

One round: each participant runs K full-batch GD steps of size eta_l from x; the server moves
x + eta_g * sum_i a_i (y_i - x), a_i = m_i / sum_S m_j ("num_examples") or 1/|S| ("uniform").
"""
from __future__ import annotations

import math

import numpy as np

from ._util import quad, weights


def _local(c, x, K, eta):
    y = x.copy()
    for _ in range(K):
        y = y - eta * c.grad(y)
    return y


def fedavg_f32_loop(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                    weighting="num_examples", **_):
    """Correct: float32 throughout (data, model and arithmetic), an explicit client loop; rtol 1e-4."""
    x32 = x.astype(np.float32)
    total = np.float32(sum(c.num_examples for c in clients)) if weighting == "num_examples" else np.float32(len(clients))
    acc = np.zeros_like(x32)
    for c in clients:
        Z = np.asarray(c.features, np.float32); yv = np.asarray(c.targets, np.float32)
        y = x32.copy()
        for _ in range(local_steps):
            y -= np.float32(local_step) * (Z.T @ (Z @ y - yv)) / np.float32(Z.shape[0])
        wgt = np.float32(c.num_examples) if weighting == "num_examples" else np.float32(1.0)
        acc += wgt * (y - x32)
    return (x32 + np.float32(server_step) * acc / total).astype(np.float64)


def fedavg_fsum_reverse(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                        weighting="num_examples", **_):
    """Correct: local updates as a closed-form matrix power, clients in reverse order, math.fsum per coordinate."""
    w = weights(clients, weighting)
    deltas = []
    for i in reversed(range(len(clients))):
        A, b = quad(clients[i])
        M = np.eye(len(x)) - local_step * A
        y = x.copy()
        for _ in range(local_steps):     # affine map y -> M y + eta b
            y = M @ y + local_step * b
        deltas.append(w[i] * (y - x))
    agg = np.array([math.fsum(dl[j] for dl in deltas) for j in range(len(x))])
    return x + server_step * agg


# ---------------------------------------------------------------- wrong
def fedavg_grad_at_server(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                          weighting="num_examples", **_):
    """WRONG: every local step uses the gradient at the broadcast model (y -= eta * grad(x)): K-times FedSGD."""
    w = weights(clients, weighting)
    out = np.zeros_like(x)
    for wi, c in zip(w, clients):
        y = x.copy()
        g = c.grad(x)
        for _ in range(local_steps):
            y = y - local_step * g
        out += wi * (y - x)
    return x + server_step * out


def fedavg_ignores_uniform(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                           weighting="num_examples", **_):
    """WRONG (non-default hyperparameter): always weights by num_examples, even when weighting='uniform'."""
    w = weights(clients, "num_examples")
    return x + server_step * sum(wi * (_local(c, x, local_steps, local_step) - x) for wi, c in zip(w, clients))


_CACHE: dict = {}


def fedavg_cached_by_cid(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                         weighting="num_examples", **_):
    """WRONG (multi-round): caches each client's local update by (cid, data size) across calls, as an 'optimisation'
    for clients whose data did not change; the update depends on x, so it is stale from round 2."""
    w = weights(clients, weighting)
    out = np.zeros_like(x)
    for wi, c in zip(w, clients):
        key = (c.cid, c.num_examples, float(np.asarray(c.targets).sum()))
        if key not in _CACHE:
            _CACHE[key] = _local(c, x, local_steps, local_step) - x
        out += wi * _CACHE[key]
    return x + server_step * out


def fedavg_lr_decay(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                    weighting="num_examples", **_):
    """WRONG: a 'warm-up' local step schedule eta_l * (k+1)/K inside the round."""
    w = weights(clients, weighting)
    out = np.zeros_like(x)
    for wi, c in zip(w, clients):
        y = x.copy()
        for k in range(local_steps):
            y = y - local_step * (k + 1) / local_steps * c.grad(y)
        out += wi * (y - x)
    return x + server_step * out


CORRECT = [
    ("f32_loop (rtol 1e-4)", fedavg_f32_loop, {"rtol": 1e-4}),
    ("fsum_reverse_matrix", fedavg_fsum_reverse, {}),
]
WRONG = [
    ("grad_at_server_model", fedavg_grad_at_server, {}),
    ("ignores_uniform_weighting", fedavg_ignores_uniform, {"weighting": "uniform"}),
    ("delta_cached_by_cid", fedavg_cached_by_cid, {}),
    ("warmup_lr_inside_round", fedavg_lr_decay, {}),
]


def _scheduled():
    calls = {"n": 0}

    def fedavg_hidden_schedule(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                               weighting="num_examples", **_):
        """WRONG (shows after many calls): a server-step schedule x0.5 every 60 rounds, counted in a closure."""
        calls["n"] += 1
        eta_g = server_step * 0.5 ** (calls["n"] // 60)
        w = weights(clients, weighting)
        return x + eta_g * sum(wi * (_local(c, x, local_steps, local_step) - x) for wi, c in zip(w, clients))
    return fedavg_hidden_schedule


WRONG.append(("server_step_halved_every_60_calls", _scheduled(), {}))


def fedavg_subsamples_again(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                            weighting="num_examples", **_):
    """WRONG: samples half of the clients it is given (client selection done twice: by the caller and here)."""
    k = max(1, len(clients) // 2)
    chosen = [clients[i] for i in sorted(rng.choice(len(clients), k, replace=False))]
    w = weights(chosen, weighting)
    return x + server_step * sum(wi * (_local(c, x, local_steps, local_step) - x) for wi, c in zip(w, chosen))


WRONG.append(("samples_participants_again", fedavg_subsamples_again, {}))


def fedavg_capped_steps(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                        weighting="num_examples", **_):
    """WRONG (non-default hyperparameter): a leftover debugging cap of 5 local steps (invisible at K <= 5)."""
    w = weights(clients, weighting)
    K = min(local_steps, 5)
    return x + server_step * sum(wi * (_local(c, x, K, local_step) - x) for wi, c in zip(w, clients))


WRONG.append(("local_steps_capped_at_5", fedavg_capped_steps, {}))
