"""A stand-in for NVFlare 2.9.0 with the shape drivers/nvflare.py uses: ``FLContext``, ``Signal``, ``FLModel`` /
``ParamsType``, ``AlgorithmConstants``, ``FLMetaKey``, the ``FedAvg`` / ``Scaffold`` / ``FedOpt`` controllers
(``run`` / ``_run_rounds`` over ``sample_clients``, ``send_model`` with a callback or ``send_model_and_wait``,
aggregation weighted by ``NUM_STEPS_CURRENT_ROUND``, ``update_model``), ``PTFedProxLoss`` and
``PTScaffoldHelper``, and the controllers' own sampler ``sample_clients(num_clients)`` (re-typed from
``BaseModelController.sample_clients``: ``random.shuffle`` of the engine's connected clients' names, the first
``num_clients`` kept). Re-typed from NVFlare's source as read for docs/frameworks.md; ``SLIP`` switches one
deviation on: ``scaffold_correction_sign`` (the client correction's sign flipped) or ``sample_first`` (a sampler
that keeps the first ``num_clients`` connected sites without shuffling). ``install()`` puts the modules in
``sys.modules``."""
from __future__ import annotations

import importlib
import random
import sys
import types

import numpy as np
import torch

SLIP: dict = {"scaffold_correction_sign": False, "sample_first": False}


class FLContext:
    def set_prop(self, *a, **k):
        pass


class Signal:
    triggered = False


class ParamsType:
    FULL, DIFF = "FULL", "DIFF"


class FLModel:
    def __init__(self, params=None, params_type=None, meta=None, current_round=None, **_):
        self.params, self.params_type, self.meta, self.current_round = params or {}, params_type, meta or {}, current_round


class AlgorithmConstants:
    FEDPROX_MU, SCAFFOLD_CTRL_GLOBAL, SCAFFOLD_CTRL_DIFF = "fedprox_mu", "scaffold_c_global", "scaffold_c_diff"


class FLMetaKey:
    NUM_STEPS_CURRENT_ROUND = "NUM_STEPS_CURRENT_ROUND"


def _weighted_mean(dicts, weights):
    return {k: sum(w * np.asarray(d[k]) for d, w in zip(dicts, weights)) / sum(weights) for k in dicts[0]}


class FedAvg:
    def __init__(self, *, num_clients=3, num_rounds=1, model=None, fedprox_mu=None, **_):
        self.num_clients, self.num_rounds, self.model, self.fedprox_mu = num_clients, num_rounds, model, fedprox_mu
        self.start_round = 0

    def sample_clients(self, num_clients=None):
        clients = [client.name for client in self.engine.get_clients()]
        if num_clients and num_clients < len(clients):
            if not SLIP["sample_first"]:
                random.shuffle(clients)
            clients = clients[0:num_clients]
        return clients

    def update_model(self, model, aggr):
        if aggr.params_type == ParamsType.DIFF:
            model.params = {k: model.params[k] + v for k, v in aggr.params.items()}
        else:
            model.params = aggr.params
        return model

    def run(self):
        model = self.model
        for self.current_round in range(self.start_round, self.start_round + self.num_rounds):  # noqa: B020 -- as NVFlare's own controllers write it
            results = []
            if self.fedprox_mu is not None:
                model.meta[AlgorithmConstants.FEDPROX_MU] = self.fedprox_mu
            self.send_model(targets=self.sample_clients(self.num_clients), data=model, callback=results.append)
            w = [r.meta[FLMetaKey.NUM_STEPS_CURRENT_ROUND] for r in results]
            aggr = FLModel(params=_weighted_mean([r.params for r in results], w), params_type=results[0].params_type)
            model = self.update_model(model, aggr)


class Scaffold(FedAvg):
    def _run_rounds(self):
        for self.current_round in range(self.start_round, self.start_round + self.num_rounds):  # noqa: B020 -- as NVFlare's own controllers write it
            self.model.meta[AlgorithmConstants.SCAFFOLD_CTRL_GLOBAL] = self._global_ctrl_weights
            results = self.send_model_and_wait(targets=self.sample_clients(self.num_clients), data=self.model)
            w = [r.meta[FLMetaKey.NUM_STEPS_CURRENT_ROUND] for r in results]
            self.model = self.update_model(self.model, FLModel(params=_weighted_mean([r.params for r in results], w),
                                                               params_type=ParamsType.FULL))
            diff = _weighted_mean([r.meta[AlgorithmConstants.SCAFFOLD_CTRL_DIFF] for r in results], w)
            for k, v in diff.items():
                self._global_ctrl_weights[k] = self._global_ctrl_weights[k] + v


#: FedOpt's default server schedule in NVFlare 2.9.0 (nvflare/app_opt/pt/fedopt_ctl.py, FedOpt.__init__)
DEFAULT_SCHEDULE = {"path": "torch.optim.lr_scheduler.CosineAnnealingLR", "args": {"T_max": 3, "eta_min": 0.9}}


class FedOpt(FedAvg):
    def __init__(self, *args, source_model=None, optimizer_args=None, lr_scheduler_args=DEFAULT_SCHEDULE,
                 device=None, **kw):
        super().__init__(*args, **kw)
        self.torch_model, self.optimizer_args, self.lr_scheduler_args = source_model, optimizer_args, lr_scheduler_args

    def run(self):
        self.optimizer = self.build_component({**self.optimizer_args, "args": {
            **self.optimizer_args["args"], "params": self.torch_model.parameters()}})
        self.lr_scheduler = self.build_component({**self.lr_scheduler_args, "args": {
            **self.lr_scheduler_args["args"], "optimizer": self.optimizer}})
        FedAvg.run(self)

    def update_model(self, model, aggr):
        self.optimizer.zero_grad()
        for name, p in self.torch_model.named_parameters():
            p.grad = torch.tensor(-1.0 * aggr.params[name])
        self.optimizer.step()
        self.lr_scheduler.step()
        model.params = {k: v.detach().numpy() for k, v in self.torch_model.state_dict().items()}
        return model


class PTFedProxLoss(torch.nn.Module):
    def __init__(self, mu=0.01):
        super().__init__()
        self.mu = mu

    def forward(self, input, target):
        return sum((self.mu / 2) * torch.sum((p - q) ** 2) for p, q in zip(input.parameters(), target.parameters()))


class _State:
    def __init__(self, values):
        self._values = values

    def state_dict(self):
        return dict(self._values)

    def load_state_dict(self, values):
        self._values = dict(values)


class PTScaffoldHelper:
    def init(self, model):
        zeros = {k: torch.zeros_like(p.detach()) for k, p in model.named_parameters()}
        self.c_global, self.c_local, self.cnt = _State(dict(zeros)), _State(dict(zeros)), 0

    def _prepare_model(self, model):
        pass

    def load_global_controls(self, weights):
        self.c_global.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in weights.items()})

    def get_params(self):
        self.cnt = 0
        return self.c_global.state_dict(), self.c_local.state_dict()

    def model_update(self, model, curr_lr, c_global, c_local):
        sign = -1.0 if SLIP["scaffold_correction_sign"] else 1.0
        with torch.no_grad():
            for k, p in model.named_parameters():
                p.add_(sign * (c_global[k] - c_local[k]), alpha=-curr_lr)
        self.cnt += 1

    def terms_update(self, model, curr_lr, c_global, c_local, model_global):
        g = model_global.state_dict()
        new = {k: c_local[k] - c_global[k] + (g[k] - p.detach()) / (self.cnt * curr_lr)
               for k, p in model.named_parameters()}
        self.c_delta_para = {k: (new[k] - c_local[k]).numpy() for k in new}
        self.c_local.load_state_dict(new)

    def get_delta_controls(self):
        return self.c_delta_para


def install() -> None:
    """Register the stand-in as ``nvflare`` (and the submodules the driver imports) in ``sys.modules``."""
    names = {"nvflare.apis.fl_context": {"FLContext": FLContext}, "nvflare.apis.signal": {"Signal": Signal},
             "nvflare.apis.fl_constant": {"FLMetaKey": FLMetaKey},
             "nvflare.app_common.abstract.fl_model": {"FLModel": FLModel, "ParamsType": ParamsType},
             "nvflare.app_common.app_constant": {"AlgorithmConstants": AlgorithmConstants},
             "nvflare.app_common.workflows.fedavg": {"FedAvg": FedAvg},
             "nvflare.app_common.workflows.scaffold": {"Scaffold": Scaffold},
             "nvflare.app_opt.pt.fedopt_ctl": {"FedOpt": FedOpt},
             "nvflare.app_opt.pt.fedproxloss": {"PTFedProxLoss": PTFedProxLoss},
             "nvflare.app_opt.pt.scaffold": {"PTScaffoldHelper": PTScaffoldHelper}}
    mods: dict = {}
    for full, attrs in names.items():
        parts = full.split(".")
        for i in range(1, len(parts) + 1):
            mods.setdefault(".".join(parts[:i]), types.ModuleType(".".join(parts[:i])))
        mods[full].__dict__.update(attrs)
    for name, mod in mods.items():
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(mods[parent], child, mod)
    sys.modules.update(mods)
    importlib.invalidate_caches()
