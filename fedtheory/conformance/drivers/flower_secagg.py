"""Flower 1.42's secure aggregation (SecAgg+) through the conformance contract, run in its own virtual environment
(``flwr[simulation]==1.42.0``; not imported by fedtheory). docs/frameworks.md has the command and the verdict.

    cd fedtheory/conformance && /work/fw-venvs/flower-secagg/bin/python remote_worker.py drivers/flower_secagg.py:fedavg
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

One call is one round of what Flower's secure-aggregation example (``examples/flower-secure-aggregation``) runs: a
``ServerApp`` whose main builds Flower's ``FedAvg`` (its defaults, with ``initial_parameters`` = the round's model,
``fraction_evaluate=0`` and ``min_fit_clients = min_available_clients`` = the round's clients, so every connected
node is sampled, as the example's ``fraction_fit=1.0``), a ``LegacyContext`` with ``ServerConfig(num_rounds=1)``,
and ``DefaultWorkflow(fit_workflow=SecAggPlusWorkflow(num_shares=3, reconstruction_threshold=2))`` (the example's
num-shares and reconstruction-threshold; ``max_weight``, ``clipping_range``, ``quantization_range`` and
``modulus_range`` at the class's defaults 1000, 8.0, 2^22, 2^32); and a ``ClientApp`` with ``mods=[secaggplus_mod]``
whose ``NumPyClient.fit`` trains the kit's client (partition-id k = the round's k-th client) by K full-batch gradient
steps and returns ``(parameters, num_examples, {})``. The new model is the one the workflow writes to the
``LegacyContext`` after ``aggregate_fit``. Everything between the two, the four SecAgg+ stages, the clients'
weighting by num_examples / max_weight, clipping, stochastic quantization, masking, unmasking and Flower's FedAvg,
is Flower's own code.

Two runtimes deliver the messages:

- ``fedavg_simulation``: Flower's simulation engine, ``flwr.simulation.run_simulation`` with the Ray backend (how
  Flower's users run the example locally), one SuperNode per client. It starts Ray for each round (about 10 s on
  the shared machine), so a full check takes hours; run.py runs it with few cases.
- ``fedavg``: a grid in this process (:class:`LocalGrid`) that gives each message to the destination node's
  ``ClientApp`` (with that node's persistent ``Context``, where ``secaggplus_mod`` keeps its state between
  stages) and returns the reply, which is all a SuperLink does for this workflow when no node drops out. Same
  ServerApp main and ClientApp as above.

Seeds: ``quantize`` rounds stochastically with NumPy's global generator and the setup stage shuffles the nodes with
``random``; both are seeded from the kit's generator in process (the Ray actors draw their own).
"""
from __future__ import annotations

import copy
import random
import uuid

import flwr.compat.common.recorddict_compat as compat
import numpy as np
from flwr.app import Context, Message, RecordDict
from flwr.client import ClientApp, NumPyClient
from flwr.client.mod import secaggplus_mod
from flwr.common import ndarrays_to_parameters, parameters_to_ndarrays
from flwr.common.constant import SUPERLINK_NODE_ID
from flwr.server import LegacyContext, ServerApp, ServerConfig
from flwr.server.strategy import FedAvg
from flwr.server.workflow import DefaultWorkflow, SecAggPlusWorkflow
from flwr.server.workflow.constant import MAIN_PARAMS_RECORD
from flwr.serverapp.grid import Grid
from flwr.supercore.run import Run
from flwr.supercore.task_identity import TaskIdentity

#: The SecAgg+ configuration of Flower's example (pyproject.toml: num-shares = 3, reconstruction-threshold = 2);
#: every other setting is SecAggPlusWorkflow's default.
WORKFLOW = {"num_shares": 3, "reconstruction_threshold": 2}


class _GD(NumPyClient):
    """The kit's client trained by K full-batch gradient steps of size eta (the translation of the kit's problem)."""

    def __init__(self, client, local_steps: int, local_step: float) -> None:
        self.client, self.local_steps, self.local_step = client, local_steps, local_step

    def fit(self, parameters, config):
        w = np.asarray(parameters[0], dtype=np.float64)
        for _ in range(self.local_steps):
            w = w - self.local_step * self.client.grad(w)
        return [w], self.client.num_examples, {}


def _client_app(clients, local_steps: int, local_step: float) -> ClientApp:
    def client_fn(context: Context):
        return _GD(clients[int(context.node_config["partition-id"])], local_steps, local_step).to_client()

    return ClientApp(client_fn=client_fn, mods=[secaggplus_mod])


def _server_main(x: np.ndarray, n: int, out: dict):
    """The ServerApp's main: Flower's FedAvg under DefaultWorkflow with SecAggPlusWorkflow as its fit workflow."""

    def main(grid: Grid, context: Context) -> None:
        strategy = FedAvg(fraction_evaluate=0.0, min_fit_clients=n, min_available_clients=n,
                          initial_parameters=ndarrays_to_parameters([x]))
        legacy = LegacyContext(context=context, config=ServerConfig(num_rounds=1), strategy=strategy)
        DefaultWorkflow(fit_workflow=SecAggPlusWorkflow(**WORKFLOW))(grid, legacy)
        params = compat.arrayrecord_to_parameters(legacy.state.array_records[MAIN_PARAMS_RECORD], keep_input=True)
        out["x"] = np.asarray(parameters_to_ndarrays(params)[0], dtype=np.float64)

    return main


class LocalGrid(Grid):
    """Delivers a copy of each message to its node's ClientApp in this process and keeps the reply until it is
    pulled."""

    def __init__(self, app: ClientApp, node_ids: list[int]) -> None:
        self._run = Run.create_empty(1)
        self.app = app
        self.contexts = {nid: Context(run_id=1, node_id=nid, node_config={"partition-id": k, "num-partitions":
                                                                            len(node_ids)},
                                      state=RecordDict(), run_config={}) for k, nid in enumerate(node_ids)}
        self.replies: dict[str, Message] = {}

    def set_run(self, run: Run) -> None:
        self._run = run

    @property
    def run(self) -> Run:
        return self._run

    def create_message(self, content, message_type, dst_node_id, group_id, ttl=None) -> Message:
        return Message(content, dst_node_id, message_type, ttl=ttl, group_id=group_id)

    def get_node_ids(self):
        return list(self.contexts)

    def push_messages(self, messages):
        ids = []
        for msg in messages:
            msg.metadata.__dict__["_message_id"] = str(uuid.uuid4())  # as Flower's InMemoryGrid does
            # a node receives its own copy, as over the wire (the setup stage sends one RecordDict to every node,
            # and secaggplus_mod pops the stage key from what it receives)
            delivered = copy.deepcopy(msg)
            self.replies[msg.metadata.message_id] = self.app(delivered, self.contexts[msg.metadata.dst_node_id])
            ids.append(msg.metadata.message_id)
        return ids

    def pull_messages(self, message_ids):
        return [self.replies.pop(i) for i in message_ids if i in self.replies]

    def send_and_receive(self, messages, *, timeout=None):
        return self.pull_messages(self.push_messages(messages))


def _round(x, clients, local_steps, local_step, rng, simulation: bool) -> np.ndarray:
    if local_steps is None:
        raise ValueError("the Flower SecAgg+ driver's clients train by local_steps gradient steps (got None)")
    x = np.asarray(x, dtype=np.float64)
    out: dict = {}
    main = _server_main(x, len(clients), out)
    client_app = _client_app(list(clients), int(local_steps), float(local_step))
    if simulation:
        import sys

        from flwr.simulation import run_simulation
        from ray import cloudpickle

        # this module is loaded by path (remote_worker.py), so Ray's actors cannot import it by name: its client
        # app travels by value, or every ClientApp fails to unpickle and the workflow halts with no update
        cloudpickle.register_pickle_by_value(sys.modules[__name__])

        server_app = ServerApp()
        server_app.main()(main)
        run_simulation(server_app=server_app, client_app=client_app, num_supernodes=len(clients),
                       backend_config={"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
                                       "init_args": {"log_to_driver": False, "include_dashboard": False}})
    else:
        seed = int(rng.integers(2**31)) if rng is not None else 0
        np.random.seed(seed)
        random.seed(seed)
        node_ids = [int(v) for v in np.random.default_rng(seed).choice(2**40, size=len(clients), replace=False) + 1]
        # the identity Flower's ServerApp process takes (flwr/superlink/runtime/run_serverapp.py)
        TaskIdentity.task_id, TaskIdentity.run_id, TaskIdentity.node_id = 1, 1, SUPERLINK_NODE_ID
        main(LocalGrid(client_app, node_ids), Context(run_id=1, node_id=0, node_config={}, state=RecordDict(),
                                                       run_config={}))
    if "x" not in out:
        raise RuntimeError("Flower's ServerApp ended without a model")
    return out["x"].reshape(np.shape(x))


def _factory(simulation: bool):
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, **_):
        if server_step != 1.0:
            raise ValueError(f"Flower's FedAvg has no server step; server_step must be 1.0, got {server_step}")
        return _round(x, clients, local_steps, local_step, rng, simulation)

    impl.__qualname__ = "flwr.SecAggPlusWorkflow+FedAvg" + (" (run_simulation)" if simulation else "")
    return impl


def fedavg():
    """Flower's FedAvg under SecAggPlusWorkflow, messages delivered in process (:class:`LocalGrid`)."""
    return _factory(simulation=False)


def fedavg_simulation():
    """Flower's FedAvg under SecAggPlusWorkflow in Flower's simulation engine (run_simulation, Ray backend)."""
    return _factory(simulation=True)
