"""flgo 0.4.4 through the conformance contract, run in flgo's own virtual environment (not imported by fedtheory:
it needs torch and flgo). docs/frameworks.md has the command and the verdicts.

    cd fedtheory/conformance && /work/fw-venvs/flgo/bin/python remote_worker.py drivers/flgo.py:fedavg
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

Each call builds flgo's own objects for one round the way ``flgo.init`` does for a horizontal task: the algorithm
module's ``Server`` and one ``Client`` per member of the federation (flgo's ids 0..N-1; the kit's cids are labels,
mapped onto them by ``_slots``), ``register_clients``, ``set_data``, flgo's ``GlobalVariable``,
``VirtualCommunicator``, ``ElemClock`` and ``DefaultSimulator`` (ideal clients), ``initialize()`` with the
hyperparameter as ``option['algo_para']``; then it runs the server's own ``iterate()`` once. The only things the
driver supplies are what a flgo user supplies for a regression task: the task calculator (the kit's least squares
1/(2m)||Z x - y||^2, one full batch per step) and the model (a float64 linear FModule without bias).

Participants. Given the kit's participants (no ``clients_per_round``), flgo's ``full`` sample mode runs them all
(``Server.sample`` returns them; clients that do not participate are members without data that are never sampled).
Given the whole population and ``clients_per_round`` = m (the kit's sampling protocol, ``<family>.own_sampler``),
flgo's own ``Server.sample`` draws the round's members with the command line's default ``option['sample']``
('uniform': ``np.random.choice`` without replacement) and ``option['proportion']`` = (m + 1/2)/N, so flgo's
``max(int(N proportion), 1)`` is m; the driver reports ``server.selected_clients`` as the kit's cids. FedProx's
``Server.initialize`` replaces the sample option by 'md' below full participation (with replacement, by data
volume: Li et al.'s law, ``fedprox.own_sampler``); ``selected_clients`` then lists a client drawn twice twice. NumPy's global
generator, which flgo's sampler uses, is seeded once per run as ``flgo.init`` does (``fflow.setup_seed``), with a
seed drawn from the kit's generator; the rounds of a run then continue its stream, as in flgo's own loop.

State (read back after the round, loaded before it): SCAFFOLD ``server.cg`` / ``client.c``, FedDyn
``server.h`` / ``client.gradL``, FedAvgM ``server.v`` (flgo's v = -m: x+ = x - v).
"""
from __future__ import annotations

import sys

import numpy as np
import torch

torch.set_default_dtype(torch.float64)

import flgo  # noqa: E402
import flgo.simulator  # noqa: E402
import flgo.simulator.base  # noqa: E402
from flgo.algorithm import fedavg as flgo_fedavg  # noqa: E402
from flgo.algorithm import fedavgm as flgo_fedavgm  # noqa: E402
from flgo.algorithm import feddyn as flgo_feddyn  # noqa: E402
from flgo.algorithm import fedprox as flgo_fedprox  # noqa: E402
from flgo.algorithm import scaffold as flgo_scaffold  # noqa: E402
from flgo.benchmark.base import BasicTaskCalculator  # noqa: E402
from flgo.utils import fflow, fmodule  # noqa: E402


class LeastSquares(BasicTaskCalculator):
    """The task calculator a flgo user writes for regression: loss 1/(2m)||Z x - y||^2 on full batches."""

    def compute_loss(self, model, data, *args, **kwargs):
        Z, y = data
        return {"loss": 0.5 * torch.mean((model(Z).view(-1) - y) ** 2)}

    def get_dataloader(self, dataset, batch_size=64, *args, **kwargs):
        return torch.utils.data.DataLoader(dataset, batch_size=len(dataset), shuffle=False)

    def to_device(self, data, *args, **kwargs):
        return data

    def test(self, model, data, *args, **kwargs):
        return {}


class _Silent:
    def __getattr__(self, name):
        return lambda *a, **k: None


def _linear(d: int):
    """An FModule class with a no-argument constructor (flgo's model arithmetic calls ``m.__class__()``)."""
    def __init__(self):
        fmodule.FModule.__init__(self)
        self.lin = torch.nn.Linear(d, 1, bias=False)

    return type(f"Linear{d}", (fmodule.FModule,), {"__init__": __init__, "forward": lambda self, z: self.lin(z)})


def _module_of(cls, vec):
    m = cls()
    with torch.no_grad():
        m.lin.weight[:] = torch.tensor(np.asarray(vec, dtype=np.float64))[None, :]
    return m


def _vector(m) -> np.ndarray:
    return m.lin.weight.detach().numpy().reshape(-1).copy()


def _options(local_steps, local_step, algo_para, aggregate, proportion=None):
    argv, sys.argv = sys.argv, sys.argv[:1]
    try:
        option = fflow.read_option_from_command()
    finally:
        sys.argv = argv
    option.update(learning_rate=float(local_step), num_steps=int(local_steps), batch_size=10**9, gpu=[],
                  optimizer="SGD", momentum=0.0, weight_decay=0.0, clip_grad=0.0, learning_rate_decay=1.0,
                  algo_para=algo_para, server_with_cpu=True, no_tqdm=True, scene="horizontal",
                  task="fedtheory-kit", num_parallels=1)
    if proportion is None:  # the kit's participants: flgo's full participation
        option.update(sample="full", proportion=1.0)
    else:  # flgo's own sampler with its default sample option, at the kit's clients per round
        option["proportion"] = proportion
    if aggregate is not None:
        option["aggregate"] = aggregate
    return option


def _slots(clients, num_clients, known) -> dict:
    """The kit's cid -> flgo's member index (flgo numbers its clients 0..N-1; the kit's cids are labels, e.g. 10..
    or sparse ids). Stateful methods (``num_clients`` given): the cids with a state (``known``) and this round's
    participants, in sorted order, take the first members; the state is loaded and read back through this map, so
    it only has to hold within the round. Stateless ones: this round's clients by position (the kit may list one
    client twice)."""
    if not num_clients:
        return {}
    cids = sorted({int(c) for c in known} | {int(c.cid) for c in clients})
    if len(cids) > int(num_clients):
        raise ValueError(f"{len(cids)} distinct clients with a state or in the round, but num_clients={num_clients}")
    return {cid: slot for slot, cid in enumerate(cids)}


def _federation(algorithm, x, clients, num_clients, option, index, own_sampler=False):
    """flgo.init's horizontal setup for N members, the participants holding the kit's data. Stateful methods
    (``num_clients`` given) place members by ``index`` (the kit's cid -> member); stateless ones number this
    round's clients 0..n-1."""
    gv = fflow.GlobalVariable(logger=_Silent(), dev_list=[torch.device("cpu")])
    for cls in (algorithm.Server, algorithm.Client):
        cls.gv, cls.TaskCalculator = gv, LeastSquares
    slots = [index[int(c.cid)] for c in clients] if num_clients else list(range(len(clients)))
    N = int(num_clients or len(clients))
    members = [algorithm.Client(option) for _ in range(N)]
    for cid, c in enumerate(members):
        c.id, c.name = cid, f"client{cid}"
    server = algorithm.Server(option)
    server.name, server.id = "server", -1
    server.register_clients(members)
    Model = _linear(x.size)
    server.model = _module_of(Model, x)
    for slot, cl in zip(slots, clients):
        data = torch.utils.data.TensorDataset(torch.tensor(cl.features), torch.tensor(cl.targets))
        members[slot].set_data(data, "train")
    for c in members:
        if getattr(c, "train_data", None) is None:
            c.datavol = 0
    objects = [server, *members]
    gv.communicator = flgo.VirtualCommunicator(objects)
    gv.clock = flgo.simulator.base.ElemClock()
    gv.simulator = flgo.simulator.DefaultSimulator(objects, option)
    gv.simulator.initialize()
    gv.clock.register_simulator(simulator=gv.simulator)
    for ob in objects:
        ob.initialize()
        ob.gv = gv
    gv.simulator.gv = gv
    gv.clock.gv = gv
    if not own_sampler:
        server.sample = lambda: list(slots)
    return server, members, Model


#: The last model returned per algorithm: a call from another model starts a new run (flgo.init seeds it).
_LAST: dict = {}


def _round(algorithm, x, clients, num_clients, local_steps, local_step, algo_para=None, aggregate=None,
           load=None, read=None, state=None, clients_per_round=None, rng=None):
    own = clients_per_round is not None
    proportion = (int(clients_per_round) + 0.5) / len(clients) if own else None
    option = _options(local_steps, local_step, algo_para, aggregate, proportion)
    known = [cid for key in ("c_i", "g_i") for cid in (state or {}).get(key, {})]
    index = _slots(clients, num_clients, known)
    server, members, Model = _federation(algorithm, x, clients, num_clients, option, index, own)
    if load is not None and state is not None:
        load(server, members, Model, state, index)
    # a new run: a stateful method's first round (no state), a stateless one's call from a model it did not return
    last = _LAST.get(algorithm.__name__)
    fresh = state is None if read is not None else (last is None or last.shape != x.shape
                                                      or not np.array_equal(last, x))
    if own and fresh:
        fflow.setup_seed(int(rng.integers(0, 2**31 - 1)))  # seeded once per run, as flgo.init does
    server.iterate()
    x_new = _vector(server.model)
    _LAST[algorithm.__name__] = x_new
    out = x_new if read is None else (x_new, read(server, members, state, index))
    if not own:
        return out
    cid_of = {slot: cid for cid, slot in index.items()} if num_clients else {i: c.cid for i, c in enumerate(clients)}
    x_out, st = out if isinstance(out, tuple) else (out, None)
    return x_out, st, {"drawn": [int(cid_of[int(s)]) for s in server.selected_clients]}


def fedavg():
    """flgo.algorithm.fedavg with its default aggregation ('other': num_examples weights over the participants);
    checked as ``fedavg``. ``fedavg_uniform`` sets option['aggregate'] = 'uniform'."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, num_clients=None,
             clients_per_round=None, **_):
        if server_step != 1.0:
            raise ValueError(f"flgo's FedAvg has no server step; server_step must be 1.0, got {server_step}")
        return _round(flgo_fedavg, x, clients, None, local_steps, local_step, clients_per_round=clients_per_round,
                      rng=rng)
    return impl


def _no_server_step(name: str, server_step: float) -> None:
    """flgo's FedAvg and FedProx have no server step: checked with ``fixed=["server_step"]``, another value is
    refused rather than ignored."""
    if server_step != 1.0:
        raise ValueError(f"flgo's {name} has no server step; server_step must be 1.0, got {server_step}")


def fedavg_uniform():
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             clients_per_round=None, **_):
        _no_server_step("FedAvg", server_step)
        return _round(flgo_fedavg, x, clients, None, local_steps, local_step, aggregate="uniform",
                      clients_per_round=clients_per_round, rng=rng)
    return impl


def fedprox():
    """flgo.algorithm.fedprox (its Server forces aggregation_option = 'uniform'); algo_para = [mu]. Given
    ``clients_per_round`` (``fedprox.own_sampler``), its ``Server.initialize`` switches to ``sample_option = 'md'``
    (proportion < 1): ``np.random.choice`` with replacement, p_k = datavol_k / sum, Li et al.'s scheme; the driver
    reports ``server.selected_clients`` as drawn, repeats included."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0, server_step=1.0,
             clients_per_round=None, **_):
        _no_server_step("FedProx", server_step)
        return _round(flgo_fedprox, x, clients, None, local_steps, local_step, algo_para=[float(prox)],
                      clients_per_round=clients_per_round, rng=rng)
    return impl


def _load_scaffold(server, members, Model, state, index):
    server.cg = _module_of(Model, state["c"])
    for cid, c in state["c_i"].items():
        members[index[int(cid)]].c = _module_of(Model, c)


def _read_scaffold(server, members, state, index):
    c_i = dict((state or {"c_i": {}})["c_i"])
    c_i.update({cid: _vector(members[slot].c) for cid, slot in index.items() if members[slot].c is not None})
    return {"c": _vector(server.cg), "c_i": c_i}


def scaffold():
    """flgo.algorithm.scaffold; algo_para = [eta] (the server step)."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, num_clients=None,
             clients_per_round=None, **_):
        return _round(flgo_scaffold, x, clients, num_clients, local_steps, local_step,
                      algo_para=[float(server_step)], load=_load_scaffold, read=_read_scaffold, state=state,
                      clients_per_round=clients_per_round, rng=rng)
    return impl


def _load_feddyn(server, members, Model, state, index):
    server.h = _module_of(Model, state["h"])
    for cid, g in state["g_i"].items():
        members[index[int(cid)]].gradL = _module_of(Model, g)


def _read_feddyn(server, members, state, index):
    g_i = dict((state or {"g_i": {}})["g_i"])
    g_i.update({cid: _vector(members[slot].gradL) for cid, slot in index.items()
                if members[slot].gradL is not None})
    return {"h": _vector(server.h), "g_i": g_i}


def feddyn():
    """flgo.algorithm.feddyn; algo_para = [alpha]. Its clients take K SGD steps on their FedDyn objective; the
    kit's feddyn family solves it exactly, so K = 200 steps of size 1/(L + alpha) (as for FedLab)."""
    def impl(x, clients, *, state=None, rng=None, alpha=1.0, local_steps=200, local_step=None, num_clients=None,
             clients_per_round=None, **_):
        L = max(float(np.linalg.eigvalsh(c.features.T @ c.features / c.num_examples)[-1]) for c in clients)
        return _round(flgo_feddyn, x, clients, num_clients, local_steps or 200, local_step or 1.0 / (L + alpha),
                      algo_para=[float(alpha)], load=_load_feddyn, read=_read_feddyn, state=state,
                      clients_per_round=clients_per_round, rng=rng)
    return impl


def _load_fedavgm(server, members, Model, state, index):
    if "m" in state:
        server.v = _module_of(Model, -np.asarray(state["m"], dtype=np.float64))


def _read_fedavgm(server, members, state, index):
    return {"m": -_vector(server.v)}


def fedavgm():
    """flgo.algorithm.fedavgm: v = beta v + (x - mean), x+ = x - v (heavy ball with server step 1);
    algo_para = [beta]; checked as ``server_optimizer`` with optimizer="fedavgm", server_step=1."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, beta1=0.9,
             weighting="uniform", num_clients=None, clients_per_round=None, **_):
        if server_step != 1.0:
            raise ValueError(f"flgo's FedAvgM has no server learning rate (it is 1); server_step must be 1.0, "
                             f"got {server_step}")
        return _round(flgo_fedavgm, x, clients, num_clients, local_steps, local_step, algo_para=[float(beta1)],
                      load=_load_fedavgm, read=_read_fedavgm, state=state, clients_per_round=clients_per_round,
                      rng=rng)
    return impl


def _fednova(aggregate: str | None, weighting: str):
    """flgo.algorithm.fednova (checked as ``fednova``). Client i's tau_i enters the way flgo's completeness
    simulator sets it: ``update_client_completeness`` gives the client its ``_working_amount`` and
    ``with_completeness`` trains ``num_steps = _working_amount`` steps; FedNova's ``Client.pack`` reports that
    ``_working_amount`` as tau. The local optimiser is flgo's (torch SGD with option['momentum'])."""
    import importlib

    flgo_fednova = importlib.import_module("flgo.algorithm.fednova")  # imported when the factory is used

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, momentum=0.0, prox=0.0,
             tau_eff="norm", weighting=weighting, clients_per_round=None, **_):
        if prox or not isinstance(tau_eff, str):
            raise ValueError("flgo's FedNova has no proximal term and no server-chosen tau_eff (it uses "
                             f"sum p_i tau_i); prox must be 0 and tau_eff 'norm' or 'steps', got {prox}, {tau_eff!r}")
        taus = [int(local_steps[c.cid]) for c in clients]
        own = clients_per_round is not None
        option = _options(max(taus), local_step, [], aggregate,
                          (int(clients_per_round) + 0.5) / len(clients) if own else None)
        option["momentum"] = float(momentum)
        server, members, _ = _federation(flgo_fednova, x, clients, None, option, {}, own)
        for member, tau in zip(members, taus):
            member._working_amount = member.num_steps = tau
        last = _LAST.get("fednova")
        if own and (last is None or last.shape != x.shape or not np.array_equal(last, x)):
            fflow.setup_seed(int(rng.integers(0, 2**31 - 1)))  # a new run: seeded once, as flgo.init does
        server.iterate()
        x_new = _LAST["fednova"] = _vector(server.model)
        if not own:
            return x_new
        return x_new, None, {"drawn": [int(clients[int(i)].cid) for i in server.selected_clients]}
    return impl


def fednova():
    """flgo's FedNova with the option flgo's command line defaults to (aggregate 'other': p_i = n_i over the
    participants' data); checked as ``fednova``."""
    return _fednova(None, "num_examples")


def fednova_uniform():
    """flgo's FedNova with aggregate='uniform' (``flgo.init``'s default option): tau_eff = mean tau_i, the d_i
    averaged; checked as ``fednova`` with ``weighting="uniform"``."""
    return _fednova("uniform", "uniform")


def fednova_weighted_scale():
    """flgo's FedNova with aggregate='weighted_scale' (``flgo/algorithm/fednova.py:22-26``): p_i = n_i / sum of all
    members' data (not renormalised over the round's K received clients), tau_eff = sum_S p_i tau_i and
    Delta = (N/K) sum_S p_i d_i, x+ = x + tau_eff Delta. The N/K factor (Li et al. 2020's scheme II, as flgo's
    ``BasicServer.aggregate`` documents it) scales Delta only. At full participation (K = N) this is eq. (7) with
    p_i = n_i / n; checked as ``fednova`` with n_i weights."""
    return _fednova("weighted_scale", "num_examples")


def fednova_weighted_com():
    """flgo's FedNova with aggregate='weighted_com' (``flgo/algorithm/fednova.py:31-33``): p_i = n_i / sum of all
    members' data, not renormalised over the round's clients: x+ = x + (sum_S p_i tau_i)(sum_S p_i d_i). At full
    participation this is eq. (7) with p_i = n_i / n; checked as ``fednova`` with n_i weights."""
    return _fednova("weighted_com", "num_examples")
