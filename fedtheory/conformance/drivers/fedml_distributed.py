"""FedML 0.9.6's MPI simulator and cross-silo server through the conformance contract, run in FedML's own virtual
environment (not imported by fedtheory: it needs torch and fedml). docs/frameworks.md ("FedML 0.9.6") has the
verdicts; ``benchmarks/frameworks/run.py``'s ``fedml`` entry names this file as the driver of those checks.

    cd fedtheory/conformance && /work/fw-venvs/fedml/bin/python remote_worker.py drivers/fedml_distributed.py:fedavg_mpi

A FedML user selects these paths with one option: ``backend: MPI`` in the simulation config
(``fedml.simulation.simulator.SimulatorMPI``: ``FedML_FedAvg_distributed``, ``FedML_FedProx_distributed``,
``FedML_FedOpt_distributed``, ``FedML_FedNova_distributed``, one process per rank under ``mpirun``), or
``training_type: cross_silo`` (``fedml.cross_silo``: ``FedMLServerManager`` with ``FedMLAggregator`` and the default
``DefaultServerAggregator``, whose ``aggregate`` is ``FedMLAggOperator.agg``; each silo a ``FedMLTrainer``).

What runs is FedML's: the server's aggregator class (``FedAVGAggregator``, ``FedProxAggregator``,
``FedOptAggregator``, ``FedNovaAggregator``; cross-silo ``FedMLAggregator``) built on
``create_server_aggregator(model, args)`` as the launchers build it, its ``client_sampling`` (cross-silo:
``client_selection`` and ``data_silo_selection``), ``add_local_trained_result``, ``check_whether_all_receive`` and
``aggregate``; each worker's trainer class (``FedAVGTrainer``, ``FedProxTrainer``, ``FedOptTrainer``; cross-silo
``FedMLTrainer``) built on ``create_model_trainer(model, args)`` (``ModelTrainerCLS``: the launchers' default when
the user passes no trainer; FedNova's ``FedNovaTrainer`` on ``FedNovaModelTrainer``, its launcher's default) with
its ``update_model``, ``update_dataset`` and ``train``. What the driver replaces is the managers' message passing,
which only moves tensors: the driver calls the same methods in the order the server and client managers call them
on their messages (``send_init_msg`` / ``handle_message_receive_model_from_client`` on rank 0,
``handle_message_init`` / ``handle_message_receive_model_from_server`` on rank r), and every message's model
goes through ``pickle`` as ``mpi4py``'s ``comm.send`` sends it, so no tensor is shared between server and
workers (each rank is its own process in FedML). One worker object per rank, each with its own model, as each
MPI process builds its own. ``benchmarks/frameworks/repro/fedml_mpi_fedprox.py`` runs FedAvg and FedProx rounds
under ``mpirun`` with FedML's own launcher, managers and transport: McMahan et al.'s FedAvg rounds for both.

The trainers hard-code ``nn.CrossEntropyLoss`` and cast the labels with ``labels.long()``: the module's ``nn``
gets the kit's least squares under that name, and the targets keep their values through the cast
(``fedml.py``'s ``HalfMSE`` and ``Targets``, loaded by path). MLOps and testing calls are no-ops.

Participants (MPI). Given the kit's participants (no ``clients_per_round``), ``client_num_in_total`` =
``client_num_per_round`` = their number, and FedML's ``client_sampling`` returns them all. Given the whole population
and ``clients_per_round`` = m (the kit's sampling protocol, ``<family>.own_sampler``), FedML's own ``client_sampling``
draws (``np.random.seed(round_idx)``, then m of N without replacement) for m worker ranks, at the run's round index
(0 at a run's first round, then 1, 2, ..., as the server manager's ``args.round_idx``), and the driver reports
the draw.
"""
from __future__ import annotations

import importlib.util
import pickle
import types
from pathlib import Path

import numpy as np
import torch

torch.set_default_dtype(torch.float64)

_spec = importlib.util.spec_from_file_location("fedml_sp_driver", Path(__file__).with_name("fedml.py"))
_sp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_sp)


def _wire(obj):
    """A message's payload as the receiving rank gets it: ``mpi4py``'s ``comm.send`` pickles it."""
    return pickle.loads(pickle.dumps(obj))


def _modules(kind: str):
    """FedML's (aggregator class, trainer class) of the MPI ``kind``, with the kit's loss and MLOps off."""
    for name in ("fedml.ml.trainer.my_model_trainer_classification", "fedml.ml.aggregator.default_aggregator"):
        _sp.patched(name)
    if kind == "fedavg":
        agg = _sp.patched("fedml.simulation.mpi.fedavg.FedAVGAggregator").FedAVGAggregator
        return agg, _sp.patched("fedml.simulation.mpi.fedavg.FedAVGTrainer").FedAVGTrainer
    if kind == "fedprox":
        agg = _sp.patched("fedml.simulation.mpi.fedprox.FedProxAggregator").FedProxAggregator
        return agg, _sp.patched("fedml.simulation.mpi.fedprox.FedProxTrainer").FedProxTrainer
    if kind == "fedopt":
        agg = _sp.patched("fedml.simulation.mpi.fedopt.FedOptAggregator").FedOptAggregator
        return agg, _sp.patched("fedml.simulation.mpi.fedopt.FedOptTrainer").FedOptTrainer
    raise ValueError(f"kind must be fedavg, fedprox or fedopt, got {kind!r}")


def _args(optimizer: str, N: int, m: int, local_steps, local_step, **extra):
    return types.SimpleNamespace(
        federated_optimizer=optimizer, backend="MPI", client_optimizer="sgd", learning_rate=float(local_step),
        epochs=int(local_steps), comm_round=1 << 30, client_num_in_total=N, client_num_per_round=m, worker_num=m,
        frequency_of_the_test=1 << 30, dataset="kit", weight_decay=0.0, batch_size=1, enable_wandb=False, ci=0,
        round_idx=0, scenario="horizontal", **extra)


def _dataset(clients):
    """FedML's dataset tuple, client i (FedML's index) = the kit's i-th client: one full batch per client."""
    train = {i: [(torch.tensor(c.features), torch.tensor(c.targets).as_subclass(_sp.Targets))]
             for i, c in enumerate(clients)}
    sizes = {i: c.num_examples for i, c in enumerate(clients)}
    return [sum(sizes.values()), 0, None, None, sizes, train, {i: None for i in sizes}, 1]


class _Federation:
    """Rank 0 (FedML's aggregator on ``create_server_aggregator``) and m worker ranks (FedML's trainer on
    ``create_model_trainer``, each with its own model), as ``FedML_*_distributed`` builds them, kept in the worker
    along a run (the server optimizer's state and the round index live with them)."""

    def __init__(self, kind: str, x, clients, m: int, local_steps, local_step, **extra) -> None:
        from fedml.ml.aggregator.aggregator_creator import create_server_aggregator
        from fedml.ml.trainer.trainer_creator import create_model_trainer

        aggregator_cls, trainer_cls = _modules(kind)
        N = len(clients)
        self.args = _args({"fedavg": "FedAvg", "fedprox": "FedProx", "fedopt": "FedOpt"}[kind], N, m, local_steps,
                          local_step, **extra)
        ds = _dataset(clients)
        server = create_server_aggregator(_sp.linear_model(x), self.args)
        server.set_id(-1)
        self.aggregator = aggregator_cls(None, None, ds[0], ds[5], ds[6], ds[4], m, torch.device("cpu"), self.args,
                                         server)
        self.aggregator.test_on_server_for_all_clients = lambda round_idx: None
        self.workers = []
        for rank in range(1, m + 1):
            model_trainer = create_model_trainer(_sp.linear_model(x), self.args)
            model_trainer.set_id(rank - 1)
            if kind == "fedopt":  # FedOptTrainer takes no test data
                worker = trainer_cls(rank - 1, ds[5], ds[4], ds[0], torch.device("cpu"), self.args, model_trainer)
            else:
                worker = trainer_cls(rank - 1, ds[5], ds[4], ds[6], ds[0], torch.device("cpu"), self.args,
                                     model_trainer)
            self.workers.append(worker)
        self.round = 0
        self.last = None

    def round_from(self, x) -> tuple[np.ndarray, list[int]]:
        """One round as the managers run it; returns (the new global model, the client indexes drawn)."""
        args = self.args
        self.aggregator.set_global_model_params(_wire(_sp.linear_model(x).state_dict()))
        # server: sample, then one message per worker rank with the global model and its client index
        indexes = [int(i) for i in self.aggregator.client_sampling(self.round, args.client_num_in_total,
                                                                   args.client_num_per_round)]
        params = self.aggregator.get_global_model_params()
        for rank, worker in enumerate(self.workers, start=1):
            worker.update_model(_wire(params))
            worker.update_dataset(int(str(indexes[rank - 1])))  # the message carries str(client_index)
            weights, n = worker.train(self.round)
            self.aggregator.add_local_trained_result(rank - 1, _wire(weights), n)
        if not self.aggregator.check_whether_all_receive():
            raise RuntimeError("FedML's aggregator did not register every worker's model")
        new = self.aggregator.aggregate()
        self.round += 1
        x_new = new["weight"].detach().numpy().reshape(-1).copy()
        self.last = x_new
        return x_new, indexes


def _continues(kept: dict, x, token=None) -> bool:
    """Whether this call goes on the run of the kept federation: the kit hands back the model it returned last
    (and, for a server optimizer, the state token), with the same clients."""
    fed = kept.get("fed")
    return (fed is not None and fed.last is not None and fed.last.shape == np.shape(x)
            and np.array_equal(fed.last, x) and token == kept.get("token"))


def _mpi(kind: str, name: str):
    kept: dict = {}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, prox=None,
             clients_per_round=None, **_):
        _sp.no_server_step(f"{name} (MPI simulator)", server_step)
        m = int(clients_per_round or len(clients))
        if clients_per_round is None or not _continues(kept, x) or kept.get("key") != [c.cid for c in clients]:
            extra = {} if prox is None else {"fedprox_mu": float(prox)}  # FedProx's option, as a user sets it
            kept["fed"] = _Federation(kind, x, clients, m, local_steps, local_step, **extra)
            kept["key"] = [c.cid for c in clients]
        kept["fed"].args.epochs, kept["fed"].args.learning_rate = int(local_steps), float(local_step)
        x_new, drawn = kept["fed"].round_from(x)
        if clients_per_round is None:
            return x_new
        return x_new, None, {"drawn": [int(clients[i].cid) for i in drawn]}
    return impl


def fedavg_mpi():
    """``FedML_FedAvg_distributed`` (``backend: MPI``, ``federated_optimizer: FedAvg``): ``FedAVGAggregator``'s
    n_k/n average of the workers' models, ``FedAVGTrainer`` on ``ModelTrainerCLS`` (SGD, ``epochs`` = K); no server
    learning rate."""
    return _mpi("fedavg", "FedAvg")


def fedprox_mpi():
    """``FedML_FedProx_distributed`` (``backend: MPI``, ``federated_optimizer: FedProx``): ``FedProxAggregator``'s
    n_k/n average, ``FedProxTrainer`` on the trainer ``init_client`` builds when the user passes none,
    ``create_model_trainer(model, args)`` = ``ModelTrainerCLS``, whatever ``fedprox_mu`` says (checked as
    ``fedprox`` with the kit's ``prox`` given to FedML as ``args.fedprox_mu``, which that trainer never reads)."""
    return _mpi("fedprox", "FedProx")


def fedavgm_mpi():
    """``FedML_FedOpt_distributed`` (``backend: MPI``, ``federated_optimizer: FedOpt``): ``FedOptAggregator`` takes
    the n_k/n average, sets x - average as the gradient and steps
    ``OptRepo.name2cls(args.server_optimizer)(params, lr=args.server_lr, momentum=args.server_momentum)``. With
    ``server_optimizer: sgd`` that is FedAvgM (Hsu et al. 2019): torch's SGD momentum buffer is Reddi et al.'s m
    (m = beta m + Delta) and the step x - lr m. Its constructor passes ``momentum`` to every optimizer, so no other
    server optimizer can be built (``torch.optim.Adam`` takes no ``momentum``). The aggregator re-creates the
    optimizer each round and reloads its state; the state the kit gets is m (the momentum buffer, sign flipped),
    and a state the kit makes is loaded into the buffer."""
    kept: dict = {}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, beta1=0.9,
             clients_per_round=None, **_):
        m = int(clients_per_round or len(clients))
        returned = kept.get("returned")
        same = (state is not None and returned is not None and np.array_equal(np.asarray(state["m"]), returned)
                and _continues(kept, x) and kept.get("key") == [c.cid for c in clients])
        if not same:
            kept["fed"] = _Federation("fedopt", x, clients, m, local_steps, local_step, server_optimizer="sgd",
                                      server_lr=float(server_step), server_momentum=float(beta1))
            kept["key"] = [c.cid for c in clients]
            fed = kept["fed"]
            fed.aggregator.set_global_model_params(_wire(_sp.linear_model(x).state_dict()))
            if state is not None:  # a state the kit made: into the optimizer's momentum buffer
                weight = fed.aggregator.aggregator.model.weight
                fed.aggregator.opt.state[weight] = {
                    "momentum_buffer": -torch.tensor(np.asarray(state["m"], dtype=np.float64))[None, :]}
        fed = kept["fed"]
        x_new, drawn = fed.round_from(x)
        weight = fed.aggregator.aggregator.model.weight
        kept["returned"] = -fed.aggregator.opt.state[weight]["momentum_buffer"].numpy().reshape(-1).copy()
        out = (x_new, {"m": kept["returned"].copy()})
        return out if clients_per_round is None else (*out, {"drawn": [int(clients[i].cid) for i in drawn]})
    return impl


# --- cross-silo: FedMLAggregator + DefaultServerAggregator (FedMLAggOperator.agg) and FedMLTrainer --------------


def _cross_silo(optimizer: str):
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, prox=None, **_):
        from fedml.cross_silo.client.fedml_trainer import FedMLTrainer
        from fedml.cross_silo.server.fedml_aggregator import FedMLAggregator
        from fedml.ml.aggregator.aggregator_creator import create_server_aggregator
        from fedml.ml.trainer.trainer_creator import create_model_trainer

        _sp.no_server_step(f"{optimizer} (cross-silo)", server_step)
        for name in ("fedml.ml.trainer.my_model_trainer_classification", "fedml.ml.aggregator.default_aggregator",
                     "fedml.cross_silo.server.fedml_aggregator"):
            _sp.patched(name)
        n = len(clients)
        extra = {} if prox is None else {"fedprox_mu": float(prox)}
        args = _args(optimizer, n, n, local_steps, local_step, client_id_list=str(list(range(1, n + 1))), **extra)
        ds = _dataset(clients)
        server = create_server_aggregator(_sp.linear_model(x), args)
        aggregator = FedMLAggregator(None, None, ds[0], ds[5], ds[6], ds[4], n, torch.device("cpu"), args, server)
        # the server manager: client_selection over the silos' real ids 1..n, data_silo_selection of their data
        ids = [int(i) for i in aggregator.client_selection(0, list(range(1, n + 1)), n)]
        silos = [int(i) for i in aggregator.data_silo_selection(0, n, len(ids))]
        params = aggregator.get_global_model_params()
        for client_id, silo in zip(ids, silos):
            model_trainer = create_model_trainer(_sp.linear_model(x), args)  # each silo's own process and model
            model_trainer.set_id(client_id - 1)
            trainer = FedMLTrainer(client_id - 1, ds[5], ds[4], ds[6], ds[0], torch.device("cpu"), args,
                                   model_trainer)
            trainer.update_model(_wire(params))
            trainer.update_dataset(silo)
            weights, num = trainer.train(0)
            aggregator.add_local_trained_result(client_id - 1, _wire(weights), num)
        if not aggregator.check_whether_all_receive():
            raise RuntimeError("FedML's aggregator did not register every silo's model")
        new, _, _ = aggregator.aggregate()
        return new["weight"].detach().numpy().reshape(-1).copy()
    return impl


def fedavg_cross_silo():
    """Cross-silo FedAvg: ``FedMLAggregator.aggregate`` -> ``DefaultServerAggregator.aggregate`` ->
    ``FedMLAggOperator.agg`` (the n_k/n average), silos ``FedMLTrainer`` on ``ModelTrainerCLS``."""
    return _cross_silo("FedAvg")


def fedprox_cross_silo():
    """Cross-silo FedProx: ``FedMLAggOperator.agg``'s FedProx branch (the n_k/n average), silos ``FedMLTrainer``
    on the trainer ``FedMLTrainerDistAdapter`` builds when the user passes none, ``create_model_trainer`` =
    ``ModelTrainerCLS`` (``args.fedprox_mu`` = the kit's ``prox``)."""
    return _cross_silo("FedProx")


# --- MPI FedNova: FedNovaAggregator + FedNovaTrainer on FedNovaModelTrainer ---------------------------------------


def _loaders(clients, local_steps) -> dict:
    """Client i's loader: tau_i full batches (FedML's tau_i is epochs x batches; ``epochs`` = 1)."""
    return {i: [(torch.tensor(c.features), torch.tensor(c.targets))] * int(local_steps[c.cid])
            for i, c in enumerate(clients)}


def fednova_mpi():
    """``FedML_FedNova_distributed`` (``backend: MPI``, ``federated_optimizer: FedNova``): rank 0's
    ``FedNovaAggregator`` samples (``client_sampling``), splits the round's clients over the m worker ranks
    (``generate_client_schedule``: ``np.array_split``, one client per rank here) and applies ``fednova_aggregate``
    (x+ = x - tau_eff sum_i norm_grad_i, tau_eff = sum_i tau_eff_i; no server momentum, ``gmf`` = 0) to the workers'
    (norm_grad, tau_eff) lists; each worker's ``FedNovaTrainer`` trains on ``FedNovaModelTrainer`` (the authors'
    ``FedNova`` optimiser) with ``ratio`` = n_i / (the federation's samples). FedML's tau_i is epochs x the batches
    of the client's loader: client i gets a loader of tau_i full batches and ``epochs = 1``. ``momentum`` and
    ``prox`` are ``args.momentum`` and ``args.mu``."""
    kept: dict = {}

    def federation(x, clients, m, local_steps, local_step, momentum, prox):
        from fedml.ml.aggregator.aggregator_creator import create_server_aggregator

        for name in ("fedml.ml.trainer.fednova_trainer", "fedml.ml.aggregator.default_aggregator"):
            _sp.patched(name)
        agg_mod = _sp.patched("fedml.simulation.mpi.fednova.FedNovaAggregator")
        trainer_cls = _sp.patched("fedml.simulation.mpi.fednova.FedNovaTrainer").FedNovaTrainer
        model_trainer_cls = _sp.patched("fedml.ml.trainer.fednova_trainer").FedNovaModelTrainer
        N = len(clients)
        args = _args("FedNova", N, m, 1, local_step, gmf=0.0, mu=float(prox), momentum=float(momentum),
                     dampening=0.0, nesterov=False)
        train = _loaders(clients, local_steps)
        sizes = {i: c.num_examples for i, c in enumerate(clients)}
        server = create_server_aggregator(_sp.linear_model(x), args)
        aggregator = agg_mod.FedNovaAggregator(None, None, sum(sizes.values()), train, {i: None for i in sizes},
                                               sizes, m, torch.device("cpu"), args, server)
        aggregator.test_on_server_for_all_clients = lambda round_idx: None
        workers = []
        for rank in range(1, m + 1):
            model_trainer = model_trainer_cls(_sp.linear_model(x), args)
            model_trainer.set_id(rank - 1)
            workers.append(trainer_cls(rank - 1, train, sizes, {i: None for i in sizes}, sum(sizes.values()),
                                       torch.device("cpu"), args, model_trainer))
        return types.SimpleNamespace(args=args, aggregator=aggregator, workers=workers, round=0, last=None,
                                     key=[c.cid for c in clients], train=train)

    def impl(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, momentum=0.0, prox=0.0,
             tau_eff="norm", clients_per_round=None, **_):
        m = int(clients_per_round or len(clients))
        if clients_per_round is None or not _continues(kept, x) or kept["fed"].key != [c.cid for c in clients]:
            kept["fed"] = federation(x, clients, m, local_steps, local_step, momentum, prox)
        fed = kept["fed"]
        fed.train.update(_loaders(clients, local_steps))  # the kit draws tau_i afresh each round
        args, aggregator = fed.args, fed.aggregator
        aggregator.set_global_model_params(_wire(_sp.linear_model(x).state_dict()))
        # the server manager's send_init_msg / sync: sample, schedule, average weights, one message per worker
        indexes = aggregator.client_sampling(fed.round, args.client_num_in_total, args.client_num_per_round)
        schedule = aggregator.generate_client_schedule(fed.round, indexes)
        weights = aggregator.get_average_weight(indexes)
        params = aggregator.get_global_model_params()
        for worker_id, worker in enumerate(fed.workers):
            message = _wire({"params": params, "weights": weights, "schedule": schedule})
            results = []
            for client_index in message["schedule"][worker_id]:  # the client manager's __train
                worker.update_model(message["params"])
                worker.update_dataset(int(client_index))
                _, grad, t_eff = worker.train(fed.round)
                results.append({"grad": grad, "t_eff": t_eff})
            aggregator.add_local_trained_result(worker_id, _wire(results))
        if not aggregator.check_whether_all_receive():
            raise RuntimeError("FedML's aggregator did not register every worker's result")
        new = aggregator.aggregate()
        fed.round += 1
        fed.last = x_new = new["weight"].detach().numpy().reshape(-1).copy()
        if clients_per_round is None:
            return x_new
        return x_new, None, {"drawn": [int(clients[int(i)].cid) for i in indexes]}
    return impl
