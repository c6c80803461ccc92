"""fedtheory's FedAvg through the contract (what the kit must accept)."""
from __future__ import annotations

from ....algorithms import FedAvg
from ...adapters.problem import round_function

__all__ = ["fedavg"]


fedavg = round_function(lambda local_steps=5, local_step=0.1, server_step=1.0, **_: FedAvg(
    local_steps=local_steps, local_step=local_step, server_step=server_step))
