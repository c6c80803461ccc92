"""FedElasticNet Alg. 2 (Kim et al.)
written as framework code (a loop over client objects, in a chosen ``dtype``), with ``slip`` options:
the power test's wrong implementations and differently written correct ones."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...statekit import by_position, sealed
from ..fedelasticnet_fedavg.variants import sign_of, soft

__all__ = ["fedelasticnet_scaffold", "TEXTBOOK", "WRONG", "CORRECT"]


def fedelasticnet_scaffold(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                           l1_mode="subgradient", server_step=1.0, weighting="uniform", num_clients=None, slip=None,
                           **_):
    """FedElasticNet Alg. 2: eq. (7) K times, c_k+ = c_k - c + (th^{t-1} - th_k)/(K eta_l), uniform averages."""
    state = state or {"c": np.zeros_like(x), "c_i": {}}
    c, c_i = np.asarray(state["c"]), dict(state["c_i"])
    l1 = 0.0 if slip == "no_l1" else l1
    dys, dcs = [], []
    for cl in clients:
        ci = c_i.get(cl.cid, np.zeros_like(x))
        y = x.copy()
        for _k in range(local_steps):
            g = cl.grad(y) - ci + c + prox * (y - x)
            y = x + soft(y - x - local_step * g, local_step * l1) if l1_mode == "proximal" else \
                y - local_step * (g + l1 * sign_of(y - x, slip))
        ci_new = ci - c + (x - y) / (local_steps * local_step)
        dys.append(y - x)
        dcs.append(ci_new - ci)
        c_i[cl.cid] = ci_new
    return x + server_step * np.mean(dys, axis=0), {"c": c + np.sum(dcs, axis=0) / num_clients, "c_i": c_i}


TEXTBOOK = fedelasticnet_scaffold
WRONG: list[Variant] = [
    Variant("fedelasticnet_scaffold", "no_l1", partial(fedelasticnet_scaffold, slip="no_l1")),
    Variant("fedelasticnet_scaffold", "sign_zero_is_one", partial(fedelasticnet_scaffold, slip="sign_zero_is_one")),
    Variant("fedelasticnet_scaffold", "c_i_by_participant_slot", by_position(fedelasticnet_scaffold, "c_i")),
]
CORRECT: list[Variant] = [
    Variant("fedelasticnet_scaffold", "proximal_reading", fedelasticnet_scaffold, {"l1_mode": "proximal"}),
    Variant("fedelasticnet_scaffold", "sealed_state", sealed(fedelasticnet_scaffold)),
]
