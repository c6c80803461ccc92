"""A stand-in for FedLab 1.3.0 with the shape drivers/fedlab.py uses, re-typed from ``fedlab/contrib/algorithm/``
(``basic_server.py``, ``basic_client.py``, ``fedprox.py``, ``scaffold.py``, ``feddyn.py``): the server handlers
(``num_clients``, ``sample_ratio`` and ``num_clients_per_round = max(1, int(sample_ratio * num_clients))``, which
closes the buffer in ``load``; ``downlink_package``, ``model_parameters``, ``setup_optim``, ``global_c``, ``h``)
and the serial client trainers (``setup_dataset``, ``setup_optim``, ``criterion``, ``local_process(payload,
ids)``, ``uplink_package``, per-client ``cs[id]`` / ``L[id]`` indexed 0..len-1, ``None`` until first trained).
CI does not install FedLab (its torch pins conflict with fedtheory's), so the driver's translation -- the kit's
client ids mapped onto FedLab's list slots, the state loaded and read back, the population N on the server, the
hyperparameters -- is what the test checks.

FedAvg aggregates as FedLab does, uniformly (``fedavg_aggregate`` without weights: FedLab's documented design
choice, so the kit's n_k/n check fails here as on FedLab). FedDyn is Acar et al.'s Alg. 1 unless ``SLIP`` turns on
FedLab's two deviations (docs/frameworks.md): ``feddyn_detached_terms`` builds the linear and proximal terms from
detached parameters (no gradient), ``feddyn_h_subtracts_x_once`` subtracts x once in h+ instead of once per
participant. The handlers' own sampler is re-typed too: ``sample_clients()`` is ``sorted(random.sample(range(
num_clients), num_clients_per_round))`` (``basic_server.py``) and ``fedlab.utils.functional.setup_seed`` seeds
Python's ``random`` (with NumPy and torch); ``sample_first`` is its slip, a sampler that always returns ids
0..m-1.
FedNova (``fednova.py``) is Wang et al.'s eq. (7) with FedLab's p_i = 1/m and its client's tau =
``len(loader) * epochs``; ``fednova_population_scale`` turns on FedLab's default ``weighted_scale``, which also
multiplies the step by N/|S|. ``install()`` puts the modules in ``sys.modules``."""
from __future__ import annotations

import random
import sys
import types
from copy import deepcopy

import numpy as np
import torch

SLIP: dict = {"feddyn_detached_terms": False, "feddyn_h_subtracts_x_once": False, "sample_first": False,
              # FedLab 1.3.0's default FedNova option: p_i = 1/m, then the step times N/|S| again
              "fednova_population_scale": False}


def _mod(name: str, **attrs) -> types.ModuleType:
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


def _vector(model: torch.nn.Module) -> torch.Tensor:
    """The parameters as one vector, in the graph (FedLab's ``serialize_model`` is this, detached)."""
    return torch.cat([p.view(-1) for p in model.parameters()])


class _Maintainer:
    def __init__(self, model: torch.nn.Module) -> None:
        self._model = deepcopy(model)

    @property
    def model(self) -> torch.nn.Module:
        return self._model

    @property
    def model_parameters(self) -> torch.Tensor:
        return _vector(self._model).detach().clone()

    def set_model(self, parameters: torch.Tensor) -> None:
        torch.nn.utils.vector_to_parameters(parameters.detach().clone(), self._model.parameters())


def fedavg_aggregate(params: list[torch.Tensor], weights=None) -> torch.Tensor:
    w = torch.ones(len(params)) if weights is None else torch.as_tensor(weights, dtype=params[0].dtype)
    return sum(wi * p for wi, p in zip(w / w.sum(), params))


class SyncServerHandler(_Maintainer):
    def __init__(self, model: torch.nn.Module, global_round: int, sample_ratio: float, **_) -> None:
        super().__init__(model)
        self.num_clients, self.sample_ratio, self.global_round = 0, sample_ratio, global_round
        self.client_buffer_cache: list = []

    @property
    def downlink_package(self) -> list[torch.Tensor]:
        return [self.model_parameters]

    @property
    def num_clients_per_round(self) -> int:
        return max(1, int(self.sample_ratio * self.num_clients))

    def sample_clients(self) -> list[int]:
        if SLIP["sample_first"]:
            return list(range(self.num_clients_per_round))
        return sorted(random.sample(range(self.num_clients), self.num_clients_per_round))

    def global_update(self, buffer: list) -> None:
        self.set_model(fedavg_aggregate([ele[0] for ele in buffer]))

    def load(self, payload: list[torch.Tensor]) -> bool:
        self.client_buffer_cache.append(deepcopy(payload))
        assert len(self.client_buffer_cache) <= self.num_clients_per_round
        if len(self.client_buffer_cache) < self.num_clients_per_round:
            return False
        self.global_update(self.client_buffer_cache)
        self.client_buffer_cache = []
        return True


class SGDSerialClientTrainer(_Maintainer):
    def __init__(self, model: torch.nn.Module, num_clients: int, **_) -> None:
        super().__init__(model)
        self.num_clients, self.cache = num_clients, []

    def setup_dataset(self, dataset) -> None:
        self.dataset = dataset

    def setup_optim(self, epochs: int, batch_size: int, lr: float) -> None:
        self.epochs, self.batch_size, self.lr = epochs, batch_size, lr
        self.optimizer = torch.optim.SGD(self._model.parameters(), lr)
        self.criterion = torch.nn.CrossEntropyLoss()  # replaced by the driver

    @property
    def uplink_package(self) -> list:
        package, self.cache = deepcopy(self.cache), []
        return package

    def _steps(self, loader, extra=lambda: 0.0) -> None:
        for _ in range(self.epochs):
            for data, target in loader:
                loss = self.criterion(self.model(data), target) + extra()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

    def local_process(self, payload: list[torch.Tensor], id_list: list[int]) -> None:
        for id in id_list:
            self.set_model(payload[0])
            self._steps(self.dataset.get_dataloader(id, self.batch_size))
            self.cache.append([self.model_parameters])


class FedProxSerialClientTrainer(SGDSerialClientTrainer):
    def setup_optim(self, epochs: int, batch_size: int, lr: float, mu: float) -> None:
        super().setup_optim(epochs, batch_size, lr)
        self.mu = mu

    def local_process(self, payload: list[torch.Tensor], id_list: list[int]) -> None:
        for id in id_list:
            self.set_model(payload[0])
            x = payload[0]
            self._steps(self.dataset.get_dataloader(id, self.batch_size),
                        lambda: 0.5 * self.mu * torch.sum((_vector(self._model) - x) ** 2))
            self.cache.append([self.model_parameters])


class ScaffoldServerHandler(SyncServerHandler):
    @property
    def downlink_package(self) -> list[torch.Tensor]:
        return [self.model_parameters, self.global_c]

    def setup_optim(self, lr: float) -> None:
        self.lr, self.global_c = lr, torch.zeros_like(self.model_parameters)

    def global_update(self, buffer: list) -> None:
        dys, dcs = [ele[0] for ele in buffer], [ele[1] for ele in buffer]
        self.set_model(self.model_parameters + self.lr * fedavg_aggregate(dys))
        self.global_c = self.global_c + len(dcs) / self.num_clients * fedavg_aggregate(dcs)


class ScaffoldSerialClientTrainer(SGDSerialClientTrainer):
    def setup_optim(self, epochs: int, batch_size: int, lr: float) -> None:
        super().setup_optim(epochs, batch_size, lr)
        self.cs: list = [None] * self.num_clients

    def local_process(self, payload: list[torch.Tensor], id_list: list[int]) -> None:
        x, c = payload
        for id in id_list:
            if self.cs[id] is None:
                self.cs[id] = torch.zeros_like(x)
            self.set_model(x)
            loader = self.dataset.get_dataloader(id, self.batch_size)
            for _ in range(self.epochs):
                for data, target in loader:
                    self.optimizer.zero_grad()
                    self.criterion(self.model(data), target).backward()
                    grad = torch.cat([p.grad.view(-1) for p in self._model.parameters()]) - self.cs[id] + c
                    torch.nn.utils.vector_to_parameters(grad, [p.grad for p in self._model.parameters()])
                    self.optimizer.step()
            dy = self.model_parameters - x
            dc = -1.0 / (self.epochs * len(loader) * self.lr) * dy - c
            self.cs[id] = self.cs[id] + dc
            self.cache.append([dy, dc])


class FedDynServerHandler(SyncServerHandler):
    def setup_optim(self, alpha: float) -> None:
        self.alpha, self.h = alpha, torch.zeros_like(self.model_parameters)

    def global_update(self, buffer: list) -> None:
        thetas, x = [ele[0] for ele in buffer], self.model_parameters
        subtracted = x if SLIP["feddyn_h_subtracts_x_once"] else len(thetas) * x
        self.h = self.h - self.alpha / self.num_clients * (sum(thetas) - subtracted)
        self.set_model(fedavg_aggregate(thetas) - self.h / self.alpha)


class FedDynSerialClientTrainer(SGDSerialClientTrainer):
    def __init__(self, model: torch.nn.Module, num_clients: int, **kw) -> None:
        super().__init__(model, num_clients, **kw)
        self.L: list = [None] * num_clients

    def setup_optim(self, epochs: int, batch_size: int, lr: float, alpha: float) -> None:
        self.alpha = alpha
        super().setup_optim(epochs, batch_size, lr)

    def local_process(self, payload: list[torch.Tensor], id_list: list[int]) -> None:
        x = payload[0]
        for id in id_list:
            if self.L[id] is None:
                self.L[id] = torch.zeros_like(x)
            g = self.L[id]
            self.set_model(x)

            def dyn() -> torch.Tensor:
                theta = self.model_parameters if SLIP["feddyn_detached_terms"] else _vector(self._model)
                return -torch.dot(g, theta) + 0.5 * self.alpha * torch.sum((theta - x) ** 2)
            self._steps(self.dataset.get_dataloader(id, self.batch_size), dyn)
            self.L[id] = g - self.alpha * (self.model_parameters - x)
            self.cache.append([self.model_parameters])


def setup_seed(seed: int) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


class FedNovaServerHandler(SyncServerHandler):
    def setup_optim(self, option: str = "weighted_scale") -> None:
        self.option = option

    def global_update(self, buffer: list) -> None:
        x = self.model_parameters
        taus = [float(ele[1]) for ele in buffer]
        deltas = [(ele[0] - x) / tau for ele, tau in zip(buffer, taus)]
        tau_eff, delta = sum(taus) / len(taus), sum(deltas) / len(deltas)
        if SLIP["fednova_population_scale"] and self.option == "weighted_scale":
            delta = delta * self.num_clients / len(deltas)
        self.set_model(x + tau_eff * delta)


class FedNovaSerialClientTrainer(SGDSerialClientTrainer):
    def local_process(self, payload: list[torch.Tensor], id_list: list[int]) -> None:
        for id in id_list:
            self.set_model(payload[0])
            loader = self.dataset.get_dataloader(id, self.batch_size)
            self._steps(loader)
            self.cache.append([self.model_parameters, torch.tensor([float(len(loader) * self.epochs)])])


def install() -> None:
    """Register the stand-in as ``fedlab`` (and the submodules the driver imports) in ``sys.modules``."""
    alg = "fedlab.contrib.algorithm"
    mods = {
        "fedlab": _mod("fedlab"),
        "fedlab.contrib": _mod("fedlab.contrib"),
        "fedlab.utils": _mod("fedlab.utils"),
        "fedlab.utils.functional": _mod("fedlab.utils.functional", setup_seed=setup_seed),
        alg: _mod(alg),
        f"{alg}.basic_server": _mod(f"{alg}.basic_server", SyncServerHandler=SyncServerHandler),
        f"{alg}.basic_client": _mod(f"{alg}.basic_client", SGDSerialClientTrainer=SGDSerialClientTrainer),
        f"{alg}.fedprox": _mod(f"{alg}.fedprox", FedProxSerialClientTrainer=FedProxSerialClientTrainer),
        f"{alg}.scaffold": _mod(f"{alg}.scaffold", ScaffoldServerHandler=ScaffoldServerHandler,
                                ScaffoldSerialClientTrainer=ScaffoldSerialClientTrainer),
        f"{alg}.feddyn": _mod(f"{alg}.feddyn", FedDynServerHandler=FedDynServerHandler,
                              FedDynSerialClientTrainer=FedDynSerialClientTrainer),
        f"{alg}.fednova": _mod(f"{alg}.fednova", FedNovaServerHandler=FedNovaServerHandler,
                               FedNovaSerialClientTrainer=FedNovaSerialClientTrainer),
    }
    for name, mod in mods.items():  # ``import a.b`` binds b as an attribute of a
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(mods[parent], child, mod)
    sys.modules.update(mods)
