"""A stand-in for APPFL 1.12.0 with the shape drivers/appfl.py uses: ``omegaconf.DictConfig`` (a dict read by
attribute), ``appfl.algorithm.trainer.VanillaTrainer`` (``mode="step"`` only: ``num_local_steps`` steps of
``torch.optim.<optim>`` over a ``DataLoader``; ``get_parameters()`` returns ``(state, val_results)``), its subclass
``FedProxTrainer`` (``train_configs.mu``, the proximal term (mu/2)||w - w^t||^2 in each batch's loss) and the
aggregators of
``appfl.algorithm.aggregator`` (``FedAvgAggregator`` and its ``FedAvgM`` / ``FedAdam`` / ``FedYogi`` /
``FedAdagrad`` subclasses: ``global_state``, ``client_sample_size``, ``client_weights_mode``, ``m_vector`` /
``v_vector``, ``aggregate({client_id: state})``). The arithmetic is re-typed from APPFL's source as read for
docs/frameworks.md, which found it to be McMahan et al.'s FedAvg and Reddi et al.'s Alg. 2 (v starting at tau^2),
so the driver's translation -- configs, sample sizes keyed by client, the state loaded and read back -- is what the
test checks. CI installs neither appfl nor omegaconf, hence both are faked.

``SLIP``'s switches: power checks on the places where the driver's translation could go silently wrong in APPFL,
and APPFL's one documented deviation (``secure_first_round_delta``):
``sample_size_ids_missed`` is APPFL's silent fallback to equal weights when ``client_sample_size`` is not keyed by
the ids given to ``aggregate`` (``fedavg_aggregator.py``, ``compute_steps``); ``v_starts_at_zero`` is an aggregator
whose v does not start at tau^2, which the checks declare (``initial_v="tau^2"``); ``prox_without_half`` is a
proximal term mu ||w - w^t||^2 (twice Li et al.'s), so the FedProx check can fail; ``secure_first_round_delta`` is
APPFL's secure aggregation on a new aggregator (``global_state`` None): the round returns the averaged delta alone
(docs/frameworks.md, APPFL); ``secure_weighted_mean`` is APPFL's weighted secure aggregation, which averages deltas
the clients already scaled by n_i / n (a step of 1/|S| times McMahan et al.'s). Secure aggregation (``use_secure_agg``): the trainer sends its delta plus pairwise
masks that cancel in the sum (float64 here; APPFL's are float32), the aggregator averages them equally.
``install()`` puts the modules in ``sys.modules``."""
from __future__ import annotations

import hashlib
import sys
import types
from typing import Any

import torch

SLIP: dict = {"sample_size_ids_missed": False, "v_starts_at_zero": False, "prox_without_half": False,
              "secure_first_round_delta": False, "secure_weighted_mean": False,
              # APPFL's SecureAggregator.flatten_state_dict casts to float32 and its masks are float32 normals
              # (appfl/privacy/secure_aggregator.py:141): the masked flat is float32 whatever the model's dtype
              "secure_flats_float32": False}


class DictConfig(dict):
    """omegaconf's DictConfig as the driver and APPFL read it: items by attribute, nested dicts too."""

    def __init__(self, content: dict | None = None) -> None:
        super().__init__({k: DictConfig(v) if isinstance(v, dict) else v for k, v in (content or {}).items()})

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


class VanillaTrainer:
    def __init__(self, model=None, loss_fn=None, metric=None, train_dataset=None, val_dataset=None,
                 train_configs: DictConfig = DictConfig(), logger=None, **kwargs) -> None:  # noqa: B008 -- APPFL's own signature
        assert train_configs.mode == "step", "the stand-in has APPFL's step mode only"
        self.model, self.loss_fn, self.metric, self.train_configs = model, loss_fn, metric, train_configs
        self.train_dataset, self.client_id = train_dataset, kwargs.get("client_id")

    def train(self, **kwargs) -> None:
        c = self.train_configs
        start = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        loader = torch.utils.data.DataLoader(self.train_dataset, batch_size=c.train_batch_size,
                                             shuffle=c.train_data_shuffle)
        optimizer = getattr(torch.optim, c.optim)(self.model.parameters(), **c.optim_args)
        data_iter = iter(loader)
        for _ in range(c.num_local_steps):
            try:
                data, target = next(data_iter)
            except StopIteration:
                data_iter = iter(loader)
                data, target = next(data_iter)
            optimizer.zero_grad()
            self._loss(data, target).backward()
            optimizer.step()
        self.model_state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        self.val_results = {"current_local_steps": c.num_local_steps}
        if c.get("use_secure_agg", False):  # the delta local - global plus the pairwise masks, flattened
            delta = torch.cat([(v - start[k]).reshape(-1) for k, v in self.model_state.items()])
            if c.get("secure_agg_client_weights_mode", "equal") == "num_examples":  # pre-scaled by n_i / n
                delta = delta * len(self.train_dataset) / self.runtime_context["global_num_examples_sum"]
            flat = delta + _mask(self.client_id, delta.numel(), self.runtime_context)
            if SLIP["secure_flats_float32"]:
                flat = (delta.to(torch.float32) + _mask(self.client_id, delta.numel(), self.runtime_context).to(
                    torch.float32)).to(delta.dtype)
            self.model_state = {"type": "masked_update_flat", "flat": flat,
                                "shapes": [(k, tuple(v.shape)) for k, v in self.model_state.items()],
                                "num_examples": len(self.train_dataset)}

    def _loss(self, data, target) -> torch.Tensor:
        return self.loss_fn(self.model(data), target)

    def get_parameters(self):
        return self.model_state, self.val_results


class FedProxTrainer(VanillaTrainer):
    """``VanillaTrainer`` with (mu/2)||w - w^t||^2 added to each batch's loss, w^t the model it was built with
    (``train_configs.mu``, default 0.01)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.mu = float(self.train_configs.get("mu", 0.01))
        self.global_params = {n: p.detach().clone() for n, p in self.model.named_parameters()}

    def _loss(self, data, target) -> torch.Tensor:
        half = 1.0 if SLIP["prox_without_half"] else 0.5
        prox = sum(torch.sum((p - self.global_params[n]) ** 2) for n, p in self.model.named_parameters())
        return super()._loss(data, target) + half * self.mu * prox


def _mask(cid: str, size: int, context: dict) -> torch.Tensor:
    """Pairwise masks that cancel in the sum over the round's clients: +r_ab for a < b, -r_ab for a > b."""
    mask = torch.zeros(size)
    for other in context["all_client_ids"]:
        if other != cid:
            a, b = sorted((cid, other))
            seed = int.from_bytes(hashlib.sha256(f"{context['round_id']}|{a}|{b}".encode()).digest()[:7], "big")
            r = torch.randn(size, generator=torch.Generator().manual_seed(seed))
            mask = mask + (r if cid < other else -r)
    return mask


class FedAvgAggregator:
    def __init__(self, model=None, aggregator_configs: DictConfig = DictConfig(), logger=None) -> None:  # noqa: B008 -- APPFL's own signature
        self.model, self.aggregator_configs = model, aggregator_configs
        self.client_weights_mode = aggregator_configs.get("client_weights_mode", "equal")
        self.global_state: dict | None = None
        self.step: dict = {}

    def aggregate(self, local_models: dict, **kwargs) -> dict:
        if self.aggregator_configs.get("use_secure_agg", False):
            return self._aggregate_masked(local_models)
        if self.global_state is None:
            self.global_state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        self.compute_steps(local_models)
        self.global_state = {k: v + self.step[k] for k, v in self.global_state.items()}
        self.step = {}
        return {k: v.clone() for k, v in self.global_state.items()}

    def _aggregate_masked(self, payloads: dict) -> dict:
        """The masked deltas' equal-weight mean added to the global state, which starts at the model (APPFL's
        first round starts from the averaged delta alone: ``SLIP["secure_first_round_delta"]``)."""
        mean = sum(p["flat"] for p in payloads.values()) / len(payloads)
        if (self.aggregator_configs.get("secure_agg_client_weights_mode", "equal") == "num_examples"
                and not SLIP["secure_weighted_mean"]):
            mean = mean * len(payloads)  # the clients' deltas carry n_i / n already: their sum is the average
        shapes, out, pos = next(iter(payloads.values()))["shapes"], {}, 0
        for k, shape in shapes:
            size = int(torch.tensor(shape).prod()) if shape else 1
            out[k], pos = mean[pos:pos + size].reshape(shape), pos + size
        if self.global_state is None:
            self.global_state = ({k: torch.zeros_like(v) for k, v in out.items()} if SLIP["secure_first_round_delta"]
                                 else {k: v.detach().clone() for k, v in self.model.state_dict().items()})
        self.global_state = {k: v + out[k] for k, v in self.global_state.items()}
        return {k: v.clone() for k, v in self.global_state.items()}

    def compute_steps(self, local_models: dict) -> None:
        sizes = getattr(self, "client_sample_size", {})
        if SLIP["sample_size_ids_missed"]:
            sizes = {}
        total = sum(sizes[cid] for cid in local_models if cid in sizes)
        self.step = {k: torch.zeros_like(v) for k, v in self.global_state.items()}
        for cid, model in local_models.items():
            if self.client_weights_mode == "sample_size" and cid in sizes and total > 0:
                weight = sizes[cid] / total
            else:  # APPFL falls back to equal weights silently
                weight = 1.0 / len(local_models)
            for k in self.step:
                self.step[k] = self.step[k] + weight * (model[k] - self.global_state[k])


class FedAvgMAggregator(FedAvgAggregator):
    def __init__(self, model=None, aggregator_configs: DictConfig = DictConfig(), logger=None) -> None:  # noqa: B008 -- APPFL's own signature
        super().__init__(model, aggregator_configs, logger)
        self.v_vector: dict = {}

    def compute_steps(self, local_models: dict) -> None:
        super().compute_steps(local_models)
        beta = self.aggregator_configs.server_momentum_param_1
        for k, d in self.step.items():
            self.v_vector[k] = beta * self.v_vector.get(k, torch.zeros_like(d)) + d
            self.step[k] = self.v_vector[k].clone()


class _Adaptive(FedAvgAggregator):
    """FedAdam / FedYogi / FedAdagrad: m and v start at 0 and tau^2 when ``m_vector`` is empty."""

    def __init__(self, model=None, aggregator_configs: DictConfig = DictConfig(), logger=None) -> None:  # noqa: B008 -- APPFL's own signature
        super().__init__(model, aggregator_configs, logger)
        self.m_vector: dict = {}
        self.v_vector: dict = {}

    def _v(self, v: torch.Tensor, d2: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def compute_steps(self, local_models: dict) -> None:
        super().compute_steps(local_models)
        c = self.aggregator_configs
        if not self.m_vector:
            v0 = 0.0 if SLIP["v_starts_at_zero"] else c.server_adapt_param ** 2
            self.m_vector = {k: torch.zeros_like(d) for k, d in self.step.items()}
            self.v_vector = {k: torch.zeros_like(d) + v0 for k, d in self.step.items()}
        for k, d in self.step.items():
            self.m_vector[k] = c.server_momentum_param_1 * self.m_vector[k] + (1 - c.server_momentum_param_1) * d
            self.v_vector[k] = self._v(self.v_vector[k], torch.square(d))
            self.step[k] = c.server_learning_rate * self.m_vector[k] / (torch.sqrt(self.v_vector[k])
                                                                          + c.server_adapt_param)


class FedAdamAggregator(_Adaptive):
    def _v(self, v: torch.Tensor, d2: torch.Tensor) -> torch.Tensor:
        b2 = self.aggregator_configs.server_momentum_param_2
        return b2 * v + (1 - b2) * d2


class FedYogiAggregator(_Adaptive):
    def _v(self, v: torch.Tensor, d2: torch.Tensor) -> torch.Tensor:
        return v - (1 - self.aggregator_configs.server_momentum_param_2) * d2 * torch.sign(v - d2)


class FedAdagradAggregator(_Adaptive):
    def _v(self, v: torch.Tensor, d2: torch.Tensor) -> torch.Tensor:
        return v + d2


def _mod(name: str, **attrs) -> types.ModuleType:
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


NAMES = ("omegaconf", "appfl")


def install() -> None:
    """Register the stand-in as ``omegaconf`` and ``appfl`` (with the submodules the driver imports)."""
    aggregators = {c.__name__: c for c in (FedAvgAggregator, FedAvgMAggregator, FedAdamAggregator,
                                           FedYogiAggregator, FedAdagradAggregator)}
    mods = {
        "omegaconf": _mod("omegaconf", DictConfig=DictConfig),
        "appfl": _mod("appfl"),
        "appfl.algorithm": _mod("appfl.algorithm"),
        "appfl.algorithm.aggregator": _mod("appfl.algorithm.aggregator", **aggregators),
        "appfl.algorithm.trainer": _mod("appfl.algorithm.trainer", VanillaTrainer=VanillaTrainer,
                                        FedProxTrainer=FedProxTrainer),
    }
    for name, mod in mods.items():  # ``import a.b`` binds b as an attribute of a
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(mods[parent], child, mod)
    sys.modules.update(mods)
