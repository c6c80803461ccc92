"""A stand-in for FedJAX 0.0.17 (and the bits of JAX) that drivers/fedjax.py uses, re-typed from
``fedjax/algorithms/fed_avg.py`` and ``fedjax/core/optimizers.py``: ``jax.config.update``, ``jax.grad``,
``jax.random.PRNGKey``, ``jax.numpy.asarray`` / ``mean``; ``fedjax.optimizers`` (``sgd``, ``adam``, ``yogi``,
``adagrad``, each an ``Optimizer`` with ``init(params)`` and ``apply(grads, state, params) -> (state, params)``),
``fedjax.ShuffleRepeatBatchHParams``, ``fedjax.algorithms.fed_avg.federated_averaging`` (``init`` ->
``ServerState(params, opt_state)``; ``apply`` trains each client with the client optimizer on the batches of
``shuffle_repeat_batch``, weights the deltas server - client by ``len(dataset)`` and applies the server optimizer)
and ``fedjax.algorithms.fed_prox.fed_prox`` (the same round; the client loss is the batch mean of
``per_example_loss`` plus (``proximal_weight``/2)||server - w||^2, re-typed from ``fedjax/algorithms/fed_prox.py``).
CI installs neither JAX nor FedJAX, so the driver's translation -- the data as batches, the example counts, the
hyperparameters passed to FedJAX's constructors, the ServerState kept between rounds behind a token -- is what the
test checks.

Arrays are float64 torch tensors (float32 unless ``jax_enable_x64`` was set, as in JAX). ``jax.grad`` is torch
autograd on the driver's own loss, so the loss the driver writes is what is differentiated. The server optimizers
compute Reddi et al.'s Alg. 2 (m starts at 0, v at ``initial_accumulator_value`` for adagrad and at 0 otherwise; no
bias correction; tau outside the square root) and ``sgd(momentum=b)`` optax's trace m = g + b m, unless ``SLIP``
turns on optax's documented design choices (docs/frameworks.md, FedJAX's three FAILs): ``adam_bias_correction``
(optax.adam: m / (1 - b1^t), v / (1 - b2^t)), ``yogi_optax`` (optax.yogi: both moments start at 1e-6, then bias
correction), ``adagrad_eps_inside_sqrt`` (optax.scale_by_rss: g / sqrt(v + eps)); ``prox_anchor_follows`` (the
proximal anchor is the client's current iterate, so FedProx is FedAvg) is a power check on the FedProx check.
``fedjax.client_samplers.UniformGetClientSampler`` is re-typed from ``fedjax/core/client_samplers.py`` (each round
``get_pseudo_random_state(seed, round_num).choice(client_ids, num_clients, replace=False)``, the Park-Miller
state of (seed, round)); ``sample_first`` is its slip, a sampler that always returns the first ``num_clients``
ids. ``install()`` registers the modules in ``sys.modules``; the test restores them (``NAMES``)."""
from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch

SLIP: dict = {"adam_bias_correction": False, "yogi_optax": False, "adagrad_eps_inside_sqrt": False,
              "prox_anchor_follows": False, "sample_first": False}
NAMES = ("jax", "fedjax")
_CONFIG: dict = {"jax_enable_x64": False}


def _mod(name: str, **attrs: Any) -> types.ModuleType:
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


def _map(f: Callable, *trees: dict) -> dict:
    """``jax.tree_util.tree_map`` for the flat dicts of parameters the driver uses."""
    return {k: f(*(t[k] for t in trees)) for k in trees[0]}


# --- jax ------------------------------------------------------------------------------------------------------
def asarray(a: Any) -> torch.Tensor:
    dtype = torch.float64 if _CONFIG["jax_enable_x64"] else torch.float32
    return torch.as_tensor(np.asarray(a), dtype=dtype).clone()


def grad(f: Callable) -> Callable:
    """d f / d (first argument, a dict of arrays), by torch autograd."""
    def g(params: dict, *args: Any) -> dict:
        leaves = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
        grads = torch.autograd.grad(f(leaves, *args), list(leaves.values()))
        return dict(zip(leaves, grads))
    return g


# --- fedjax.optimizers (optax underneath, here Reddi et al.'s Alg. 2 unless SLIP) -----------------------------
@dataclass
class Optimizer:
    init: Callable[[dict], Any]
    apply: Callable[[dict, Any, dict], tuple[Any, dict]]


def _adaptive(lr: float, b1: float, b2: float, eps: float, v0: float, kind: str) -> Optimizer:
    def init(params: dict) -> dict:
        start = 1e-6 if kind == "yogi" and SLIP["yogi_optax"] else 0.0
        return {"m": _map(lambda p: torch.full_like(p, start), params),
                "v": _map(lambda p: torch.full_like(p, start if kind == "yogi" else v0), params), "t": 0}

    def step(g: torch.Tensor, m: torch.Tensor, v: torch.Tensor, t: int) -> tuple:
        m = b1 * m + (1.0 - b1) * g
        g2 = g * g
        v = {"adagrad": lambda: v + g2, "adam": lambda: b2 * v + (1.0 - b2) * g2,
             "yogi": lambda: v - (1.0 - b2) * g2 * torch.sign(v - g2)}[kind]()
        mh, vh = m, v
        if (kind == "adam" and SLIP["adam_bias_correction"]) or (kind == "yogi" and SLIP["yogi_optax"]):
            mh, vh = m / (1.0 - b1 ** t), v / (1.0 - b2 ** t)
        if kind == "adagrad" and SLIP["adagrad_eps_inside_sqrt"]:
            return m, v, g / torch.sqrt(v + eps)
        return m, v, mh / (torch.sqrt(vh) + eps)

    def apply(grads: dict, state: dict, params: dict) -> tuple[dict, dict]:
        t = state["t"] + 1
        out = _map(lambda g, m, v: step(g, m, v, t), grads, state["m"], state["v"])
        new = {"m": _map(lambda o: o[0], out), "v": _map(lambda o: o[1], out), "t": t}
        return new, _map(lambda p, o: p - lr * o[2], params, out)
    return Optimizer(init, apply)


def sgd(learning_rate: float, momentum: float | None = None, nesterov: bool = False) -> Optimizer:
    def apply(grads: dict, m: dict | None, params: dict) -> tuple[dict | None, dict]:
        if momentum is not None:
            grads = m = _map(lambda g, mi: g + momentum * mi, grads, m)  # optax.trace
        return m, _map(lambda p, g: p - learning_rate * g, params, grads)
    return Optimizer(lambda params: None if momentum is None else _map(torch.zeros_like, params), apply)


def adam(learning_rate: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Optimizer:
    return _adaptive(learning_rate, b1, b2, eps, 0.0, "adam")


def yogi(learning_rate: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-3) -> Optimizer:
    return _adaptive(learning_rate, b1, b2, eps, 0.0, "yogi")


def adagrad(learning_rate: float, initial_accumulator_value: float = 0.1, eps: float = 1e-6) -> Optimizer:
    return _adaptive(learning_rate, 0.0, 0.0, eps, initial_accumulator_value, "adagrad")


# --- fedjax.algorithms.fed_avg ----------------------------------------------------------------------------------
@dataclass
class ShuffleRepeatBatchHParams:
    batch_size: int
    num_epochs: int | None = None
    num_steps: int | None = None


@dataclass
class ServerState:
    params: dict
    opt_state: Any


@dataclass
class FederatedAlgorithm:
    init: Callable
    apply: Callable


def federated_averaging(grad_fn: Callable, client_optimizer: Optimizer, server_optimizer: Optimizer,
                        client_batch_hparams: ShuffleRepeatBatchHParams) -> FederatedAlgorithm:
    def train(server_params: dict, batches: Any, rng: Any) -> dict:
        params, opt_state = server_params, client_optimizer.init(server_params)
        for batch in batches:
            opt_state, params = client_optimizer.apply(grad_fn(params, batch, rng), opt_state, params)
        return _map(lambda a, b: a - b, server_params, params)

    def apply(state: ServerState, clients: list) -> tuple[ServerState, dict]:
        total, n = _map(torch.zeros_like, state.params), 0.0
        for _cid, data, rng in clients:
            delta = train(state.params, data.shuffle_repeat_batch(client_batch_hparams), rng)
            total, n = _map(lambda s, d: s + len(data) * d, total, delta), n + len(data)
        opt_state, params = server_optimizer.apply(_map(lambda s: s / n, total), state.opt_state, state.params)
        return ServerState(params, opt_state), {}

    return FederatedAlgorithm(lambda params: ServerState(params, server_optimizer.init(params)), apply)


# --- fedjax.algorithms.fed_prox ----------------------------------------------------------------------------------
def fed_prox(per_example_loss: Callable, client_optimizer: Optimizer, server_optimizer: Optimizer,
             client_batch_hparams: ShuffleRepeatBatchHParams, proximal_weight: float) -> FederatedAlgorithm:
    """FedAvg's round with the client loss mean(per_example_loss + (proximal_weight/2)||server - w||^2); with
    ``SLIP["prox_anchor_follows"]`` the anchor is the client's current iterate (the term vanishes: FedAvg)."""
    def loss(params: dict, anchor: dict, batch: Any, rng: Any) -> torch.Tensor:
        prox = sum(torch.sum((anchor[k] - params[k]) ** 2) for k in params)
        return torch.mean(per_example_loss(params, batch, rng) + 0.5 * proximal_weight * prox)

    def grad_fn(params: dict, batch: Any, rng: Any, anchor: dict) -> dict:
        if SLIP["prox_anchor_follows"]:
            anchor = {k: v.detach().clone() for k, v in params.items()}
        return grad(loss)(params, anchor, batch, rng)

    def train(server_params: dict, batches: Any, rng: Any) -> dict:
        params, opt_state = server_params, client_optimizer.init(server_params)
        for batch in batches:
            g = grad_fn(params, batch, rng, server_params)
            opt_state, params = client_optimizer.apply(g, opt_state, params)
        return _map(lambda a, b: a - b, server_params, params)

    def apply(state: ServerState, clients: list) -> tuple[ServerState, dict]:
        total, n = _map(torch.zeros_like, state.params), 0.0
        for _cid, data, rng in clients:
            delta = train(state.params, data.shuffle_repeat_batch(client_batch_hparams), rng)
            total, n = _map(lambda s, d: s + len(data) * d, total, delta), n + len(data)
        opt_state, params = server_optimizer.apply(_map(lambda s: s / n, total), state.opt_state, state.params)
        return ServerState(params, opt_state), {}

    return FederatedAlgorithm(lambda params: ServerState(params, server_optimizer.init(params)), apply)


# --- fedjax.client_samplers ------------------------------------------------------------------------------------
def get_pseudo_random_state(seed: int, round_num: int) -> np.random.RandomState:
    """FedJAX's deterministic state of (seed, round): a Park-Miller generator stepped round_num times."""
    modulus, multiplier = 2**31 - 1, 16807
    start = np.random.RandomState(seed).randint(1, modulus - 1)
    return np.random.RandomState(pow(multiplier, round_num, modulus) * start % modulus)


class UniformGetClientSampler:
    def __init__(self, fd: Any, num_clients: int, seed: int, start_round_num: int = 0) -> None:
        self._federated_data, self._num_clients, self._seed = fd, num_clients, seed
        self._client_ids = list(fd.client_ids())
        self._round_num = start_round_num

    def sample(self) -> list:
        ids = np.array(self._client_ids, dtype=object)
        if SLIP["sample_first"]:
            chosen = ids[:self._num_clients]
        else:
            chosen = get_pseudo_random_state(self._seed, self._round_num).choice(ids, size=self._num_clients,
                                                                              replace=False)
        clients = [(cid, data, self._round_num) for cid, data in self._federated_data.get_clients(chosen)]
        self._round_num += 1
        return clients

    def set_round_num(self, round_num: int) -> None:
        self._round_num = round_num


def install() -> None:
    """Register ``jax``, ``jax.numpy``, ``jax.random``, ``fedjax``, ``fedjax.algorithms(.fed_avg)``."""
    _CONFIG["jax_enable_x64"] = False
    config = types.SimpleNamespace(update=lambda key, value: _CONFIG.__setitem__(key, value))
    optimizers = _mod("fedjax.optimizers", Optimizer=Optimizer, sgd=sgd, adam=adam, yogi=yogi, adagrad=adagrad)
    samplers = _mod("fedjax.client_samplers", UniformGetClientSampler=UniformGetClientSampler,
                    get_pseudo_random_state=get_pseudo_random_state)
    mods = {
        "jax": _mod("jax", config=config, grad=grad),
        "jax.numpy": _mod("jax.numpy", asarray=asarray, mean=torch.mean),
        "jax.random": _mod("jax.random", PRNGKey=lambda seed: seed),
        "fedjax": _mod("fedjax", optimizers=optimizers, client_samplers=samplers,
                       ShuffleRepeatBatchHParams=ShuffleRepeatBatchHParams),
        "fedjax.optimizers": optimizers,
        "fedjax.client_samplers": samplers,
        "fedjax.algorithms": _mod("fedjax.algorithms"),
        "fedjax.algorithms.fed_avg": _mod("fedjax.algorithms.fed_avg", federated_averaging=federated_averaging,
                                          ServerState=ServerState),
        "fedjax.algorithms.fed_prox": _mod("fedjax.algorithms.fed_prox", fed_prox=fed_prox),
    }
    for name, mod in mods.items():  # ``import a.b`` binds b as an attribute of a
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(mods[parent], child, mod)
    sys.modules.update(mods)
