"""FedAvg (McMahan et al. 2017, Alg. 1): K full-batch local GD steps from x, then
x+ = x + eta_g sum_i a_i (x_i - x) with a_i = m_i / sum_{j in S} m_j (or 1/|S| under weighting="uniform")."""
from __future__ import annotations

import math

import numpy as np


def _weights(clients, weighting):
    if weighting == "uniform":
        return [1.0 / len(clients)] * len(clients)
    tot = float(sum(c.num_examples for c in clients))
    return [c.num_examples / tot for c in clients]


# ---------------------------------------------------------------- correct

def fedavg_f32(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
               weighting="num_examples", **_):
    """Correct, float32 throughout (declared rtol 1e-4): local GD written with the data matrix, mean loss."""
    x32 = np.asarray(x, dtype=np.float32)
    acc = np.zeros_like(x32)
    for c, a in zip(clients, _weights(clients, weighting)):
        Z = np.asarray(c.features, dtype=np.float32)
        y = np.asarray(c.targets, dtype=np.float32)
        w = x32.copy()
        for _ in range(local_steps):
            w = w - np.float32(local_step) * (Z.T @ (Z @ w - y)) / np.float32(Z.shape[0])
        acc += np.float32(a) * (w - x32)
    return (x32 + np.float32(server_step) * acc).astype(np.float64)


class FedAvgServer:
    """Correct, a callable object; clients visited in decreasing id order and the update summed with math.fsum."""

    def __call__(self, x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                 weighting="num_examples", **_):
        order = sorted(clients, key=lambda c: -c.cid)
        tot = sum(c.num_examples for c in order)
        deltas = []
        for c in order:
            w = np.array(x, dtype=np.float64)
            for _ in range(local_steps):
                w -= local_step * c.grad(w)
            a = 1.0 / len(order) if weighting == "uniform" else c.num_examples / tot
            deltas.append(a * (w - x))
        upd = np.array([math.fsum(col) for col in np.array(deltas).T])
        return x + server_step * upd


# ---------------------------------------------------------------- wrong

def make_fedavg_cached_sizes():
    """WRONG: num_examples memoised per client id in a closure ("sizes do not change"). Alg. 1 weights each round by
    the participants' current n_k; the cache carries a previous problem's sizes into the next one whose ids repeat."""
    sizes: dict = {}

    def fedavg_cached_sizes(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                            weighting="num_examples", **_):
        for c in clients:
            sizes.setdefault(c.cid, c.num_examples)
        tot = sum(sizes[c.cid] for c in clients)
        out = np.zeros_like(x)
        for c in clients:
            w = x.copy()
            for _ in range(local_steps):
                w = w - local_step * c.grad(w)
            a = 1 / len(clients) if weighting == "uniform" else sizes[c.cid] / tot
            out += a * (w - x)
        return x + server_step * out
    return fedavg_cached_sizes


def fedavg_sum_loss(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                    weighting="num_examples", **_):
    """WRONG: local gradient of the summed loss Z^T (Z w - y) (no 1/m), so each client's step is m_i times eta;
    Alg. 1 runs SGD on F_k, the mean loss over the client's examples."""
    out = np.zeros_like(x)
    for c, a in zip(clients, _weights(clients, weighting)):
        Z, y = c.features, c.targets
        w = x.copy()
        for _ in range(local_steps):
            w = w - local_step * Z.T @ (Z @ w - y)
        out += a * (w - x)
    return x + server_step * out


def fedavg_aliased_start(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                         weighting="num_examples", **_):
    """WRONG: `w = x` aliases the server model and the local loop updates it in place (w -= ...), so the second
    client starts from the first client's result, not from x_t (Alg. 1: every client starts from the broadcast w_t)."""
    start = np.array(x, dtype=np.float64)
    w = start
    models = []
    for c in clients:
        for _ in range(local_steps):
            w -= local_step * c.grad(w)
        models.append(w.copy())
    x0 = np.array(x, dtype=np.float64)
    agg = sum(a * (m - x0) for a, m in zip(_weights(clients, weighting), models))
    return x0 + server_step * agg


def fedavg_weights_sorted_mismatch(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                   server_step=1.0, weighting="num_examples", **_):
    """WRONG: the weights are built in id order (sorted(cids)) but zipped with the clients in list order, so each
    client gets another client's n_k / n whenever the list is not sorted by id (Alg. 1: client k's own n_k)."""
    ids = sorted(c.cid for c in clients)
    size = {c.cid: c.num_examples for c in clients}
    n = np.array([size[i] for i in ids], dtype=float)
    a = n / n.sum() if weighting != "uniform" else np.full(len(ids), 1.0 / len(ids))
    out = x.copy()
    for ai, c in zip(a, clients):
        w = x.copy()
        for _ in range(local_steps):
            w = w - local_step * c.grad(w)
        out += server_step * ai * (w - x)
    return out


CORRECT = [
    ("fedavg_f32", fedavg_f32, {"rtol": 1e-4}),
    ("fedavg_callable_fsum_reverse", FedAvgServer(), {}),
]
WRONG = [
    ("fedavg_cached_sizes", make_fedavg_cached_sizes(), {}),
    ("fedavg_sum_loss", fedavg_sum_loss, {}),
    ("fedavg_aliased_start", fedavg_aliased_start, {}),
    ("fedavg_weights_sorted_mismatch", fedavg_weights_sorted_mismatch, {}),
]
CRASH_IS_THE_BUG: tuple = ()
