"""FedAvg (McMahan et al. 2017, Alg. 1) with K full-batch local GD steps:
x+ = x + eta_g sum_i a_i (y_i - x), y_i = K steps y <- y - eta_l grad f_i(y) from x, a_i = m_i / sum_S m_j."""
from __future__ import annotations

import numpy as np

from ._common import weights


def fedavg_float32(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                   weighting="num_examples", **_):
    """Correct, written in float32 throughout (a GPU habit); checked with rtol 1e-4."""
    x32 = x.astype(np.float32)
    a = weights(clients, weighting).astype(np.float32)
    upd = np.zeros_like(x32)
    for ai, c in zip(a, clients):
        Z = c.features.astype(np.float32); yv = c.targets.astype(np.float32)
        y = x32.copy()
        for _ in range(local_steps):
            y -= np.float32(local_step) * (Z.T @ (Z @ y - yv)) / np.float32(Z.shape[0])
        upd += ai * (y - x32)
    return (x32 + np.float32(server_step) * upd).astype(np.float64)


def fedavg_by_id(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                 weighting="num_examples", **_):
    """Correct: the clients processed in the order of their ids, models kept in a dict keyed by cid."""
    local = {}
    for c in sorted(clients, key=lambda c: c.cid):
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * c.grad(y)
        local[c.cid] = (y, c.num_examples)
    tot = sum(m for _, m in local.values()) if weighting != "uniform" else len(local)
    delta = sum(((m if weighting != "uniform" else 1) / tot) * (y - x) for y, m in local.values())
    return x + server_step * delta


def make_gram_cache():
    """WRONG: caches Z^T Z / m and Z^T y / m per client id across calls (to save work in later rounds); the kit,
    like a real deployment where a client's data change, can give a cid new data, and the stale cache then
    trains on another client's f_i. McMahan et al.'s round depends only on x and the current clients' data."""
    cache = {}

    def fedavg_cached(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                      weighting="num_examples", **_):
        a = weights(clients, weighting)
        x_new = x.copy()
        for ai, c in zip(a, clients):
            if c.cid not in cache:
                Z = np.asarray(c.features); cache[c.cid] = (Z.T @ Z / len(Z), Z.T @ np.asarray(c.targets) / len(Z))
            A, b = cache[c.cid]
            y = x.copy()
            for _ in range(local_steps):
                y = y - local_step * (A @ y - b)
            x_new += server_step * ai * (y - x)
        return x_new
    return fedavg_cached


def fedavg_sum_loss(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                    weighting="num_examples", **_):
    """WRONG: the local gradient is that of the summed loss Z^T (Z y - t), not of f_i = 1/(2m) ||.||^2 (the
    mean the paper's f_i is), so each local step is m_i times too long."""
    a = weights(clients, weighting)
    d = np.zeros_like(x)
    for ai, c in zip(a, clients):
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * c.features.T @ (c.features @ y - c.targets)
        d += ai * (y - x)
    return x + server_step * d


def fedavg_uniform_over_population(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                   server_step=1.0, weighting="uniform", num_clients=None, **_):
    """WRONG: with uniform weighting, divides the sum of updates by the population N (num_clients) instead of
    the |S| participants, which McMahan et al.'s average over the selected clients uses; equal only under
    full participation."""
    N = num_clients or len(clients)
    tot = np.zeros_like(x)
    for c in clients:
        y = x.copy()
        for _ in range(local_steps):
            y = y - local_step * c.grad(y)
        tot += y - x
    return x + server_step * tot / N


CORRECT = [("float32", fedavg_float32, {"rtol": 1e-4}),
           ("by_id_dict", fedavg_by_id, {})]
WRONG = [("gram_cache_by_cid", make_gram_cache(), {}),
         ("sum_loss_gradient", fedavg_sum_loss, {}),
         ("uniform_over_population", fedavg_uniform_over_population, {"weighting": "uniform"})]
