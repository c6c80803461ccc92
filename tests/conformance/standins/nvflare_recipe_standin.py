"""A stand-in for the NVFlare 2.9.0 pieces behind ``FedOptRecipe`` and ``FedAvg``'s ``aggregation_weights``, on top
of ``nvflare_standin`` (whose controllers it keeps): ``PTFileModelPersistor`` (``load_model``: the checkpoint
file when one is given, *not* loaded into the model object; else the model's ``state_dict``),
``InTimeAccumulateWeightedAggregator`` (``accept`` / ``aggregate``: the mean of the WEIGHT_DIFF results weighted by
``aggregation_weight * NUM_STEPS_CURRENT_ROUND``), ``PTFedOptModelShareableGenerator`` (``START_RUN`` builds the
optimizer on the ``"model"`` component; ``shareable_to_learnable`` sets the gradient to -Delta, steps, and returns
the model's ``state_dict``), ``FedOptRecipe`` (those components, where NVFlare's job keeps them), ``FLModelUtils``
and ``FedAvg(aggregation_weights=...)``. Re-typed from NVFlare's
source as read for docs/frameworks.md; ``SLIP`` switches one deviation on. ``install()`` installs
``nvflare_standin`` and then these modules."""
from __future__ import annotations

import sys

import numpy as np
import torch

from . import nvflare_standin as base

SLIP: dict = {"server_update_sign": False, "aggregation_weights_ignored": False}


class FLContext(base.FLContext):
    def __init__(self):
        self.props: dict = {}

    def set_prop(self, key, value, private=True, sticky=True):
        self.props[key] = value

    def get_prop(self, key, default=None):
        return self.props.get(key, default)

    def get_engine(self):
        return self.props.get(ReservedKey.ENGINE)


class ReservedKey:
    ENGINE, IDENTITY_NAME = "__engine__", "__identity_name__"


class FLContextKey:
    APP_ROOT = "__app_root__"


class FLMetaKey(base.FLMetaKey):
    pass


class AppConstants:
    GLOBAL_MODEL, CURRENT_ROUND, CONTRIBUTION_ROUND = "global_model", "current_round", "contribution_round"


class DataKind:
    WEIGHTS, WEIGHT_DIFF = "WEIGHTS", "WEIGHT_DIFF"


class EventType:
    START_RUN = "_start_run"


class Shareable(dict):
    """The DXO fields, the peer's identity and the cookies, as NVFlare's Shareable carries them."""

    def set_peer_props(self, props):
        self["peer"] = dict(props)

    def add_cookie(self, key, value):
        self.setdefault("cookies", {})[key] = value


class FLModelUtils:
    @staticmethod
    def to_shareable(model):
        kind = DataKind.WEIGHT_DIFF if model.params_type == base.ParamsType.DIFF else DataKind.WEIGHTS
        return Shareable(kind=kind, data=dict(model.params), meta=dict(model.meta or {}))

    @staticmethod
    def from_shareable(shareable, fl_ctx=None):
        return base.FLModel(params=dict(shareable["data"]), params_type=base.ParamsType.FULL,
                            meta=dict(shareable["meta"]))


class PTFileModelPersistor:
    def __init__(self, model=None, source_ckpt_file_full_name=None, **_):
        self.model, self.ckpt = model, source_ckpt_file_full_name

    def handle_event(self, event_type, fl_ctx):
        if isinstance(self.model, str):   # a component id, resolved at START_RUN
            self.model = fl_ctx.get_engine().get_component(self.model)

    def load_model(self, fl_ctx):
        data = torch.load(self.ckpt) if self.ckpt else self.model.state_dict()
        return {"weights": {k: v.detach().numpy().copy() for k, v in data.items()}, "meta": {}}


class InTimeAccumulateWeightedAggregator:
    def __init__(self, expected_data_kind=DataKind.WEIGHT_DIFF, aggregation_weights=None, **_):
        self.kind, self.aggregation_weights, self.results = expected_data_kind, aggregation_weights or {}, []

    def handle_event(self, event_type, fl_ctx):
        pass

    def accept(self, shareable, fl_ctx):
        if shareable["kind"] != self.kind:
            return False
        name = shareable["peer"][ReservedKey.IDENTITY_NAME]
        weight = self.aggregation_weights.get(name, 1.0) * shareable["meta"].get(FLMetaKey.NUM_STEPS_CURRENT_ROUND, 1.0)
        self.results.append((shareable["data"], weight))
        return True

    def aggregate(self, fl_ctx):
        data = base._weighted_mean([d for d, _ in self.results], [w for _, w in self.results])
        self.results = []
        return Shareable(kind=self.kind, data=data, meta={})


class PTFedOptModelShareableGenerator:
    def __init__(self, optimizer_args=None, lr_scheduler_args=None, source_model="model", device=None):
        self.optimizer_args = optimizer_args or {"path": "torch.optim.SGD", "args": {"lr": 1.0}}
        self.lr_scheduler_args, self.source_model = lr_scheduler_args, source_model

    def handle_event(self, event_type, fl_ctx):
        engine = fl_ctx.get_engine()
        self.model = engine.get_component(self.source_model)
        self.optimizer = engine.build_component({**self.optimizer_args, "args": {
            **self.optimizer_args["args"], "params": self.model.parameters()}})

    def learnable_to_shareable(self, learnable, fl_ctx):
        return Shareable(kind=DataKind.WEIGHTS, data=dict(learnable["weights"]), meta={})

    def shareable_to_learnable(self, shareable, fl_ctx):
        self.optimizer.zero_grad()
        sign = 1.0 if SLIP["server_update_sign"] else -1.0
        for name, p in self.model.named_parameters():
            p.grad = torch.tensor(sign * np.asarray(shareable["data"][name]))
        self.optimizer.step()
        return {"weights": {k: v.detach().numpy().copy() for k, v in self.model.state_dict().items()}, "meta": {}}


class ServerApp:
    def __init__(self, components):
        self.app_config = type("ServerAppConfig", (), {"components": components})()


class FedOptRecipe:
    """``FedOptRecipe``'s server components (``recipes/fedopt.py:264-297``), where NVFlare's job keeps them."""

    def __init__(self, *, model, initial_ckpt=None, min_clients, train_script, optimizer_args=None,
                 lr_scheduler_args=None, device=None, source_model="model", **_):
        components = {source_model: model,
                      "persistor": PTFileModelPersistor(model=source_model, source_ckpt_file_full_name=initial_ckpt),
                      "shareable_generator": PTFedOptModelShareableGenerator(
                          optimizer_args=optimizer_args, lr_scheduler_args=lr_scheduler_args,
                          source_model=source_model, device=device),
                      "aggregator": InTimeAccumulateWeightedAggregator(expected_data_kind=DataKind.WEIGHT_DIFF)}
        self._job = type("BaseFedJob", (), {"_deploy_map": {"server": ServerApp(components)}})()


class FedAvg(base.FedAvg):
    """``FedAvg`` with ``aggregation_weights``: a result weighs ``aggregation_weight * NUM_STEPS_CURRENT_ROUND``."""

    def __init__(self, *args, aggregation_weights=None, **kw):
        super().__init__(*args, **kw)
        self.aggregation_weights = aggregation_weights or {}

    def run(self):
        model = self.model
        results = []
        self.send_model(targets=self.sample_clients(self.num_clients), data=model, callback=results.append)
        w = [(1.0 if SLIP["aggregation_weights_ignored"] else self.aggregation_weights.get(r.meta["client_name"], 1.0))
             * r.meta[FLMetaKey.NUM_STEPS_CURRENT_ROUND] for r in results]
        aggr = base.FLModel(params=base._weighted_mean([r.params for r in results], w),
                            params_type=results[0].params_type)
        self.update_model(model, aggr)


def install() -> None:
    """``nvflare_standin.install()``, then these classes under the module names the driver imports."""
    base.install()
    extra = {"nvflare.apis.fl_context": {"FLContext": FLContext},
             "nvflare.apis.fl_constant": {"ReservedKey": ReservedKey, "FLContextKey": FLContextKey},
             "nvflare.app_opt.pt.recipes.fedopt": {"FedOptRecipe": FedOptRecipe},
             "nvflare.apis.dxo": {"DataKind": DataKind}, "nvflare.apis.event_type": {"EventType": EventType},
             "nvflare.app_common.app_constant": {"AppConstants": AppConstants},
             "nvflare.app_common.aggregators": {"InTimeAccumulateWeightedAggregator":
                                                InTimeAccumulateWeightedAggregator},
             "nvflare.app_common.utils.fl_model_utils": {"FLModelUtils": FLModelUtils},
             "nvflare.app_common.workflows.fedavg": {"FedAvg": FedAvg},
             "nvflare.app_opt.pt.fedopt": {"PTFedOptModelShareableGenerator": PTFedOptModelShareableGenerator},
             "nvflare.app_opt.pt.file_model_persistor": {"PTFileModelPersistor": PTFileModelPersistor}}
    add_modules(extra)


def add_modules(extra: dict) -> None:
    """Put each ``{module name: {attribute: value}}`` of ``extra`` in ``sys.modules``, creating the packages on its
    path that are missing."""
    modules = sys.modules
    for full, attrs in extra.items():
        parts = full.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if name not in modules:
                modules[name] = type(sys)(name)
                parent, _, child = name.rpartition(".")
                if parent:
                    setattr(modules[parent], child, modules[name])
        modules[full].__dict__.update(attrs)
