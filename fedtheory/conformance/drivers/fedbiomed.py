"""Fed-BioMed 6.4.1's FedAvg aggregation through the conformance contract, run in Fed-BioMed's own virtual
environment (not imported by fedtheory: it needs torch and fedbiomed). docs/frameworks.md has the verdicts.

    cd fedtheory/conformance && /work/fw-venvs/fedbiomed/bin/python remote_worker.py drivers/fedbiomed.py:fedavg
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

Server: what ``Experiment.run_once`` (``fedbiomed/researcher/federated_workflows/_experiment.py``) does with the
nodes' training replies, without the network between researcher and nodes: Fed-BioMed's ``DefaultStrategy``
samples the nodes (``sample_nodes``: every node, its default) and turns the replies into weights
(``refine``: each node's ``sample_size`` over their total), and ``FedAverage.aggregate`` averages the models
(``federated_averaging``). A reply is built as a node sends it (``success``, ``node_id``, ``sample_size``,
``params``); a node's ``sample_size`` is the number of samples it saw in the round, K n_k for K full batches, so
the weights are n_k/n. The nodes' training is the kit's K full-batch gradient steps (a node trains the
researcher's training plan; its local SGD is the user's ``torch.optim.SGD``).
"""
from __future__ import annotations

import numpy as np
import torch
from fedbiomed.researcher.aggregators import FedAverage
from fedbiomed.researcher.strategies.default_strategy import DefaultStrategy

torch.set_default_dtype(torch.float64)


def _local(x, client, local_steps, local_step) -> np.ndarray:
    """K full-batch gradient steps on 1/(2m)||Z y - t||^2 from x."""
    z, t = np.asarray(client.features, dtype=np.float64), np.asarray(client.targets, dtype=np.float64)
    y = np.array(x, dtype=np.float64)
    for _ in range(int(local_steps)):
        y = y - local_step * z.T @ (z @ y - t) / len(t)
    return y


def fedavg():
    """``DefaultStrategy`` + ``FedAverage``: the sample-size-weighted average of the nodes' models, no server
    learning rate (checked with ``fixed=["server_step"]``; another server step is refused rather than ignored)."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, **_):
        if server_step != 1.0:
            raise ValueError(f"Fed-BioMed's FedAverage has no server learning rate; server_step must be 1.0, "
                             f"got {server_step}")
        nodes = [f"NODE_{pos}" for pos in range(len(clients))]
        strategy = DefaultStrategy()
        sampled = strategy.sample_nodes(from_nodes=nodes, round_i=0)
        replies = {node: {"success": True, "node_id": node, "sample_size": int(local_steps) * c.num_examples,
                          "params": {"weight": torch.tensor(_local(x, c, local_steps, local_step))}}
                   for node, c in zip(nodes, clients) if node in sampled}
        model_params, weights, _total, _factors = strategy.refine(replies, 0)
        out = FedAverage().aggregate(model_params, weights)
        return np.asarray(out["weight"].detach().numpy(), dtype=np.float64).reshape(-1).copy()
    return impl
