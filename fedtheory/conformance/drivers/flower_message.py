"""Flower 1.42's Message-API strategies (``flwr.serverapp.strategy``) through the conformance contract, in process.

Flower 1.42 ships two strategy APIs. ``drivers/flower.py`` checks the legacy ``flwr.server.strategy`` classes; this
module checks the ones Flower's documentation now builds ("Use strategies", "Upgrade to Message API", the
quickstarts): ``flwr.serverapp.strategy.FedAvg``, ``FedProx``, ``FedAvgM``, ``FedAdam``, ``FedYogi``, ``FedAdagrad``,
which are separate implementations (``flwr/serverapp/strategy/fedavg.py``, ``fedopt.py``, ...).

One call is one round of ``Strategy.start``'s training loop (``flwr/serverapp/strategy/strategy.py``):
``strategy.configure_train(server_round, arrays, config, grid)`` (the strategy samples node ids from the grid and
writes the config, e.g. FedProx's ``proximal-mu``), ``grid.send_and_receive`` of those Messages, and
``strategy.aggregate_train(server_round, replies)``. The grid (``LocalGrid``, the one ``drivers/flower_secagg.py``
runs SecAgg+ on, loaded by path) hands a copy of each Message to a ``ClientApp`` in this process, as an in-memory
SuperLink would; the ClientApp is the quickstart's shape: its
``@app.train()`` function reads ``msg.content["arrays"]`` and ``msg.content["config"]``, trains the kit's client by
K full-batch gradient steps of size eta (plus (mu/2)||w - w_server||^2 when the config carries ``proximal-mu``, the
term Flower's FedProx docstring asks the client to add) and replies
``RecordDict({"arrays": ArrayRecord, "metrics": MetricRecord({"num-examples": n_k})})``. Evaluation is off
(``fraction_evaluate=0``): it does not touch the model. Everything else is the strategy's default: the kit's
hyperparameters translate to the constructor's (``proximal_mu``; ``eta``, ``beta_1``, ``beta_2``, ``tau``;
``server_learning_rate``, ``server_momentum``).

Participants. Given the kit's participants (no ``clients_per_round``): the defaults ``fraction_train=1.0``,
``min_train_nodes=2``, ``min_available_nodes=2``, the two minimums lowered to n where the kit passes one client
(otherwise ``sample_nodes`` waits for a second node forever). Given the whole population and ``clients_per_round``
= m (the kit's sampling protocol, ``<family>.own_sampler``): ``fraction_train = (m + 1/2)/N`` (``configure_train``
takes ``int(N fraction_train)`` = m), the default minimums (2), lowered to m where m = 1, as a user must; then
``strategy_utils.sample_nodes``: ``random.sample`` of the grid's node ids, uniform without replacement (McMahan et
al.'s law). Python's global ``random`` is seeded each round from the kit's generator and restored afterwards. The
driver reports the sampled nodes' clients as ``{"drawn": [cid, ...]}``. Node ids are 1..N in the kit's order
(Flower's are random 64-bit integers; only their order in ``get_node_ids`` matters to ``random.sample``).

Zero-argument factories (``fedavg``, ``fedprox``, ``fedprox_flower_law``, ``fedavgm``, ``fedadam``, ``fedyogi``,
``fedadagrad``) serve ``benchmarks/frameworks/run.py`` (entry ``flower-message``), which loads this module by path
in Flower's venv (it imports only Flower and NumPy).

Install: ``pip install 'fedtheory[flower]'`` (pins ``flwr``).
"""
from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from typing import Any, Callable

import numpy as np

try:
    from flwr.app import Array, ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
    from flwr.clientapp import ClientApp
    from flwr.common.constant import SUPERLINK_NODE_ID
    from flwr.serverapp import strategy as fl_strategy
    from flwr.supercore.task_identity import TaskIdentity
except ImportError as exc:  # pragma: no cover - exercised where the extra is missing
    raise ImportError("the Flower Message-API driver needs flwr: pip install 'fedtheory[flower]'") from exc

# The grid that delivers Messages in this process is drivers/flower_secagg.py's: loaded by path (drivers are loaded
# by path inside a framework's venv, where fedtheory is not a package), as drivers/fedml_distributed.py loads fedml.py
_spec = importlib.util.spec_from_file_location("flower_secagg_driver", Path(__file__).with_name("flower_secagg.py"))
_secagg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_secagg)
LocalGrid = _secagg.LocalGrid

__all__ = ["strategy_round", "server_optimizer_round", "FAMILY", "SERVER_OPTIMIZERS", "client_app", "fedavg",
           "fedprox", "fedprox_flower_law", "fedavgm", "fedadam", "fedyogi", "fedadagrad"]

#: Strategy name -> the kit family checked by :func:`strategy_round`.
FAMILY = {"FedAvg": "fedavg", "FedProx": "fedprox"}
#: Flower's server optimisers -> the ``optimizer`` of the kit's server_optimizer family.
SERVER_OPTIMIZERS = {"FedAdam": "fedadam", "FedYogi": "fedyogi", "FedAdagrad": "fedadagrad", "FedAvgM": "fedavgm"}
KEY = "w"  # the one array of the ArrayRecord (the quickstart's are a state_dict's names)


def client_app(clients, local_steps: int, local_step: float) -> ClientApp:
    """The quickstart's ClientApp around the kit's clients: node id k + 1 trains ``clients[k]``."""
    app = ClientApp()

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        client = clients[context.node_id - 1]
        w = np.asarray(msg.content["arrays"][KEY].numpy(), dtype=np.float64)
        centre, mu = w.copy(), float(msg.content["config"].get("proximal-mu", 0.0))
        for _ in range(local_steps):
            w = w - local_step * (client.grad(w) + mu * (w - centre))
        content = RecordDict({"arrays": ArrayRecord({KEY: Array(w)}),
                              "metrics": MetricRecord({"num-examples": int(client.num_examples)})})
        return Message(content=content, reply_to=msg)

    return app


def _participation(n: int, clients_per_round: int | None) -> dict:
    """The strategy's sampling options: its defaults, the minimums lowered where fewer clients exist (see the
    module docstring); under the sampling protocol ``fraction_train`` = (m + 1/2)/N."""
    if clients_per_round is None:
        return dict(fraction_train=1.0, min_train_nodes=min(2, n), min_available_nodes=min(2, n))
    m = int(clients_per_round)
    if not 0 < m <= n:
        raise ValueError(f"clients_per_round must be in [1, {n}] (the clients given), got {clients_per_round}")
    return dict(fraction_train=(m + 0.5) / n, min_train_nodes=min(2, m), min_available_nodes=min(2, n))


def _train_round(strategy, server_round: int, x: np.ndarray, clients, local_steps: int, local_step: float,
                 clients_per_round: int | None, rng) -> tuple[np.ndarray, list[int] | None]:
    """``Strategy.start``'s training step for one round; returns the new model and, under the sampling protocol,
    the kit cids the strategy sampled."""
    if local_steps is None:
        raise ValueError("the Flower Message-API driver's clients train by local_steps gradient steps (got None)")
    x = np.asarray(x, dtype=np.float64)
    grid = LocalGrid(client_app(list(clients), int(local_steps), float(local_step)),
                     list(range(1, len(clients) + 1)))
    # the identity Flower's ServerApp process takes (flwr/superlink/runtime/run_serverapp.py)
    TaskIdentity.task_id, TaskIdentity.run_id, TaskIdentity.node_id = 1, 1, SUPERLINK_NODE_ID
    saved = random.getstate()
    # sample_nodes draws with the global random module: seeded from the kit's generator for a reproducible verdict
    random.seed(int(rng.integers(0, 2**63)) if rng is not None else 0)
    try:
        messages = list(strategy.configure_train(server_round, ArrayRecord({KEY: Array(x)}), ConfigRecord(), grid))
    finally:
        random.setstate(saved)
    arrays, _ = strategy.aggregate_train(server_round, grid.send_and_receive(messages))
    if arrays is None:
        raise RuntimeError("Flower's aggregate_train returned no arrays")
    drawn = None if clients_per_round is None else [int(clients[m.metadata.dst_node_id - 1].cid) for m in messages]
    return np.asarray(arrays[KEY].numpy(), dtype=np.float64).reshape(np.shape(x)), drawn


def strategy_round(name: str, *, law: str | None = None) -> Callable[..., Any]:
    """The contract's round function for Flower's Message-API ``FedAvg`` or ``FedProx`` (:data:`FAMILY`). ``law``
    names, in the report of its own sampler, the sampling law Flower documents where the paper's is another
    (FedProx: ``"uniform"``, FedAvg's ``random.sample``; fedtheory.conformance.sampling)."""
    if name not in FAMILY:
        raise ValueError(f"name must be one of {', '.join(FAMILY)}, got {name!r}")

    def round_fn(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, prox=0.0,
                 clients_per_round=None, **_):
        if server_step != 1.0:
            raise ValueError(f"Flower's {name} has no server step; server_step must be 1.0, got {server_step}")
        extra = dict(proximal_mu=float(prox)) if name == "FedProx" else {}
        strategy = getattr(fl_strategy, name)(fraction_evaluate=0.0, **_participation(len(clients), clients_per_round),
                                              **extra)
        x_new, drawn = _train_round(strategy, 1, x, clients, local_steps, local_step, clients_per_round, rng)
        if drawn is None:
            return x_new
        return x_new, None, {"drawn": drawn, **({"law": law} if law else {})}

    round_fn.__qualname__ = f"flwr.serverapp.{name}"
    return round_fn


def server_optimizer_round(name: str) -> Callable[..., Any]:
    """The contract's round function for Flower's Message-API ``FedAdam``, ``FedYogi``, ``FedAdagrad`` or
    ``FedAvgM`` as the kit's ``server_optimizer`` family (``server_step``, ``beta1``, ``beta2``, ``tau`` become
    ``eta``/``server_learning_rate``, ``beta_1``/``server_momentum``, ``beta_2``, ``tau``).

    The strategy keeps its state in the object (FedOpt's ``m_t``/``v_t``, dicts by array key; FedAvgM's
    ``momentum_vector``, the momentum of its pseudo-gradient x - mean, i.e. -m) and takes the round number from
    ``start``'s loop (from 1). Each call builds the strategy, loads the state the previous call returned, runs the
    round with ``server_round`` = the rounds so far + 1 and returns Flower's state and the round count. FedAdagrad
    has no beta_1 (fixed at 0): beta1 != 0 is refused."""
    if name not in SERVER_OPTIMIZERS:
        raise ValueError(f"name must be one of {', '.join(SERVER_OPTIMIZERS)}, got {name!r}")

    def round_fn(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=0.1, beta1=0.9,
                 beta2=0.99, tau=1e-3, initial_v=0.0, clients_per_round=None, **_):
        if initial_v != 0.0:
            raise ValueError(f"Flower starts v at 0 (np.zeros_like); initial_v must be 0.0, got {initial_v}")
        if name == "FedAdagrad" and beta1 != 0.0:
            raise ValueError(f"Flower's FedAdagrad has no beta_1 (fixed at 0.0); beta1 must be 0.0, got {beta1}")
        if name == "FedAvgM":
            extra = dict(server_learning_rate=server_step, server_momentum=beta1)
        elif name == "FedAdagrad":
            extra = dict(eta=server_step, tau=tau)
        else:
            extra = dict(eta=server_step, beta_1=beta1, beta_2=beta2, tau=tau)
        strategy = getattr(fl_strategy, name)(fraction_evaluate=0.0, **_participation(len(clients), clients_per_round),
                                              **extra)
        done = 0 if state is None else int(state.get("round", 1))
        if state is not None and "m" in state:
            if name == "FedAvgM":
                strategy.momentum_vector = [-np.asarray(state["m"], dtype=np.float64)]
            else:
                strategy.m_t = {KEY: np.asarray(state["m"], dtype=np.float64)}
                strategy.v_t = {KEY: np.asarray(state["v"], dtype=np.float64)}
        x_new, drawn = _train_round(strategy, done + 1, x, clients, local_steps, local_step, clients_per_round, rng)
        out: dict = {"round": done + 1}
        if name == "FedAvgM":
            if strategy.momentum_vector is not None:
                out["m"] = -np.asarray(strategy.momentum_vector[0], dtype=np.float64)
        else:
            out.update(m=np.asarray(strategy.m_t[KEY], dtype=np.float64),
                       v=np.asarray(strategy.v_t[KEY], dtype=np.float64))
        return (x_new, out) if drawn is None else (x_new, out, {"drawn": drawn})

    round_fn.__qualname__ = f"flwr.serverapp.{name}"
    return round_fn


# Zero-argument factories for benchmarks/frameworks/run.py (the out-of-process worker calls ``factory()``).
def fedavg():
    """``flwr.serverapp.strategy.FedAvg`` (McMahan et al. 2017) at its defaults: num-examples weights."""
    return strategy_round("FedAvg")


def fedprox():
    """``flwr.serverapp.strategy.FedProx``: FedAvg's sampler and weights; ``proximal-mu`` = the kit's prox."""
    return strategy_round("FedProx")


def fedprox_flower_law():
    """``FedProx`` with its sampler judged under the law Flower documents (FedAvg's), not Li et al.'s."""
    return strategy_round("FedProx", law="uniform")


def fedavgm():
    return server_optimizer_round("FedAvgM")


def fedadam():
    return server_optimizer_round("FedAdam")


def fedyogi():
    return server_optimizer_round("FedYogi")


def fedadagrad():
    return server_optimizer_round("FedAdagrad")
