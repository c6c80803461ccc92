"""FedAvg (McMahan et al. 2017, Alg. 1), written from the paper and docs/conformance.md only.

One call = one round: K full-batch local GD steps from x on f_i(w) = 1/(2 m_i) ||Z_i w - y_i||^2, then
x+ = x + eta_g sum_i a_i (w_i - x) with a_i = m_i / sum_S m_j ("num_examples") or 1/|S| ("uniform").
"""
from __future__ import annotations

import numpy as np


def _weights(clients, weighting):
    if weighting == "uniform":
        return np.full(len(clients), 1.0 / len(clients))
    m = np.array([c.num_examples for c in clients], dtype=float)
    return m / m.sum()


def fedavg_f32_dict(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                    weighting="num_examples", **_):
    """Correct. Float32 throughout (declared rtol 1e-4), updates kept in a dict keyed by client id, clients
    visited in order of their id, the Gram matrix precomputed per client."""
    x32 = np.asarray(x, dtype=np.float32)
    updates, sizes = {}, {}
    for c in sorted(clients, key=lambda c: c.cid):
        Z = np.asarray(c.features, dtype=np.float32)
        y = np.asarray(c.targets, dtype=np.float32)
        m = np.float32(Z.shape[0])
        G, r = (Z.T @ Z) / m, (Z.T @ y) / m
        if local_steps is None:                       # exact local solve
            w = np.linalg.lstsq(Z, y, rcond=None)[0].astype(np.float32)
        else:
            w = x32.copy()
            for _ in range(int(local_steps)):
                w -= np.float32(local_step) * (G @ w - r)
        key = (c.cid, len(updates))          # a cid listed twice is two entries
        updates[key], sizes[key] = w - x32, c.num_examples
    tot = sum(sizes.values())
    delta = np.zeros_like(x32)
    for k, u in updates.items():
        a = (1.0 / len(updates)) if weighting == "uniform" else sizes[k] / tot
        delta += np.float32(a) * u
    return (x32 + np.float32(server_step) * delta).astype(np.float64)


def fedavg_matrix(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                  weighting="num_examples", **_):
    """Correct. Vectorised: all client models in one (n, d) array, the clients processed in reverse order."""
    cl = list(clients)[::-1]
    W = np.tile(np.asarray(x, float), (len(cl), 1))
    if local_steps is None:                           # exact local solve
        W = np.stack([np.linalg.lstsq(c.features, c.targets, rcond=None)[0] for c in cl])
    for _ in range(0 if local_steps is None else int(local_steps)):
        G = np.stack([c.grad(W[i]) for i, c in enumerate(cl)])
        W -= local_step * G
    a = _weights(cl, weighting)
    return x + server_step * (a @ W - x)


def make_fedavg_lr_decay():
    """WRONG: hidden state in a closure. The local step decays by 0.98 per call ("learning-rate schedule"
    kept across rounds), so round r uses eta_l 0.98^(r-1). A round of Alg. 1 with the declared eta depends
    only on x and its participants (a schedule belongs to the caller, who passes each round's eta); the first
    call is exact, every later one is not."""
    calls = [0]

    def fedavg_lr_decay(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                        weighting="num_examples", **_):
        eta = local_step * 0.98 ** calls[0]
        calls[0] += 1
        a = _weights(clients, weighting)
        new = np.zeros_like(x)
        for ai, c in zip(a, clients):
            w = x.copy()
            for _ in range(int(local_steps)):
                w = w - eta * c.grad(w)
            new += ai * w
        return x + server_step * (new - x)
    return fedavg_lr_decay


def fedavg_server_step_in_local(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                server_step=1.0, weighting="num_examples", **_):
    """WRONG: the server step is folded into the local step (eta_l * eta_g, then plain averaging). For K = 1
    this is the same as Alg. 1 (FedSGD, x - eta_g eta_l grad), and at eta_g = 1 it is the same for every K;
    for K > 1 and eta_g != 1 the local trajectory is different, which Alg. 1 does not allow."""
    a = _weights(clients, weighting)
    out = np.zeros_like(x)
    for ai, c in zip(a, clients):
        w = x.copy()
        for _ in range(int(local_steps)):
            w -= (local_step * server_step) * c.grad(w)
        out += ai * w
    return out


def fedavg_clip_update(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                       weighting="num_examples", **_):
    """WRONG: each client's update w_i - x is clipped to norm 0.5 before averaging (a DP-style habit copied
    into a plain FedAvg). Alg. 1 averages the updates as they are; the slip shows only when an update is
    longer than 0.5."""
    a = _weights(clients, weighting)
    delta = np.zeros_like(x)
    for ai, c in zip(a, clients):
        w = x.copy()
        for _ in range(int(local_steps)):
            w = w - local_step * c.grad(w)
        u = w - x
        nrm = np.linalg.norm(u)
        if nrm > 0.5:
            u = u * (0.5 / nrm)
        delta += ai * u
    return x + server_step * delta


CORRECT = [
    ("fedavg_f32_dict", fedavg_f32_dict, {"rtol": 1e-4}),
    ("fedavg_matrix", fedavg_matrix, {}),
]
WRONG = [
    ("fedavg_lr_decay_closure", make_fedavg_lr_decay(), {}),
    ("fedavg_server_step_in_local", fedavg_server_step_in_local, {}),
    ("fedavg_clip_update", fedavg_clip_update, {}),
]
