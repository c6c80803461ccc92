"""A stand-in for FLSim 0.1.0 with the shape drivers/flsim.py uses: ``flsim.interfaces.model.IFLModel``,
``flsim.channels.message.Message`` (``model``, ``weight``), the server optimizer configs of
``flsim.optimizers.server_optimizers`` (``FedAvgOptimizerConfig``, ``FedAvgWithLROptimizerConfig``,
``FedAdamOptimizerConfig`` with FLSim's defaults, ``weight_decay`` = 1e-5 among them) and
``flsim.servers.sync_servers.SyncServer`` (``init_round``, ``receive_update_from_client``, ``step``,
``global_model``, ``_optimizer``). The arithmetic is re-typed from FLSim's source as read for docs/frameworks.md
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

SLIP: dict = {"unit_weights": False, "delta_sign": False}
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


class SyncServer:
    def __init__(self, *, global_model: IFLModel, channel=None, server_optimizer=None, **kwargs) -> None:
        self._global_model = global_model
        self._optimizer = _optimizer(server_optimizer or FedAvgOptimizerConfig(),
                                     global_model.fl_get_module().parameters())
        self._buffer: list[torch.Tensor] = []
        self._sum_weights = 0.0

    @property
    def global_model(self) -> IFLModel:
        return self._global_model

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

    for name in ("flsim", "flsim.channels", "flsim.interfaces", "flsim.optimizers", "flsim.servers"):
        module(name)
    module("flsim.channels.message", Message=Message)
    module("flsim.interfaces.model", IFLModel=IFLModel)
    module("flsim.optimizers.server_optimizers", FedAvgOptimizerConfig=FedAvgOptimizerConfig,
           FedAvgWithLROptimizerConfig=FedAvgWithLROptimizerConfig, FedAdamOptimizerConfig=FedAdamOptimizerConfig)
    module("flsim.servers.sync_servers", SyncServer=SyncServer)
