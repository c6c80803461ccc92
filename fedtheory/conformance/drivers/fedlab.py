"""FedLab 1.3.0 through the conformance contract, run in FedLab's own virtual environment (not imported by
fedtheory: it needs torch and fedlab; ``benchmarks/frameworks/run.py fedlab`` makes that environment and runs
every check). docs/frameworks.md, "FedLab", has the command and the verdicts.

    cd fedtheory/conformance && /work/fw-venvs/fedlab/bin/python remote_worker.py drivers/fedlab.py:fedavg
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

Each call builds FedLab's own server handler and serial client trainer for one round, in the order of its
standalone pipeline: ``server.downlink_package`` -> ``trainer.local_process(payload, ids)`` ->
``trainer.uplink_package`` -> ``server.load(pack)`` per client. The model is a float64 ``Linear(d, 1,
bias=False)``; the criterion is the kit's least squares 1/(2m) ||Z x - y||^2 (FedLab's default is cross
entropy, which a user replaces for regression); each client's data loader is one full batch, so
``epochs = local_steps`` gives K full-batch steps of size ``local_step``. SCAFFOLD's and FedDyn's per-client
state (``trainer.cs[id]``, ``trainer.L[id]``) and server state (``global_c``, ``h``) are loaded from the kit's
mapping state and read back after the round, so the kit can check them.

Participants. Given the kit's participants (no ``clients_per_round``), the trainer holds them (FedLab's ids
0..|S|-1) and they all train; for SCAFFOLD and FedDyn the server's ``num_clients`` is the federation's N (the
1/N of c+ and h+). Given the whole population and ``clients_per_round`` = m (the kit's sampling protocol,
``<family>.own_sampler``; FedAvg, SCAFFOLD and FedDyn), the round is FedLab's ``StandalonePipeline.main``: the
trainer holds the N clients, ``handler.num_clients`` = N (as the pipeline sets it), ``sample_ratio`` =
(m + 1/2)/N so that ``num_clients_per_round`` = ``max(1, int(sample_ratio N))`` = m, and the handler's own
``sample_clients()`` (``random.sample(range(N), m)``, sorted: m distinct clients uniformly,
``fedlab/contrib/algorithm/basic_server.py:77-81``) draws the ids the trainer trains. FedLab's own
``fedlab.utils.functional.setup_seed`` (Python's ``random``, NumPy, torch) seeds a run once, from the kit's
generator, as FedLab's examples call it before a run; the rounds of a run continue its stream. The driver reports
the drawn ids as the kit's cids. FedProx is not offered the protocol: its server is ``SyncServerHandler`` (the
uniform sampler above), while the kit's ``fedprox.own_sampler`` judges Li et al.'s sampling by n_k/n with
replacement (docs/frameworks.md, FedLab).
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
from fedlab.utils.functional import setup_seed

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


def _round(server, trainer, clients, clients_per_round, rng, fresh, load=None):
    """One round of FedLab's standalone pipeline; returns the drawn cids (None at the kit's participants). With the
    kit's participants every client trains (``load`` first sets the server's N for SCAFFOLD and FedDyn); with
    ``clients_per_round`` the handler's own ``sample_clients()`` draws from the N clients (``fresh``: a new run,
    seeded by FedLab's ``setup_seed`` from the kit's generator)."""
    if clients_per_round is None:
        server.num_clients = len(clients)
        ids = list(range(len(clients)))
    else:
        server.num_clients = len(clients)  # StandalonePipeline: handler.num_clients = trainer.num_clients
        server.sample_ratio = (int(clients_per_round) + 0.5) / len(clients)
        if fresh:
            setup_seed(int(rng.integers(0, 2**31 - 1)))
        ids = server.sample_clients()
    trainer.local_process(server.downlink_package, ids)
    if load is not None:
        load()
    for pack in trainer.uplink_package:
        server.load(pack)
    return None if clients_per_round is None else [int(clients[i].cid) for i in ids]


def _with_draw(out, drawn):
    """The contract's return: the draw appended when the framework drew (the sampling protocol)."""
    if drawn is None:
        return out
    return (*out, {"drawn": drawn}) if isinstance(out, tuple) else (out, None, {"drawn": drawn})


def _setup(trainer, clients, local_steps, local_step, *extra):
    trainer.setup_dataset(_FullBatch(clients))
    trainer.setup_optim(local_steps, max(c.num_examples for c in clients), local_step, *extra)
    trainer.criterion = _half_mse


def fedavg():
    """``SyncServerHandler`` (uniform ``fedavg_aggregate``, FedLab's design) with ``SGDSerialClientTrainer``."""
    last: dict = {}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, clients_per_round=None, **_):
        fresh = not np.array_equal(last.get("x", np.empty(0)), x)  # a call from a model it did not return
        server = SyncServerHandler(_model(x), global_round=1, sample_ratio=1.0)
        trainer = SGDSerialClientTrainer(_model(x), len(clients))
        _setup(trainer, clients, local_steps, local_step)
        drawn = _round(server, trainer, clients, clients_per_round, rng, fresh)
        last["x"] = server.model_parameters.numpy().copy()
        return _with_draw(last["x"].copy(), drawn)
    return impl


def fedprox():
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0, **_):
        server = SyncServerHandler(_model(x), global_round=1, sample_ratio=1.0)
        trainer = FedProxSerialClientTrainer(_model(x), len(clients))
        _setup(trainer, clients, local_steps, local_step, prox)
        _round(server, trainer, clients, None, rng, False)
        return server.model_parameters.numpy().copy()
    return impl


def _population(server, participants, num_clients):
    """N clients in the federation, |S| of them this round: the buffer closes after |S| uploads."""
    server.num_clients = num_clients
    server.sample_ratio = (participants + 0.5) / num_clients


def _slots(clients, part, x):
    """FedLab indexes clients 0..len(list)-1 in this round; the kit's ids are global: map through cids."""
    return [torch.tensor(np.asarray(part.get(c.cid, np.zeros_like(x)), dtype=np.float64)) for c in clients]


def _federation_size(server, clients, num_clients, clients_per_round):
    """At the kit's participants, the server's N is the federation's (the 1/N of c+ and h+), set after training
    and before the uploads; with FedLab's own sampler the trainer already holds the N clients."""
    if clients_per_round is None:
        return lambda: _population(server, len(clients), num_clients or len(clients))
    return None


def scaffold():
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             num_clients=None, clients_per_round=None, **_):
        server = ScaffoldServerHandler(_model(x), global_round=1, sample_ratio=1.0)
        server.setup_optim(server_step)
        if state is not None:
            server.global_c = torch.tensor(np.asarray(state["c"], dtype=np.float64))
        trainer = ScaffoldSerialClientTrainer(_model(x), len(clients))
        trainer.setup_dataset(_FullBatch(clients))
        trainer.setup_optim(local_steps, 1, local_step)
        trainer.criterion = _half_mse
        if state is not None:
            trainer.cs = _slots(clients, state["c_i"], x)
        drawn = _round(server, trainer, clients, clients_per_round, rng, state is None,
                       _federation_size(server, clients, num_clients, clients_per_round))
        c_i = dict((state or {"c_i": {}})["c_i"])
        c_i.update({c.cid: trainer.cs[j].numpy().copy() for j, c in enumerate(clients)
                    if trainer.cs[j] is not None})
        return _with_draw((server.model_parameters.numpy().copy(), {"c": server.global_c.numpy().copy(),
                                                                   "c_i": c_i}), drawn)
    return impl


def feddyn():
    def impl(x, clients, *, state=None, rng=None, alpha=1.0, local_steps=200, local_step=None, num_clients=None,
             clients_per_round=None, **_):
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
            trainer.L = _slots(clients, state["g_i"], x)
        drawn = _round(server, trainer, clients, clients_per_round, rng, state is None,
                       _federation_size(server, clients, num_clients, clients_per_round))
        g_i = dict((state or {"g_i": {}})["g_i"])
        g_i.update({c.cid: trainer.L[j].numpy().copy() for j, c in enumerate(clients) if trainer.L[j] is not None})
        return _with_draw((server.model_parameters.numpy().copy(), {"h": server.h.numpy().copy(), "g_i": g_i}),
                          drawn)
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
