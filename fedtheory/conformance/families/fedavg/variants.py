"""FedAvg written as framework code (a loop over client objects), with ``slip`` options: the power test's
wrong implementations, and two differently written correct ones (float32, another summation order)."""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from ...kit import Variant
from ...sampling import self_sampling
from ...textbook import prox_solve

__all__ = ["fedavg", "TEXTBOOK", "WRONG", "CORRECT"]


def fedavg(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, prox=0.0,
           weighting="num_examples", num_clients=None, slip: str | None = None, **_):
    """FedAvg (McMahan et al. 2017, Alg. 1) and FedProx (Li et al. 2020, Alg. 2): every client runs K steps of
    GD on f_i + prox/2 ||. - x||^2 from x (or solves it exactly when local_steps is None); the server moves
    x by server_step times the num_examples-weighted mean of the updates."""
    server_step = 1.0 if slip == "ignores_server_step" else server_step
    start, ys = x, []
    K = local_steps if slip != "ignore_local_steps" else 1
    K = K - 1 if slip == "k_minus_1" else K
    lam = {"prox_sign": -prox, "prox_half": prox / 2}.get(slip, prox)
    for c in clients:
        if slip == "sequential_clients":
            start = ys[-1] if ys else x
        if local_steps is None:
            y = prox_solve(c, x, np.zeros_like(x), lam)
        else:
            y = start.copy()
            for k in range(K):
                centre = {"prox_center_zero": 0.0, "prox_center_moving": y}.get(slip, x)
                eta = local_step / (k + 1) if slip == "lr_decay" else local_step
                decay = 1e-2 * y if slip == "weight_decay" else 0.0
                y = y - eta * (c.grad(y) + lam * (y - centre) + decay)
        ys.append(y)
    m = np.array([c.num_examples for c in clients], dtype=np.float64)
    if slip == "id_as_index":  # sizes kept in a table indexed by the client id
        table = np.zeros(num_clients)
        table[[c.cid for c in clients]] = m
        m = table[[c.cid for c in clients]]
    if weighting == "uniform" or slip == "uniform_weights":
        m = np.ones_like(m)
    elif slip == "sqrt_weights":
        m = np.sqrt(m)
    a = m / m.sum()
    if slip == "divide_by_all_clients":
        a = a * len(clients) / num_clients
    delta = a @ (np.stack(ys) - x)
    if slip == "running_average":
        avg = ys[0]
        for y in ys[1:]:
            avg = (avg + y) / 2.0
        delta = avg - x
    if slip == "last_client":
        delta = ys[-1] - x
    return x + (2.0 if slip == "server_step_twice" else 1.0) * server_step * delta


def _fsum_fedavg(x, clients, *, local_steps=5, local_step=0.1, server_step=1.0, prox=0.0, weighting="num_examples",
                 **_):
    """FedAvg with the clients in reverse order and a compensated (math.fsum) weighted sum."""
    ys = []
    for c in reversed(clients):
        y = x.copy()
        for _k in range(local_steps):
            y = y - local_step * (c.grad(y) + prox * (y - x))
        ys.append(y - x)
    m = np.array([c.num_examples for c in reversed(clients)], dtype=np.float64)
    a = m / m.sum() if weighting == "num_examples" else np.full(len(clients), 1.0 / len(clients))
    delta = np.array([math.fsum(a[i] * ys[i][j] for i in range(len(ys))) for j in range(x.size)])
    return x + server_step * delta


def _float32_fedavg(x, clients, *, local_steps=5, local_step=0.1, server_step=1.0, weighting="num_examples", **_):
    """FedAvg computed entirely in float32."""
    f32 = np.float32
    x32 = x.astype(f32)
    ys = []
    for c in clients:
        Z, t = c.features.astype(f32), c.targets.astype(f32)
        y = x32.copy()
        for _k in range(local_steps):
            y = y - f32(local_step) * (Z.T @ (Z @ y - t) / f32(c.num_examples))
        ys.append(y)
    m = np.array([c.num_examples for c in clients], dtype=f32) if weighting == "num_examples" else \
        np.ones(len(clients), dtype=f32)
    return (x32 + f32(server_step) * ((m / m.sum()) @ (np.stack(ys) - x32))).astype(np.float64)


def _keyed_by_cid_fedavg(x, clients, *, weighting="num_examples", **kw):
    """FedAvg that collects each client's update and size in dicts keyed by client id (as framework code that
    tracks clients does): a client id labels one client, so each label is counted once."""
    updates, sizes = {}, {}
    for c in clients:
        updates[c.cid] = fedavg(x, [c], weighting="uniform", **kw) - x  # one client: the server moves by its update
        sizes[c.cid] = float(c.num_examples) if weighting == "num_examples" else 1.0
    total = sum(sizes.values())
    return x + sum(sizes[k] / total * updates[k] for k in updates)


TEXTBOOK = fedavg
WRONG: list[Variant] = [
    Variant("fedavg", "id_as_index", partial(fedavg, slip="id_as_index")),
    Variant("fedavg", "uniform_weights", partial(fedavg, slip="uniform_weights")),
    Variant("fedavg", "server_step_twice", partial(fedavg, slip="server_step_twice")),
    Variant("fedavg", "k_minus_1", partial(fedavg, slip="k_minus_1")),
    Variant("fedavg", "ignore_local_steps", partial(fedavg, slip="ignore_local_steps")),
    Variant("fedavg", "sqrt_weights", partial(fedavg, slip="sqrt_weights")),
    Variant("fedavg", "divide_by_all_clients", partial(fedavg, slip="divide_by_all_clients")),
    Variant("fedavg", "running_average", partial(fedavg, slip="running_average")),
    Variant("fedavg", "sequential_clients", partial(fedavg, slip="sequential_clients")),
    Variant("fedavg", "weight_decay", partial(fedavg, slip="weight_decay")),
    Variant("fedavg", "lr_decay", partial(fedavg, slip="lr_decay")),
    Variant("fedavg", "last_client", partial(fedavg, slip="last_client")),
]
CORRECT: list[Variant] = [
    Variant("fedavg", "float32", _float32_fedavg, {}, 1e-4),
    Variant("fedavg", "reverse_order_fsum", _fsum_fedavg),
    Variant("fedavg", "keyed_by_cid", _keyed_by_cid_fedavg),
]


def closure_momentum(beta: float = 1e-3):
    """Wrong: FedAvg whose server keeps a small momentum m <- beta m + delta in a closure (not in a returned state),
    starting afresh whenever it is handed a model it did not return (a new run): every single round from a new
    model is FedAvg's, only consecutive rounds show the hidden state."""
    memory = {"m": None, "last": None}

    def impl(x, clients, **kw):
        x_new = fedavg(x, clients, **kw)
        fresh = memory["last"] is None or memory["last"].shape != x.shape or not np.array_equal(memory["last"], x)
        m = x_new - x if fresh else beta * memory["m"] + (x_new - x)
        memory["m"], memory["last"] = m, x + m
        return x + m
    return impl


WRONG.append(Variant("fedavg", "closure_momentum", closure_momentum()))
WRONG.append(Variant("fedavg", "ignores_server_step_at_1", partial(fedavg, slip="ignores_server_step")))

# the implementation's own sampler (fedavg.own_sampler): always the first m clients (wrong in law); reports its
# uniform draw but trains other clients (wrong round); draws uniformly (correct)
WRONG.append(Variant("fedavg", "sampler_first_m", self_sampling(fedavg, "first")))
WRONG.append(Variant("fedavg", "sampler_reports_other_set", self_sampling(fedavg, "lies")))
CORRECT.append(Variant("fedavg", "own_uniform_sampler", self_sampling(fedavg)))
