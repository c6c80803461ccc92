"""A stand-in for FedML 0.9.6's MPI simulator and cross-silo classes with the shape the driver
fedtheory/conformance/drivers/fedml_distributed.py uses: ``create_server_aggregator(model, args)`` and
``create_model_trainer(model, args)``; the MPI aggregators ``FedAVGAggregator``, ``FedProxAggregator``,
``FedOptAggregator`` (``client_sampling``, ``add_local_trained_result``, ``check_whether_all_receive``,
``aggregate``, ``set_global_model_params``; FedOpt's ``opt``, a torch SGD with ``lr=server_lr`` and
``momentum=server_momentum`` stepped on x - average) and trainers ``FedAVGTrainer``, ``FedProxTrainer``,
``FedOptTrainer`` (``update_model``, ``update_dataset``, ``train``); cross-silo's ``FedMLAggregator``
(``client_selection``, ``data_silo_selection``, ``aggregate`` returning a triple) and ``FedMLTrainer``.

Unlike FedML (docs/frameworks.md, FedML), ``create_model_trainer`` gives FedProx Li et al.'s proximal term
(w - w_start, mu = ``args.fedprox_mu``): the papers' arithmetic, so the driver's translation -- the dataset tuple,
args, the workers' messages, the server optimizer's state, the sampler's draw reported -- is what the test checks.
``SLIP["no_prox"]`` switches on FedML's launchers' default (``ModelTrainerCLS`` for FedProx: no proximal term) and
``SLIP["first_clients"]`` a sampler that always draws the first m clients; the kit must reject both. The MPI
FedNova (``FedNovaAggregator`` with ``generate_client_schedule``, ``get_average_weight`` and ``aggregate``;
``FedNovaTrainer`` on ``fedml.ml.trainer.fednova_trainer.FedNovaModelTrainer``) weighs the round's clients by
n_i / sum_{j in S} n_j, Wang et al.'s normalised averaging (local momentum and the proximal term as the authors'
optimiser counts ||a_i||_1); ``SLIP["federation_weights"]`` weighs them by n_i over the whole federation, as
FedML 0.9.6's MPI FedNova does. ``install()``
puts the single-process stand-in's modules and these in ``sys.modules``."""
from __future__ import annotations

import sys
import types

import numpy as np
import torch

from . import fedml_sp_standin

SLIP: dict = {"no_prox": False, "first_clients": False, "federation_weights": False}
NAMES = ("fedml",)


class _ModelTrainer:
    """``ModelTrainerCLS``'s shape: K = ``args.epochs`` passes of SGD over the batches on the module's criterion
    (the labels cast with ``labels.long()``), plus the proximal term for FedProx unless ``SLIP["no_prox"]``."""

    def __init__(self, model, args):
        self.model, self.args = model, args

    def set_id(self, idx: int) -> None:
        self.id = idx

    def get_model_params(self) -> dict:
        return self.model.state_dict()  # FedML's own: the model's tensors, not a copy

    def set_model_params(self, params: dict) -> None:
        self.model.load_state_dict(params)

    def train(self, batches, device, args) -> None:
        criterion = sys.modules["fedml.ml.trainer.my_model_trainer_classification"].nn.CrossEntropyLoss()
        mu = args.fedprox_mu if args.federated_optimizer == "FedProx" and not SLIP["no_prox"] else 0.0
        start = [p.detach().clone() for p in self.model.parameters()]
        optimizer = torch.optim.SGD(self.model.parameters(), lr=args.learning_rate)
        for _ in range(args.epochs):
            for x, labels in batches:
                loss = criterion(self.model(x), labels.long())
                loss = loss + sum(0.5 * mu * torch.sum((p - s) ** 2) for p, s in zip(self.model.parameters(), start))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


class _ServerAggregator:
    def __init__(self, model, args):
        self.model, self.args = model, args

    def set_id(self, idx: int) -> None:
        self.id = idx

    def get_model_params(self) -> dict:
        return self.model.state_dict()

    def set_model_params(self, params: dict) -> None:
        self.model.load_state_dict(params)


def _sampling(round_idx: int, total: int, per_round: int) -> list:
    if total == per_round:
        return list(range(total))
    if SLIP["first_clients"]:
        return list(range(per_round))
    np.random.seed(round_idx)
    return list(np.random.choice(range(total), per_round, replace=False))


class _Aggregator:
    """The MPI aggregators' shared shape: the n_k/n average of the workers' models."""

    def __init__(self, train_global, test_global, all_train_data_num, train_data_local_dict, test_data_local_dict,
                 train_data_local_num_dict, worker_num, device, args, server_aggregator):
        self.aggregator, self.args, self.worker_num = server_aggregator, args, worker_num
        self.model_dict, self.sample_num_dict, self.flags = {}, {}, {}

    def get_global_model_params(self) -> dict:
        return self.aggregator.get_model_params()

    def set_global_model_params(self, params: dict) -> None:
        self.aggregator.set_model_params(params)

    def add_local_trained_result(self, index: int, params: dict, n: int) -> None:
        self.model_dict[index], self.sample_num_dict[index], self.flags[index] = params, n, True

    def check_whether_all_receive(self) -> bool:
        done = all(self.flags.get(i) for i in range(self.worker_num))
        self.flags = {}
        return done

    def client_sampling(self, round_idx, client_num_in_total, client_num_per_round):
        return _sampling(round_idx, client_num_in_total, client_num_per_round)

    def _average(self) -> dict:
        total = sum(self.sample_num_dict[i] for i in range(self.worker_num))
        return {k: sum(self.sample_num_dict[i] / total * self.model_dict[i][k] for i in range(self.worker_num))
                for k in self.model_dict[0]}

    def aggregate(self) -> dict:
        self.set_global_model_params(self._average())
        return self.get_global_model_params()


class FedOptAggregator(_Aggregator):
    def __init__(self, *args):
        super().__init__(*args)
        self.opt = torch.optim.SGD(self.aggregator.model.parameters(), lr=self.args.server_lr,
                                   momentum=self.args.server_momentum)

    def aggregate(self) -> dict:
        average = self._average()
        self.opt.zero_grad()
        for name, p in self.aggregator.model.named_parameters():
            p.grad = (p.data - average[name]).clone()
        self.opt.step()
        return self.get_global_model_params()


class _Trainer:
    """The MPI workers' shape: ``update_model``, ``update_dataset``, ``train`` -> (weights, n_k)."""

    def __init__(self, client_index, train_data_local_dict, train_data_local_num_dict, *rest):
        self.trainer, self.args = rest[-1], rest[-2]
        self.data, self.sizes = train_data_local_dict, train_data_local_num_dict

    def update_model(self, weights: dict) -> None:
        self.trainer.set_model_params(weights)

    def update_dataset(self, client_index: int) -> None:
        self.train_local, self.local_sample_number = self.data[client_index], self.sizes[client_index]

    def train(self, round_idx=None):
        self.trainer.train(self.train_local, None, self.args)
        return self.trainer.get_model_params(), self.local_sample_number


class FedMLAggregator(_Aggregator):
    """Cross-silo: ``client_selection`` over the silos' real ids, ``data_silo_selection`` of their data, and an
    ``aggregate`` that returns (averaged_params, model_list, model_list_idxes)."""

    def client_selection(self, round_idx, client_id_list_in_total, client_num_per_round):
        picks = _sampling(round_idx, len(client_id_list_in_total), client_num_per_round)
        return [client_id_list_in_total[i] for i in picks]

    def data_silo_selection(self, round_idx, client_num_in_total, client_num_per_round):
        return _sampling(round_idx, client_num_in_total, client_num_per_round)

    def aggregate(self):
        return super().aggregate(), None, list(range(self.worker_num))


class FedNovaModelTrainer:
    """Local SGD over the batches (tau_i = their number x ``args.epochs``) with heavy-ball momentum
    (``args.momentum``) and the proximal term (``args.mu``); returns (loss, x - y_i, ||a_i||_1, tau_i)."""

    def __init__(self, model, args):
        self.model, self.args = model, args

    def set_id(self, idx: int) -> None:
        self.id = idx

    def get_model_params(self) -> dict:
        return self.model.state_dict()

    def set_model_params(self, params: dict) -> None:
        self.model.load_state_dict(params)

    def train(self, batches, device, args):
        criterion = sys.modules["fedml.ml.trainer.fednova_trainer"].nn.CrossEntropyLoss()
        w = self.model.weight
        start, buf, counter, norm, steps = w.detach().clone(), None, 0.0, 0.0, 0
        for _ in range(args.epochs):
            for x, y in batches:
                self.model.zero_grad()
                criterion(self.model(x), y).backward()
                g = w.grad.detach()
                buf = g.clone() if buf is None else args.momentum * buf + g
                d = buf + args.mu * (w.detach() - start)
                with torch.no_grad():
                    w -= args.learning_rate * d
                if args.momentum:  # the authors' local_normalizing_vec: ||a_i||_1 accumulated step by step
                    counter = counter * args.momentum + 1
                    norm += counter
                if args.mu:
                    norm = norm * (1 - args.learning_rate * args.mu) + 1
                if not args.momentum and not args.mu:
                    norm += 1
                steps += 1
        return 0.0, start - w.detach(), norm, steps


class FedNovaTrainer(_Trainer):
    def __init__(self, client_index, train_data_local_dict, train_data_local_num_dict, test_data_local_dict,
                 train_data_num, device, args, model_trainer):
        super().__init__(client_index, train_data_local_dict, train_data_local_num_dict, args, model_trainer)

    def train(self, round_idx=None):
        _, delta, norm, steps = self.trainer.train(self.train_local, None, self.args)
        tau = steps if self.args.mu else norm  # FedML's get_local_tau_eff: local steps with the proximal term
        return 0.0, {"delta": delta, "norm": norm, "n": self.local_sample_number}, tau


class FedNovaAggregator(_Aggregator):
    """x+ = x - tau_eff sum_i p_i (x - y_i) / ||a_i||_1, tau_eff = sum_i p_i tau_i, p_i over the round's clients."""

    def __init__(self, *args):
        super().__init__(*args)
        self.sizes = args[5]

    def generate_client_schedule(self, round_idx, client_indexes):
        return np.array_split(np.asarray(client_indexes), self.worker_num)

    def get_average_weight(self, client_indexes):
        total = sum(self.sizes[int(i)] for i in client_indexes)
        return {int(i): self.sizes[int(i)] / total for i in client_indexes}

    def add_local_trained_result(self, index: int, results: list) -> None:
        self.model_dict[index], self.flags[index] = results, True

    def aggregate(self) -> dict:
        results = [r for i in range(self.worker_num) for r in self.model_dict[i]]
        total = sum(self.sizes.values()) if SLIP["federation_weights"] else sum(r["grad"]["n"] for r in results)
        p = [r["grad"]["n"] / total for r in results]
        tau_eff = sum(pi * r["t_eff"] for pi, r in zip(p, results))
        step = sum(pi * r["grad"]["delta"] / r["grad"]["norm"] for pi, r in zip(p, results))
        params = self.get_global_model_params()
        self.set_global_model_params({"weight": params["weight"] - tau_eff * step})
        return self.get_global_model_params()


def _mod(name: str, **attrs) -> types.ModuleType:
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


def install() -> None:
    """The single-process stand-in's modules and the MPI and cross-silo classes above, in ``sys.modules``."""
    fedml_sp_standin.install()
    classes = {"fedml.simulation.mpi.fedavg.FedAVGAggregator": {"FedAVGAggregator": type("FedAVGAggregator",
                                                                                          (_Aggregator,), {})},
               "fedml.simulation.mpi.fedavg.FedAVGTrainer": {"FedAVGTrainer": type("FedAVGTrainer", (_Trainer,), {})},
               "fedml.simulation.mpi.fedprox.FedProxAggregator": {"FedProxAggregator": type("FedProxAggregator",
                                                                                           (_Aggregator,), {})},
               "fedml.simulation.mpi.fedprox.FedProxTrainer": {"FedProxTrainer": type("FedProxTrainer", (_Trainer,),
                                                                                      {})},
               "fedml.simulation.mpi.fedopt.FedOptAggregator": {"FedOptAggregator": FedOptAggregator},
               "fedml.simulation.mpi.fedopt.FedOptTrainer": {"FedOptTrainer": type("FedOptTrainer", (_Trainer,), {})},
               "fedml.simulation.mpi.fednova.FedNovaAggregator": {"FedNovaAggregator": FedNovaAggregator},
               "fedml.simulation.mpi.fednova.FedNovaTrainer": {"FedNovaTrainer": FedNovaTrainer},
               "fedml.ml.trainer.fednova_trainer": {"FedNovaModelTrainer": FedNovaModelTrainer, "nn": torch.nn},
               "fedml.cross_silo.server.fedml_aggregator": {"FedMLAggregator": FedMLAggregator},
               "fedml.cross_silo.client.fedml_trainer": {"FedMLTrainer": type("FedMLTrainer", (_Trainer,), {})},
               "fedml.ml.aggregator.aggregator_creator": {"create_server_aggregator": _ServerAggregator},
               "fedml.ml.aggregator.default_aggregator": {},
               "fedml.ml.trainer.trainer_creator": {"create_model_trainer": _ModelTrainer}}
    new = {}
    for name, attrs in classes.items():
        parts = name.split(".")
        for i in range(2, len(parts)):  # the packages on the way
            package = ".".join(parts[:i])
            if package not in sys.modules and package not in new:
                new[package] = _mod(package)
        new[name] = _mod(name, mlops=None, **attrs)
    sys.modules.update(new)
    for name, mod in new.items():  # ``import a.b`` binds b as an attribute of a
        parent, _, child = name.rpartition(".")
        setattr(sys.modules[parent], child, mod)
