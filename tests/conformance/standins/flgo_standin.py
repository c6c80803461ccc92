"""A stand-in for flgo 0.4.4 with the shape drivers/flgo.py uses: ``flgo.VirtualCommunicator``, ``flgo.simulator``
(``DefaultSimulator``, ``base.ElemClock``), ``flgo.benchmark.base.BasicTaskCalculator``, ``flgo.utils.fflow``
(``GlobalVariable``, ``read_option_from_command``), ``flgo.utils.fmodule.FModule`` (model arithmetic through
``m.__class__()``) and ``flgo.algorithm.{fedavg,fedprox,scaffold,feddyn,fedavgm,fednova}`` (``Server``/``Client`` with
``register_clients``, ``set_data``, ``initialize`` -> ``init_algo_para``, ``sample`` (its 'full', 'uniform' and
'md' options; FedProx's ``Server.initialize`` switches to 'md' below full participation), ``communicate`` (which,
as flgo's, trains each distinct selected client once and receives it once per draw), ``iterate``). The algorithms are
re-typed from flgo's source as read for docs/frameworks.md; ``SLIP`` switches one deviation on for the power
check. ``install()`` puts the modules in ``sys.modules``."""
from __future__ import annotations

import copy
import sys
import types

import numpy as np
import torch

SLIP: dict = {"scaffold_c_over_S": False, "sample_first": False, "md_ignores_datavol": False,
              "md_repeats_once": False, "nova_tau_eff_unweighted": False}


def _mod(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


class FModule(torch.nn.Module):
    def _new(self, fn):
        res = self.__class__()
        for p_res, *ps in zip(res.parameters(), self.parameters(), *[o.parameters() for o in fn[1]]):
            with torch.no_grad():
                p_res.copy_(fn[0](*ps))
        return res

    def __add__(self, other):
        return self._new((lambda a, b: a + b, [other]))

    def __sub__(self, other):
        return self._new((lambda a, b: a - b, [other]))

    def __mul__(self, s):
        return self._new((lambda a: a * s, []))

    __rmul__ = __mul__

    def __truediv__(self, s):
        return self._new((lambda a: a / s, []))

    def __neg__(self):
        return self * -1.0

    def zeros_like(self):
        return self * 0.0

    def freeze_grad(self):
        for p in self.parameters():
            p.requires_grad = False

    def to(self, *a, **k):
        return self


def _model_sum(ms):
    out = ms[0]
    for m in ms[1:]:
        out = out + m
    return out


def _model_average(ms):
    return _model_sum(ms) / len(ms)


class BasicTaskCalculator:
    def __init__(self, device, optimizer_name="SGD"):
        self.device, self.optimizer_name = device, optimizer_name

    def get_optimizer(self, model=None, lr=0.1, weight_decay=0.0, momentum=0.0):
        return torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)


class GlobalVariable:
    def __init__(self, logger=None, dev_list=None, **_):
        self.logger, self.dev_list = logger, dev_list

    def apply_for_device(self):
        return self.dev_list[0]


def read_option_from_command():
    return {"aggregate": "other", "algo_para": None, "learning_rate": 0.1, "num_steps": 1, "batch_size": 64,
            "sample": "uniform", "proportion": 0.2, "seed": 0}


def setup_seed(seed):
    """flgo.utils.fflow.setup_seed: NumPy's global generator seeded with 21 + seed (random and torch too)."""
    np.random.seed(21 + seed)


class VirtualCommunicator:
    def __init__(self, objects):
        self.objects_map = {o.id: o for o in objects}

    def request(self, source, target, package):
        return self.objects_map[target].reply(package)


class ElemClock:
    def register_simulator(self, simulator=None):
        self.simulator = simulator


class DefaultSimulator:
    def __init__(self, objects, option):
        self.objects = objects

    def initialize(self):
        pass


class BasicClient:
    def __init__(self, option):
        self.option, self.id, self.train_data = option, None, None
        self.calculator = self.TaskCalculator(self.gv.apply_for_device(), option["optimizer"])
        self.learning_rate, self.num_steps = option["learning_rate"], option["num_steps"]
        self.momentum = option.get("momentum", 0.0)  # flgo's clients build torch SGD with option['momentum']

    def set_data(self, data, flag="train"):
        setattr(self, flag + "_data", data)
        self.datavol = len(data)

    def initialize(self):
        pass

    def get_batch_data(self):
        return next(iter(self.calculator.get_dataloader(self.train_data)))

    def _steps(self, model, extra=lambda model: 0.0, correct=None):
        opt = self.calculator.get_optimizer(model, lr=self.learning_rate, momentum=self.momentum)
        for _ in range(self.num_steps):
            model.zero_grad()
            loss = self.calculator.compute_loss(model, self.get_batch_data())["loss"] + extra(model)
            loss.backward()
            if correct:
                correct(model)
            opt.step()

    def train(self, model):
        self._steps(model)

    def reply(self, pkg):
        model = pkg["model"]
        self.train(model)
        return {"model": model}


class BasicServer:
    def __init__(self, option):
        self.option, self.aggregation_option, self.clients = option, option["aggregate"], []
        self.proportion, self.sample_option = option["proportion"], option["sample"]

    def register_clients(self, clients):
        self.clients, self.num_clients = clients, len(clients)

    def sample(self):
        """flgo's BasicServer.sample: 'full', or 'uniform' (np.random.choice without replacement) of
        max(int(N proportion), 1) clients."""
        all_clients = list(range(self.num_clients))
        per_round = max(min(int(self.num_clients * self.proportion), len(all_clients)), 1)
        if "full" in self.sample_option:
            return all_clients
        if SLIP["sample_first"]:
            return all_clients[:per_round]
        if "md" in self.sample_option:  # with replacement, by data volume (the slip: ignoring it)
            vols = np.array([self.clients[c].datavol for c in all_clients], dtype=np.float64)
            p = None if SLIP["md_ignores_datavol"] else vols / vols.sum()
            return list(np.random.choice(all_clients, per_round, replace=True, p=p))
        return list(np.random.choice(all_clients, per_round, replace=False))

    def init_algo_para(self, defaults):
        values = self.option["algo_para"] or list(defaults.values())
        for (name, _), v in zip(defaults.items(), values):
            for o in [self, *self.clients]:
                setattr(o, name, v)

    def initialize(self):
        pass

    def communicate(self, selected):
        """flgo's communicate: each distinct selected client trains once (``list(set(selected_clients))``), then
        the replies are listed per selected client, so a client drawn twice is received (and averaged) twice."""
        replied = {cid: self.gv.communicator.request(-1, cid, self.pack(cid)) for cid in list(set(selected))}
        if SLIP["md_repeats_once"]:
            selected = list(replied)
        replies = [replied[cid] for cid in selected]
        self.received_clients = selected
        return {k: [r[k] for r in replies] for k in replies[0]}

    def pack(self, cid):
        return {"model": copy.deepcopy(self.model)}

    def aggregate(self, models):
        if self.aggregation_option == "uniform":
            return _model_average(models)
        p = [self.clients[c].datavol for c in self.received_clients]
        return _model_sum([m * (pk / sum(p)) for m, pk in zip(models, p)])

    def iterate(self):
        self.selected_clients = self.sample()
        self.model = self.aggregate(self.communicate(self.selected_clients)["model"])


class FedProxServer(BasicServer):
    """flgo.algorithm.fedprox.Server.initialize: mu, 'md' sampling below full participation, uniform aggregation."""

    def initialize(self):
        self.init_algo_para({"mu": 0.1})
        self.sample_option = "md" if self.proportion < 1.0 else "full"
        self.aggregation_option = "uniform"


class FedProxClient(BasicClient):
    """flgo.algorithm.fedprox.Client.train: the loss plus mu/2 ||w - w_global||^2."""

    def train(self, model):
        src = copy.deepcopy(model)
        src.freeze_grad()
        self._steps(model, extra=lambda m: 0.5 * self.mu * sum(torch.sum((pm - ps) ** 2) for pm, ps in
                                                                 zip(m.parameters(), src.parameters())))


class ScaffoldServer(BasicServer):
    def initialize(self):
        self.init_algo_para({"eta": 1.0})
        self.cg = self.model.zeros_like()

    def pack(self, cid):
        return {"model": copy.deepcopy(self.model), "cg": self.cg}

    def iterate(self):
        self.selected_clients = self.sample()
        res = self.communicate(self.selected_clients)
        n = len(res["dc"]) if SLIP["scaffold_c_over_S"] else self.num_clients
        self.model = self.model + self.eta * _model_average(res["dy"])
        self.cg = self.cg + _model_sum(res["dc"]) / n


class ScaffoldClient(BasicClient):
    def initialize(self):
        self.c = None

    def reply(self, pkg):
        model, cg = pkg["model"], pkg["cg"]
        src = copy.deepcopy(model)
        if self.c is None:
            self.c = cg.zeros_like()

        def correct(m):
            for pm, pcg, pc in zip(m.parameters(), cg.parameters(), self.c.parameters()):
                pm.grad = pm.grad - pc + pcg
        self._steps(model, correct=correct)
        dy = model - src
        dc = -dy / (self.num_steps * self.learning_rate) - cg
        self.c = self.c + dc
        return {"dy": dy, "dc": dc}


class FedDynServer(BasicServer):
    """flgo.algorithm.feddyn.Server: h = h - alpha/N (sum of the received models - |S| x); x+ = mean - h/alpha."""

    def initialize(self):
        self.init_algo_para({"alpha": 0.1})
        self.h = self.model.zeros_like()

    def aggregate(self, models):
        self.h = self.h - (self.alpha / self.num_clients) * (_model_sum(models) - self.model * float(len(models)))
        return _model_average(models) - self.h * (1.0 / self.alpha)


class FedDynClient(BasicClient):
    """flgo.algorithm.feddyn.Client.train: loss - <gradL, w> + alpha/2 ||w - w_global||^2 (gradL a constant), then
    gradL = gradL - alpha (w - w_global)."""

    def initialize(self):
        self.gradL = None

    def train(self, model):
        if self.gradL is None:
            self.gradL = model.zeros_like()
        src = copy.deepcopy(model)
        src.freeze_grad()

        def extra(m):
            return sum(-torch.dot(pg.view(-1), pm.view(-1)) + 0.5 * self.alpha * torch.sum((pm - ps) ** 2)
                       for pg, pm, ps in zip(self.gradL.parameters(), m.parameters(), src.parameters()))
        self._steps(model, extra=extra)
        self.gradL = self.gradL - (model - src) * self.alpha


class FedAvgMServer(BasicServer):
    """flgo.algorithm.fedavgm.Server: v = beta v + (x - aggregate), x+ = x - v."""

    def initialize(self):
        self.init_algo_para({"beta": 0.01})
        self.v = self.model.zeros_like()

    def iterate(self):
        self.selected_clients = self.sample()
        new_model = self.aggregate(self.communicate(self.selected_clients)["model"])
        self.v = self.v * self.beta + (self.model - new_model)
        self.model = self.model - self.v


class FedNovaServer(BasicServer):
    """flgo.algorithm.fednova.Server: d_i = (y_i - x) / tau_i, p_i = n_i / all members' data, then (aggregate
    'other') p normalised over the received clients, x + (sum p_i tau_i) sum p_i d_i; 'uniform': mean tau, mean d;
    'weighted_com': p not normalised, x + (sum p_i tau_i) sum p_i d_i; 'weighted_scale': the same with the sum of the
    p_i d_i times N/K (fednova.py:20-39). The slip ``nova_tau_eff_unweighted`` sums the tau_i unweighted in the
    last two options."""

    def iterate(self):
        self.selected_clients = self.sample()
        res = self.communicate(self.selected_clients)
        ds = [(m - self.model) / t for m, t in zip(res["model"], res["tau"])]
        vols = [c.datavol for c in self.clients]
        p = [vols[c] / sum(vols) for c in self.received_clients]
        if self.aggregation_option == "uniform":
            tau_eff, delta = sum(res["tau"]) / len(ds), _model_average(ds)
        elif self.aggregation_option in ("weighted_com", "weighted_scale"):
            tau_eff = (sum(res["tau"]) if SLIP["nova_tau_eff_unweighted"]
                       else sum(t * pk for t, pk in zip(res["tau"], p)))
            delta = _model_sum([d * pk for d, pk in zip(ds, p)])
            if self.aggregation_option == "weighted_scale":
                delta = delta * (self.num_clients / len(ds))
        else:
            p = [pk / sum(p) for pk in p]
            tau_eff, delta = sum(t * pk for t, pk in zip(res["tau"], p)), _model_sum([d * pk for d, pk in zip(ds, p)])
        self.model = self.model + delta * tau_eff


class FedNovaClient(BasicClient):
    def reply(self, pkg):
        model = pkg["model"]
        self.train(model)
        return {"model": model, "tau": getattr(self, "_working_amount", self.num_steps)}


def install() -> None:
    """Register the stand-in as ``flgo`` (and its submodules) in ``sys.modules``."""
    algo = {"fedavg": (BasicServer, BasicClient), "fedprox": (FedProxServer, FedProxClient),
            "feddyn": (FedDynServer, FedDynClient), "fedavgm": (FedAvgMServer, BasicClient),
            "scaffold": (ScaffoldServer, ScaffoldClient), "fednova": (FedNovaServer, FedNovaClient)}
    mods = {f"flgo.algorithm.{k}": _mod(f"flgo.algorithm.{k}", Server=type("Server", (s,), {}),
                                         Client=type("Client", (c,), {})) for k, (s, c) in algo.items()}
    sim_base = _mod("flgo.simulator.base", ElemClock=ElemClock)
    mods.update({
        "flgo": _mod("flgo", VirtualCommunicator=VirtualCommunicator),
        "flgo.simulator": _mod("flgo.simulator", DefaultSimulator=DefaultSimulator, base=sim_base),
        "flgo.simulator.base": sim_base,
        "flgo.algorithm": _mod("flgo.algorithm", **{k: mods[f"flgo.algorithm.{k}"] for k in algo}),
        "flgo.benchmark": _mod("flgo.benchmark"),
        "flgo.benchmark.base": _mod("flgo.benchmark.base", BasicTaskCalculator=BasicTaskCalculator),
        "flgo.utils": _mod("flgo.utils"),
        "flgo.utils.fflow": _mod("flgo.utils.fflow", GlobalVariable=GlobalVariable,
                                 read_option_from_command=read_option_from_command, setup_seed=setup_seed),
        "flgo.utils.fmodule": _mod("flgo.utils.fmodule", FModule=FModule),
    })
    for name, mod in mods.items():  # ``import a.b`` binds b as an attribute of a
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(mods[parent], child, mod)
    sys.modules.update(mods)
