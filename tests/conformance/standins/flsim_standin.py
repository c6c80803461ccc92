"""A stand-in for FLSim 0.1.0 with the shape drivers/flsim.py uses: ``flsim.interfaces.model.IFLModel``,
``flsim.utils.simple_batch_metrics.FLBatchMetrics``, ``flsim.data.data_provider.FLDataProviderFromList``,
``flsim.clients.base_client.ClientConfig`` (its ``Client``), ``flsim.optimizers.local_optimizers.LocalOptimizerSGDConfig``,
the server optimizer configs of ``flsim.optimizers.server_optimizers`` (``FedAvgOptimizerConfig``,
``FedAvgWithLROptimizerConfig``, ``FedAdamOptimizerConfig`` with FLSim's defaults, ``weight_decay`` = 1e-5 among
them), ``flsim.servers.sync_servers.SyncServerConfig`` (its ``SyncServer``: ``init_round``,
``receive_update_from_client``, ``step``, ``global_model``, ``_optimizer``, ``select_clients_for_training`` with the
default ``UniformlyRandomActiveUserSelector`` of ``flsim.active_user_selectors.simple_user_selector``) and
``flsim.trainers.sync_trainer.SyncTrainer`` (``cfg``, ``server``, ``global_model()``, ``rounds_in_one_epoch``,
``train``). The arithmetic is re-typed from FLSim's source as read for docs/frameworks.md
(``flsim/trainers/sync_trainer.py``, ``flsim/clients/base_client.py``, ``flsim/data/data_provider.py``,
``flsim/servers/sync_servers.py``, ``flsim/servers/aggregator.py``, ``flsim/optimizers/server_optimizers.py``):
the trainer runs rounds until round r / ceil(N / m) >= epochs, each round asking the server's selector for m of the
N users, building a ``Client`` per drawn user from ``cfg.client`` and sending its ``generate_local_update`` to the
server; a client trains a copy of the global model for ``epochs`` passes over its batches with
``torch.optim.SGD`` (lr, momentum 0, weight decay 0) on the model's ``fl_forward`` loss, and returns the delta
before - after with the weight min(examples processed, examples in epoch 0); the server's aggregator sums weight *
delta and divides by the sum of the weights (``WEIGHTED_AVERAGE``), sets it as the global model's gradient, and
steps a torch optimizer (SGD of learning rate 1; SGD with momentum; Adam). CI installs no flsim (nor
hydra/omegaconf), hence all is faked; torch is real.

``SLIP`` switches are power checks on where the driver's translation, or FLSim's client, could go silently wrong:
``client_delta_sign`` makes the ``Client`` send after - before, ``client_weight_batches`` makes it weigh by the
batches it trained on (one per user: equal weights) in place of the examples, ``client_one_epoch`` makes it train
one epoch whatever ``epochs`` says (the driver's K lost); ``unit_weights`` makes the server ignore the message's
weight, ``delta_sign`` makes the server read the delta as after - before, ``sample_first`` makes the selector
draw the first users; ``prox_anchor_follows`` makes ``LocalOptimizerFedProx`` pull towards the current iterate
(re-captured every step) in place of the round's model, so the proximal term vanishes; ``fixedpoint_scaled_twice``
makes the secure-aggregation server multiply by the scaling factor twice on the way into fixed point (once on the
way back). ``install()`` puts the modules in ``sys.modules``.

FedProx (``flsim/optimizers/local_optimizers.py``, ``LocalOptimizerFedProx.step``): SGD on grad + mu (p -
global_model), ``global_model`` a copy of p captured at the optimizer's first step (the client builds the optimizer
each round). Secure aggregation (``flsim/servers/sync_secagg_servers.py``, ``flsim/secure_aggregation/
secure_aggregator.py``): each weighted delta weight * delta is multiplied by ``scaling_factor``, clamped to
[-2^(8 num_bytes - 1), 2^(8 num_bytes - 1) - 1] and rounded; the running sum is wrapped as FLSim does
(``torch.remainder`` by max + 1 where >= 0, by min where < 0); ``step`` divides the sum by the sum of the weights and
by the scaling factor."""
from __future__ import annotations

import copy
import math
import sys
import types
from dataclasses import dataclass, field

import torch

SLIP: dict = {"unit_weights": False, "delta_sign": False, "sample_first": False, "client_delta_sign": False,
              "client_weight_batches": False, "client_one_epoch": False, "prox_anchor_follows": False,
              "fixedpoint_scaled_twice": False}
NAMES = ("flsim",)


class IFLModel:
    def fl_get_module(self) -> torch.nn.Module:
        raise NotImplementedError


@dataclass
class Message:
    model: object = None
    weight: float = 0.0


class FLBatchMetrics:
    def __init__(self, *, loss, num_examples, predictions, targets, model_inputs) -> None:
        self.loss, self.num_examples = loss, num_examples
        self.predictions, self.targets, self.model_inputs = predictions, targets, model_inputs


class FLUserDataFromList:
    """FLSim's user of a list of batches: each batch through the model's ``fl_create_training_batch``, its
    examples counted by ``get_num_examples``."""

    def __init__(self, data, model: IFLModel) -> None:
        self.training_batches = [model.fl_create_training_batch(batch=b) for b in data]
        self._num_examples = sum(model.get_num_examples(b) for b in self.training_batches)

    def train_data(self):
        yield from self.training_batches

    def num_train_examples(self) -> int:
        return self._num_examples

    def num_train_batches(self) -> int:
        return len(self.training_batches)


class FLDataProviderFromList:
    def __init__(self, train_user_list, eval_user_list, test_user_list, model: IFLModel) -> None:
        self._train_users = {i: FLUserDataFromList(data, model) for i, data in enumerate(train_user_list)}

    def num_train_users(self) -> int:
        return len(self._train_users)

    def get_train_user(self, user_index: int) -> FLUserDataFromList:
        if user_index not in self._train_users:
            raise IndexError(f"Index {user_index} not in {list(self._train_users)}")
        return self._train_users[user_index]


@dataclass
class LocalOptimizerSGDConfig:
    lr: float = 0.001
    momentum: float = 0.0
    weight_decay: float = 0.0


@dataclass
class LocalOptimizerFedProxConfig(LocalOptimizerSGDConfig):
    mu: float = 0.0


class LocalOptimizerFedProx(torch.optim.SGD):
    """FLSim's ``LocalOptimizerFedProx.step`` at momentum 0 and weight decay 0: p -= lr (grad + mu (p - anchor)),
    the anchor captured at the first step."""

    def __init__(self, params, cfg: LocalOptimizerFedProxConfig) -> None:
        super().__init__(params, lr=cfg.lr)
        self.mu = cfg.mu

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "global_model" not in state or SLIP["prox_anchor_follows"]:
                    state["global_model"] = torch.clone(p.data).detach()
                p.add_(p.grad + self.mu * (p.data - state["global_model"]), alpha=-group["lr"])


@dataclass
class ClientConfig:
    epochs: int = 1
    optimizer: LocalOptimizerSGDConfig = field(default_factory=LocalOptimizerSGDConfig)


class Client:
    """FLSim's ``Client.generate_local_update``: train a copy, delta = before - after, weight = min(examples
    processed, examples in epoch 0)."""

    def __init__(self, *, dataset: FLUserDataFromList, cfg: ClientConfig) -> None:
        self.dataset, self.cfg = dataset, cfg

    def generate_local_update(self, message: Message):
        model = copy.deepcopy(message.model)
        opt = self.cfg.optimizer
        if isinstance(opt, LocalOptimizerFedProxConfig):
            optimizer = LocalOptimizerFedProx(model.fl_get_module().parameters(), opt)
        else:
            optimizer = torch.optim.SGD(model.fl_get_module().parameters(), lr=opt.lr, momentum=opt.momentum,
                                        weight_decay=opt.weight_decay)
        total = processed = batches = 0
        for epoch in range(1 if SLIP["client_one_epoch"] else self.cfg.epochs):
            for batch in list(self.dataset.train_data()):
                optimizer.zero_grad()
                metrics = model.fl_forward(batch)
                metrics.loss.backward()
                optimizer.step()
                total += 0 if epoch else metrics.num_examples
                processed += metrics.num_examples
                batches += 0 if epoch else 1
        weight = float(batches if SLIP["client_weight_batches"] else min(processed, total))
        delta = copy.deepcopy(model)
        sign = -1.0 if SLIP["client_delta_sign"] else 1.0
        with torch.no_grad():
            for d, before, after in zip(delta.fl_get_module().parameters(),
                                        message.model.fl_get_module().parameters(),
                                        model.fl_get_module().parameters()):
                d.copy_(sign * (before - after))
        return delta, weight


@dataclass
class FedAvgOptimizerConfig:
    pass


@dataclass
class FedAvgWithLROptimizerConfig:
    lr: float = 0.001
    momentum: float = 0.0


@dataclass
class FedAdamOptimizerConfig:
    lr: float = 0.001
    weight_decay: float = 0.00001
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8


def _optimizer(config, params):
    if isinstance(config, FedAvgWithLROptimizerConfig):
        return torch.optim.SGD(params, lr=config.lr, momentum=config.momentum)
    if isinstance(config, FedAdamOptimizerConfig):
        return torch.optim.Adam(params, lr=config.lr, weight_decay=config.weight_decay,
                                betas=(config.beta1, config.beta2), eps=config.eps)
    return torch.optim.SGD(params, lr=1.0, momentum=0)


@dataclass
class UniformlyRandomActiveUserSelectorConfig:
    user_selector_seed: int | None = None
    random_with_replacement: bool = False


class UniformlyRandomActiveUserSelector:
    """FLSim's default selector: torch.multinomial over equal weights without replacement, from a torch generator
    seeded with ``user_selector_seed`` (``SLIP["sample_first"]``: the first users_per_round)."""

    def __init__(self, cfg: UniformlyRandomActiveUserSelectorConfig) -> None:
        self.cfg, self.rng = cfg, torch.Generator()
        if cfg.user_selector_seed is not None:
            self.rng.manual_seed(cfg.user_selector_seed)

    def get_user_indices(self, *, num_total_users, users_per_round, **_):
        if SLIP["sample_first"]:
            return list(range(users_per_round))
        return torch.multinomial(torch.ones(num_total_users, dtype=torch.float), users_per_round,
                                 replacement=self.cfg.random_with_replacement, generator=self.rng).tolist()


@dataclass
class SyncServerConfig:
    server_optimizer: object = None
    active_user_selector: object = None


class SyncServer:
    def __init__(self, *, global_model: IFLModel, channel=None, server_optimizer=None, active_user_selector=None,
                 **kwargs) -> None:
        self._active_user_selector = UniformlyRandomActiveUserSelector(
            active_user_selector or UniformlyRandomActiveUserSelectorConfig())
        self._global_model = global_model
        self._optimizer = _optimizer(server_optimizer or FedAvgOptimizerConfig(),
                                     global_model.fl_get_module().parameters())
        self._buffer: list[torch.Tensor] = []
        self._sum_weights = 0.0

    @property
    def global_model(self) -> IFLModel:
        return self._global_model

    def select_clients_for_training(self, num_total_users, users_per_round, data_provider=None, epoch=None):
        return self._active_user_selector.get_user_indices(num_total_users=num_total_users,
                                                           users_per_round=users_per_round)

    def init_round(self) -> None:
        self._buffer = [torch.zeros_like(p) for p in self._global_model.fl_get_module().parameters()]
        self._sum_weights = 0.0
        self._optimizer.zero_grad()

    def receive_update_from_client(self, message: Message) -> None:
        weight = 1.0 if SLIP["unit_weights"] else message.weight
        sign = -1.0 if SLIP["delta_sign"] else 1.0
        for buf, p in zip(self._buffer, message.model.fl_get_module().parameters()):
            buf.add_(sign * weight * p.detach())
        self._sum_weights += weight

    def step(self) -> None:
        for p, buf in zip(self._global_model.fl_get_module().parameters(), self._buffer):
            p.grad = (buf / self._sum_weights).clone()
        self._optimizer.step()


@dataclass
class FixedPointConfig:
    num_bytes: int = 1
    scaling_factor: float | None = None  # FLSim: MISSING, the user sets it


@dataclass
class SyncSecAggServerConfig(SyncServerConfig):
    fixedpoint: FixedPointConfig | None = None


class SyncSecAggServer(SyncServer):
    """FLSim's ``SyncSecAggServer`` with ``WEIGHTED_AVERAGE``: the weighted deltas summed in fixed point."""

    def __init__(self, *, fixedpoint: FixedPointConfig, **kwargs) -> None:
        super().__init__(**kwargs)
        self.scale = float(fixedpoint.scaling_factor)
        bits = 8 * fixedpoint.num_bytes
        self.max_value, self.min_value = 2 ** (bits - 1) - 1, -(2 ** (bits - 1))

    def receive_update_from_client(self, message: Message) -> None:
        twice = self.scale if SLIP["fixedpoint_scaled_twice"] else 1.0
        for buf, p in zip(self._buffer, message.model.fl_get_module().parameters()):
            fixed = torch.round((message.weight * p.detach() * self.scale * twice).clamp(self.min_value,
                                                                                        self.max_value))
            buf.add_(fixed)
            buf.copy_(torch.where(buf >= 0, torch.remainder(buf, self.max_value + 1), buf))
            buf.copy_(torch.where(buf < 0, torch.remainder(buf, self.min_value), buf))
        self._sum_weights += message.weight

    def step(self) -> None:
        for p, buf in zip(self._global_model.fl_get_module().parameters(), self._buffer):
            p.grad = (buf / self._sum_weights / self.scale).clone()
        self._optimizer.step()


class SyncTrainer:
    """FLSim's ``SyncTrainer.train``: rounds of (select m of N, train each drawn user's ``Client``, aggregate)
    until round / ceil(N / m) >= epochs."""

    def __init__(self, *, model: IFLModel, cuda_enabled: bool = False, server: SyncServerConfig | None = None,
                 client: ClientConfig | None = None, users_per_round: int = 10, epochs: float = 1000.0,
                 **kwargs) -> None:
        server = server or SyncServerConfig()
        common = dict(global_model=model, server_optimizer=server.server_optimizer,
                      active_user_selector=server.active_user_selector)
        self.server = (SyncSecAggServer(fixedpoint=server.fixedpoint, **common)
                       if isinstance(server, SyncSecAggServerConfig) else SyncServer(**common))
        self.cfg = types.SimpleNamespace(client=client or ClientConfig(), users_per_round=users_per_round,
                                         epochs=epochs, **kwargs)

    def global_model(self) -> IFLModel:
        return self.server.global_model

    @staticmethod
    def rounds_in_one_epoch(num_total_users: int, users_per_round: int) -> int:
        return math.ceil(num_total_users / users_per_round)

    def train(self, data_provider, metrics_reporter, num_total_users: int, distributed_world_size: int, rank=0):
        users_per_round = min(self.cfg.users_per_round, num_total_users)
        rounds = self.rounds_in_one_epoch(num_total_users, users_per_round)
        for epoch in range(1, math.ceil(self.cfg.epochs) + 1):
            for r in range(1, rounds + 1):
                idx = self.server.select_clients_for_training(num_total_users=data_provider.num_train_users(),
                                                              users_per_round=users_per_round)
                clients = [Client(dataset=data_provider.get_train_user(i), cfg=self.cfg.client) for i in idx]
                self.server.init_round()
                message = Message(model=self.global_model())
                for client in clients:
                    delta, weight = client.generate_local_update(message)
                    self.server.receive_update_from_client(Message(model=delta, weight=weight))
                self.server.step()
                if ((epoch - 1) * rounds + r) / rounds >= self.cfg.epochs:
                    return self.global_model(), None
        return self.global_model(), None


def install() -> None:
    """Put the stand-in's modules in ``sys.modules`` under FLSim's names."""
    def module(name: str, **attrs) -> types.ModuleType:
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod
        return mod

    for name in ("flsim", "flsim.channels", "flsim.interfaces", "flsim.optimizers", "flsim.servers",
                 "flsim.secure_aggregation",
                 "flsim.active_user_selectors", "flsim.clients", "flsim.data", "flsim.trainers", "flsim.utils"):
        module(name)
    module("flsim.clients.base_client", ClientConfig=ClientConfig, Client=Client)
    module("flsim.data.data_provider", FLDataProviderFromList=FLDataProviderFromList)
    module("flsim.optimizers.local_optimizers", LocalOptimizerSGDConfig=LocalOptimizerSGDConfig,
           LocalOptimizerFedProxConfig=LocalOptimizerFedProxConfig)
    module("flsim.trainers.sync_trainer", SyncTrainer=SyncTrainer)
    module("flsim.utils.simple_batch_metrics", FLBatchMetrics=FLBatchMetrics)
    module("flsim.active_user_selectors.simple_user_selector",
           UniformlyRandomActiveUserSelectorConfig=UniformlyRandomActiveUserSelectorConfig)
    module("flsim.channels.message", Message=Message)
    module("flsim.interfaces.model", IFLModel=IFLModel)
    module("flsim.optimizers.server_optimizers", FedAvgOptimizerConfig=FedAvgOptimizerConfig,
           FedAvgWithLROptimizerConfig=FedAvgWithLROptimizerConfig, FedAdamOptimizerConfig=FedAdamOptimizerConfig)
    module("flsim.servers.sync_servers", SyncServer=SyncServer, SyncServerConfig=SyncServerConfig)
    module("flsim.servers.sync_secagg_servers", SyncSecAggServerConfig=SyncSecAggServerConfig)
    module("flsim.secure_aggregation.secure_aggregator", FixedPointConfig=FixedPointConfig)
