"""FedAdam, FedYogi, FedAdagrad and FedAvgM (Reddi et al. 2021, Alg. 2; Hsu et al. 2019) written as framework
code -- a loop over the clients, the state in a dict -- with ``slip`` options for the power test, and the
state-carried slip of forgetting the server state between rounds."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...sampling import self_sampling
from ...statekit import opaque

__all__ = ["server_optimizer", "TEXTBOOK", "WRONG", "CORRECT"]


def server_optimizer(x, clients, *, state=None, rng=None, optimizer="fedadam", local_steps=5, local_step=0.1,
                     server_step=0.1, beta1=0.9, beta2=0.99, tau=1e-3, initial_v=0.0, weighting="uniform",
                     slip: str | None = None, dtype=np.float64, **_):
    """Clients: K local GD steps from x, delta_i = y_i - x; Delta = weighted mean of the delta_i; then
    m = beta1 m + (1 - beta1) Delta, v by the optimizer, x+ = x + eta m / (sqrt(v) + tau) (FedAvgM:
    m = beta1 m + Delta, x+ = x + eta m)."""
    x = np.asarray(x, dtype=dtype)
    if state is None or slip == "state_reset":
        state = {"m": np.zeros_like(x), "v": np.full_like(x, initial_v), "t": 0}
    m, t = np.asarray(state["m"], dtype=dtype), int(state.get("t", 0)) + 1
    v = np.asarray(state.get("v", np.zeros_like(x)), dtype=dtype)  # FedAvgM's state has no v
    deltas, weights, squares = [], [], []
    for cl in clients:
        y = x.copy()
        for _k in range(local_steps):
            y = y - local_step * cl.grad(y).astype(dtype)
        deltas.append(y - x)
        squares.append((y - x) ** 2)
        uniform = weighting == "uniform" and slip != "weights_by_num_examples"
        weights.append(1.0 if uniform else cl.num_examples)
    a = np.asarray(weights, dtype=dtype) / np.sum(weights)
    delta = a @ np.stack(deltas)
    if slip == "pseudo_gradient_sign":  # x - mean of the client models, then the same "+" update
        delta = -delta
    if optimizer == "fedavgm":
        m = beta1 * m + ((1.0 - beta1) * delta if slip == "momentum_ema" else delta)
        step = server_step * (beta1 * m + delta if slip == "nesterov" else m)
        return x + step, {"m": m, "v": v, "t": t}
    m = beta1 * m + (delta if slip == "no_one_minus_beta1" else (1.0 - beta1) * delta)
    sq = {"v_on_mean": m * m, "v_mean_of_squares": a @ np.stack(squares)}.get(slip, delta * delta)
    if optimizer == "fedadagrad":
        v = beta2 * v + sq if slip == "adagrad_decay" else v + sq
    elif optimizer == "fedadam":
        v = beta2 * v + (1.0 - beta2) * sq
    else:
        sign = -np.sign(v - sq) if slip == "yogi_sign" else np.sign(v - sq)
        v = v - (1.0 - beta2) * sq * sign
    eta = server_step
    if slip == "bias_correction":  # Kingma & Ba's correction with the round count (the paper has none)
        eta = server_step * np.sqrt(1.0 - beta2 ** t) / (1.0 - beta1 ** t)
    denom = np.sqrt(v + tau) if slip == "tau_inside_sqrt" else np.sqrt(v) + tau
    return x + eta * m / denom, {"m": m, "v": v, "t": t}


TEXTBOOK = server_optimizer
_ADAPTIVE = ("fedadam", "fedyogi", "fedadagrad")


def _wrong(slip: str, *optimizers: str) -> list[Variant]:
    return [Variant("server_optimizer", f"{opt}_{slip}", partial(server_optimizer, slip=slip), {"optimizer": opt})
            for opt in optimizers]


WRONG: list[Variant] = [
    *_wrong("bias_correction", *_ADAPTIVE),
    *_wrong("v_on_mean", *_ADAPTIVE),
    *_wrong("v_mean_of_squares", "fedadam", "fedadagrad"),
    *_wrong("state_reset", *_ADAPTIVE, "fedavgm"),
    *_wrong("pseudo_gradient_sign", "fedadam", "fedavgm"),
    *_wrong("tau_inside_sqrt", *_ADAPTIVE),
    *_wrong("no_one_minus_beta1", "fedadam", "fedyogi"),
    *_wrong("weights_by_num_examples", "fedyogi"),
    *_wrong("yogi_sign", "fedyogi"),
    *_wrong("adagrad_decay", "fedadagrad"),
    *_wrong("momentum_ema", "fedavgm"),
    *_wrong("nesterov", "fedavgm"),
]
CORRECT: list[Variant] = [
    *[Variant("server_optimizer", f"{opt}_opaque_state", opaque(server_optimizer), {"optimizer": opt})
      for opt in ("fedyogi", "fedavgm")],
]

# the implementation's own sampler (server_optimizer.own_sampler), as for FedAvg
WRONG.append(Variant("server_optimizer", "fedavgm_sampler_first_m", self_sampling(server_optimizer, "first"),
                     {"optimizer": "fedavgm"}))
WRONG.append(Variant("server_optimizer", "fedadam_sampler_reports_other_set", self_sampling(server_optimizer, "lies"),
                     {"optimizer": "fedadam"}))
CORRECT.append(Variant("server_optimizer", "fedadam_own_uniform_sampler", self_sampling(server_optimizer),
                       {"optimizer": "fedadam"}))
