"""A stand-in for Fed-BioMed 6.4.1 with the shape drivers/fedbiomed.py uses:
``fedbiomed.researcher.strategies.default_strategy.DefaultStrategy`` (``sample_nodes``: every node;
``refine``: each reply's ``sample_size`` over their total) and ``fedbiomed.researcher.aggregators.FedAverage``
(``aggregate(model_params, weights)``: the weighted sum into a float32 buffer, as
``fedbiomed/researcher/aggregators/functional.py`` does with ``torch.zeros_like(val).float()``). Re-typed from
Fed-BioMed's source as read for docs/frameworks.md. CI installs no fedbiomed, hence it is faked; torch is real.

``SLIP`` switches: ``uniform_weights`` makes ``refine`` weigh every node 1/n (a driver that lost the nodes'
sample sizes). ``install()`` puts the modules in ``sys.modules``."""
from __future__ import annotations

import copy
import sys
import types

import torch

SLIP: dict = {"uniform_weights": False}
NAMES = ("fedbiomed",)


class DefaultStrategy:
    def __init__(self) -> None:
        self._sampling_node_history: dict = {}

    def sample_nodes(self, from_nodes, round_i):
        self._sampling_node_history[round_i] = copy.copy(from_nodes)
        return from_nodes

    def refine(self, training_replies, round_i):
        params = {r["node_id"]: r["params"] for r in training_replies.values() if r["success"]}
        sizes = {r["node_id"]: r["sample_size"] for r in training_replies.values() if r["success"]}
        total = sum(sizes.values())
        weights = {n: (1 / len(sizes) if SLIP["uniform_weights"] else s / total) for n, s in sizes.items()}
        return params, weights, total, {n: None for n in sizes}


class FedAverage:
    def aggregate(self, model_params, weights, *args, **kwargs):
        models = [model_params[n] for n in model_params]
        w = [weights[n] for n in model_params]
        out = {k: torch.zeros_like(v).float() for k, v in models[0].items()}  # Fed-BioMed's float32 buffer
        for model, weight in zip(models, [x / sum(w) for x in w]):
            for k in out:
                out[k] += weight * model[k]
        return out


def install() -> None:
    """Put the stand-in's modules in ``sys.modules`` under Fed-BioMed's names."""
    def module(name: str, **attrs) -> types.ModuleType:
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod
        return mod

    for name in ("fedbiomed", "fedbiomed.researcher", "fedbiomed.researcher.strategies"):
        module(name)
    module("fedbiomed.researcher.strategies.default_strategy", DefaultStrategy=DefaultStrategy)
    module("fedbiomed.researcher.aggregators", FedAverage=FedAverage)
