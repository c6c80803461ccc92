"""fl4health 0.4.2 (Vector Institute; Flower 1.18) through the conformance contract, run in fl4health's own
virtual environment (not imported by fedtheory: it needs torch, flwr and fl4health). The verdicts are in
docs/frameworks.md and re-run by benchmarks/frameworks/run.py.

    cd fedtheory/conformance && /work/fw-venvs/fl4health/bin/python remote_worker.py drivers/fl4health.py:fedavg
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

One call is one Flower round without the network: the strategy's own ``initialize_parameters`` gives what the
server sends (with fl4health's packed extras: FedProx's mu, SCAFFOLD's server control variates), each
participant's fl4health client runs its own ``fit(parameters, config)`` with ``{"current_server_round": 1,
"local_steps": K}``, and the strategy's own ``aggregate_fit`` combines the ``FitRes`` -- ``BasicFedAvg``
(``weighted_aggregation`` True or False), ``FedAvgWithAdaptiveConstraint`` with ``FedProxClient``, ``Scaffold``
with ``ScaffoldClient``. What the driver supplies is what an fl4health user supplies to a ``BasicClient``
subclass: ``get_model`` (a float64 ``Linear(d, 1, bias=False)``), ``get_data_loaders`` (the client's data as one
full batch, no shuffling), ``get_optimizer`` (``torch.optim.SGD(lr = local_step)``) and ``get_criterion`` (the
kit's least squares 1/(2m)||Z x - y||^2).

Clients are fresh objects each round. SCAFFOLD's clients are keyed by the kit's client id: the kit's state
``{"c": c, "c_i": {cid: c_i}}`` is loaded into the strategy (``initial_control_variates``) and into each
participant's ``client_control_variates`` before the round and read back after it; a client with no c_i yet gets
fl4health's own initialisation (``ScaffoldClient.set_parameters`` copies the server's c). fl4health's Scaffold
adds ``fraction_fit`` times the mean of the participants' dc_i to c (Karimireddy et al. 2020, Alg. 1: |S|/N
times the mean). ``scaffold`` runs it as shipped, with the strategy's default ``fraction_fit`` (1.0); the kit's
rounds at partial participation then show whether that default is the paper's. ``scaffold_fraction`` is the
configuration that matches the paper: ``fraction_fit = |S| / N``, the participation fraction of the round.

Participants. Given the kit's participants (no ``clients_per_round``) every one of them trains: the round Flower
runs when every sampled client reports. Given the whole population and ``clients_per_round`` = m (the kit's
sampling protocol, ``<family>.own_sampler``), fl4health's own sampler draws: the strategy's ``configure_fit``
(``BasicFedAvg.configure_fit``) with fl4health's ``FixedSamplingByFractionClientManager`` holding every client
and ``fraction_fit = m / N`` (the manager "guaranteed to produce this fraction": ``int(fraction_fit * N)`` clients
by ``random.sample``, without replacement; m / N times N is exactly m for every N the kit draws). That is what a
user of fl4health configures for m of N clients per round, so both SCAFFOLD factories run this same path, and
Scaffold's c then moves by ``fraction_fit`` = |S|/N, the paper's. Python's ``random``, which the manager uses, is
seeded once per run from the kit's generator; the rounds of a run continue its stream.
"""
from __future__ import annotations

import logging
import random
from pathlib import Path

import numpy as np
import torch

torch.set_default_dtype(torch.float64)

from fl4health.client_managers.fixed_without_replacement_manager import (  # noqa: E402
    FixedSamplingByFractionClientManager,
)
from fl4health.clients.basic_client import BasicClient  # noqa: E402
from fl4health.clients.clipping_client import NumpyClippingClient  # noqa: E402
from fl4health.clients.fed_prox_client import FedProxClient  # noqa: E402
from fl4health.clients.scaffold_client import ScaffoldClient  # noqa: E402
from fl4health.strategies.basic_fedavg import BasicFedAvg  # noqa: E402
from fl4health.strategies.client_dp_fedavgm import ClientLevelDPFedAvgM  # noqa: E402
from fl4health.strategies.fedavg_with_adaptive_constraint import FedAvgWithAdaptiveConstraint  # noqa: E402
from fl4health.strategies.scaffold import Scaffold  # noqa: E402
from flwr.common import Code, FitRes, Status, ndarrays_to_parameters, parameters_to_ndarrays  # noqa: E402

# Flower logs every step and round at INFO: thousands of lines per check, none of them read
logging.getLogger("flwr").setLevel(logging.ERROR)


class LeastSquares(torch.nn.Module):
    """The kit's loss 1/(2m)||Z x - y||^2 as a criterion (prediction, target)."""

    def forward(self, pred, target):
        return 0.5 * torch.mean((pred.view(-1) - target) ** 2)


class Linear(torch.nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.lin = torch.nn.Linear(d, 1, bias=False)

    def forward(self, z):
        return self.lin(z)


def _user_client(base):
    """What an fl4health user writes: the four ``get_*`` methods of a ``BasicClient`` subclass."""

    class KitClient(base):
        def __init__(self, client, local_step: float):
            super().__init__(data_path=Path("."), metrics=[], device=torch.device("cpu"),
                             client_name=f"client-{client.cid}")
            self.kit_client, self.local_step = client, float(local_step)

        def get_data_loaders(self, config):
            data = torch.utils.data.TensorDataset(torch.tensor(self.kit_client.features),
                                                  torch.tensor(self.kit_client.targets))
            loader = torch.utils.data.DataLoader(data, batch_size=len(data), shuffle=False)
            return loader, loader

        def get_model(self, config):
            return Linear(self.kit_client.features.shape[1])

        def get_optimizer(self, config):
            return torch.optim.SGD(self.model.parameters(), lr=self.local_step)

        def get_criterion(self, config):
            return LeastSquares()

    KitClient.__name__ = f"Kit{base.__name__}"
    return KitClient


_CLIENTS = {base: _user_client(base) for base in (BasicClient, FedProxClient, ScaffoldClient,
                                                              NumpyClippingClient)}


class _Proxy:
    """Stands for Flower's ClientProxy in ``aggregate_fit``'s results (fl4health reads only the FitRes)."""

    def __init__(self, cid):
        self.cid = str(cid)


def _fit(members, parameters, local_steps, **extra):
    """Each participant's own ``fit``; returns the ``(proxy, FitRes)`` list ``aggregate_fit`` takes."""
    config = {"current_server_round": 1, "local_steps": int(local_steps), **extra}
    sent = parameters_to_ndarrays(parameters)
    results = []
    for name, member in members:
        params, n, metrics = member.fit([a.copy() for a in sent], config)
        results.append((_Proxy(name), FitRes(Status(Code.OK, ""), ndarrays_to_parameters(params), n, metrics)))
    return results


def _model(vec) -> list:
    return [np.asarray(vec, dtype=np.float64)[None, :]]


def _vector(arrays) -> np.ndarray:
    return np.asarray(arrays[0], dtype=np.float64).reshape(-1).copy()


#: The last model returned per factory: a call from another model starts a new run (its sampler is seeded then).
_LAST: dict = {}


def _draw(strategy, parameters, clients, clients_per_round, rng, fresh: bool) -> list:
    """The kit's clients fl4health's own sampler draws (module docstring, "Participants"): the strategy's
    ``configure_fit`` over a ``FixedSamplingByFractionClientManager`` holding every client, at ``fraction_fit``
    = m / N."""
    if fresh:
        random.seed(int(rng.integers(0, 2**31 - 1)))  # once per run, as a user's script seeds it
    manager = FixedSamplingByFractionClientManager()
    for position in range(len(clients)):
        manager.register(_Proxy(position))
    strategy.fraction_fit = int(clients_per_round) / len(clients)
    chosen = strategy.configure_fit(1, parameters, manager)
    return [clients[int(proxy.cid)] for proxy, _ins in chosen]


def _fresh(name, x, state=None, stateful=False) -> bool:
    """A new run: a stateful method's first round (no state), a stateless one's call from a model it did not
    return."""
    if stateful:
        return state is None
    last = _LAST.get(name)
    return last is None or last.shape != x.shape or not np.array_equal(last, x)


def _no_server_step(server_step, name):
    if server_step != 1.0:
        raise ValueError(f"fl4health's {name} has no server step; server_step must be 1.0, got {server_step}")


def fedavg(weighted: bool = True):
    """``BasicFedAvg(weighted_aggregation=weighted)`` with plain ``BasicClient`` subclasses."""
    name = f"fedavg-{weighted}"

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             clients_per_round=None, **_):
        _no_server_step(server_step, "BasicFedAvg")
        strategy = BasicFedAvg(initial_parameters=ndarrays_to_parameters(_model(x)), weighted_aggregation=weighted,
                               min_available_clients=1)
        # Flower's initialize_parameters hands the initial parameters over once (and forgets them)
        parameters, own = strategy.initialize_parameters(None), clients_per_round is not None
        if own:
            clients = _draw(strategy, parameters, clients, clients_per_round, rng, _fresh(name, x))
        members = [(pos, _CLIENTS[BasicClient](c, local_step)) for pos, c in enumerate(clients)]
        results = _fit(members, parameters, local_steps)
        aggregated, _ = strategy.aggregate_fit(1, results, [])
        x_new = _LAST[name] = _vector(parameters_to_ndarrays(aggregated))
        return (x_new, None, {"drawn": [int(c.cid) for c in clients]}) if own else x_new
    return impl


def fedavg_uniform():
    """``BasicFedAvg(weighted_aggregation=False)``: the uniform mean over participants."""
    return fedavg(weighted=False)


def fedprox(weighted: bool = True):
    """``FedAvgWithAdaptiveConstraint(initial_loss_weight = mu, adapt_loss_weight=False)`` with
    ``FedProxClient``s: mu is packed with the model by the strategy and read by the client."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0, server_step=1.0, **_):
        _no_server_step(server_step, "FedAvgWithAdaptiveConstraint")
        strategy = FedAvgWithAdaptiveConstraint(initial_parameters=ndarrays_to_parameters(_model(x)),
                                                initial_loss_weight=float(prox), adapt_loss_weight=False,
                                                weighted_aggregation=weighted, min_available_clients=1)
        members = [(pos, _CLIENTS[FedProxClient](c, local_step)) for pos, c in enumerate(clients)]
        results = _fit(members, strategy.initialize_parameters(None), local_steps)
        aggregated, _ = strategy.aggregate_fit(1, results, [])
        weights, _mu = strategy.parameter_packer.unpack_parameters(parameters_to_ndarrays(aggregated))
        return _vector(weights)
    return impl


def fedprox_uniform():
    return fedprox(weighted=False)


def scaffold(paper_fraction: bool = False):
    """``Scaffold(learning_rate = server_step)`` with ``ScaffoldClient``s keyed by cid, as shipped: the strategy's
    default ``fraction_fit``. With ``paper_fraction``, ``fraction_fit = |S|/N`` (see ``scaffold_fraction``)."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, num_clients=None,
             clients_per_round=None, **_):
        N = int(num_clients or len(clients))
        c = np.zeros(x.size) if state is None else np.asarray(state["c"], dtype=np.float64)
        c_i = {} if state is None else {int(k): np.asarray(v, dtype=np.float64) for k, v in state["c_i"].items()}
        configured = {"fraction_fit": len(clients) / N} if paper_fraction else {}
        strategy = Scaffold(initial_parameters=ndarrays_to_parameters(_model(x)),
                            initial_control_variates=ndarrays_to_parameters(_model(c)),
                            learning_rate=float(server_step), min_available_clients=1, **configured)
        parameters, own = strategy.initialize_parameters(None), clients_per_round is not None
        if own:  # fl4health's sampler at fraction_fit = m / N, in both configurations (module docstring)
            clients = _draw(strategy, parameters, clients, clients_per_round, rng,
                            _fresh("scaffold", x, state, stateful=True))
        members = []
        for kit_client in clients:
            member = _CLIENTS[ScaffoldClient](kit_client, local_step)
            if int(kit_client.cid) in c_i:
                member.client_control_variates = _model(c_i[int(kit_client.cid)])
            members.append((int(kit_client.cid), member))
        results = _fit(members, parameters, local_steps)
        strategy.aggregate_fit(1, results, [])
        for cid, member in members:
            c_i[cid] = _vector(member.client_control_variates)
        out = _vector(strategy.server_model_weights), {"c": _vector(strategy.server_control_variates), "c_i": c_i}
        return (*out, {"drawn": [cid for cid, _member in members]}) if own else out
    return impl


def scaffold_fraction():
    """Configured as the paper: ``fraction_fit = |S| / N`` for the round, so c moves by |S|/N times the mean dc_i
    (Alg. 1 line 17); a user gets this when the sampler draws exactly ``fraction_fit * N`` clients each round."""
    return scaffold(paper_fraction=True)


#: A clipping bound no update reaches (a finite one: the noise's standard deviation is multiplier x bound)
NO_CLIPPING = 1e12


def fedavgm():
    """``ClientLevelDPFedAvgM`` with its privacy switched off -- ``weight_noise_multiplier = 0``, a clipping bound
    no update reaches, no adaptive clipping, ``weighted_aggregation=False`` (its default) -- and
    ``NumpyClippingClient``s: server momentum m_t = beta m_{t-1} + mean Delta_i, x + lr m_t (Hsu et al. 2019; the
    strategy's docstring cites Andrew et al. 2021). Checked as ``server_optimizer`` with optimizer="fedavgm",
    beta1 = ``beta`` and server_step = ``server_learning_rate``. The strategy keeps m_t in ``self.m_t``: the kit's
    state ``{"m": m}`` is loaded there before the round and read back after it (v is not used). The clients see
    the Flower round the state stands for: ``current_server_round`` 1 without a state (the first round, where
    ``NumpyClippingClient.set_parameters`` takes its reference weights from the model itself), 2 with one."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, beta1=0.9,
             **_):
        strategy = ClientLevelDPFedAvgM(initial_parameters=ndarrays_to_parameters(_model(x)),
                                        server_learning_rate=float(server_step), beta=float(beta1),
                                        weight_noise_multiplier=0.0, clipping_noise_multiplier=0.0,
                                        initial_clipping_bound=NO_CLIPPING, adaptive_clipping=False,
                                        min_available_clients=1)
        if state is not None and state.get("m") is not None:
            strategy.m_t = _model(state["m"])
        members = [(pos, _CLIENTS[NumpyClippingClient](c, local_step)) for pos, c in enumerate(clients)]
        results = _fit(members, strategy.initialize_parameters(None), local_steps, adaptive_clipping=False,
                       current_server_round=1 if state is None else 2)
        strategy.aggregate_fit(1, results, [])
        return _vector(strategy.current_weights), {"m": _vector(strategy.m_t), "v": np.zeros(x.size)}
    return impl
