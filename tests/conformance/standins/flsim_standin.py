"""A stand-in for FLSim 0.1.0 with the shape drivers/flsim.py uses: ``flsim.interfaces.model.IFLModel``,
``flsim.channels.message.Message`` (``model``, ``weight``), the server optimizer configs of
``flsim.optimizers.server_optimizers`` (``FedAvgOptimizerConfig``, ``FedAvgWithLROptimizerConfig``,
``FedAdamOptimizerConfig`` with FLSim's defaults, ``weight_decay`` = 1e-5 among them) and
``flsim.servers.sync_servers.SyncServer`` (``init_round``, ``receive_update_from_client``, ``step``,
``global_model``, ``_optimizer``, ``select_clients_for_training`` with the default
``UniformlyRandomActiveUserSelector`` of ``flsim.active_user_selectors.simple_user_selector``). The arithmetic is re-typed from FLSim's source as read for docs/frameworks.md
(``flsim/servers/sync_servers.py``, ``flsim/servers/aggregator.py``, ``flsim/optimizers/server_optimizers.py``):
the server's aggregator sums weight * delta and divides by the sum of the weights (``WEIGHTED_AVERAGE``), sets it
as the global model's gradient, and steps a torch optimizer (SGD of learning rate 1; SGD with momentum; Adam).
CI installs no flsim (nor hydra/omegaconf), hence all is faked; torch is real.

``SLIP`` switches are power checks on where the driver's translation could go silently wrong: ``unit_weights``
makes the server ignore the message's weight (a driver that lost the clients' example counts), ``delta_sign``
makes the server read the delta as after - before (a driver that sent FLSim the other sign). ``install()`` puts
the modules in ``sys.modules``."""
from __future__ import annotations

import sys
import types
from dataclasses import dataclass

import torch

SLIP: dict = {"unit_weights": False, "delta_sign": False, "sample_first": False}
NAMES = ("flsim",)


class IFLModel:
    def fl_get_module(self) -> torch.nn.Module:
        raise NotImplementedError


@dataclass
class Message:
    model: object = None
    weight: float = 0.0


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


def install() -> None:
    """Put the stand-in's modules in ``sys.modules`` under FLSim's names."""
    def module(name: str, **attrs) -> types.ModuleType:
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod
        return mod

    for name in ("flsim", "flsim.channels", "flsim.interfaces", "flsim.optimizers", "flsim.servers",
                 "flsim.active_user_selectors"):
        module(name)
    module("flsim.active_user_selectors.simple_user_selector",
           UniformlyRandomActiveUserSelectorConfig=UniformlyRandomActiveUserSelectorConfig)
    module("flsim.channels.message", Message=Message)
    module("flsim.interfaces.model", IFLModel=IFLModel)
    module("flsim.optimizers.server_optimizers", FedAvgOptimizerConfig=FedAvgOptimizerConfig,
           FedAvgWithLROptimizerConfig=FedAvgWithLROptimizerConfig, FedAdamOptimizerConfig=FedAdamOptimizerConfig)
    module("flsim.servers.sync_servers", SyncServer=SyncServer)
