"""FLSim 0.1.0 through the conformance contract, run in FLSim's own virtual environment (not imported by fedtheory:
it needs torch, hydra-core and flsim). docs/frameworks.md has the command and the verdicts.

    cd fedtheory/conformance && /work/fw-venvs/flsim/bin/python remote_worker.py drivers/flsim.py:fedavg
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

FLSim 0.1.0 does not import on Python 3.11 (``flsim/common/timeout_simulator.py`` declares a dataclass instance as
a field default, which Python 3.11's dataclasses refuse), so its environment is Python 3.10.

Server: FLSim's ``SyncServer`` built from its own config (``SyncServerConfig``: ``aggregation_type``
``WEIGHTED_AVERAGE``, the default) with each server optimizer at its config's defaults, the kit's eta, betas and
tau carried by ``lr``, ``momentum`` / ``beta1``, ``beta2`` and ``eps``: ``FedAvgOptimizerConfig`` (FedAvg, SGD of
learning rate 1, the server's default), ``FedAvgWithLROptimizerConfig`` (SGD with ``momentum``: FedAvgM),
``FedAdamOptimizerConfig`` (``torch.optim.Adam``; as shipped its ``weight_decay`` is 1e-5, a second check sets 0).
A round is FLSim's: ``init_round``, one ``receive_update_from_client(Message(model=delta, weight=w))`` per client,
``step``. A client's delta is FLSim's (the model before minus after local training, ``clients/base_client.py``)
and its weight FLSim's: the number of examples it trained on, capped at its data size (``base_client.py``), so
n_k for full batches. The clients' local training is the kit's K full-batch gradient steps (FLSim's ``Client``
needs its data-provider and batch metrics machinery; its local SGD is plain ``torch.optim.SGD``).

Participants. Given the kit's participants (no ``clients_per_round``), they all take part. Given the whole population
and ``clients_per_round`` = m (the kit's sampling protocol, ``<family>.own_sampler``), the server's own
``select_clients_for_training(num_total_users=N, users_per_round=m)`` draws them, as FLSim's ``SyncTrainer`` calls it
each round, with the server's default selector ``UniformlyRandomActiveUserSelector`` (``torch.multinomial`` without
replacement); its config's ``user_selector_seed`` (default None: seeded from the clock) is set from the kit's
generator when a run starts, so a verdict is reproducible. The server, and so the selector's stream, lives for the
run. The driver reports the drawn indices as the kit's cids.

State: the server (its torch optimizer) lives in the worker between rounds; the state returned to the kit is the
optimizer's own buffers in the kit's sign (FLSim's gradient is x - mean of the clients' models = -Delta, so
torch's momentum buffer and ``exp_avg`` are -m), and a state the kit gives is loaded there.
"""
from __future__ import annotations

import numpy as np
import torch
from flsim.active_user_selectors.simple_user_selector import UniformlyRandomActiveUserSelectorConfig
from flsim.channels.message import Message
from flsim.interfaces.model import IFLModel
from flsim.optimizers.server_optimizers import (
    FedAdamOptimizerConfig,
    FedAvgOptimizerConfig,
    FedAvgWithLROptimizerConfig,
)
from flsim.servers.sync_servers import SyncServer

torch.set_default_dtype(torch.float64)


class _Model(IFLModel):
    """The kit's linear model as FLSim's ``IFLModel`` (only ``fl_get_module`` is used by the server)."""

    def __init__(self, x) -> None:
        self.module = torch.nn.Linear(np.size(x), 1, bias=False)
        with torch.no_grad():
            self.module.weight[:] = torch.tensor(np.asarray(x, dtype=np.float64))[None, :]

    def fl_forward(self, batch):
        raise NotImplementedError

    def fl_create_training_batch(self, **kwargs):
        raise NotImplementedError

    def fl_get_module(self) -> torch.nn.Module:
        return self.module

    def fl_cuda(self) -> None:
        pass

    def get_eval_metrics(self, batch):
        raise NotImplementedError

    def get_num_examples(self, batch) -> int:
        return len(batch)


def _x(model: _Model) -> np.ndarray:
    return model.module.weight.detach().numpy().reshape(-1).copy()


def _local(x, client, local_steps, local_step) -> np.ndarray:
    """K full-batch gradient steps on 1/(2m)||Z y - t||^2 from x."""
    z, t = np.asarray(client.features, dtype=np.float64), np.asarray(client.targets, dtype=np.float64)
    y = np.array(x, dtype=np.float64)
    for _ in range(int(local_steps)):
        y = y - local_step * z.T @ (z @ y - t) / len(t)
    return y


def _round(server: SyncServer, x, clients, local_steps, local_step) -> np.ndarray:
    with torch.no_grad():
        server.global_model.fl_get_module().weight[:] = torch.tensor(np.asarray(x, dtype=np.float64))[None, :]
    server.init_round()
    for client in clients:
        delta = _Model(np.asarray(x, dtype=np.float64) - _local(x, client, local_steps, local_step))  # before - after
        server.receive_update_from_client(Message(model=delta, weight=float(client.num_examples)))
    server.step()
    return _x(server.global_model)


def _server(x, optimizer, rng) -> SyncServer:
    """FLSim's ``SyncServer`` with ``optimizer`` and its default selector, seeded from the kit's generator."""
    seed = int(rng.integers(0, 2**31 - 1)) if rng is not None else None
    return SyncServer(global_model=_Model(x), server_optimizer=optimizer,
                      active_user_selector=UniformlyRandomActiveUserSelectorConfig(user_selector_seed=seed))


def _participants(server: SyncServer, clients, clients_per_round):
    """(the round's clients, the cids drawn or None): the server's own selector draws when clients_per_round is
    given (FLSim's SyncTrainer asks it for users_per_round of num_total_users each round)."""
    if clients_per_round is None:
        return list(clients), None
    idx = server.select_clients_for_training(num_total_users=len(clients), users_per_round=int(clients_per_round))
    return [clients[int(i)] for i in idx], [int(clients[int(i)].cid) for i in idx]


def fedavg():
    """``SyncServer`` with its default ``FedAvgOptimizer`` (SGD, learning rate 1): the n_k/n average of the
    clients' models, no server learning rate (checked with ``fixed=["server_step"]``; another server step is
    refused rather than ignored)."""
    kept: dict = {}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             clients_per_round=None, **_):
        if server_step != 1.0:
            raise ValueError(f"FLSim's FedAvgOptimizer has no server learning rate; server_step must be 1.0, "
                             f"got {server_step}")
        last = kept.get("last")
        # a new server per round, except along a run of its own sampler (the selector's stream lives with it)
        if clients_per_round is None or last is None or last.shape != np.shape(x) or not np.array_equal(last, x):
            kept["server"] = _server(x, FedAvgOptimizerConfig(), rng)
        chosen, drawn = _participants(kept["server"], clients, clients_per_round)
        x_new = _round(kept["server"], x, chosen, local_steps, local_step)
        kept["last"] = x_new
        return x_new if drawn is None else (x_new, None, {"drawn": drawn})
    return impl


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
        # the run goes on when the kit hands back the state returned last; otherwise a new server starts
        if not _same(state, kept.get("returned")):
            kept["server"] = _server(x, config(server_step, beta1, beta2, tau), rng)
            if state is not None:  # a state the kit made: loaded into the torch optimizer's buffers
                kept["load"] = state
        server = kept["server"]
        chosen, drawn = _participants(server, clients, clients_per_round)
        x_new = _round_with_state(server, x, chosen, local_steps, local_step, kept.pop("load", None))
        buffers = server._optimizer.state[server.global_model.fl_get_module().weight]
        if name == "fedavgm":
            kept["returned"] = {"m": -buffers["momentum_buffer"].numpy().reshape(-1).copy()}
        else:
            kept["returned"] = {"m": -buffers["exp_avg"].numpy().reshape(-1).copy(),
                                "v": buffers["exp_avg_sq"].numpy().reshape(-1).copy()}
        out = (x_new, {k: v.copy() for k, v in kept["returned"].items()})
        return out if drawn is None else (*out, {"drawn": drawn})

    def _round_with_state(server, x, clients, local_steps, local_step, load):
        if load is not None:
            weight = server.global_model.fl_get_module().weight
            as_tensor = lambda a: torch.tensor(np.asarray(a, dtype=np.float64))[None, :]  # noqa: E731
            if name == "fedavgm":
                server._optimizer.state[weight] = {"momentum_buffer": -as_tensor(load["m"])}
            else:
                server._optimizer.state[weight] = {"step": torch.tensor(0.0), "exp_avg": -as_tensor(load["m"]),
                                                   "exp_avg_sq": as_tensor(load["v"])}
        return _round(server, x, clients, local_steps, local_step)
    return impl


def fedavgm():
    return _server_optimizer("fedavgm")


def fedadam():
    """As shipped: ``FedAdamOptimizerConfig``'s default ``weight_decay`` = 1e-5."""
    return _server_optimizer("fedadam")


def fedadam_no_decay():
    """``weight_decay=0``: the option that removes the decay towards 0, which Alg. 2 does not have."""
    return _server_optimizer("fedadam", weight_decay=0.0)
