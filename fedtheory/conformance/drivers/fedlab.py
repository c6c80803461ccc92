"""FedLab 1.3.0 through the conformance contract, run in FedLab's own virtual environment (not imported by
fedtheory: it needs torch and fedlab). docs/conformance.md, "FedLab", has the command and the verdicts.

    cd fedtheory/conformance && /fedlab-venv/bin/python remote_worker.py drivers/fedlab.py:fedavg
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

Each call builds FedLab's own server handler and serial client trainer for one round, in the order of its
standalone pipeline: ``server.downlink_package`` -> ``trainer.local_process(payload, ids)`` ->
``trainer.uplink_package`` -> ``server.load(pack)`` per client. The model is a float64 ``Linear(d, 1,
bias=False)``; the criterion is the kit's least squares 1/(2m) ||Z x - y||^2 (FedLab's default is cross
entropy, which a user replaces for regression); each client's data loader is one full batch, so
``epochs = local_steps`` gives K full-batch steps of size ``local_step``. SCAFFOLD's and FedDyn's per-client
state (``trainer.cs[id]``, ``trainer.L[id]``) and server state (``global_c``, ``h``) are loaded from the kit's
mapping state and read back after the round, so the kit can check them.
"""
from __future__ import annotations

import numpy as np
import torch
from fedlab.contrib.algorithm.basic_client import SGDSerialClientTrainer
from fedlab.contrib.algorithm.basic_server import SyncServerHandler
from fedlab.contrib.algorithm.feddyn import FedDynSerialClientTrainer, FedDynServerHandler
from fedlab.contrib.algorithm.fednova import FedNovaSerialClientTrainer, FedNovaServerHandler
from fedlab.contrib.algorithm.fedprox import FedProxSerialClientTrainer
from fedlab.contrib.algorithm.scaffold import ScaffoldSerialClientTrainer, ScaffoldServerHandler

torch.set_default_dtype(torch.float64)


class _FullBatch:
    """FedLab's dataset interface: get_dataloader(id, batch_size) -> one full batch of client id."""

    def __init__(self, clients):
        self.data = [(torch.tensor(c.features), torch.tensor(c.targets)[:, None]) for c in clients]

    def get_dataloader(self, id, batch_size):
        return [self.data[id]]


def _half_mse(out, target):
    return 0.5 * torch.mean((out - target) ** 2)


def _model(x):
    model = torch.nn.Linear(x.size, 1, bias=False).double()
    with torch.no_grad():
        model.weight[:] = torch.tensor(x)[None, :]
    return model


def _run(server, trainer, clients, local_steps, local_step, *extra):
    server.num_clients = len(clients)
    trainer.setup_dataset(_FullBatch(clients))
    trainer.setup_optim(local_steps, max(c.num_examples for c in clients), local_step, *extra)
    trainer.criterion = _half_mse
    trainer.local_process(server.downlink_package, list(range(len(clients))))
    for pack in trainer.uplink_package:
        server.load(pack)


def fedavg():
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, **_):
        server = SyncServerHandler(_model(x), global_round=1, sample_ratio=1.0)
        trainer = SGDSerialClientTrainer(_model(x), len(clients))
        _run(server, trainer, clients, local_steps, local_step)
        return server.model_parameters.numpy().copy()
    return impl


def fedprox():
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0, **_):
        server = SyncServerHandler(_model(x), global_round=1, sample_ratio=1.0)
        trainer = FedProxSerialClientTrainer(_model(x), len(clients))
        _run(server, trainer, clients, local_steps, local_step, prox)
        return server.model_parameters.numpy().copy()
    return impl


def _population(server, participants, num_clients):
    """N clients in the federation, |S| of them this round: the buffer closes after |S| uploads."""
    server.num_clients = num_clients
    server.sample_ratio = (participants + 0.5) / num_clients


def _slots(clients, num_clients, part, x):
    """FedLab indexes clients 0..len(list)-1 in this round; the kit's ids are global: map through cids."""
    return [torch.tensor(np.asarray(part.get(c.cid, np.zeros_like(x)), dtype=np.float64)) for c in clients]


def scaffold():
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             num_clients=None, **_):
        server = ScaffoldServerHandler(_model(x), global_round=1, sample_ratio=1.0)
        server.setup_optim(server_step)
        if state is not None:
            server.global_c = torch.tensor(np.asarray(state["c"], dtype=np.float64))
        trainer = ScaffoldSerialClientTrainer(_model(x), len(clients))
        server.num_clients = len(clients)
        trainer.setup_dataset(_FullBatch(clients))
        trainer.setup_optim(local_steps, 1, local_step)
        trainer.criterion = _half_mse
        if state is not None:
            trainer.cs = _slots(clients, num_clients, state["c_i"], x)
        trainer.local_process(server.downlink_package, list(range(len(clients))))
        _population(server, len(clients), num_clients)  # the server's 1/N in c+ = c + |S|/N mean(dc)
        for pack in trainer.uplink_package:
            server.load(pack)
        c_i = dict((state or {"c_i": {}})["c_i"])
        c_i.update({c.cid: trainer.cs[j].numpy().copy() for j, c in enumerate(clients)})
        return server.model_parameters.numpy().copy(), {"c": server.global_c.numpy().copy(), "c_i": c_i}
    return impl


def feddyn():
    def impl(x, clients, *, state=None, rng=None, alpha=1.0, local_steps=200, local_step=None, num_clients=None,
             **_):
        server = FedDynServerHandler(_model(x), global_round=1, sample_ratio=1.0)
        server.setup_optim(alpha)
        if state is not None:
            server.h = torch.tensor(np.asarray(state["h"], dtype=np.float64))
        trainer = FedDynSerialClientTrainer(_model(x), len(clients))
        L = max(float(np.linalg.eigvalsh(c.features.T @ c.features / c.num_examples)[-1]) for c in clients)
        trainer.setup_dataset(_FullBatch(clients))
        trainer.setup_optim(local_steps, 1, local_step or 1.0 / (L + alpha), alpha)
        trainer.criterion = _half_mse
        if state is not None:  # FedLab's L[id] is grad L_k, the kit's g_i
            trainer.L = _slots(clients, num_clients, state["g_i"], x)
        trainer.local_process(server.downlink_package, list(range(len(clients))))
        _population(server, len(clients), num_clients)  # the server's 1/m in h+
        for pack in trainer.uplink_package:
            server.load(pack)
        g_i = dict((state or {"g_i": {}})["g_i"])
        g_i.update({c.cid: trainer.L[j].numpy().copy() for j, c in enumerate(clients)})
        return server.model_parameters.numpy().copy(), {"h": server.h.numpy().copy(), "g_i": g_i}
    return impl


def fednova(option: str = "weighted_scale"):
    """FedLab's ``FedNovaServerHandler`` (``setup_optim(option)``, default ``"weighted_scale"``) with its
    ``FedNovaSerialClientTrainer``, checked as ``fednova`` with uniform weights (FedLab sets p_i = 1/m, "we simply
    set it 1/m here", ``fedlab/contrib/algorithm/fednova.py``). The kit's tau_i of each client is FedLab's
    ``len(data_loader) * epochs`` with one full batch: the driver trains client i with ``epochs`` = tau_i (its
    own local work, the setting FedNova is about), one ``local_process`` per client, as the serial trainer does
    for its id list. The server's population N is the kit's ``num_clients``, and its buffer closes after the
    round's |S| uploads (``sample_ratio``), as in FedLab's pipeline at partial participation.

    Options (read in ``global_update``): ``"weighted_scale"`` (default) is tau_eff = sum p_i tau_i,
    x+ = x + tau_eff (N/|S|) sum p_i d_i with d_i = (y_i - x)/tau_i; ``"uniform"`` and ``"weighted_com"`` drop the
    N/|S| factor (with p_i = 1/m the two are the same). Wang et al. (2020), eq. (7), with p_i = 1/|S| over the
    round's clients has no N/|S|: the authors' ``weighted_scale`` rescales population weights p_i = n_i/n, which
    sum to |S|/N over a round's clients, while FedLab rescales weights that already sum to 1."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, num_clients=None, **_):
        taus = ([int(local_steps[c.cid]) for c in clients] if isinstance(local_steps, dict)
                else [int(local_steps)] * len(clients))
        server = FedNovaServerHandler(_model(x), global_round=1, sample_ratio=1.0)
        server.setup_optim(option)
        trainer = FedNovaSerialClientTrainer(_model(x), len(clients))
        trainer.setup_dataset(_FullBatch(clients))
        trainer.setup_optim(1, max(c.num_examples for c in clients), local_step)
        trainer.criterion = _half_mse
        payload = server.downlink_package
        for j, tau in enumerate(taus):
            trainer.epochs = tau  # client j's own local work: FedLab's tau = len(loader) * epochs = tau_j
            trainer.local_process(payload, [j])
        _population(server, len(clients), int(num_clients or len(clients)))
        for pack in trainer.uplink_package:
            server.load(pack)
        return server.model_parameters.numpy().copy()
    return impl


def fednova_uniform():
    """``setup_optim("uniform")``: tau_eff = mean tau_i, x+ = x + tau_eff mean d_i (no N/|S| factor)."""
    return fednova("uniform")
