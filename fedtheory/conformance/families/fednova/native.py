"""fedtheory's FedNova through the contract (what the kit must accept): NumPy, vectorised over the clients.

Every participant's least-squares Hessian and linear term are stacked, the local steps run for all clients at once
(a client whose tau_i is reached is frozen by a mask), and ||a_i||_1 is accumulated as the paper's a_i is built
(Wang et al. 2020, Section 4: a_i = (1, ..., 1) for SGD; (1 - rho^k)/(1 - rho) per step for heavy-ball momentum;
(1 - eta mu)^k for the proximal term).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

__all__ = ["fednova"]


def fednova(x, clients, *, state=None, rng=None, local_steps: Mapping[Any, int] | int = 5, local_step=0.1,
            momentum=0.0, prox=0.0, tau_eff: Any = "norm", weighting="num_examples", server_momentum=0.0, **_):
    """One FedNova round: x+ = x - tau_eff sum_i p_i (x - y_i)/||a_i||_1 (eqs. (6)-(7)); with
    ``server_momentum`` beta > 0, m = beta m + (x - x+) carried as the state {"m": m} and x+ = x - m."""
    tau = np.array([local_steps[c.cid] if isinstance(local_steps, Mapping) else local_steps for c in clients])
    A = np.stack([c.features.T @ c.features / c.num_examples for c in clients])
    b = np.stack([c.features.T @ c.targets / c.num_examples for c in clients])
    n = len(clients)
    Y, V = np.tile(x, (n, 1)), np.zeros((n, x.size))
    counter, norm = np.zeros(n), np.zeros(n)
    for k in range(int(tau.max())):
        live = (k < tau)[:, None]
        grad = np.einsum("nij,nj->ni", A, Y) - b
        V = np.where(live, momentum * V + grad, V)
        Y = np.where(live, Y - local_step * (V + prox * (Y - x)), Y)
        # a_i grows as the paper's: momentum adds the running counter, prox discounts the earlier steps
        counter = np.where(live[:, 0], momentum * counter + 1.0, counter)
        norm = np.where(live[:, 0], (1.0 - local_step * prox) * norm + (counter if momentum else 1.0), norm)
    m = np.array([c.num_examples for c in clients], dtype=np.float64)
    p = m / m.sum() if weighting == "num_examples" else np.full(n, 1.0 / n)
    scale = {"norm": p @ norm, "steps": p @ tau}.get(tau_eff, tau_eff) if isinstance(tau_eff, str) else tau_eff
    step = scale * (p @ ((x - Y) / norm[:, None]))
    if not server_momentum:
        return x - step
    m = step if state is None else server_momentum * np.asarray(state["m"]) + step
    return x - m, {"m": m}
