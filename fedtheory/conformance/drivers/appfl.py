"""APPFL 1.12.0 through the conformance contract, run in APPFL's own virtual environment (not imported by fedtheory:
it needs torch and appfl). docs/frameworks.md has the command and the verdicts.

    cd fedtheory/conformance && /work/fw-venvs/appfl/bin/python remote_worker.py drivers/appfl.py:fedadam
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

Clients: APPFL's ``VanillaTrainer`` (``mode="step"``, ``num_local_steps`` = K, ``optim="SGD"``, lr = eta_l, one full
batch per step, no validation; FedProx: its subclass ``FedProxTrainer``, ``mu`` = the kit's ``prox``), with the
kit's least squares 1/(2m)||Z x - y||^2 as ``loss_fn`` and a float64 ``Linear(d, 1, bias=False)``. Server: APPFL's
aggregators (``FedAvgAggregator``, ``FedAvgMAggregator``, ``FedAdamAggregator``, ``FedYogiAggregator``,
``FedAdagradAggregator``) with their documented ``aggregator_configs`` (``server_learning_rate``,
``server_momentum_param_1``/``_2``, ``server_adapt_param``, ``client_weights_mode``). ``aggregate({client_id: local
state})`` is the round. The aggregator object holds the server state (m, v) between rounds, so it lives in the
worker; the state returned to the kit is the aggregator's own ``m_vector``/``v_vector`` (FedAvgM: its momentum), and
a state the kit gives is loaded there.
"""
from __future__ import annotations

import gc

import numpy as np
import torch
from omegaconf import DictConfig

torch.set_default_dtype(torch.float64)

from appfl.algorithm.aggregator import (  # noqa: E402
    FedAdagradAggregator,
    FedAdamAggregator,
    FedAvgAggregator,
    FedAvgMAggregator,
    FedYogiAggregator,
)
from appfl.algorithm.trainer import FedProxTrainer, VanillaTrainer  # noqa: E402

KEY = "weight"

# APPFL's trainer and aggregators call gc.collect() five times a round (appfl/misc/memory_utils.py), each a full
# collection of the torch-sized heap (0.35 s): freezing what the imports allocated leaves those collections to the
# objects of the round and the arithmetic unchanged (a round: 2.2 s -> 0.6 s on the shared machine).
gc.freeze()


class _Silent:
    """APPFL's trainer logs through ``logger.log_title`` / ``log_content``; the kit needs no log."""

    def __getattr__(self, name):
        return lambda *a, **k: None


class HalfMSE(torch.nn.Module):
    def forward(self, out, target):
        return 0.5 * torch.mean((out.view(-1) - target) ** 2)


def _model(x) -> torch.nn.Linear:
    model = torch.nn.Linear(np.size(x), 1, bias=False)
    with torch.no_grad():
        model.weight[:] = torch.tensor(np.asarray(x, dtype=np.float64))[None, :]
    return model


def _local_state(x, client, local_steps, local_step, prox=None) -> dict:
    """One client's trained state: ``VanillaTrainer``, or ``FedProxTrainer`` (its ``mu``) when ``prox`` is given."""
    data = torch.utils.data.TensorDataset(torch.tensor(client.features), torch.tensor(client.targets))
    configs = DictConfig({"mode": "step", "num_local_steps": int(local_steps), "optim": "SGD",
                          "optim_args": {"lr": float(local_step)}, "train_batch_size": client.num_examples,
                          "train_data_shuffle": False, "do_validation": False, "device": "cpu",
                          **({} if prox is None else {"mu": float(prox)})})
    trainer = (VanillaTrainer if prox is None else FedProxTrainer)(
        model=_model(x), loss_fn=HalfMSE(), metric=lambda y, p: 0.0, train_dataset=data, train_configs=configs,
        logger=_Silent())
    trainer.train()
    out = trainer.get_parameters()
    return out[0] if isinstance(out, tuple) else out


def _round(aggregator, x, clients, local_steps, local_step, weighting, prox=None):
    aggregator.global_state = {KEY: torch.tensor(np.asarray(x, dtype=np.float64))[None, :]}
    if weighting == "num_examples":
        aggregator.client_sample_size = {pos: c.num_examples for pos, c in enumerate(clients)}
    local = {pos: _local_state(x, c, local_steps, local_step, prox) for pos, c in enumerate(clients)}
    new = aggregator.aggregate(local)
    return new[KEY].detach().numpy().reshape(-1).copy()


def _configs(weighting, **extra) -> DictConfig:
    mode = "sample_size" if weighting == "num_examples" else "equal"
    return DictConfig({"client_weights_mode": mode, **extra})


def fedavg():
    """``FedAvgAggregator``: the weighted average of the clients' models, no server learning rate (checked with
    ``fixed=["server_step"]``; another server step is refused rather than ignored)."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             weighting="num_examples", **_):
        if server_step != 1.0:
            raise ValueError(f"APPFL's FedAvgAggregator has no server learning rate; server_step must be 1.0, "
                             f"got {server_step}")
        return _round(FedAvgAggregator(_model(x), _configs(weighting)), x, clients, local_steps, local_step,
                      weighting)
    return impl


def fedprox():
    """APPFL's FedProx: ``FedProxTrainer`` clients (``VanillaTrainer`` with (mu/2)||w - w^t||^2 added to each
    batch's loss, ``train_configs.mu`` = the kit's ``prox``; ``appfl/algorithm/trainer/fedprox_trainer.py``) and
    ``FedAvgAggregator``, which has no server learning rate (checked with ``fixed=["server_step"]``)."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0, server_step=1.0,
             weighting="num_examples", **_):
        if server_step != 1.0:
            raise ValueError(f"APPFL's FedAvgAggregator has no server learning rate; server_step must be 1.0, "
                             f"got {server_step}")
        return _round(FedAvgAggregator(_model(x), _configs(weighting)), x, clients, local_steps, local_step,
                      weighting, prox=prox)
    return impl


def _secure_local_state(x, client, cid, ids, local_steps, local_step, total=None) -> dict:
    """One client's masked update: ``VanillaTrainer`` with ``use_secure_agg`` (the server agent copies it from
    ``aggregator_kwargs`` into the clients' ``train_configs``) and the ``runtime_context`` a launcher gives each
    client (the round's client ids, the round, the shared secret): the delta local - global, flattened, plus the
    pairwise masks of ``appfl.privacy.SecureAggregator``."""
    data = torch.utils.data.TensorDataset(torch.tensor(client.features), torch.tensor(client.targets))
    configs = DictConfig({"mode": "step", "num_local_steps": int(local_steps), "optim": "SGD",
                          "optim_args": {"lr": float(local_step)}, "train_batch_size": client.num_examples,
                          "train_data_shuffle": False, "do_validation": False, "device": "cpu",
                          "use_secure_agg": True,
                          **({} if total is None else {"secure_agg_client_weights_mode": "num_examples"})})
    trainer = VanillaTrainer(model=_model(x), loss_fn=HalfMSE(), metric=lambda y, p: 0.0, train_dataset=data,
                             train_configs=configs, logger=_Silent(), client_id=cid)
    trainer.runtime_context = {"all_client_ids": ids, "round_id": 0, "secure_agg_secret": b"fedtheory",
                               **({} if total is None else {"global_num_examples_sum": total})}
    trainer.train()
    out = trainer.get_parameters()
    return out[0] if isinstance(out, tuple) else out


def _fedavg_secure(global_state_set: bool, weighted: bool = False):
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             weighting="num_examples" if weighted else "uniform", **_):
        want = "num_examples" if weighted else "uniform"  # the weights come from the client side, if any
        if server_step != 1.0 or weighting != want:
            raise ValueError(f"APPFL's secure FedAvg has no server learning rate, and its aggregator averages the "
                             f"masked updates with equal weights only (the masks cancel then); server_step must be "
                             f"1.0 and weighting {want!r}, got {server_step}, {weighting!r}")
        ids = [f"client{pos}" for pos in range(len(clients))]
        # aggregator_kwargs as the server agent holds them (it copies the weights mode into the clients' configs)
        kwargs = {"use_secure_agg": True, **({"secure_agg_client_weights_mode": "num_examples"} if weighted else {})}
        aggregator = FedAvgAggregator(_model(x), DictConfig(kwargs), logger=_Silent())
        if global_state_set:  # as after APPFL's first round: the aggregator holds the global model
            aggregator.global_state = {KEY: torch.tensor(np.asarray(x, dtype=np.float64))[None, :]}
        total = sum(c.num_examples for c in clients) if weighted else None
        masked = {cid: _secure_local_state(x, c, cid, ids, local_steps, local_step, total)
                  for cid, c in zip(ids, clients)}
        return aggregator.aggregate(masked)[KEY].detach().numpy().reshape(-1).astype(np.float64)
    return impl


def fedavg_secure():
    """APPFL's secure aggregation as shipped (``aggregator_kwargs.use_secure_agg = True``, its default equal
    weights): masked client deltas summed by ``FedAvgAggregator.aggregate``'s masked-payload branch
    (``appfl/algorithm/aggregator/fedavg_aggregator.py``) on a new server's aggregator, whose ``global_state`` is
    None until its first aggregation, as in APPFL's server agent for round 1."""
    return _fedavg_secure(global_state_set=False)


def fedavg_secure_weighted():
    """Secure aggregation weighted by sample size as APPFL configures it (``aggregator_kwargs``
    ``secure_agg_client_weights_mode = "num_examples"``, copied into the clients' ``train_configs``): each client
    scales its delta by n_i / ``runtime_context["global_num_examples_sum"]`` before masking
    (``vanilla_trainer.py``), and the aggregator, at its default ``client_weights_mode``, averages the masked flats
    equally; ``global_state`` set, as from round 2."""
    return _fedavg_secure(global_state_set=True, weighted=True)


def fedavg_secure_later_rounds():
    """The same with the aggregator's ``global_state`` holding the round's model, as from APPFL's second round."""
    return _fedavg_secure(global_state_set=True)


_CLASSES = {"fedadam": FedAdamAggregator, "fedyogi": FedYogiAggregator, "fedadagrad": FedAdagradAggregator,
            "fedavgm": FedAvgMAggregator}


def _server_optimizer(name: str):
    kept: dict = {}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=0.1, beta1=0.9,
             beta2=0.99, tau=1e-3, weighting="uniform", **_):
        configs = _configs(weighting, server_learning_rate=float(server_step), server_adapt_param=float(tau),
                           server_momentum_param_1=float(beta1), server_momentum_param_2=float(beta2))
        aggregator = _CLASSES[name](_model(x), configs)
        if state is not None and "m" in state:  # the kit's (or our own returned) state, where APPFL keeps it
            m = torch.tensor(np.asarray(state["m"], dtype=np.float64))[None, :]
            if name == "fedavgm":
                aggregator.v_vector = {KEY: m.clone()}
            else:
                aggregator.m_vector = {KEY: m.clone()}
                aggregator.v_vector = {KEY: torch.tensor(np.asarray(state["v"], dtype=np.float64))[None, :]}
        x_new = _round(aggregator, x, clients, local_steps, local_step, weighting)
        if name == "fedavgm":
            return x_new, {"m": aggregator.v_vector[KEY].numpy().reshape(-1).copy()}
        return x_new, {"m": aggregator.m_vector[KEY].numpy().reshape(-1).copy(),
                       "v": aggregator.v_vector[KEY].numpy().reshape(-1).copy()}
    kept["impl"] = impl
    return impl


def fedadam():
    return _server_optimizer("fedadam")


def fedyogi():
    return _server_optimizer("fedyogi")


def fedadagrad():
    return _server_optimizer("fedadagrad")


def fedavgm():
    return _server_optimizer("fedavgm")
