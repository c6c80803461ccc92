"""A stand-in for fl4health 0.4.2 with the shape drivers/fl4health.py uses: ``BasicClient`` (the user's ``get_model``,
``get_data_loaders``, ``get_optimizer``, ``get_criterion``; ``fit`` -> ``setup_client``, ``set_parameters``,
``update_before_train``, ``train_by_steps`` -> ``train_step`` with ``transform_gradients``, ``update_after_train``,
``get_parameters``), ``FedProxClient`` (mu packed after the weights, ``(mu/2)||w - w_t||^2`` added to the loss),
``ScaffoldClient`` (c - c_i added to the gradient, c_i by option II, a new client's c_i = 0),
``NumpyClippingClient`` (sends its clipped update y_i - x) and the strategies ``BasicFedAvg``
(``weighted_aggregation``), ``FedAvgWithAdaptiveConstraint``, ``Scaffold`` (x + lr (mean y_i - x), c +
fraction_fit mean dc_i) and ``ClientLevelDPFedAvgM`` (its noise-free path: server momentum), over Flower's real
``Parameters`` / ``FitRes``, and the sampler ``FixedSamplingByFractionClientManager`` (``random.sample`` of
``int(fraction * N)`` registered clients) that ``BasicFedAvg.configure_fit`` asks. Re-typed from fl4health's source as read for docs/frameworks.md, written as the
papers; ``SLIP`` switches one deviation on, fl4health's two defects among them. ``install()`` puts
the modules in ``sys.modules``."""
from __future__ import annotations

import copy
import importlib
import random
import sys
import types

import numpy as np
import torch
from flwr.common import ndarrays_to_parameters, parameters_to_ndarrays

SLIP: dict = {"scaffold_c_without_fraction": False, "fedavg_unweighted": False,
              # fl4health 0.4.2's own ScaffoldClient: a client's first c_i is a copy of the server's c (Alg. 1: 0)
              "scaffold_new_client_starts_at_c": False,
              # fl4health 0.4.2's own NumpyClippingClient on CPU: round 1's reference weights alias the model's
              "clipping_reference_aliases_model": False,
              # a sampler that always returns the first int(fraction * N) registered clients
              "sampler_first_clients": False}


class FixedSamplingByFractionClientManager:
    """``sample_fraction``: ``random.sample`` of ``int(fraction * N)`` of the registered clients, without
    replacement (fl4health/client_managers/fixed_without_replacement_manager.py)."""

    def __init__(self):
        self.clients: dict = {}

    def register(self, client) -> bool:
        self.clients[client.cid] = client
        return True

    def sample_fraction(self, sample_fraction, min_num_clients=None, criterion=None):
        available = list(self.clients)
        k = int(sample_fraction * len(available))
        chosen = available[:k] if SLIP["sampler_first_clients"] else random.sample(available, k)
        return [self.clients[cid] for cid in chosen]


class BasicClient:
    def __init__(self, data_path, metrics, device, client_name=None, **_):
        self.data_path, self.metrics, self.device, self.client_name = data_path, metrics, device, client_name
        self.initialized = False

    def setup_client(self, config):
        self.model = self.get_model(config)
        self.train_loader, self.val_loader = self.get_data_loaders(config)
        self.num_train_samples = len(self.train_loader.dataset)
        self.optimizers = {"global": self.get_optimizer(config)}
        self.criterion = self.get_criterion(config)
        self.initialized = True

    def set_parameters(self, parameters, config, fitting_round):
        with torch.no_grad():
            for p, a in zip(self.model.parameters(), parameters):
                p.copy_(torch.as_tensor(a))

    def get_parameters(self, config):
        return [p.detach().numpy().copy() for p in self.model.state_dict().values()]

    def update_before_train(self, current_server_round):
        pass

    def update_after_train(self, local_steps, loss_dict, config):
        pass

    def transform_gradients(self, losses):
        pass

    def compute_training_loss(self, preds, target):
        return self.criterion(preds, target)

    def train_step(self, input, target):
        self.optimizers["global"].zero_grad()
        loss = self.compute_training_loss(self.model(input), target)
        loss.backward()
        self.transform_gradients(loss)
        self.optimizers["global"].step()
        return loss

    def fit(self, parameters, config):
        local_steps = int(config["local_steps"])
        if not self.initialized:
            self.setup_client(config)
        self.set_parameters(parameters, config, fitting_round=True)
        self.update_before_train(config["current_server_round"])
        iterator = iter(self.train_loader)
        for _ in range(local_steps):
            try:
                input, target = next(iterator)
            except StopIteration:
                iterator = iter(self.train_loader)
                input, target = next(iterator)
            loss = self.train_step(input, target)
        self.update_after_train(local_steps, {"loss": float(loss.detach())}, config)
        return self.get_parameters(config), self.num_train_samples, {}


class FedProxClient(BasicClient):
    def set_parameters(self, parameters, config, fitting_round):
        self.drift_penalty_weight = float(parameters[-1])
        super().set_parameters(parameters[:-1], config, fitting_round)

    def update_before_train(self, current_server_round):
        self.drift_penalty_tensors = [p.detach().clone() for p in self.model.parameters()]

    def compute_training_loss(self, preds, target):
        loss = self.criterion(preds, target)
        self.loss_for_adaptation = float(loss.detach())
        drift = sum(torch.sum((p - q) ** 2) for p, q in zip(self.model.parameters(), self.drift_penalty_tensors))
        return loss + (self.drift_penalty_weight / 2.0) * drift

    def get_parameters(self, config):
        return super().get_parameters(config) + [np.array(self.loss_for_adaptation)]


class ScaffoldClient(BasicClient):
    client_control_variates = None

    def setup_client(self, config):
        super().setup_client(config)
        self.learning_rate = self.optimizers["global"].defaults["lr"]

    def set_parameters(self, parameters, config, fitting_round):
        size = len(parameters) // 2
        self.server_control_variates = [np.asarray(a) for a in parameters[size:]]
        super().set_parameters(parameters[:size], config, fitting_round)
        self.server_model_weights = [p.detach().numpy().copy() for p in self.model.parameters()]
        if self.client_control_variates is None:
            self.client_control_variates = copy.deepcopy(self.server_control_variates) \
                if SLIP["scaffold_new_client_starts_at_c"] else [np.zeros_like(c) for c in self.server_control_variates]

    def transform_gradients(self, losses):
        for p, ci, c in zip(self.model.parameters(), self.client_control_variates, self.server_control_variates):
            p.grad += torch.from_numpy(c) - torch.from_numpy(ci)

    def update_after_train(self, local_steps, loss_dict, config):
        y = [p.detach().numpy().copy() for p in self.model.parameters()]
        new = [ci - c + (x - yi) / (local_steps * self.learning_rate) for ci, c, x, yi in
               zip(self.client_control_variates, self.server_control_variates, self.server_model_weights, y)]
        self.client_control_variates_updates = [n - ci for n, ci in zip(new, self.client_control_variates)]
        self.client_control_variates = new

    def get_parameters(self, config):
        return super().get_parameters(config) + self.client_control_variates_updates


class NumpyClippingClient(BasicClient):
    def set_parameters(self, parameters, config, fitting_round):
        self.clipping_bound = float(np.asarray(parameters[-1]).reshape(-1)[0])
        super().set_parameters(parameters[:-1], config, fitting_round)
        if config["current_server_round"] == 1 and SLIP["clipping_reference_aliases_model"]:
            self.initial_weights = [v.numpy() for v in self.model.state_dict().values()]  # a view, not a copy
        else:
            self.initial_weights = [np.asarray(a).copy() for a in parameters[:-1]]

    def get_parameters(self, config):
        update = [w - w0 for w, w0 in zip(super().get_parameters(config), self.initial_weights)]
        norm = float(np.sqrt(sum(np.sum(u ** 2) for u in update)))
        scale = min(1.0, self.clipping_bound / norm) if norm > self.clipping_bound else 1.0
        return [u * scale for u in update] + [np.array(0.0)]


def _mean(arrays_and_counts, weighted):
    w = np.array([n if weighted else 1.0 for _, n in arrays_and_counts], dtype=np.float64)
    return [sum(wi * a[k] for wi, (a, _) in zip(w, arrays_and_counts)) / w.sum()
            for k in range(len(arrays_and_counts[0][0]))]


class BasicFedAvg:
    def __init__(self, *, initial_parameters=None, weighted_aggregation=True, fraction_fit=1.0, **_):
        self.initial_parameters, self.fraction_fit = initial_parameters, fraction_fit
        self.weighted_aggregation = weighted_aggregation

    def initialize_parameters(self, client_manager):
        parameters, self.initial_parameters = self.initial_parameters, None  # as Flower's FedAvg: handed over once
        return parameters

    def configure_fit(self, server_round, parameters, client_manager):
        chosen = client_manager.sample_fraction(self.fraction_fit, 1)
        return [(client, {"current_server_round": server_round}) for client in chosen]

    def _decoded(self, results):
        return [(parameters_to_ndarrays(r.parameters), r.num_examples) for _, r in results]

    def aggregate_fit(self, server_round, results, failures):
        weighted = self.weighted_aggregation and not SLIP["fedavg_unweighted"]
        return ndarrays_to_parameters(_mean(self._decoded(results), weighted)), {}


class _AdaptivePacker:
    def unpack_parameters(self, packed):
        return packed[:-1], float(packed[-1])


class FedAvgWithAdaptiveConstraint(BasicFedAvg):
    def __init__(self, *, initial_parameters=None, initial_loss_weight=1.0, adapt_loss_weight=False, **kw):
        self.loss_weight = initial_loss_weight
        initial_parameters.tensors.extend(ndarrays_to_parameters([np.array(self.loss_weight)]).tensors)
        super().__init__(initial_parameters=initial_parameters, **kw)
        self.parameter_packer = _AdaptivePacker()

    def aggregate_fit(self, server_round, results, failures):
        unpacked = [(self.parameter_packer.unpack_parameters(a)[0], n) for a, n in self._decoded(results)]
        weights = _mean(unpacked, self.weighted_aggregation)
        return ndarrays_to_parameters(weights + [np.array(self.loss_weight)]), {}


class Scaffold(BasicFedAvg):
    def __init__(self, *, initial_parameters, initial_control_variates=None, learning_rate=1.0, **kw):
        self.server_model_weights = parameters_to_ndarrays(initial_parameters)
        self.server_control_variates = parameters_to_ndarrays(initial_control_variates)
        initial_parameters.tensors.extend(initial_control_variates.tensors)
        super().__init__(initial_parameters=initial_parameters, weighted_aggregation=False, **kw)
        self.learning_rate = learning_rate

    def aggregate_fit(self, server_round, results, failures):
        size = len(self.server_model_weights)
        mean = _mean(self._decoded(results), weighted=False)
        weights, dc = mean[:size], mean[size:]
        self.server_model_weights = [x + self.learning_rate * (y - x)
                                     for x, y in zip(self.server_model_weights, weights)]
        fraction = 1.0 if SLIP["scaffold_c_without_fraction"] else self.fraction_fit
        self.server_control_variates = [c + fraction * d for c, d in zip(self.server_control_variates, dc)]
        return ndarrays_to_parameters(self.server_model_weights + self.server_control_variates), {}


class ClientLevelDPFedAvgM(BasicFedAvg):
    """Noise-free path only (the driver sets both noise multipliers to 0): unweighted mean of the clients'
    (clipped) updates, m_t = beta m_{t-1} + mean, x + server_learning_rate m_t."""

    def __init__(self, *, initial_parameters=None, server_learning_rate=1.0, beta=0.9, initial_clipping_bound=0.1,
                 weight_noise_multiplier=1.0, **kw):
        self.current_weights = parameters_to_ndarrays(initial_parameters)
        self.clipping_bound, self.server_learning_rate, self.beta, self.m_t = initial_clipping_bound, \
            server_learning_rate, beta, None
        initial_parameters.tensors.extend(ndarrays_to_parameters([np.array([self.clipping_bound])]).tensors)
        super().__init__(initial_parameters=initial_parameters, weighted_aggregation=False, **kw)

    def aggregate_fit(self, server_round, results, failures):
        update = _mean([(a[:-1], n) for a, n in self._decoded(results)], weighted=False)
        self.m_t = update if not self.m_t else [self.beta * m + u for m, u in zip(self.m_t, update)]
        self.current_weights = [x + self.server_learning_rate * m for x, m in zip(self.current_weights, self.m_t)]
        return ndarrays_to_parameters(self.current_weights + [np.array([self.clipping_bound])]), {}


def install() -> None:
    """Register the stand-in as ``fl4health`` (and the submodules the driver imports) in ``sys.modules``."""
    names = {"fl4health.clients.basic_client": {"BasicClient": BasicClient},
             "fl4health.client_managers.fixed_without_replacement_manager":
                 {"FixedSamplingByFractionClientManager": FixedSamplingByFractionClientManager},
             "fl4health.clients.fed_prox_client": {"FedProxClient": FedProxClient},
             "fl4health.clients.scaffold_client": {"ScaffoldClient": ScaffoldClient},
             "fl4health.clients.clipping_client": {"NumpyClippingClient": NumpyClippingClient},
             "fl4health.strategies.client_dp_fedavgm": {"ClientLevelDPFedAvgM": ClientLevelDPFedAvgM},
             "fl4health.strategies.basic_fedavg": {"BasicFedAvg": BasicFedAvg},
             "fl4health.strategies.fedavg_with_adaptive_constraint":
                 {"FedAvgWithAdaptiveConstraint": FedAvgWithAdaptiveConstraint},
             "fl4health.strategies.scaffold": {"Scaffold": Scaffold}}
    mods: dict = {}
    for full, attrs in names.items():
        parts = full.split(".")
        for i in range(1, len(parts) + 1):
            mods.setdefault(".".join(parts[:i]), types.ModuleType(".".join(parts[:i])))
        mods[full].__dict__.update(attrs)
    for name, mod in mods.items():
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(mods[parent], child, mod)
    sys.modules.update(mods)
    importlib.invalidate_caches()
