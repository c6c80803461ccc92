"""A stand-in for FedML 0.9.6's single-process FedAvg, FedProx, FedOpt and FedDyn with the shape the driver's
factories ``fedavg``, ``fedprox``, ``fedopt_sgd``, ``fedopt_adam`` and ``feddyn``
(fedtheory/conformance/drivers/fedml.py) use:
``fedml.simulation.sp.fedavg.fedavg_api.FedAvgAPI(args, device, dataset, model)``,
``fedml.simulation.sp.fedprox.fedprox_trainer.FedProxTrainer(dataset, model, device, args)``,
``fedml.simulation.sp.fedopt.fedopt_api.FedOptAPI(args, device, dataset, model)`` (``opt``, a torch optimizer built
by ``args.server_optimizer`` with ``lr=args.server_lr`` only) and
``fedml.simulation.sp.feddyn.feddyn_trainer.FedDynTrainer(dataset, model, device, args)`` (``server_state``,
``client_list[i].old_grad``, ``_client_sampling``, ``test``), each with ``model_trainer.get_model_params()``,
``train()`` and a module-level ``mlops``; and the trainer modules whose ``nn.CrossEntropyLoss`` the driver replaces
(``fedml.ml.trainer.my_model_trainer_classification``, ``.fedprox_trainer``, ``.feddyn_trainer``). Like FedML's
classification trainer, the local training casts the targets with ``labels.long()``, so the driver's ``Targets``
is exercised.

Unlike FedML (docs/frameworks.md, FedML), the arithmetic is the papers': McMahan et al.'s n_k/n average, Li et al.'s
proximal term, the server step on x - average ("sgd": torch's SGD, as FedML; "adam": Reddi et al.'s Alg. 2), Acar et
al.'s Alg. 1. So the driver's translation -- dataset tuple, args, the targets through the cast, the state loaded and
read back, the server optimizer's state kept between rounds -- is what the test checks. ``SLIP["chained_clients"]``
switches on FedML's first-round deviation (each client starts from the previous client's trained model: ``w_global``
is the model's own ``state_dict``) and ``SLIP["dyn_penalty_on_data"]`` FedML's FedDyn clients (the dynamic
regulariser computed on ``param.data``: no gradient, plain SGD on f_i), for the power checks; the server's "adam" is
Alg. 2's step (``Alg2Adam``) unless ``SLIP["torch_adam"]`` makes it ``torch.optim.Adam``, FedML's; "adagrad" is
``torch.optim.Adagrad`` (torch's defaults, as FedML) unless ``SLIP["adagrad_accumulator"]`` starts its accumulator
elsewhere. ``SLIP["rounds_from_initial"]`` starts every round of ``train()``'s loop from the simulator's initial model
(not the previous round's aggregate), for the checks that judge FedML's round 2. ``install()``
puts the scaffold stand-in's modules and these in ``sys.modules``."""
from __future__ import annotations

import sys
import types

import torch

from . import fedml_standin

SLIP: dict = {"chained_clients": False, "dyn_penalty_on_data": False, "torch_adam": False,
              "adagrad_accumulator": 0.0, "rounds_from_initial": False}
NAMES = ("fedml",)
TRAINERS = ("my_model_trainer_classification", "fedprox_trainer", "feddyn_trainer")


class _ModelTrainer:
    def __init__(self, model, module: str):
        self.model, self.module = model, module

    def get_model_params(self) -> dict:
        return {k: v.detach().clone() for k, v in self.model.state_dict().items()}

    def set_model_params(self, params: dict) -> None:
        self.model.load_state_dict(params)


def _train(model, batches, args, module: str, prox: float = 0.0, old_grad=None, alpha: float = 0.0) -> None:
    """``args.epochs`` passes over ``batches`` of SGD (``args.learning_rate``) on the module's criterion, with the
    proximal term (mu/2)||w - w_0||^2 and FedDyn's -<g_i, w> + (alpha/2)||w - w_0||^2 where given."""
    criterion = sys.modules[f"fedml.ml.trainer.{module}"].nn.CrossEntropyLoss()
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate)
    for _ in range(args.epochs):
        for x, labels in batches:
            labels = labels.long()  # FedML's classification trainer does this
            loss = criterion(model(x), labels)
            for n, p in model.named_parameters():
                w = p.detach() if SLIP["dyn_penalty_on_data"] else p
                loss = loss + 0.5 * prox * torch.sum((p - start[n]) ** 2)
                if old_grad is not None:
                    loss = loss - torch.sum(w * old_grad[n]) + 0.5 * alpha * torch.sum((w - start[n]) ** 2)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


class _Client:
    def __init__(self, idx: int, model):
        self.idx = idx
        self.old_grad = {k: torch.zeros_like(v) for k, v in model.state_dict().items()}


class _Simulator:
    """The rounds' shared shape: ``train()`` runs ``args.comm_round`` rounds over ``_client_sampling``'s clients,
    each from the round's model (from the previous client's, with ``SLIP["chained_clients"]``)."""

    module = "my_model_trainer_classification"

    def __init__(self, dataset, model, args):
        self.args, self.sizes, self.data = args, dataset[4], dataset[5]
        self.model_trainer = _ModelTrainer(model, self.module)
        n = args.client_num_in_total if getattr(args, "initialize_all_clients", False) else args.client_num_per_round
        self.client_list = [_Client(i, model) for i in range(n)]

    def _client_sampling(self, round_idx, total, per_round):
        """FedML 0.9.6's ``_client_sampling``, the scaffold stand-in's (its ``SLIP["sample_first"]`` included)."""
        return fedml_standin.ScaffoldTrainer._client_sampling(self, round_idx, total, per_round)

    def _local_test_on_all_clients(self, round_idx):  # pragma: no cover - replaced by the driver
        raise AssertionError("the driver turns testing off")

    def _local(self, idx: int) -> dict:
        _train(self.model_trainer.model, self.data[idx], self.args, self.module, **self._extra(idx))
        return self.model_trainer.get_model_params()

    def _extra(self, idx: int) -> dict:
        return {}

    def _server(self, x: dict, locals_: list, ids: list) -> dict:
        total = sum(n for n, _ in locals_)
        return {k: sum(n / total * w[k] for n, w in locals_) for k in x}

    def train(self) -> None:
        initial = self.model_trainer.get_model_params()
        for round_idx in range(self.args.comm_round):
            x = initial if SLIP["rounds_from_initial"] else self.model_trainer.get_model_params()
            ids = list(self._client_sampling(round_idx, self.args.client_num_in_total,
                                             self.args.client_num_per_round))
            locals_ = []
            for idx in ids:
                if not SLIP["chained_clients"]:
                    self.model_trainer.set_model_params(x)
                locals_.append((self.sizes[idx], self._local(idx)))
            self.model_trainer.set_model_params(x)
            self.model_trainer.set_model_params(self._server(x, locals_, ids))


class FedAvgAPI(_Simulator):
    def __init__(self, args, device, dataset, model):
        super().__init__(dataset, model, args)


class FedProxTrainer(_Simulator):
    module = "fedprox_trainer"

    def __init__(self, dataset, model, device, args):
        super().__init__(dataset, model, args)

    def _extra(self, idx: int) -> dict:
        return {"prox": self.args.fedprox_mu}


class Alg2Adam(torch.optim.Optimizer):
    """Reddi et al.'s FedAdam step as a torch optimizer (m, v from 0; no bias correction; tau outside the square
    root), at ``torch.optim.Adam``'s defaults betas (0.9, 0.999), eps 1e-8. FedML's "adam" is ``torch.optim.Adam``
    (Kingma & Ba's): ``SLIP["torch_adam"]``."""

    def __init__(self, params, lr: float, betas=(0.9, 0.999), eps: float = 1e-8):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            (b1, b2), eps = group["betas"], group["eps"]
            for p in group["params"]:
                state = self.state[p]
                m = state.setdefault("m", torch.zeros_like(p))
                v = state.setdefault("v", torch.zeros_like(p))
                m.mul_(b1).add_((1 - b1) * -p.grad)  # Alg. 2's Delta is minus the pseudo-gradient
                v.mul_(b2).add_((1 - b2) * p.grad ** 2)
                p.add_(group["lr"] * m / (v.sqrt() + eps))


class FedOptAPI(_Simulator):
    def __init__(self, args, device, dataset, model):
        super().__init__(dataset, model, args)
        names = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam if SLIP["torch_adam"] else Alg2Adam,
                 "adagrad": self._adagrad}
        self.opt = names[args.server_optimizer](self.model_trainer.model.parameters(), lr=args.server_lr)

    @staticmethod
    def _adagrad(params, lr: float) -> torch.optim.Optimizer:
        """``torch.optim.Adagrad`` at torch's defaults, as FedML's ``OptRepo`` builds it: Reddi et al.'s FedAdagrad with
        beta1 = 0, v_0 = 0, tau = 1e-10; ``SLIP["adagrad_accumulator"]`` starts v elsewhere."""
        return torch.optim.Adagrad(params, lr=lr, initial_accumulator_value=SLIP["adagrad_accumulator"])

    def _server(self, x: dict, locals_: list, ids: list) -> dict:
        average = super()._server(x, locals_, ids)
        model = self.model_trainer.model
        model.load_state_dict(x)
        self.opt.zero_grad()
        for name, p in model.named_parameters():
            p.grad = (x[name] - average[name]).clone()  # the pseudo-gradient, as FedML's _set_model_global_grads
        self.opt.step()
        return {k: v.detach().clone() for k, v in model.state_dict().items()}


class FedDynTrainer(_Simulator):
    module = "feddyn_trainer"

    def __init__(self, dataset, model, device, args):
        super().__init__(dataset, model, args)
        self.server_state = {k: torch.zeros_like(v) for k, v in model.state_dict().items()}

    def test(self, *args, **kwargs):  # pragma: no cover - replaced by the driver
        raise AssertionError("the driver turns testing off")

    def _extra(self, idx: int) -> dict:
        return {"old_grad": self.client_list[idx].old_grad, "alpha": self.args.feddyn_alpha}

    def _local(self, idx: int) -> dict:
        x = self.model_trainer.get_model_params()
        out = super()._local(idx)
        a, client = self.args.feddyn_alpha, self.client_list[idx]
        client.old_grad = {k: client.old_grad[k] - a * (out[k] - x[k]) for k in out}  # Acar et al., Alg. 1
        return out

    def _server(self, x: dict, locals_: list, ids: list) -> dict:
        a, N = self.args.feddyn_alpha, self.args.client_num_in_total
        mean = {k: sum(w[k] for _, w in locals_) / len(locals_) for k in x}
        for k in x:
            self.server_state[k] = self.server_state[k] - a / N * sum(w[k] - x[k] for _, w in locals_)
        return {k: mean[k] - self.server_state[k] / a for k in x}


def _mod(name: str, **attrs) -> types.ModuleType:
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


def install() -> None:
    """The scaffold stand-in's modules and the single-process simulators above, in ``sys.modules``."""
    fedml_standin.install()
    mods = dict(sys.modules)
    new = {f"fedml.ml.trainer.{t}": _mod(f"fedml.ml.trainer.{t}", nn=torch.nn) for t in TRAINERS}
    for package, module, cls in (("fedavg", "fedavg_api", FedAvgAPI), ("fedprox", "fedprox_trainer", FedProxTrainer),
                                 ("fedopt", "fedopt_api", FedOptAPI), ("feddyn", "feddyn_trainer", FedDynTrainer)):
        new[f"fedml.simulation.sp.{package}"] = _mod(f"fedml.simulation.sp.{package}")
        new[f"fedml.simulation.sp.{package}.{module}"] = _mod(f"fedml.simulation.sp.{package}.{module}",
                                                              **{cls.__name__: cls, "mlops": None})
    mods.update(new)
    for name, mod in new.items():  # ``import a.b`` binds b as an attribute of a
        parent, _, child = name.rpartition(".")
        setattr(mods[parent], child, mod)
    sys.modules.update(new)
