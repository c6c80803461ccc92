"""FLSim 0.1.0 through the conformance contract, run in FLSim's own virtual environment (not imported by fedtheory:
it needs torch, hydra-core and flsim). docs/frameworks.md has the command and the verdicts.

    cd fedtheory/conformance && /work/fw-venvs/flsim/bin/python remote_worker.py drivers/flsim.py:fedavg
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

FLSim 0.1.0 does not import on Python 3.11 (``flsim/common/timeout_simulator.py`` declares a dataclass instance as
a field default, which Python 3.11's dataclasses refuse), so its environment is Python 3.10.

A round is one call of FLSim's ``SyncTrainer.train`` (``flsim/trainers/sync_trainer.py``), the loop FLSim's users
run, built as FLSim's own tests build it (``SyncTrainer(model=..., cuda_enabled=False, **config)``, the config
``SyncTrainerConfig``'s fields):

- the data: each kit client is one user of FLSim's ``FLDataProviderFromList`` (``flsim/data/data_provider.py``),
  its whole data one batch ``{"features": Z_k, "targets": t_k}``, so FLSim's ``FLUserDataFromList`` counts its
  examples and batches; the model is a float64 ``torch.nn.Linear(d, 1, bias=False)`` behind FLSim's ``IFLModel``,
  whose ``fl_forward`` returns FLSim's ``FLBatchMetrics`` with the kit's loss f_k(x) = 1/(2 n_k) ||Z_k x - t_k||^2
  (0.5 times the mean squared residual) and ``num_examples`` = the batch's rows;
- the clients: FLSim's ``Client`` (``flsim/clients/base_client.py``, the trainer's default ``ClientConfig``) with
  ``epochs`` = K and ``LocalOptimizerSGDConfig(lr=eta)``, its other defaults kept (momentum 0, weight decay 0, the
  ``ConstantLRScheduler``, no gradient clipping, batch order not shuffled, no time-out): one full batch per epoch,
  so K full-batch gradient steps, FLSim's way to run K epochs. ``Client.generate_local_update`` computes the delta
  (the model before minus after training) and the weight: min(examples processed, examples in epoch 0) = n_k;
- the server: ``SyncServerConfig`` (aggregation ``WEIGHTED_AVERAGE``, the default: sum of weight * delta over the
  sum of the weights) with a server optimizer at its config's defaults, the kit's eta, betas and tau carried by
  ``lr``, ``momentum`` / ``beta1``, ``beta2`` and ``eps``: ``FedAvgOptimizerConfig`` (FedAvg, SGD of learning
  rate 1, the server's default), ``FedAvgWithLROptimizerConfig`` (SGD with ``momentum``: FedAvgM),
  ``FedAdamOptimizerConfig`` (``torch.optim.Adam``; as shipped its ``weight_decay`` is 1e-5, a second check sets
  0), and the server's default selector ``UniformlyRandomActiveUserSelector`` (``torch.multinomial`` without
  replacement), whose config's ``user_selector_seed`` (default None: seeded from the clock) is set from the kit's
  generator when a run starts, so a verdict is reproducible;
- the trainer: ``users_per_round`` = m and ``epochs`` = 1 / ceil(N / m), so that one ``train`` call runs exactly
  one round (``SyncTrainer.stop_fl_training`` stops after round r once r / ceil(N / m) >= epochs); ``do_eval`` and
  ``report_train_metrics`` are off (they evaluate and report the model, they do not change it; ``train`` is given
  no metrics reporter), the rest at ``SyncTrainerConfig``'s defaults (``dropout_rate`` 1: no over-selection).

Two more paths through the same trainer: ``fedprox`` (the clients' ``LocalOptimizerFedProxConfig``, FLSim's FedProx)
and ``fedavg_secagg`` / ``fedavg_secagg_4bytes`` (``SyncSecAggServerConfig`` with the ``FixedPointConfig`` of
:data:`SECAGG`, FLSim's secure-aggregation simulation in fixed point); docs/frameworks.md has their verdicts.

Participants. Given the kit's participants (no ``clients_per_round``), the data provider holds them and
``users_per_round`` is their number, so the selector draws them all. Given the whole population and
``clients_per_round`` = m (the kit's sampling protocol, ``<family>.own_sampler``), the provider holds all N users
and the trainer's ``_client_selection`` asks the server's selector for m of them, as every round of a user's run
does; the provider records the users the trainer asks it for (``get_train_user``), which the driver reports as the
kit's cids. The trainer (its server, its selector's stream and its server optimizer) lives for a run.

State: the state returned to the kit is the server optimizer's own buffers in the kit's sign (FLSim's gradient is
x - mean of the clients' models = -Delta, so torch's momentum buffer and ``exp_avg`` are -m), and a state the kit
gives is loaded there.
"""
from __future__ import annotations

import numpy as np
import torch
from flsim.active_user_selectors.simple_user_selector import UniformlyRandomActiveUserSelectorConfig
from flsim.clients.base_client import ClientConfig
from flsim.data.data_provider import FLDataProviderFromList
from flsim.interfaces.model import IFLModel
from flsim.optimizers.local_optimizers import LocalOptimizerFedProxConfig, LocalOptimizerSGDConfig
from flsim.optimizers.server_optimizers import (
    FedAdamOptimizerConfig,
    FedAvgOptimizerConfig,
    FedAvgWithLROptimizerConfig,
)
from flsim.secure_aggregation.secure_aggregator import FixedPointConfig
from flsim.servers.sync_secagg_servers import SyncSecAggServerConfig
from flsim.servers.sync_servers import SyncServerConfig
from flsim.trainers.sync_trainer import SyncTrainer
from flsim.utils.simple_batch_metrics import FLBatchMetrics

torch.set_default_dtype(torch.float64)


class _Model(IFLModel):
    """The kit's linear model as FLSim's ``IFLModel``: a batch is ``{"features": Z, "targets": t}`` and its loss
    the kit's 1/(2 n) ||Z x - t||^2."""

    def __init__(self, x) -> None:
        self.module = torch.nn.Linear(np.size(x), 1, bias=False)
        _set(self, x)

    def fl_forward(self, batch) -> FLBatchMetrics:
        residual = self.module(batch["features"]).reshape(-1) - batch["targets"]
        return FLBatchMetrics(loss=0.5 * torch.mean(residual ** 2), num_examples=self.get_num_examples(batch),
                              predictions=residual.detach(), targets=batch["targets"], model_inputs=[])

    def fl_create_training_batch(self, **kwargs):
        return kwargs["batch"]

    def fl_get_module(self) -> torch.nn.Module:
        return self.module

    def fl_cuda(self) -> None:
        pass

    def get_eval_metrics(self, batch) -> FLBatchMetrics:
        with torch.no_grad():
            return self.fl_forward(batch)

    def get_num_examples(self, batch) -> int:
        return int(batch["targets"].shape[0])


def _set(model: _Model, x) -> None:
    with torch.no_grad():
        model.module.weight[:] = torch.tensor(np.asarray(x, dtype=np.float64))[None, :]


def _x(model: _Model) -> np.ndarray:
    return model.module.weight.detach().numpy().reshape(-1).copy()


class _Provider(FLDataProviderFromList):
    """FLSim's ``FLDataProviderFromList`` over the kit's clients, one full batch per user, recording the users the
    trainer asks for (``SyncTrainer.create_or_get_client_for_data`` calls ``get_train_user`` once per user it
    trains)."""

    def __init__(self, clients, model: _Model) -> None:
        users = [[{"features": torch.tensor(np.asarray(c.features, dtype=np.float64)),
                   "targets": torch.tensor(np.asarray(c.targets, dtype=np.float64))}] for c in clients]
        super().__init__(users, [], [], model)
        self.asked: list[int] = []

    def get_train_user(self, user_index: int):
        self.asked.append(int(user_index))
        return super().get_train_user(user_index)


def _trainer(x, optimizer, rng, fixedpoint: tuple[int, int] | None = None) -> SyncTrainer:
    """FLSim's ``SyncTrainer`` with FLSim's ``Client`` and ``SyncServer`` with ``optimizer`` and its default
    selector seeded from the kit's generator; with ``fixedpoint`` = (num_bytes, scaling_factor), the
    ``SyncSecAggServer`` (its config's other defaults: ``WEIGHTED_AVERAGE``, the same selector and optimizer)."""
    seed = int(rng.integers(0, 2**31 - 1)) if rng is not None else None
    selector = UniformlyRandomActiveUserSelectorConfig(user_selector_seed=seed)
    if fixedpoint is None:
        server = SyncServerConfig(server_optimizer=optimizer, active_user_selector=selector)
    else:
        num_bytes, scaling_factor = fixedpoint
        server = SyncSecAggServerConfig(server_optimizer=optimizer, active_user_selector=selector,
                                        fixedpoint=FixedPointConfig(num_bytes=num_bytes,
                                                                    scaling_factor=scaling_factor))
    return SyncTrainer(model=_Model(x), cuda_enabled=False, server=server, client=ClientConfig(), epochs=1.0,
                       eval_epoch_frequency=1.0, do_eval=False, report_train_metrics=False)


def _round(trainer: SyncTrainer, x, clients, clients_per_round, local_steps, local_optimizer):
    """One round of ``SyncTrainer.train`` from x, its clients running K epochs of ``local_optimizer`` (a local
    optimizer config): (the new model, the cids drawn or None)."""
    _set(trainer.global_model(), x)
    provider = _Provider(clients, trainer.global_model())
    m = len(clients) if clients_per_round is None else int(clients_per_round)
    trainer.cfg.users_per_round = m
    trainer.cfg.epochs = 1.0 / SyncTrainer.rounds_in_one_epoch(len(clients), m)  # exactly one round
    # the trainer builds each round's clients from this config (create_or_get_client_for_data)
    trainer.cfg.client = ClientConfig(epochs=int(local_steps), optimizer=local_optimizer)
    trainer.train(data_provider=provider, metrics_reporter=None, num_total_users=len(clients),
                  distributed_world_size=1)
    drawn = None if clients_per_round is None else [int(clients[i].cid) for i in provider.asked]
    return _x(trainer.global_model()), drawn


def _averaging(local_optimizer, fixedpoint: tuple[int, int] | None = None):
    """The default server (``FedAvgOptimizer``: SGD of learning rate 1, no server learning rate, so checked with
    ``fixed=["server_step"]``; another server step is refused rather than ignored) over clients running
    ``local_optimizer(eta, hyper)``; ``fixedpoint`` selects the secure-aggregation server."""
    kept: dict = {}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             clients_per_round=None, **hyper):
        if server_step != 1.0:
            raise ValueError(f"FLSim's FedAvgOptimizer has no server learning rate; server_step must be 1.0, "
                             f"got {server_step}")
        last = kept.get("last")
        # a new trainer per round, except along a run of its own sampler (the selector's stream lives with it)
        if clients_per_round is None or last is None or last.shape != np.shape(x) or not np.array_equal(last, x):
            kept["trainer"] = _trainer(x, FedAvgOptimizerConfig(), rng, fixedpoint)
        x_new, drawn = _round(kept["trainer"], x, clients, clients_per_round, local_steps,
                              local_optimizer(float(local_step), hyper))
        kept["last"] = x_new
        return x_new if drawn is None else (x_new, None, {"drawn": drawn})
    return impl


def _sgd(eta: float, hyper) -> LocalOptimizerSGDConfig:
    return LocalOptimizerSGDConfig(lr=eta)


def fedavg():
    """``SyncTrainer`` with its server's default ``FedAvgOptimizer`` (SGD, learning rate 1): the n_k/n average of the
    clients' models, no server learning rate."""
    return _averaging(_sgd)


def fedprox():
    """FLSim's FedProx: the clients' ``LocalOptimizerFedProxConfig(lr=eta, mu=lam)``, the default server.

    ``LocalOptimizerFedProx.step`` (``flsim/optimizers/local_optimizers.py``) is SGD on grad f_k(w) +
    mu (w - w^t), the gradient of Li et al.'s (2020) h_k(w; w^t) = f_k(w) + mu/2 ||w - w^t||^2 (eq. (2)): FLSim's
    mu is the kit's lam (``prox``) unscaled. The anchor w^t is the parameter captured at the optimizer's first
    step; the ``Client`` creates its optimizer each round (``prepare_for_training``), so it is the model the round
    started from. Momentum and weight decay are at the config's defaults (0); weights n_k as shipped."""
    return _averaging(lambda eta, hyper: LocalOptimizerFedProxConfig(lr=eta, mu=float(hyper["prox"])))


#: (num_bytes, scaling_factor) of FLSim's ``FixedPointConfig`` for each secure-aggregation factory: num_bytes = 1
#: is the config's default; scaling_factor has none (``MISSING``: the user must set it), 100 is the value FLSim's
#: own secure-aggregation tests use (``servers/tests/test_sync_secagg_servers.py``). The tolerance
#: benchmarks/frameworks/run.py checks them with is derived from the scaling factor
#: (``fedtheory.conformance.tolerances.fixed_point_rtol``).
SECAGG = {"fedavg_secagg": (1, 100), "fedavg_secagg_4bytes": (4, 100)}


def fedavg_secagg():
    """FedAvg through FLSim's ``SyncSecAggServer`` (``flsim/servers/sync_secagg_servers.py``) at
    ``FixedPointConfig``'s default width (num_bytes = 1): each client's weighted delta n_k Delta_k is multiplied by
    the scaling factor, clamped to the 8-bit range and rounded (``FixedPointConverter.to_fixedpoint``), the
    integers summed with FLSim's overflow wrap (``SecureAggregator.update_aggr_overflow_and_model``), the sum
    divided by sum n_k and the scaling factor."""
    return _averaging(_sgd, SECAGG["fedavg_secagg"])


def fedavg_secagg_4bytes():
    """The same server with num_bytes = 4 (a 32-bit range, as FLSim's SQ secure-aggregation test uses with scaling
    factor 100): the option that leaves only the rounding of the fixed point."""
    return _averaging(_sgd, SECAGG["fedavg_secagg_4bytes"])


def _same(state, returned) -> bool:
    if state is None or returned is None:
        return False
    return all(np.shape(state.get(k)) == np.shape(v) and np.array_equal(state[k], v) for k, v in returned.items())


def _server_optimizer(name: str, weight_decay: float | None = None):
    kept: dict = {}

    def config(server_step, beta1, beta2, tau):
        if name == "fedavgm":
            return FedAvgWithLROptimizerConfig(lr=float(server_step), momentum=float(beta1))
        extra = {} if weight_decay is None else {"weight_decay": weight_decay}  # None: FLSim's default
        return FedAdamOptimizerConfig(lr=float(server_step), beta1=float(beta1), beta2=float(beta2),
                                      eps=float(tau), **extra)

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=0.1, beta1=0.9,
             beta2=0.99, tau=1e-3, weighting="num_examples", clients_per_round=None, **_):
        # the run goes on when the kit hands back the state returned last; otherwise a new trainer starts
        if not _same(state, kept.get("returned")):
            kept["trainer"] = _trainer(x, config(server_step, beta1, beta2, tau), rng)
            if state is not None:  # a state the kit made: loaded into the torch optimizer's buffers
                _load(kept["trainer"].server, state)
        server = kept["trainer"].server
        x_new, drawn = _round(kept["trainer"], x, clients, clients_per_round, local_steps,
                              _sgd(float(local_step), {}))
        buffers = server._optimizer.state[server.global_model.fl_get_module().weight]
        if name == "fedavgm":
            kept["returned"] = {"m": -buffers["momentum_buffer"].numpy().reshape(-1).copy()}
        else:
            kept["returned"] = {"m": -buffers["exp_avg"].numpy().reshape(-1).copy(),
                                "v": buffers["exp_avg_sq"].numpy().reshape(-1).copy()}
        out = (x_new, {k: v.copy() for k, v in kept["returned"].items()})
        return out if drawn is None else (*out, {"drawn": drawn})

    def _load(server, load) -> None:
        weight = server.global_model.fl_get_module().weight
        as_tensor = lambda a: torch.tensor(np.asarray(a, dtype=np.float64))[None, :]  # noqa: E731
        if name == "fedavgm":
            server._optimizer.state[weight] = {"momentum_buffer": -as_tensor(load["m"])}
        else:
            server._optimizer.state[weight] = {"step": torch.tensor(0.0), "exp_avg": -as_tensor(load["m"]),
                                               "exp_avg_sq": as_tensor(load["v"])}
    return impl


def fedavgm():
    return _server_optimizer("fedavgm")


def fedadam():
    """As shipped: ``FedAdamOptimizerConfig``'s default ``weight_decay`` = 1e-5."""
    return _server_optimizer("fedadam")


def fedadam_no_decay():
    """``weight_decay=0``: the option that removes the decay towards 0, which Alg. 2 does not have."""
    return _server_optimizer("fedadam", weight_decay=0.0)
