"""A stand-in for FedML 0.9.6's single-process SCAFFOLD with the shape drivers/fedml.py uses:
``fedml.simulation.sp.scaffold.scaffold_trainer`` (``ScaffoldTrainer(dataset, model, device, args)`` with
``client_list[i].c_model_local``, ``c_model_global``, ``model_trainer.get_model_params()``, ``_client_sampling`` (FedML's own, seeded by the round index),
``_local_test_on_all_clients``, ``train()`` and a module-level ``mlops``) and ``fedml.ml.trainer.scaffold_trainer``
(whose ``nn.CrossEntropyLoss`` the driver replaces by the kit's least squares). Unlike FedML, it computes
Karimireddy et al.'s Alg. 1 (option II), so the driver's translation -- the kit's client ids mapped onto FedML's
indices 0..N-1, the state loaded and read back -- is what the test checks; ``SLIP["last_client_overwrites"]``
switches on FedML's first deviation (the sums replaced by the last client's, docs/frameworks.md) for the power
check. ``install()`` puts the modules in ``sys.modules``."""
from __future__ import annotations

import copy
import sys
import types

import numpy as np
import torch

SLIP: dict = {"last_client_overwrites": False, "sample_first": False, "gmf_reset": False,
              # FedML's second SCAFFOLD deviation: the new c_i is computed into a dict never loaded back
              "c_i_never_loaded": False,
              # FedML 0.9.6's FedNova trainer passes each client's weight p_i as torch.FloatTensor (float32)
              "fednova_float32_weights": False}


def _mod(name: str, **attrs) -> types.ModuleType:
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


class _ModelTrainer:
    def __init__(self, model):
        self.model = model

    def get_model_params(self) -> dict:
        return {k: v.detach().clone() for k, v in self.model.state_dict().items()}


class _Client:
    def __init__(self, idx: int, model):
        self.idx = idx
        self.c_model_local = copy.deepcopy(model)
        with torch.no_grad():
            self.c_model_local.weight.zero_()


class ScaffoldTrainer:
    def __init__(self, dataset, model, device, args):
        self.train_data_local_dict, self.args = dataset[5], args
        self.model_trainer = _ModelTrainer(model)
        self.c_model_global = copy.deepcopy(model)
        with torch.no_grad():
            self.c_model_global.weight.zero_()
        self.client_list = [_Client(i, model) for i in range(args.client_num_in_total)]

    def _client_sampling(self, round_idx, total, per_round):
        """FedML 0.9.6's ``_client_sampling``: every client at full participation, else NumPy seeded with the
        round index and a uniform draw without replacement (``SLIP["sample_first"]``: the first per_round)."""
        if total == per_round:
            return list(range(total))
        if SLIP["sample_first"]:
            return list(range(per_round))
        np.random.seed(round_idx)
        return np.random.choice(range(total), min(per_round, total), replace=False)

    def _local_test_on_all_clients(self, round_idx):  # pragma: no cover - replaced by the driver
        return None

    def train(self) -> None:
        criterion = sys.modules["fedml.ml.trainer.scaffold_trainer"].nn.CrossEntropyLoss()
        a, N = self.args, self.args.client_num_in_total
        x = self.model_trainer.model.weight.detach().clone()
        c = self.c_model_global.weight.detach().clone()
        dys, dcs = [], []
        for idx in self._client_sampling(0, N, a.client_num_per_round):
            client = self.client_list[idx]
            ci = client.c_model_local.weight.detach().clone()
            y = x.clone().requires_grad_(True)
            for _ in range(a.epochs):
                for Z, t in self.train_data_local_dict[idx]:
                    loss = criterion(Z @ y[0], t)
                    (g,) = torch.autograd.grad(loss, y)
                    y = (y - a.learning_rate * (g - ci + c)).detach().requires_grad_(True)
            y = y.detach()
            new_ci = ci - c + (x - y) / (a.epochs * a.learning_rate)
            dys.append(y - x)
            dcs.append(new_ci - ci)
            if not SLIP["c_i_never_loaded"]:
                with torch.no_grad():
                    client.c_model_local.weight.copy_(new_ci)
        if SLIP["last_client_overwrites"]:
            dy, dc = dys[-1], dcs[-1] * len(dcs)
        else:
            dy, dc = sum(dys) / len(dys), sum(dcs)
        with torch.no_grad():
            self.model_trainer.model.weight.copy_(x + a.server_lr * dy)
            self.c_model_global.weight.copy_(c + dc / N)


class FedNovaTrainer:
    """FedML 0.9.6's single-process FedNova trainer with plain local SGD (no momentum, no proximal term): each
    sampled client runs the batches of its loader once (tau_i steps), reports d_i = (x - y_i) / tau_i, and the
    server moves x by -tau_eff sum p_i d_i with p_i = n_i / the round's examples and tau_eff = sum p_i tau_i
    (Wang et al. 2020, eq. (7) for SGD); ``client_sampling`` is FedML's (seeded with the round index)."""

    def __init__(self, dataset, model, device, args):
        self.args, self.model_global = args, model
        self.train_data_local_num_dict, self.train_data_local_dict = dataset[4], dataset[5]
        self.client_list = []
        self.setup_clients(dataset[4], dataset[5], dataset[6])
        # the server momentum buffer (Wang et al.'s code: buf = gmf buf + D / lr, x -= lr buf), kept across rounds;
        # SLIP["gmf_reset"] re-creates it every round, as FedML 0.9.6's FedNovaTrainer.train does (line 80)
        self.global_momentum_buffer = None

    def setup_clients(self, sizes, train, test) -> None:
        self.client_list = [types.SimpleNamespace(criterion=None) for _ in range(self.args.client_num_per_round)]

    client_sampling = ScaffoldTrainer._client_sampling

    def local_test_on_all_clients(self, *a, **k):  # pragma: no cover - replaced by the driver
        return None

    def train(self) -> None:
        a = self.args
        x = self.model_global.weight.detach().clone()
        idx = [int(i) for i in self.client_sampling(0, a.client_num_in_total, a.client_num_per_round)]
        total = float(sum(self.train_data_local_num_dict[i] for i in idx))
        step, tau_eff = torch.zeros_like(x), 0.0
        for client, i in zip(self.client_list, idx):
            y = x.clone().requires_grad_(True)
            batches = self.train_data_local_dict[i]
            for Z, t in batches:
                (g,) = torch.autograd.grad(client.criterion(Z @ y[0], t), y)
                y = (y - a.learning_rate * g).detach().requires_grad_(True)
            p = self.train_data_local_num_dict[i] / total
            if SLIP["fednova_float32_weights"]:
                p = float(torch.tensor(p, dtype=torch.float32))
            step += p * (x - y.detach()) / len(batches)
            tau_eff += p * len(batches)
        D = tau_eff * step
        if getattr(a, "gmf", 0.0):
            buf = self.global_momentum_buffer
            if buf is None or SLIP["gmf_reset"]:
                buf = D / a.learning_rate
            else:
                buf = a.gmf * buf + D / a.learning_rate
            self.global_momentum_buffer, D = buf, a.learning_rate * buf
        with torch.no_grad():
            self.model_global.weight.copy_(x - D)


def install() -> None:
    """Register the stand-in as ``fedml`` (and the submodules the driver imports) in ``sys.modules``."""
    mods = {
        "fedml": _mod("fedml"),
        "fedml.ml": _mod("fedml.ml"),
        "fedml.ml.trainer": _mod("fedml.ml.trainer"),
        "fedml.ml.trainer.scaffold_trainer": _mod("fedml.ml.trainer.scaffold_trainer", nn=torch.nn),
        "fedml.simulation": _mod("fedml.simulation"),
        "fedml.simulation.sp": _mod("fedml.simulation.sp"),
        "fedml.simulation.sp.scaffold": _mod("fedml.simulation.sp.scaffold"),
        "fedml.simulation.sp.scaffold.scaffold_trainer": _mod("fedml.simulation.sp.scaffold.scaffold_trainer",
                                                              ScaffoldTrainer=ScaffoldTrainer, mlops=None),
        "fedml.simulation.sp.fednova": _mod("fedml.simulation.sp.fednova"),
        "fedml.simulation.sp.fednova.fednova_trainer": _mod("fedml.simulation.sp.fednova.fednova_trainer",
                                                            FedNovaTrainer=FedNovaTrainer),
    }
    for name, mod in mods.items():  # ``import a.b`` binds b as an attribute of a
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(mods[parent], child, mod)
    sys.modules.update(mods)
