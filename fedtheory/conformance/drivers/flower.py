"""Flower (``flwr``) strategies through the conformance contract, in process, without Ray or a network.

One round drives the strategy the way Flower's server loop does: register one ``ClientProxy`` per
participating client with a ``SimpleClientManager``, ``strategy.configure_fit`` (which samples the clients
and writes the config, e.g. FedProx's ``proximal_mu``), each proxy's ``fit`` (a NumPy client: ``local_steps``
full-batch gradient steps with step ``local_step`` on its f_i, plus (mu/2)||w - w_server||^2 when the config
carries ``proximal_mu`` -- the client training Flower's FedProx documentation asks the user to write), then
``strategy.aggregate_fit``. What the kit checks is therefore Flower's server side: sampling, configuration,
aggregation and server optimiser. A fresh strategy is built every round (``initial_parameters`` = the server
model), so the server optimisers (FedAvgM, FedAdam, FedYogi, FedAdagrad) are checked on their first round by
:func:`strategy_round`; :func:`server_optimizer_round` carries their state across rounds.

Participants. Given the kit's participants (no ``clients_per_round``), the manager holds them and the strategy
keeps Flower's default ``fraction_fit=1.0``: every connected client is sampled, as Flower's defaults do. Given the
whole population and ``clients_per_round`` = m (the kit's sampling protocol, ``<family>.own_sampler``), the
manager holds all N clients and the strategy's own participation option draws: ``fraction_fit = (m + 1/2) / N``
(``num_fit_clients`` takes ``int(N fraction_fit)`` = m) and Flower's default ``min_fit_clients=2``, lowered to m
where m = 1 (a user who wants one client per round must do the same; otherwise Flower samples 2), then
``SimpleClientManager.sample``: ``random.sample`` of the available clients, uniform without replacement
(McMahan et al.'s law). Flower draws from Python's global ``random``, which the driver seeds each round from the
kit's generator (and restores afterwards, so the caller's stream is untouched): a verdict is reproducible. The
driver reports the sampled proxies' clients as ``{"drawn": [cid, ...]}``.

Zero-argument factories (``fedavg``, ``fedprox``, ``fedprox_flower_law``, ``fedavgm``, ``fedadam``, ``fedyogi``, ``fedadagrad``) serve
``benchmarks/frameworks/run.py``, which runs this module in Flower's own venv (loaded by path; it imports only
Flower and NumPy).

Install: ``pip install 'fedtheory[flower]'`` (pins ``flwr``).
"""
from __future__ import annotations

import random
from typing import Any, Callable

import numpy as np

try:
    import flwr  # noqa: F401
    from flwr.common import Code, FitRes, Status, ndarrays_to_parameters, parameters_to_ndarrays
    from flwr.server import strategy as fl_strategy
    from flwr.server.client_manager import SimpleClientManager
    from flwr.server.client_proxy import ClientProxy
except ImportError as exc:  # pragma: no cover - exercised where the extra is missing
    raise ImportError("the Flower adapter needs flwr: pip install 'fedtheory[flower]'") from exc

__all__ = ["strategy_round", "server_optimizer_round", "STRATEGIES", "FAMILY", "SERVER_OPTIMIZERS", "fedavg",
           "fedprox", "fedprox_flower_law", "fedavgm", "fedadam", "fedyogi", "fedadagrad"]

#: Strategy name -> the kit family whose properties are checked (FedAvgM/FedOpt are FedAvg with a server
#: optimiser: the FedAvg properties that do not pin the server step still apply; see docs/conformance.md).
FAMILY = {"FedAvg": "fedavg", "FedProx": "fedprox", "FedAvgM": "fedavg", "FedAdam": "fedavg", "FedYogi": "fedavg",
          "FedAdagrad": "fedavg"}
STRATEGIES = tuple(FAMILY)


class _NumPyClientProxy(ClientProxy):
    """A client that trains by full-batch gradient descent on the kit's client (its data and grad)."""

    def __init__(self, client: Any, position: int, local_steps: int, local_step: float) -> None:
        # Flower ids must be unique per round; the kit may list one client twice (the weighting check)
        super().__init__(f"{position}:{client.cid}")
        self.client, self.local_steps, self.local_step = client, local_steps, local_step

    def fit(self, ins, timeout, group_id):
        (w,) = parameters_to_ndarrays(ins.parameters)
        w = w.astype(np.float64)
        centre, mu = w.copy(), float(ins.config.get("proximal_mu", 0.0))
        for _ in range(self.local_steps):
            w = w - self.local_step * (self.client.grad(w) + mu * (w - centre))
        return FitRes(Status(Code.OK, ""), ndarrays_to_parameters([w]), self.client.num_examples, {})

    def get_properties(self, ins, timeout, group_id):  # pragma: no cover - not used by fit rounds
        raise NotImplementedError

    def get_parameters(self, ins, timeout, group_id):  # pragma: no cover
        raise NotImplementedError

    def evaluate(self, ins, timeout, group_id):  # pragma: no cover
        raise NotImplementedError

    def reconnect(self, ins, timeout, group_id):  # pragma: no cover
        raise NotImplementedError


def _participation(n: int, clients_per_round: int | None) -> dict:
    """The strategy's participation options. Without ``clients_per_round``: Flower's default ``fraction_fit=1.0``
    over the kit's participants, with ``min_fit_clients`` = ``min_available_clients`` = n (Flower's default 2
    would wait for a second client when the kit passes one). With it: ``fraction_fit`` = (m + 1/2)/N (so
    ``int(N fraction_fit)`` = m, free of rounding), Flower's default minimums (2), ``min_fit_clients`` lowered to m
    where m = 1."""
    if clients_per_round is None:
        return dict(fraction_fit=1.0, min_fit_clients=n, min_available_clients=n)
    m = int(clients_per_round)
    if not 0 < m <= n:
        raise ValueError(f"clients_per_round must be in [1, {n}] (the clients given), got {clients_per_round}")
    return dict(fraction_fit=(m + 0.5) / n, min_fit_clients=min(2, m), min_available_clients=min(2, n))


def _fit(strategy, server_round: int, x: np.ndarray, clients, local_steps: int, local_step: float,
         clients_per_round: int | None, rng) -> tuple[np.ndarray, list[int] | None]:
    """One round of Flower's server loop: register the clients, ``configure_fit`` (Flower's sampler draws there),
    the sampled proxies' ``fit``, ``aggregate_fit``. Returns the new model and, under the sampling protocol, the
    kit cids Flower sampled."""
    manager = SimpleClientManager()
    for position, c in enumerate(clients):
        manager.register(_NumPyClientProxy(c, position, local_steps, local_step))
    saved = random.getstate()
    # Flower samples with the global random module: seeded from the kit's generator for a reproducible verdict
    random.seed(int(rng.integers(0, 2**63)) if rng is not None else 0)
    try:
        pairs = strategy.configure_fit(server_round, ndarrays_to_parameters([x]), manager)
    finally:
        random.setstate(saved)
    results = [(proxy, proxy.fit(ins, None, None)) for proxy, ins in pairs]
    params, _ = strategy.aggregate_fit(server_round, results, [])
    (x_new,) = parameters_to_ndarrays(params)
    drawn = None if clients_per_round is None else [int(proxy.client.cid) for proxy, _ in pairs]
    return x_new, drawn


def _build(name: str, x: np.ndarray, n: int, hyper: dict, extra: dict, clients_per_round: int | None = None):
    common = dict(fraction_evaluate=0.0, initial_parameters=ndarrays_to_parameters([x]),
                  **_participation(n, clients_per_round), **extra)
    cls = getattr(fl_strategy, name)
    if name == "FedProx":
        return cls(proximal_mu=float(hyper["prox"]), **common)
    if name == "FedAvgM":
        return cls(server_learning_rate=float(hyper.get("server_step", 1.0)), **common)
    return cls(**common)


def strategy_round(name: str, *, law: str | None = None, **strategy_kwargs: Any) -> Callable[..., np.ndarray]:
    """The contract's round function for Flower's strategy ``name`` (one of :data:`STRATEGIES`);
    ``strategy_kwargs`` go to the strategy's constructor (e.g. ``tau`` of FedAdam/FedYogi/FedAdagrad). ``law``
    names, in the report of its own sampler, the sampling law Flower documents for the strategy where the paper's
    is another (FedProx: ``"uniform"``, FedAvg's ``random.sample``, where Li et al. draw by n_k / n): the kit then
    judges the sampler under Flower's law and says so (fedtheory.conformance.sampling).

    Note on FedOpt's ``tau`` (default 1e-9): near a zero pseudo-gradient the server step
    eta m / (sqrt(v) + tau) amplifies rounding-level updates (~1e-16) by about eta / tau = 1e8, so the kit's
    1e-8 identity tolerance is only meaningful with a larger tau (Reddi et al. 2021 tune tau in 1e-7..1e-1);
    docs/conformance.md reports both."""
    if name not in FAMILY:
        raise ValueError(f"name must be one of {', '.join(STRATEGIES)}, got {name!r}")

    def round_fn(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                 prox=0.0, weighting="num_examples", clients_per_round=None, **_):
        if local_steps is None:
            raise ValueError("the Flower adapter's clients train by local_steps gradient steps (got None)")
        if name not in ("FedAvgM",) and server_step != 1.0:
            raise ValueError(f"Flower's {name} has no server step; server_step must be 1.0, got {server_step}")
        strategy = _build(name, x, len(clients), {"prox": prox, "server_step": server_step}, strategy_kwargs,
                          clients_per_round)
        x_new, drawn = _fit(strategy, 1, x, clients, local_steps, local_step, clients_per_round, rng)
        if drawn is None:
            return x_new
        return x_new, None, {"drawn": drawn, **({"law": law} if law else {})}

    round_fn.__qualname__ = f"flwr.{name}"
    return round_fn


#: Flower's server optimisers -> the ``optimizer`` of the kit's server_optimizer family.
SERVER_OPTIMIZERS = {"FedAdam": "fedadam", "FedYogi": "fedyogi", "FedAdagrad": "fedadagrad", "FedAvgM": "fedavgm"}


def _load_server_state(strategy, name: str, state: dict) -> None:
    """Put the kit's (m, v) where Flower keeps them: FedOpt's ``m_t``/``v_t`` (lists of layers), FedAvgM's
    ``momentum_vector`` (the momentum of Flower's pseudo-gradient x - mean, i.e. -m)."""
    if name == "FedAvgM":
        strategy.momentum_vector = [-np.asarray(state["m"], dtype=np.float64)]
        return
    strategy.m_t = [np.asarray(state["m"], dtype=np.float64)]
    strategy.v_t = [np.asarray(state["v"], dtype=np.float64)]


def server_optimizer_round(name: str) -> Callable[..., tuple[np.ndarray, dict]]:
    """The contract's round function for Flower's ``FedAdam``, ``FedYogi``, ``FedAdagrad`` or ``FedAvgM`` as the
    kit's ``server_optimizer`` family: the family's ``server_step``, ``beta1``, ``beta2``, ``tau`` become the
    strategy's ``eta``/``server_learning_rate``, ``beta_1``/``server_momentum``, ``beta_2``, ``tau``.

    Flower keeps its server state in the strategy object and gets the round number from its server loop
    (``server_round`` starts at 1). Each call builds the strategy from the server model, loads the state the
    previous call returned (or the kit's given state), runs configure_fit / the clients / aggregate_fit with
    ``server_round`` = the number of rounds so far + 1, and returns Flower's own m_t, v_t (FedAvgM: minus its
    momentum vector) and the round count. A state given without a count is taken as after round 1 (Flower's
    FedAvgM ignores its momentum vector in round 1). FedAdagrad's constructor has no beta_1 (Flower fixes it
    at 0): the adapter refuses beta1 != 0 for it."""
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
        strategy = getattr(fl_strategy, name)(fraction_evaluate=0.0, initial_parameters=ndarrays_to_parameters([x]),
                                              **_participation(len(clients), clients_per_round), **extra)
        done = 0 if state is None else int(state.get("round", 1))
        if state is not None and "m" in state:
            _load_server_state(strategy, name, state)
        x_new, drawn = _fit(strategy, done + 1, x, clients, local_steps, local_step, clients_per_round, rng)
        out = {"round": done + 1}
        if name == "FedAvgM":
            if strategy.momentum_vector is not None:
                out["m"] = -np.asarray(strategy.momentum_vector[0], dtype=np.float64)
        else:
            out.update(m=np.asarray(strategy.m_t[0], dtype=np.float64), v=np.asarray(strategy.v_t[0], dtype=np.float64))
        return (x_new, out) if drawn is None else (x_new, out, {"drawn": drawn})

    round_fn.__qualname__ = f"flwr.{name}"
    return round_fn


# Zero-argument factories for benchmarks/frameworks/run.py (the out-of-process worker calls ``factory()``).
def fedavg():
    """Flower's ``FedAvg`` (McMahan et al. 2017) at its defaults: n_k weights, no server step."""
    return strategy_round("FedAvg")


def fedprox():
    """Flower's ``FedProx``: FedAvg's sampler and n_k weights; the config carries ``proximal_mu`` = the kit's prox."""
    return strategy_round("FedProx")


def fedprox_flower_law():
    """Flower's ``FedProx`` with its sampler judged under the law Flower documents for it (FedAvg's: m distinct
    clients uniformly, then the n_k-weighted average), not Li et al.'s n_k / n draws and 1/K average."""
    return strategy_round("FedProx", law="uniform")


def fedavgm():
    return server_optimizer_round("FedAvgM")


def fedadam():
    return server_optimizer_round("FedAdam")


def fedyogi():
    return server_optimizer_round("FedYogi")


def fedadagrad():
    return server_optimizer_round("FedAdagrad")
