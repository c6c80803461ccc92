"""A stand-in for OpenFL 1.9 with the shape drivers/openfl.py uses: ``openfl.utilities`` (``TensorKey``,
``change_tags``, ``types.SingletonABCMeta``), ``openfl.databases.TensorDB`` (``cache_tensor``,
``get_aggregated_tensor``), ``openfl.interface.aggregation_functions`` (``WeightedAverage``, the ``Adam`` / ``Yogi`` /
``Adagrad`` ``AdaptiveAggregation`` classes, ``core.AdaptiveAggregation``) and
``openfl.utilities.optimizers.numpy.NumPyYogi``. The arithmetic is re-typed from OpenFL's source as read for
docs/frameworks.md (``openfl/interface/aggregation_functions/``, ``openfl/utilities/optimizers/numpy/``,
``openfl/databases/tensor_db.py``), with what the verdicts found in it: the aggregation functions are
process-wide singletons, ``AdaptiveAggregation`` steps its optimizer on g = x - sum_k w_k x_k, ``NumPyAdam`` is
Kingma & Ba's bias-corrected Adam, ``NumPyYogi`` updates v as beta2 v + (1 - beta2) sign(g^2 - v) g^2 (not Reddi
et al.'s v - (1 - beta2) g^2 sign(v - g^2)), ``YogiAdaptiveAggregation`` passes ``epsilo=`` (TypeError when
built), ``NumPyAdagrad`` is Alg. 2's Adagrad with beta1 = 0. CI installs no openfl, hence all is faked.

``SLIP`` switches are power checks on where the driver's translation could go silently wrong:
``stale_base`` makes ``AdaptiveAggregation`` take round 0's model as the base in every round (a driver that did
not store the round's model as OpenFL's ``("aggregated",)`` tensor would see that), ``uniform_weights``
makes ``get_aggregated_tensor`` weigh every collaborator 1/n (a driver that lost the collaborators' data sizes,
which the aggregator turns into n_k/n), ``fedprox_no_old_weights`` makes ``FedProxOptimizer.set_old_weights`` keep
nothing (w_old None: the proximal term is dropped, FedAvg's local steps), ``fedprox_half_mu`` adds mu/2 (p - w_old)
(a driver that mapped Li et al.'s mu/2 ||w - w^t||^2 onto OpenFL's mu as mu/2 would see that).
``openfl.utilities.optimizers.torch.FedProxOptimizer`` is re-typed from openfl/utilities/optimizers/torch/fedprox.py
(SGD with momentum, dampening, weight decay and d_p + mu (p - w_old)); it needs torch and is installed where torch
imports. ``install()`` puts the modules in ``sys.modules``."""
from __future__ import annotations

import sys
import types
from abc import ABCMeta
from collections import namedtuple

import numpy as np

SLIP: dict = {"stale_base": False, "uniform_weights": False, "fedprox_no_old_weights": False,
              "fedprox_half_mu": False}
NAMES = ("openfl",)

TensorKey = namedtuple("TensorKey", ["tensor_name", "origin", "round_number", "report", "tags"])
LocalTensor = namedtuple("LocalTensor", ["col_name", "tensor", "weight"])


def change_tags(tags, *, add_field=None, remove_field=None):
    tags = list(set(tags))
    if add_field is not None and add_field not in tags:
        tags.append(add_field)
    if remove_field is not None:
        tags.remove(remove_field)
    return tuple(sorted(tags))


class SingletonABCMeta(ABCMeta):
    _instances: dict = {}

    def __call__(cls, *args, **kwargs):
        if cls not in cls._instances:
            cls._instances[cls] = super().__call__(*args, **kwargs)
        return cls._instances[cls]


class TensorDB:
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def cache_tensor(self, tensor_key_dict: dict) -> None:
        for (name, origin, rnd, report, tags), array in tensor_key_dict.items():
            self.rows.append({"tensor_name": name, "origin": origin, "round": rnd, "report": report,
                              "tags": tags, "nparray": array})

    def _find(self, name, origin, rnd, report, tags):
        for row in self.rows:
            if (row["tensor_name"], row["origin"], row["round"], row["report"], row["tags"]) == (
                    name, origin, rnd, report, tags):
                return row["nparray"]
        return None

    def get_aggregated_tensor(self, tensor_key, collaborator_weight_dict, aggregation_function):
        if SLIP["uniform_weights"]:
            collaborator_weight_dict = {c: 1 / len(collaborator_weight_dict) for c in collaborator_weight_dict}
        assert abs(1.0 - sum(collaborator_weight_dict.values())) < 0.01
        name, origin, rnd, report, tags = tensor_key
        found = self._find(name, origin, rnd, report, tags)
        if found is not None:
            return np.asarray(found), {}
        local = []
        for col, weight in collaborator_weight_dict.items():
            tensor = self._find(name, origin, rnd, report, change_tags(tags, add_field=col))
            if tensor is None:
                return None
            local.append(LocalTensor(col, tensor, weight))
        out = aggregation_function(local, iter(sorted(self.rows, key=lambda r: -r["round"])), name, rnd, tags)
        self.cache_tensor({tensor_key: out})
        return np.asarray(out)


class AggregationFunction(metaclass=SingletonABCMeta):
    def __call__(self, local_tensors, db_iterator, tensor_name, fl_round, tags):
        return self.call(local_tensors, db_iterator, tensor_name, fl_round, tags)


class WeightedAverage(AggregationFunction):
    def call(self, local_tensors, *_):
        total = sum(lt.weight for lt in local_tensors)
        return sum(lt.tensor * lt.weight for lt in local_tensors) / total


class NumPyAdam:
    def __init__(self, *, params=None, model_interface=None, learning_rate=0.01, betas=(0.9, 0.999),
                 initial_accumulator_value=0.0, epsilon=1e-8) -> None:
        self.params, self.learning_rate, (self.beta_1, self.beta_2) = params, learning_rate, betas
        self.epsilon = epsilon
        self.current_step = dict.fromkeys(params, 0)
        self.grads_first_moment = {k: np.full_like(p, initial_accumulator_value) for k, p in params.items()}
        self.grads_second_moment = {k: np.full_like(p, initial_accumulator_value) for k, p in params.items()}

    def _update_second_moment(self, name, grad):
        self.grads_second_moment[name] = self.beta_2 * self.grads_second_moment[name] + (1 - self.beta_2) * grad ** 2

    def step(self, gradients):
        for name, grad in gradients.items():
            self.grads_first_moment[name] = self.beta_1 * self.grads_first_moment[name] + (1 - self.beta_1) * grad
            self._update_second_moment(name, grad)
            t = self.current_step[name] + 1
            mean = self.grads_first_moment[name] / (1 - self.beta_1 ** t)
            var = self.grads_second_moment[name] / (1 - self.beta_2 ** t)
            self.params[name] -= self.learning_rate * mean / (np.sqrt(var) + self.epsilon)
            self.current_step[name] += 1


class NumPyYogi(NumPyAdam):
    def __init__(self, *, params=None, model_interface=None, learning_rate=0.01, betas=(0.9, 0.999),
                 initial_accumulator_value=0.0, epsilon=1e-8) -> None:
        super().__init__(params=params, learning_rate=learning_rate, betas=betas,
                         initial_accumulator_value=initial_accumulator_value, epsilon=epsilon)

    def _update_second_moment(self, name, grad):
        sign = np.sign(grad ** 2 - self.grads_second_moment[name])
        self.grads_second_moment[name] = (self.beta_2 * self.grads_second_moment[name]
                                          + (1 - self.beta_2) * sign * grad ** 2)


class NumPyAdagrad:
    def __init__(self, *, params=None, model_interface=None, learning_rate=0.01, initial_accumulator_value=0.1,
                 epsilon=1e-10) -> None:
        self.params, self.learning_rate, self.epsilon = params, learning_rate, epsilon
        self.grads_squared = {k: np.full_like(p, initial_accumulator_value) for k, p in params.items()}

    def step(self, gradients):
        for name, grad in gradients.items():
            self.grads_squared[name] = self.grads_squared[name] + grad ** 2
            self.params[name] -= self.learning_rate * grad / (np.sqrt(self.grads_squared[name]) + self.epsilon)


class AdaptiveAggregation(AggregationFunction):
    def __init__(self, optimizer, agg_func) -> None:
        self.optimizer, self.default_agg_func = optimizer, agg_func

    def call(self, local_tensors, db_iterator, tensor_name, fl_round, tags):
        base = None
        search_round = 0 if SLIP["stale_base"] else fl_round
        search_tag = "aggregated" if search_round != 0 else "model"
        for record in db_iterator:
            if (record["round"] == search_round and record["tensor_name"] == tensor_name
                    and search_tag in record["tags"] and "delta" not in record["tags"]):
                base = record["nparray"]
        if base is None:
            raise KeyError(f"There is no current global model in TensorDB for tensor name: {tensor_name}")
        gradient = sum(lt.weight * (base - lt.tensor) for lt in local_tensors)
        self.optimizer.step({tensor_name: gradient})
        return self.optimizer.params[tensor_name]


class AdamAdaptiveAggregation(AdaptiveAggregation):
    def __init__(self, *, agg_func=None, params=None, model_interface=None, learning_rate=0.01,
                 betas=(0.9, 0.999), initial_accumulator_value=0.0, epsilon=1e-8) -> None:
        super().__init__(NumPyAdam(params=params, learning_rate=learning_rate, betas=betas,
                                   initial_accumulator_value=initial_accumulator_value, epsilon=epsilon),
                         agg_func or WeightedAverage())


class YogiAdaptiveAggregation(AdaptiveAggregation):
    def __init__(self, *, agg_func=None, params=None, model_interface=None, learning_rate=0.01,
                 betas=(0.9, 0.999), initial_accumulator_value=0.0, epsilon=1e-8) -> None:
        # OpenFL 1.9's keyword, as shipped (yogi_adaptive_aggregation.py:55): NumPyYogi has no 'epsilo'
        opt = NumPyYogi(params=params, learning_rate=learning_rate, betas=betas,  # type: ignore[call-arg]
                        initial_accumulator_value=initial_accumulator_value, epsilo=epsilon)
        super().__init__(opt, agg_func or WeightedAverage())


class AdagradAdaptiveAggregation(AdaptiveAggregation):
    def __init__(self, *, agg_func=None, params=None, model_interface=None, learning_rate=0.01,
                 initial_accumulator_value=0.1, epsilon=1e-10) -> None:
        super().__init__(NumPyAdagrad(params=params, learning_rate=learning_rate,
                                      initial_accumulator_value=initial_accumulator_value, epsilon=epsilon),
                         agg_func or WeightedAverage())


def _fedprox_optimizer():
    """OpenFL 1.9's ``FedProxOptimizer`` (a torch ``Optimizer``), or None without torch."""
    try:
        import torch
    except ImportError:
        return None

    class FedProxOptimizer(torch.optim.Optimizer):
        def __init__(self, params, lr=0.01, mu=0.0, momentum=0, dampening=0, weight_decay=0, nesterov=False):
            super().__init__(params, {"dampening": dampening, "lr": lr, "momentum": momentum, "mu": mu,
                                      "nesterov": nesterov, "weight_decay": weight_decay})

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                mu = group["mu"] / 2 if SLIP["fedprox_half_mu"] else group["mu"]
                w_old = group.get("w_old")  # OpenFL reads group["w_old"]: set_old_weights must come first
                for p, w_old_p in zip(group["params"], w_old or [None] * len(group["params"])):
                    if p.grad is None:
                        continue
                    d_p = p.grad
                    if group["weight_decay"] != 0:
                        d_p = d_p.add(p, alpha=group["weight_decay"])
                    if group["momentum"] != 0:
                        state = self.state[p]
                        if "momentum_buffer" not in state:
                            buf = state["momentum_buffer"] = torch.clone(d_p).detach()
                        else:
                            buf = state["momentum_buffer"]
                            buf.mul_(group["momentum"]).add_(d_p, alpha=1 - group["dampening"])
                        d_p = d_p.add(buf, alpha=group["momentum"]) if group["nesterov"] else buf
                    if w_old_p is not None:
                        d_p.add_(p - w_old_p, alpha=mu)
                    p.add_(d_p, alpha=-group["lr"])

        def set_old_weights(self, old_weights):
            for group in self.param_groups:
                group["w_old"] = None if SLIP["fedprox_no_old_weights"] else old_weights

    return FedProxOptimizer


def install() -> None:
    """Put the stand-in's modules in ``sys.modules`` under OpenFL's names."""
    def module(name: str, **attrs) -> types.ModuleType:
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod
        return mod

    module("openfl")
    module("openfl.databases", TensorDB=TensorDB)
    module("openfl.utilities", TensorKey=TensorKey, change_tags=change_tags)
    module("openfl.utilities.types", SingletonABCMeta=SingletonABCMeta)
    module("openfl.utilities.optimizers")
    module("openfl.utilities.optimizers.numpy", NumPyAdam=NumPyAdam, NumPyYogi=NumPyYogi, NumPyAdagrad=NumPyAdagrad)
    fedprox = _fedprox_optimizer()
    if fedprox is not None:  # OpenFL exports its torch optimizers only where torch imports (find_spec("torch"))
        module("openfl.utilities.optimizers.torch", FedProxOptimizer=fedprox)
    module("openfl.interface")
    module("openfl.interface.aggregation_functions", WeightedAverage=WeightedAverage,
           AdamAdaptiveAggregation=AdamAdaptiveAggregation, YogiAdaptiveAggregation=YogiAdaptiveAggregation,
           AdagradAdaptiveAggregation=AdagradAdaptiveAggregation)
    module("openfl.interface.aggregation_functions.core", AdaptiveAggregation=AdaptiveAggregation,
           AggregationFunction=AggregationFunction)
