"""FedAvg (McMahan et al. 2017, Alg. 1): K full-batch GD steps per client, x+ = x + eta_g sum_i a_i (y_i - x)."""
from __future__ import annotations

import numpy as np


def fedavg_f32_loop(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                    weighting="num_examples", **_):
    """Correct, float32 throughout (checked with rtol 1e-4)."""
    x32 = x.astype(np.float32)
    deltas, ws = [], []
    for c in clients:
        Z = np.asarray(c.features, np.float32); y = np.asarray(c.targets, np.float32)
        w = x32.copy()
        for _ in range(local_steps):
            w -= np.float32(local_step) * (Z.T @ (Z @ w - y)) / np.float32(len(y))
        deltas.append(w - x32)
        ws.append(float(c.num_examples) if weighting == "num_examples" else 1.0)
    a = np.asarray(ws, np.float32); a /= a.sum()
    return (x32 + np.float32(server_step) * (a[:, None] * np.stack(deltas)).sum(0)).astype(np.float64)


def make_lr_schedule_closure():
    """WRONG: a 1/sqrt(1 + r/10) local-step schedule over a round counter kept in a closure; Alg. 1's round
    depends only on x and the participants (a fixed eta), so every call after the first is off."""
    calls = {"r": 0}

    def fedavg_round(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                     weighting="num_examples", **_):
        eta = local_step / np.sqrt(1.0 + calls["r"] / 10.0)
        calls["r"] += 1
        a = np.array([c.num_examples if weighting == "num_examples" else 1.0 for c in clients], float)
        a /= a.sum()
        out = np.zeros_like(x)
        for ai, c in zip(a, clients):
            w = x.copy()
            for _ in range(local_steps):
                w = w - eta * c.grad(w)
            out += ai * (w - x)
        return x + server_step * out
    return fedavg_round


def fedavg_sizes_by_cid(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                        weighting="num_examples", num_clients=None, **_):
    """WRONG: sizes stored in an array indexed by the client id and read back by list position (the id is a
    label, not a position: IndexError for ids >= N, another client's weight when ids are permuted)."""
    sizes = np.zeros(num_clients or len(clients))
    for c in clients:
        sizes[c.cid] = c.num_examples if weighting == "num_examples" else 1.0
    tot = sizes.sum()
    out = x.copy()
    for i, c in enumerate(clients):
        w = x.copy()
        for _ in range(local_steps):
            w -= local_step * c.grad(w)
        out += server_step * sizes[i] / tot * (w - x)
    return out


def fedavg_server_step_on_models(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1,
                                 server_step=1.0, weighting="num_examples", **_):
    """WRONG: eta_g multiplies the averaged model instead of the averaged update (x + eta_g sum a_i (y_i - x));
    identical at the default eta_g = 1."""
    a = np.array([c.num_examples if weighting == "num_examples" else 1 for c in clients], float)
    a /= a.sum()
    Y = []
    for c in clients:
        w = x.copy()
        for _ in range(local_steps):
            w -= local_step * c.grad(w)
        Y.append(w)
    return server_step * (a @ np.array(Y))


CORRECT = [("f32_loop (rtol 1e-4)", fedavg_f32_loop, {"rtol": 1e-4})]
WRONG = [("lr_schedule_in_closure", make_lr_schedule_closure(), {}),
         ("sizes_array_indexed_by_cid", fedavg_sizes_by_cid, {}),
         ("server_step_on_models (eta_g=1 default)", fedavg_server_step_on_models, {})]
CRASH_IS_THE_BUG = ("sizes_array_indexed_by_cid",)
