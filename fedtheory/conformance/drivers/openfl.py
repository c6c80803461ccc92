"""OpenFL 1.9 through the conformance contract, run in OpenFL's own virtual environment (not imported by fedtheory:
it needs openfl and pandas). docs/frameworks.md has the command and the verdicts.

    cd fedtheory/conformance && /work/fw-venvs/openfl/bin/python remote_worker.py drivers/openfl.py:fedadam
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

Server: OpenFL's own aggregation path. Each collaborator's trained model is cached in OpenFL's ``TensorDB`` under
``("trained", <collaborator>)`` tags, the round's model under ``("model",)`` (round 0) or ``("aggregated",)``
(later rounds), and ``TensorDB.get_aggregated_tensor`` runs the aggregation function, as
``openfl/component/aggregator/aggregator.py`` (``_compute_validation_related_task_metrics``) does. The weights are
the aggregator's: each collaborator's data size divided by their total (aggregator.py, the
``collaborator_weight_dict``), so OpenFL weights by n_k/n as shipped. Aggregation functions, with their defaults
(``learning_rate`` -> server_step, ``betas`` -> (beta1, beta2), ``epsilon`` -> tau, ``initial_accumulator_value``
left at OpenFL's default, 0 for Adam/Yogi and 0.1 for Adagrad): ``WeightedAverage`` (FedAvg, OpenFL's default),
``AdamAdaptiveAggregation``, ``YogiAdaptiveAggregation``, ``AdagradAdaptiveAggregation`` (their NumPy optimizers,
``openfl/utilities/optimizers/numpy``).

Clients: OpenFL has no local trainer of its own (the user's ``TaskRunner.train_`` trains); the driver takes K
full-batch gradient steps of size eta_l on the kit's least squares, the local loop the kit assumes. ``fedprox``
takes them with OpenFL's own ``FedProxOptimizer`` (``openfl/utilities/optimizers/torch/fedprox.py``, torch), built
and given w_old as OpenFL's FedProx tutorial does (:func:`_fedprox_local`); the server is ``fedavg``'s.

State: the aggregation function keeps the optimizer (its moments and step count) between rounds, so it lives in
the worker; the state returned to the kit is the optimizer's moments in the kit's sign (OpenFL's gradient is
x - mean of the clients' models = -Delta, so its first moment is -m), and a state the kit gives is loaded there.
Adagrad has no first moment; with beta1 = 0 Alg. 2's m is Delta, which is returned as m.
"""
from __future__ import annotations

import numpy as np
from openfl.databases import TensorDB
from openfl.interface.aggregation_functions import (
    AdagradAdaptiveAggregation,
    AdamAdaptiveAggregation,
    WeightedAverage,
    YogiAdaptiveAggregation,
)
from openfl.interface.aggregation_functions.core import AdaptiveAggregation
from openfl.utilities import TensorKey, change_tags
from openfl.utilities.optimizers.numpy import NumPyYogi
from openfl.utilities.types import SingletonABCMeta

KEY = "weight"
ORIGIN = "aggregator"


def _local(x, client, local_steps, local_step) -> np.ndarray:
    """K full-batch gradient steps on 1/(2m)||Z y - t||^2 from x (the user's training loop in OpenFL)."""
    z, t = np.asarray(client.features, dtype=np.float64), np.asarray(client.targets, dtype=np.float64)
    y = np.array(x, dtype=np.float64)
    for _ in range(int(local_steps)):
        y = y - local_step * z.T @ (z @ y - t) / len(t)
    return y


class _Server:
    """An OpenFL aggregator's tensor database and aggregation function, one round per call."""

    def __init__(self, function, x) -> None:
        self.db, self.function, self.round = TensorDB(), function, 0
        self.db.cache_tensor({TensorKey(KEY, ORIGIN, 0, False, ("model",)): np.array(x, dtype=np.float64)})

    def next_round(self, x) -> None:
        # the aggregator stores the round's model as round r's ("aggregated",) tensor (aggregator.py, agg_tag_tk)
        self.round += 1
        self.db.cache_tensor({TensorKey(KEY, ORIGIN, self.round, False, ("aggregated",)):
                              np.array(x, dtype=np.float64)})

    def aggregate(self, x, clients, local_steps, local_step, train=_local) -> np.ndarray:
        names = [f"col{pos}" for pos in range(len(clients))]
        # the aggregator's TensorDB holds each result with the collaborator's name among its tags
        # (aggregator.py, _process_named_tensor), which get_aggregated_tensor looks up
        for name, client in zip(names, clients):
            y = train(x, client, local_steps, local_step)
            tags = change_tags(("trained",), add_field=name)  # as the aggregator labels a collaborator's result
            self.db.cache_tensor({TensorKey(KEY, ORIGIN, self.round, False, tags): y})
        total = sum(c.num_examples for c in clients)
        weights = {name: c.num_examples / total for name, c in zip(names, clients)}
        key = TensorKey(KEY, ORIGIN, self.round, False, ("trained",))
        out = self.db.get_aggregated_tensor(key, weights, self.function)
        return np.array(out[0] if isinstance(out, tuple) else out, dtype=np.float64).reshape(-1)


def fedavg():
    """``WeightedAverage``, OpenFL's default: the n_k/n average of the clients' models, no server learning rate
    (checked with ``fixed=["server_step"]``; another server step is refused rather than ignored)."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             weighting="num_examples", **_):
        if server_step != 1.0:
            raise ValueError(f"OpenFL's WeightedAverage has no server learning rate; server_step must be 1.0, "
                             f"got {server_step}")
        return _Server(WeightedAverage(), x).aggregate(x, clients, local_steps, local_step)
    return impl


def _fedprox_local(x, client, local_steps, local_step, prox) -> np.ndarray:
    """K full-batch steps of OpenFL's ``FedProxOptimizer`` (openfl/utilities/optimizers/torch/fedprox.py:14) on
    1/(2m)||Z y - t||^2 from x, as OpenFL's FedProx tutorial trains a selected collaborator
    (openfl-tutorials/experimental/workflow/401_FedProx_with_Synthetic_nonIID.ipynb): the optimizer built anew
    with the round's model's parameters and ``set_old_weights`` given their detached clones (w_old = x^t), then
    zero_grad, backward, step per batch. Its step is d_p = grad + mu (p - w_old) (fedprox.py:136), Li et al.'s
    gradient of f_k + mu/2 ||w - x^t||^2, so the kit's prox is OpenFL's mu."""
    import torch  # OpenFL's PyTorch optimizers need torch; its aggregation functions do not
    from openfl.utilities.optimizers.torch import FedProxOptimizer

    z = torch.tensor(np.asarray(client.features, dtype=np.float64))
    t = torch.tensor(np.asarray(client.targets, dtype=np.float64))
    w = torch.nn.Parameter(torch.tensor(np.array(x, dtype=np.float64)))
    optimizer = FedProxOptimizer([w], lr=float(local_step), mu=float(prox))
    optimizer.set_old_weights([p.clone().detach() for p in [w]])
    for _ in range(int(local_steps)):
        optimizer.zero_grad()
        loss = 0.5 * torch.mean((z @ w - t) ** 2)
        loss.backward()
        optimizer.step()
    return w.detach().numpy().copy()


def fedprox():
    """OpenFL's ``FedProxOptimizer`` on each collaborator (:func:`_fedprox_local`) and OpenFL's aggregator path with
    ``WeightedAverage`` (n_k/n, as ``fedavg``): checked as ``fedprox`` with ``fixed=["server_step"]``. OpenFL's
    ``FedProxAdam`` (fedprox.py:151) runs Adam on grad + mu (w - w_old) locally: not a kit family."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0, server_step=1.0,
             weighting="num_examples", **_):
        if server_step != 1.0:
            raise ValueError(f"OpenFL's WeightedAverage has no server learning rate; server_step must be 1.0, "
                             f"got {server_step}")
        train = lambda x0, c, k, eta: _fedprox_local(x0, c, k, eta, prox)  # noqa: E731
        return _Server(WeightedAverage(), x).aggregate(x, clients, local_steps, local_step, train)
    return impl


def _same(state, returned) -> bool:
    if state is None or returned is None:
        return False
    return all(np.shape(state.get(k)) == np.shape(v) and np.array_equal(state[k], v) for k, v in returned.items())


def _adaptive(name: str):
    kept: dict = {}

    def make(x, server_step, beta1, beta2, tau):
        # OpenFL's aggregation functions are process-wide singletons (SingletonABCMeta: a second construction
        # returns the first instance, its arguments ignored); a new run here is a new aggregator process there
        SingletonABCMeta._instances.clear()
        params = {KEY: np.array(x, dtype=np.float64)}
        if name == "fedadagrad":
            return AdagradAdaptiveAggregation(params=params, learning_rate=float(server_step), epsilon=float(tau))
        if name == "fedyogi_numpy":  # YogiAdaptiveAggregation's own body with its keyword typo corrected
            return AdaptiveAggregation(NumPyYogi(params=params, learning_rate=float(server_step),
                                                 betas=(float(beta1), float(beta2)), epsilon=float(tau)),
                                       WeightedAverage())
        cls = AdamAdaptiveAggregation if name == "fedadam" else YogiAdaptiveAggregation
        return cls(params=params, learning_rate=float(server_step), betas=(float(beta1), float(beta2)),
                   epsilon=float(tau))

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=0.01, beta1=0.9,
             beta2=0.999, tau=1e-8, weighting="num_examples", **_):
        # the run goes on when the kit hands back the state this worker returned last; otherwise (no state, or
        # one the kit made) a new run starts, as OpenFL builds its aggregation function once per experiment
        if _same(state, kept.get("returned")):
            kept["server"].next_round(x)
        else:
            kept["server"] = _Server(make(x, server_step, beta1, beta2, tau), x)
        server = kept["server"]
        opt = server.function.optimizer
        opt.params[KEY] = np.array(x, dtype=np.float64)  # the aggregator's model is the round's x
        if state is not None:
            if name == "fedadagrad":
                opt.grads_squared[KEY] = np.array(state["v"], dtype=np.float64)
            else:
                opt.grads_first_moment[KEY] = -np.array(state["m"], dtype=np.float64)
                opt.grads_second_moment[KEY] = np.array(state["v"], dtype=np.float64)
        x_new = server.aggregate(x, clients, local_steps, local_step)
        if name == "fedadagrad":
            total = sum(c.num_examples for c in clients)
            delta = sum(c.num_examples / total * (_local(x, c, local_steps, local_step) - x) for c in clients)
            kept["returned"] = {"m": np.asarray(delta, dtype=np.float64).copy(), "v": opt.grads_squared[KEY].copy()}
        else:
            kept["returned"] = {"m": -opt.grads_first_moment[KEY].copy(), "v": opt.grads_second_moment[KEY].copy()}
        return x_new, {k: v.copy() for k, v in kept["returned"].items()}
    return impl


def fedadam():
    return _adaptive("fedadam")


def fedyogi():
    return _adaptive("fedyogi")


def fedyogi_numpy():
    """OpenFL 1.9's ``YogiAdaptiveAggregation`` passes ``epsilo=`` to ``NumPyYogi`` and so raises TypeError when
    built (``fedyogi`` above fails with it); this builds what the class would: ``AdaptiveAggregation`` of
    ``NumPyYogi`` and ``WeightedAverage``, so NumPyYogi's arithmetic is judged too."""
    return _adaptive("fedyogi_numpy")


def fedadagrad():
    return _adaptive("fedadagrad")
