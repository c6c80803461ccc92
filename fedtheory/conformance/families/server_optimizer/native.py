"""fedtheory's server optimizers through the contract (what the kit must accept): fedtheory's FedAvg round with
server step 1 gives the clients' averaged model, and the server update of Reddi et al. (2021), Alg. 2 (or
FedAvgM) is applied to its delta with the state carried as {"m", "v"}."""
from __future__ import annotations

import numpy as np

from ....algorithms import FedAvg
from ...adapters.problem import round_function

__all__ = ["server_optimizer"]

_fedavg = round_function(lambda local_steps=5, local_step=0.1, **_: FedAvg(
    local_steps=local_steps, local_step=local_step, server_step=1.0))


def server_optimizer(x, clients, *, state=None, rng=None, optimizer="fedadam", server_step=0.1, beta1=0.9,
                     beta2=0.99, tau=1e-3, initial_v=0.0, weighting="uniform", **hyper):
    delta = _fedavg(x, clients, weighting=weighting, **hyper) - x
    m = np.zeros_like(x) if state is None else np.asarray(state["m"], dtype=np.float64)
    v = np.full_like(x, initial_v) if state is None else np.asarray(state.get("v", np.zeros_like(x)), dtype=np.float64)
    if optimizer == "fedavgm":  # heavy ball on -Delta (Hsu et al. 2019)
        m = beta1 * m + delta
        return x + server_step * m, {"m": m, "v": v}
    m = beta1 * m + (1.0 - beta1) * delta
    g2 = np.square(delta)
    v = {"fedadagrad": lambda: v + g2, "fedadam": lambda: beta2 * v + (1.0 - beta2) * g2,
         "fedyogi": lambda: v - (1.0 - beta2) * g2 * np.sign(v - g2)}[optimizer]()
    return x + server_step * m / (np.sqrt(v) + tau), {"m": m, "v": v}
