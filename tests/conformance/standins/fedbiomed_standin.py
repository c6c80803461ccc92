"""A stand-in for Fed-BioMed 6.4.1 (and the declearn 2.8.0 modules it imports) with the shape
drivers/fedbiomed.py uses, re-typed from their source as read for docs/frameworks.md:

* ``fedbiomed.researcher.strategies.default_strategy.DefaultStrategy`` (``sample_nodes``: every node given;
  ``refine``: each reply's ``sample_size`` over their total, a sampled node without a reply refused);
* ``fedbiomed.researcher.aggregators.FedAverage`` (``aggregate``: the weighted sum into a float32 buffer, as
  ``functional.py`` does with ``torch.zeros_like(val).float()``) and ``Scaffold`` (``aggregators/scaffold.py``:
  c_i = delta_i + (x - y_i)/(eta_i K) for the round's nodes, c = the mean of every node's c_i, delta_i = c_i - c,
  x+ = x - server_lr/|S| sum (x - y_i); states zeroed at round 0);
* ``fedbiomed.common.training_plans.TorchTrainingPlan`` (``post_init``, ``set_model_params``,
  ``training_routine``: ``num_updates`` batches, the loss plus ``fedprox_mu``/2 ||w - w_init||^2, the gradient
  minus the Scaffold correction, the optimizer's step; ``after_training_params``, ``optimizer_args``);
* ``fedbiomed.researcher.federated_workflows.Experiment._run_agg_optimizer`` and
  ``fedbiomed.common.optimizers.Optimizer`` (gradient x - aggregate, each module's ``run``, -lr times it);
* declearn's ``Vector`` and ``AdamModule`` / ``YogiModule`` (bias-corrected by the step count, eps outside the
  square root), ``AdaGradModule``, ``MomentumModule`` (v = beta v + g), and the Scaffold pair
  (``ScaffoldClientModule``: the gradient minus c_i - c, c_i+ = the mean of the round's gradients;
  ``ScaffoldServerModule``: c = the sum of the c_i over the clients heard from, divided by their number), with
  ``Optimizer.get_aux`` / ``set_aux`` / ``restore_aux`` and ``Experiment``'s ``_collect_optim_aux_var`` and
  ``_aggregate_cleartext_optim_auxvar``; a training plan whose ``init_optimizer`` returns such an ``Optimizer``
  steps with it.

CI installs neither fedbiomed nor declearn, hence they are faked; torch is real.

``SLIP`` switches, each a translation or a line that could silently go wrong: ``uniform_weights`` (``refine``
weighs every node 1/n: lost sample sizes), ``prox_ignored`` (the training plan drops ``fedprox_mu``),
``correction_added`` (the node adds the Scaffold correction instead of subtracting it), ``momentum_reset``
(``MomentumModule`` forgets its velocity between rounds), ``client_uncorrected`` (``ScaffoldClientModule`` returns
the raw gradient). ``install()`` puts the modules in ``sys.modules``."""
from __future__ import annotations

import copy
import sys
import types
import uuid

import torch

SLIP: dict = {"uniform_weights": False, "prox_ignored": False, "correction_added": False, "momentum_reset": False,
              "client_uncorrected": False}
NAMES = ("fedbiomed", "declearn")


class DefaultStrategy:
    def __init__(self) -> None:
        self._sampling_node_history: dict = {}

    def sample_nodes(self, from_nodes, round_i):
        self._sampling_node_history[round_i] = copy.copy(from_nodes)
        return from_nodes

    def refine(self, training_replies, round_i):
        if any(n not in training_replies for n in self._sampling_node_history[round_i]):
            raise RuntimeError("missing training replies")
        params = {r["node_id"]: r["params"] for r in training_replies.values() if r["success"]}
        sizes = {r["node_id"]: r["sample_size"] for r in training_replies.values() if r["success"]}
        total = sum(sizes.values())
        weights = {n: (1 / len(sizes) if SLIP["uniform_weights"] else s / total) for n, s in sizes.items()}
        return params, weights, total, {n: None for n in sizes}


class FedAverage:
    def aggregate(self, model_params, weights, *args, **kwargs):
        models = [model_params[n] for n in model_params]
        w = [weights[n] for n in model_params]
        out = {k: torch.zeros_like(v).float() for k, v in models[0].items()}  # Fed-BioMed's float32 buffer
        for model, weight in zip(models, [x / sum(w) for x in w]):
            for k in out:
                out[k] += weight * model[k]
        return out


class FederatedDataset:
    def __init__(self, data=None) -> None:
        self._data = dict(data or {})

    def node_ids(self):
        return list(self._data)


class Scaffold:
    def __init__(self, server_lr: float = 1.0, fds=None) -> None:
        self.aggregator_name, self.server_lr, self._fds = "Scaffold", server_lr, fds
        self.global_state, self.nodes_states, self.nodes_deltas, self.nodes_lr = {}, {}, {}, {}

    def set_fds(self, fds) -> None:
        self._fds = fds

    def init_correction_states(self, global_model) -> None:
        zeros = {k: torch.zeros_like(v).float() for k, v in global_model.items()}
        self.nodes_deltas = {n: copy.deepcopy(zeros) for n in self._fds.node_ids()}
        self.nodes_states = copy.deepcopy(self.nodes_deltas)
        self.global_state = zeros

    def create_aggregator_args(self, global_model, node_ids):
        if not self.nodes_deltas:
            self.init_correction_states(global_model)
        return {n: {"aggregator_name": self.aggregator_name, "aggregator_correction": self.nodes_deltas[n]}
                for n in node_ids}

    def aggregate(self, model_params, weights, global_model, training_plan, training_replies, n_updates=1,
                  n_round=0, *args, **kwargs):
        for n in self._fds.node_ids():
            reply = training_replies.get(n)
            self.nodes_lr[n] = (reply["optimizer_args"]["lr"] if reply is not None
                                else training_plan.optimizer().get_learning_rate())
        if n_round == 0:
            self.init_correction_states(global_model)
        updates = {n: {k: global_model[k] - v for k, v in p.items()} for n, p in model_params.items()}
        for n, upd in updates.items():
            for k, v in upd.items():
                self.nodes_states[n][k] = self.nodes_deltas[n][k] + v / (self.nodes_lr[n][k] * n_updates)
        for k in self.global_state:
            self.global_state[k] = sum(s[k] for s in self.nodes_states.values()) / len(self.nodes_states)
        self.nodes_deltas = {n: {k: v - self.global_state[k] for k, v in s.items()}
                             for n, s in self.nodes_states.items()}
        return {k: v - sum(updates[n][k] for n in model_params) * (self.server_lr / len(model_params))
                for k, v in global_model.items()}


class PytorchDataLoader(torch.utils.data.DataLoader):
    pass


class TrainingArgs(dict):
    def __init__(self, args, only_required=True) -> None:
        super().__init__({"num_updates": 1, "fedprox_mu": None, "optimizer_args": {}, **args})


class _TorchOptimizer:
    """Fed-BioMed's wrapper of the plan's torch optimizer (``get_learning_rate``: the lr of each parameter)."""

    def __init__(self, model, optimizer) -> None:
        self.model, self.optimizer = model, optimizer

    def get_learning_rate(self):
        return {name: group["lr"] for group in self.optimizer.param_groups for p in group["params"]
                for name, q in self.model.named_parameters() if p is q}


class TorchTrainingPlan:
    def post_init(self, model_args, training_args, aggregator_args=None, **_) -> None:
        self._args = training_args
        self._model = self.init_model(model_args)
        self._torch_optimizer = self.init_optimizer(training_args["optimizer_args"])
        self.aggregator_name, self.correction_state = None, {}
        for key, val in (aggregator_args or {}).items():
            if key == "aggregator_name":
                self.aggregator_name = val
            if key == "aggregator_correction":
                self.correction_state = val
        self.local_params = []

    def model(self):
        return self._model

    def optimizer(self):
        return _TorchOptimizer(self._model, self._torch_optimizer)

    def set_model_params(self, params, **_) -> None:
        with torch.no_grad():
            for name, p in self._model.named_parameters():
                p.copy_(params[name])

    def get_model_params(self, **_):
        return {name: p.detach().clone() for name, p in self._model.named_parameters()}

    def after_training_params(self, flatten=False):
        return self.get_model_params()

    def optimizer_args(self):
        args = dict(self._args["optimizer_args"])
        if self.aggregator_name is not None and self.aggregator_name.lower() == "scaffold":
            args["lr"] = self.optimizer().get_learning_rate()
        return args

    def training_routine(self, *args, **kwargs) -> int:
        init = self.get_model_params()
        seen, batches = 0, iter(())
        for _ in range(int(self._args["num_updates"])):
            try:
                data, target = next(batches)
            except StopIteration:
                batches = iter(self.training_data_loader)
                data, target = next(batches)
            seen += len(target)
            for p in self._model.parameters():
                p.grad = None
            loss = self.training_step(data, target)
            mu = self._args.get("fedprox_mu")
            if mu is not None and not SLIP["prox_ignored"]:
                loss = loss + float(mu) / 2 * sum(torch.linalg.norm(p - init[n]) ** 2
                                                  for n, p in self._model.named_parameters())
            loss.backward()
            if isinstance(self._torch_optimizer, Optimizer):  # a declearn-backed Optimizer steps the weights
                params = dict(self._model.named_parameters())
                grads = Vector({n: p.grad.detach().clone() for n, p in params.items()})
                updates = self._torch_optimizer.step(grads, Vector({n: p.detach() for n, p in params.items()}))
                with torch.no_grad():
                    for n, p in params.items():
                        p.add_(updates.coefs[n])
                continue
            if self.aggregator_name is not None and self.aggregator_name.lower() == "scaffold":
                for name, p in self._model.named_parameters():
                    correction = self.correction_state.get(name)
                    if correction is not None:
                        p.grad.add_(correction) if SLIP["correction_added"] else p.grad.sub_(correction)
            self._torch_optimizer.step()
        return seen


class Vector:
    """declearn's Vector over a dict of tensors: elementwise arithmetic, ``coefs``."""

    def __init__(self, coefs) -> None:
        self.coefs = dict(coefs)

    @classmethod
    def build(cls, coefs):
        return cls(coefs)

    def _op(self, other, fn):
        if isinstance(other, Vector):
            return Vector({k: fn(v, other.coefs[k]) for k, v in self.coefs.items()})
        return Vector({k: fn(v, other) for k, v in self.coefs.items()})

    def __add__(self, o):
        return self._op(o, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, o):
        return self._op(o, lambda a, b: a - b)

    def __rsub__(self, o):
        return self._op(o, lambda a, b: b - a)

    def __mul__(self, o):
        return self._op(o, lambda a, b: a * b)

    __rmul__ = __mul__

    def __truediv__(self, o):
        return self._op(o, lambda a, b: a / b)

    def __pow__(self, o):
        return self._op(o, lambda a, b: a ** b)

    def __neg__(self):
        return self * -1.0

    def sign(self):
        return Vector({k: torch.sign(v) for k, v in self.coefs.items()})


class MomentumModule:
    def __init__(self, beta=0.9, nesterov=False, round_reset=False) -> None:
        self.beta, self.velocity = beta, 0.0

    def run(self, gradients):
        if SLIP["momentum_reset"]:
            self.velocity = 0.0
        self.velocity = self.beta * self.velocity + gradients
        return self.velocity


class _EWMA:
    def __init__(self, beta) -> None:
        self.beta, self.state = beta, 0.0

    def run(self, gradients):
        self.state = self.beta * self.state + (1 - self.beta) * gradients
        return self.state


class _YogiMomentum(_EWMA):
    def run(self, gradients):
        sign = (self.state - gradients).sign()
        self.state = self.state - sign * (1 - self.beta) * gradients
        return self.state


class AdamModule:
    def __init__(self, beta_1=0.9, beta_2=0.99, amsgrad=False, eps=1e-7, round_reset=False) -> None:
        self.ewma_1, self.ewma_2, self.steps, self.eps = _EWMA(beta_1), _EWMA(beta_2), 0, eps

    def run(self, gradients):
        m_t, v_t = self.ewma_1.run(gradients), self.ewma_2.run(gradients ** 2)
        m_h = m_t / (1 - self.ewma_1.beta ** (self.steps + 1))
        v_h = v_t / (1 - self.ewma_2.beta ** (self.steps + 1))
        self.steps += 1
        return m_h / (v_h ** 0.5 + self.eps)


class YogiModule(AdamModule):
    def __init__(self, beta_1=0.9, beta_2=0.99, amsgrad=False, eps=1e-7, round_reset=False) -> None:
        super().__init__(beta_1, beta_2, amsgrad, eps, round_reset)
        self.ewma_2 = _YogiMomentum(beta_2)


class AdaGradModule:
    def __init__(self, eps=1e-7, round_reset=False) -> None:
        self.eps, self.state = eps, 0.0

    def run(self, gradients):
        self.state = self.state + gradients ** 2
        return gradients / (self.state ** 0.5 + self.eps)


class _ScaffoldAuxVar:
    """declearn's ScaffoldAuxVar: a node's ``delta`` and ``clients``, or the server's ``state``; summed by +."""

    def __init__(self, state=None, delta=None, clients=None) -> None:
        self.state, self.delta, self.clients = state, delta, set(clients or ())

    def __add__(self, other):
        if other == 0:
            return self
        return _ScaffoldAuxVar(delta=self.delta + other.delta, clients=self.clients | other.clients)

    __radd__ = __add__


class ScaffoldClientModule:
    aux_name = "scaffold"

    def __init__(self) -> None:
        self.uuid = str(uuid.uuid4())
        self.state, self.sglob, self.delta, self._grads, self._steps = 0.0, 0.0, 0.0, 0.0, 0

    def run(self, gradients):
        self._grads, self._steps = self._grads + gradients, self._steps + 1
        return gradients if SLIP["client_uncorrected"] else gradients - self.delta

    def collect_aux_var(self):
        new = self._grads / self._steps
        update, self.state = new - self.state, new
        return _ScaffoldAuxVar(delta=update, clients={self.uuid})

    def process_aux_var(self, aux_var) -> None:
        self.sglob = aux_var.state
        self.delta = self.state - self.sglob
        self._grads, self._steps = 0.0, 0


class ScaffoldServerModule:
    aux_name = "scaffold"

    def __init__(self) -> None:
        self.s_state, self.clients = 0.0, set()

    def run(self, gradients):
        return gradients

    def collect_aux_var(self):
        return _ScaffoldAuxVar(state=self.s_state / len(self.clients) if self.clients else 0.0)

    def process_aux_var(self, aux_var) -> None:
        self.clients |= aux_var.clients
        self.s_state = self.s_state + aux_var.delta


class Optimizer:
    def __init__(self, lr, decay=0.0, modules=None, regularizers=None) -> None:
        self.lr, self.modules = lr, list(modules or [])

    def get_aux(self):
        return {m.aux_name: m.collect_aux_var() for m in self.modules if getattr(m, "aux_name", None)}

    def set_aux(self, aux) -> None:
        for m in self.modules:
            if getattr(m, "aux_name", None) in aux:
                m.process_aux_var(aux[m.aux_name])

    def restore_aux(self, aux_vars, reference_params, local_params):
        return aux_vars

    def send_to_device(self, device) -> None:
        pass

    def init_round(self) -> None:
        pass

    def step(self, grads, weights):
        for module in self.modules:
            grads = module.run(grads)
        return -self.lr * grads


class Experiment:
    def _collect_optim_aux_var(self):
        return None if self._agg_optimizer is None else self._agg_optimizer.get_aux()

    def _aggregate_cleartext_optim_auxvar(self, nodes_auxvar):
        auxvar: dict = {}
        for node_dict in nodes_auxvar.values():
            for name, aux in node_dict.items():
                auxvar[name] = auxvar.get(name, 0) + aux
        return auxvar

    def _run_agg_optimizer(self, training_plan, aggregated_params):
        if self._agg_optimizer is None:
            return aggregated_params
        self._agg_optimizer.send_to_device(False)
        self._agg_optimizer.init_round()
        init_params = Vector.build(training_plan.get_model_params())
        agg_gradients = init_params - Vector.build(aggregated_params)
        weights = (init_params + self._agg_optimizer.step(agg_gradients, init_params)).coefs
        return {k: weights.get(k, v) for k, v in aggregated_params.items()}


def install() -> None:
    """Put the stand-in's modules in ``sys.modules`` under Fed-BioMed's and declearn's names."""
    def module(name: str, **attrs) -> types.ModuleType:
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod
        return mod

    for name in ("fedbiomed", "fedbiomed.common", "fedbiomed.researcher", "fedbiomed.researcher.strategies",
                 "declearn", "declearn.model", "declearn.optimizer"):
        module(name)
    module("fedbiomed.researcher.strategies.default_strategy", DefaultStrategy=DefaultStrategy)
    module("fedbiomed.researcher.aggregators", FedAverage=FedAverage, Scaffold=Scaffold)
    module("fedbiomed.researcher.datasets", FederatedDataset=FederatedDataset)
    module("fedbiomed.researcher.federated_workflows", Experiment=Experiment)
    module("fedbiomed.common.dataloader", PytorchDataLoader=PytorchDataLoader)
    module("fedbiomed.common.optimizers", Optimizer=Optimizer)
    module("fedbiomed.common.training_args", TrainingArgs=TrainingArgs)
    module("fedbiomed.common.training_plans", TorchTrainingPlan=TorchTrainingPlan)
    module("declearn.model.api", Vector=Vector)
    module("declearn.optimizer.modules", AdaGradModule=AdaGradModule, AdamModule=AdamModule,
           MomentumModule=MomentumModule, YogiModule=YogiModule, ScaffoldClientModule=ScaffoldClientModule,
           ScaffoldServerModule=ScaffoldServerModule)
