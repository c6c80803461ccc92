"""FedJAX 0.0.17 through the conformance contract, run in FedJAX's own virtual environment (not imported by
fedtheory: it needs jax and fedjax). docs/frameworks.md has the command and the verdicts.

    cd fedtheory/conformance && /work/fw-venvs/fedjax/bin/python remote_worker.py drivers/fedjax.py:fedavg
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

``fedjax.algorithms.fed_avg.federated_averaging(grad_fn, client_optimizer, server_optimizer, hparams)`` is the
algorithm: its ``init`` and ``apply`` run one round, clients train with ``fedjax.optimizers.sgd(eta_l)``, the
server averages the deltas weighted by the clients' example counts and applies ``server_optimizer`` to them
(FedJAX's deltas are server - client, a gradient). Server optimizers, FedJAX's own constructors:
``sgd(eta)`` (FedAvg), ``sgd(eta, momentum=beta1)`` (FedAvgM), ``adam(eta, b1, b2, eps=tau)``,
``yogi(eta, b1, b2, eps=tau)``, ``adagrad(eta, initial_accumulator_value=v_-1, eps=tau)``. The driver supplies
what a user supplies: ``grad_fn`` of the kit's least squares 1/(2m)||Z x - y||^2 (float64: jax_enable_x64),
the parameters ``{"w": x}`` and the client data as a dataset whose ``shuffle_repeat_batch`` yields K full
batches (FedJAX's own batching shuffles and cannot give K full batches to clients of different sizes). The
server optimizer's state (FedJAX's ``ServerState``) lives in the worker between rounds; the kit gets an opaque
token for it. FedProx: ``fedjax.algorithms.fed_prox.fed_prox`` with a ``per_example_loss`` and ``sgd(eta)`` on the
server.

Participants. FedJAX's algorithms take the round's clients from the user's loop; FedJAX's own sampling is a
``fedjax.client_samplers.ClientSampler`` whose ``sample()`` output goes straight into ``apply``. Given the kit's
participants (no ``clients_per_round``), they are the round's clients. Given the whole population and
``clients_per_round`` = m (the kit's sampling protocol, ``<family>.own_sampler``; FedAvg and the server
optimizers), ``UniformGetClientSampler(fd, num_clients=m, seed)`` draws, the sampler ``run_federated_experiment``
(``fedjax/training/federated_experiment.py``) works with, started at round 1 as that loop starts it
(``set_round_num(1)``): each round ``np.random.RandomState(...).choice(client_ids, m, replace=False)`` from a
state derived from (seed, round number), m distinct clients uniformly. ``fd`` is the kit's population as FedJAX's
``FederatedData`` is read by the sampler (``client_ids()``, ``get_clients(ids)``); the seed is drawn from the kit's
generator when a run starts, and the sampler lives for the run. FedJAX's other sampler,
``UniformShuffledClientSampler``, walks a stream of shuffled passes over the clients (no ``set_round_num``, so
``run_federated_experiment`` cannot use it) and is not driven: its law is not the kit's (docs/frameworks.md,
FedJAX). FedProx is not offered the protocol: the kit's ``fedprox.own_sampler`` judges Li et al.'s sampling by
n_k/n with replacement, which no FedJAX sampler implements.
"""
from __future__ import annotations

import jax

jax.config.update("jax_enable_x64", True)

import fedjax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from fedjax.algorithms import fed_avg, fed_prox  # noqa: E402


def _loss(params, Z, y):
    return 0.5 * jnp.mean((Z @ params["w"] - y) ** 2)


def _grad_fn(params, batch, rng):
    return jax.grad(_loss)(params, batch["x"], batch["y"])


def _per_example_loss(params, batch, rng):
    """FedProx's ``per_example_loss``: 1/2 (z_j . x - y_j)^2, whose mean is the kit's least squares."""
    return 0.5 * (batch["x"] @ params["w"] - batch["y"]) ** 2


class _Population:
    """The kit's population as ``UniformGetClientSampler`` reads FedJAX's ``FederatedData``: ``client_ids()`` and
    ``get_clients(ids)`` -> (id, dataset) pairs."""

    def __init__(self, clients, steps):
        self.data = {int(c.cid): FullBatches(c, steps) for c in clients}

    def client_ids(self):
        return iter(list(self.data))

    def get_clients(self, client_ids):
        for cid in client_ids:
            yield cid, self.data[int(cid)]


class FullBatches:
    """A client dataset: ``len`` = m, and ``shuffle_repeat_batch`` -> K full batches (in order)."""

    def __init__(self, client, steps):
        self.batch = {"x": jnp.asarray(client.features), "y": jnp.asarray(client.targets)}
        self.m, self.steps = client.num_examples, steps

    def __len__(self):
        return self.m

    def shuffle_repeat_batch(self, hparams):
        return [self.batch] * self.steps


def _server(name, server_step, beta1, beta2, tau, initial_v):
    opt = fedjax.optimizers
    if name == "fedavg":
        return opt.sgd(server_step)
    if name == "fedavgm":
        return opt.sgd(server_step, momentum=beta1)
    if name == "fedadam":
        return opt.adam(server_step, b1=beta1, b2=beta2, eps=tau)
    if name == "fedyogi":
        return opt.yogi(server_step, b1=beta1, b2=beta2, eps=tau)
    if beta1 != 0.0:
        raise ValueError(f"fedjax.optimizers.adagrad has no momentum; beta1 must be 0.0, got {beta1}")
    return opt.adagrad(server_step, initial_accumulator_value=initial_v, eps=tau)


def _make(name: str):
    kept: dict = {}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, beta1=0.9,
             beta2=0.99, tau=1e-3, initial_v=0.0, prox=1.0, clients_per_round=None, **_):
        batching = fedjax.ShuffleRepeatBatchHParams(batch_size=1)
        if name == "fedprox":  # fed_prox.fed_prox: FedAvg's round with (prox/2)||w - x||^2 in the client loss
            algorithm = fed_prox.fed_prox(_per_example_loss, fedjax.optimizers.sgd(local_step),
                                          fedjax.optimizers.sgd(server_step), batching, proximal_weight=float(prox))
        else:
            algorithm = fed_avg.federated_averaging(_grad_fn, fedjax.optimizers.sgd(local_step),
                                                    _server(name, server_step, beta1, beta2, tau, initial_v),
                                                    batching)
        token = None if state is None else state.get("token")
        stateless = name in ("fedavg", "fedprox")
        own = clients_per_round is not None and name != "fedprox"
        if token is None or kept.get("token") != token:
            server_state = algorithm.init({"w": jnp.asarray(x)})
        else:
            server_state = kept["state"]
        if own:
            # a new run: a stateless method called from a model it did not return, or a state the kit made
            fresh = (not np.array_equal(kept.get("x", np.empty(0)), x)) if stateless else kept.get("token") != token
            if fresh or "sampler" not in kept:
                kept["sampler"] = fedjax.client_samplers.UniformGetClientSampler(
                    _Population(clients, int(local_steps)), num_clients=int(clients_per_round),
                    seed=int(rng.integers(0, 2**31 - 1)), start_round_num=1)
            batches = kept["sampler"].sample()
        else:
            batches = [(i, FullBatches(c, int(local_steps)), jax.random.PRNGKey(i)) for i, c in enumerate(clients)]
        server_state, _ = algorithm.apply(server_state, batches)
        kept["round"] = kept.get("round", 0) + 1
        kept.update(state=server_state, token=f"{name}:{kept['round']}")
        x_new = np.asarray(server_state.params["w"], dtype=np.float64).copy()
        kept["x"] = x_new
        out = x_new if stateless else (x_new, {"token": kept["token"]})
        if not own:
            return out
        drawn = {"drawn": [int(cid) for cid, _, _ in batches]}
        return (x_new, None, drawn) if stateless else (*out, drawn)
    return impl


def fedavg():
    return _make("fedavg")


def fedprox():
    """``fedjax.algorithms.fed_prox.fed_prox`` (Li et al. 2020): the client loss is the mean over the batch of
    ``per_example_loss`` + (``proximal_weight``/2)||w - x||^2, ``proximal_weight`` = the kit's ``prox``; the server
    averages the deltas by example counts and applies ``sgd(eta)``."""
    return _make("fedprox")


def fedavgm():
    return _make("fedavgm")


def fedadam():
    return _make("fedadam")


def fedyogi():
    return _make("fedyogi")


def fedadagrad():
    return _make("fedadagrad")
