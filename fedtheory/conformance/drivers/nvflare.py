"""NVIDIA FLARE 2.9.0 through the conformance contract, run in NVFlare's own virtual environment (not imported by
fedtheory: it needs torch and nvflare). docs/frameworks.md has the command and the verdicts.

    cd fedtheory/conformance && /work/fw-venvs/nvflare/bin/python remote_worker.py drivers/nvflare.py:fedavg
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

Server side: NVFlare's own controllers run their own ``run()`` for one round -- ``FedAvg`` (its in-time
``WeightedAggregationHelper`` weighted by ``NUM_STEPS_CURRENT_ROUND``, ``fedprox_mu`` sent as metadata),
``Scaffold`` (``scaffold_aggregate_fn`` and its global-control update) and ``FedOpt`` (a torch optimizer on the
server: SGD with momentum, Adam, Adagrad). What the driver replaces is the runtime around a controller: the
FL context is a plain ``FLContext``, events and logging are silent, and ``send_model`` / ``send_model_and_wait``
run the clients in process and hand their results to the controller's own callback, as NVFlare's simulator does
over its network.

Participants. Given the kit's participants (no ``clients_per_round``), ``sample_clients`` returns them all
(``num_clients`` = their number: every connected site takes part, as in NVFlare's examples). Given the whole
population and ``clients_per_round`` = m (the kit's sampling protocol, ``<family>.own_sampler``; FedAvg,
Scaffold and FedOpt), the controller's own ``sample_clients(num_clients)`` draws, with ``num_clients`` = m: NVFlare's
``BaseModelController.sample_clients`` (``nvflare/app_common/workflows/base_model_controller.py:451-469``) shuffles
the names of the engine's connected clients with Python's ``random.shuffle`` and keeps the first ``num_clients``,
m distinct sites uniformly. The engine the driver supplies only lists the population's sites ("site-<cid>");
Python's ``random``, which NVFlare never seeds, is seeded once per run from the kit's generator (so a verdict is
reproducible), and the rounds of a run continue its stream. The driver reports the sites the controller sent the
task to as the kit's cids. FedProx is not offered the protocol: its sampler is FedAvg's uniform one, while the
kit's ``fedprox.own_sampler`` judges Li et al.'s sampling by n_k/n with replacement (docs/frameworks.md, NVFlare).

Client side: what an NVFlare user writes with the Client API, as in NVFlare's examples -- a float64
``Linear(d, 1, bias=False)``, K full-batch ``torch.optim.SGD`` steps on the kit's least squares
1/(2m)||Z x - y||^2, ``PTFedProxLoss(mu)`` against the received model when the metadata carries ``fedprox_mu``,
``PTScaffoldHelper`` (``model_update`` after each step, ``terms_update`` after training) for SCAFFOLD, and the
result's ``NUM_STEPS_CURRENT_ROUND`` = K as in the examples (steps taken).

Recipes: ``FedOptRecipe`` (NVFlare's quick start for FedOpt) and ``FedAvgRecipeWithHE`` do not use these
controllers but ``ScatterAndGather`` with a persistor, an aggregator and a shareable generator; their factories
(``*_recipe``, ``fedavg_he``, at the end of this module) make ``ScatterAndGather``'s calls on those components.
"""
from __future__ import annotations

import copy
import importlib
import random

import numpy as np
import torch

torch.set_default_dtype(torch.float64)

from nvflare.apis.fl_constant import FLMetaKey  # noqa: E402
from nvflare.apis.fl_context import FLContext  # noqa: E402
from nvflare.apis.signal import Signal  # noqa: E402
from nvflare.app_common.abstract.fl_model import FLModel, ParamsType  # noqa: E402
from nvflare.app_common.app_constant import AlgorithmConstants  # noqa: E402
from nvflare.app_common.workflows.fedavg import FedAvg  # noqa: E402
from nvflare.app_common.workflows.scaffold import Scaffold  # noqa: E402
from nvflare.app_opt.pt.fedopt_ctl import FedOpt  # noqa: E402
from nvflare.app_opt.pt.fedproxloss import PTFedProxLoss  # noqa: E402
from nvflare.app_opt.pt.scaffold import PTScaffoldHelper  # noqa: E402

KEY = "lin.weight"


class Net(torch.nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.lin = torch.nn.Linear(d, 1, bias=False)

    def forward(self, z):
        return self.lin(z)


def _net(vec) -> Net:
    vec = np.asarray(vec, dtype=np.float64)
    net = Net(vec.size)
    with torch.no_grad():
        net.lin.weight[:] = torch.tensor(vec)[None, :]
    return net


def _weights(net) -> np.ndarray:
    return net.lin.weight.detach().numpy().copy()


# ----------------------------------------------------------------- the client (the user's training script)

class KitClient:
    """One site: the kit's data, and for SCAFFOLD its own PTScaffoldHelper (c_i lives there)."""

    def __init__(self, client):
        self.client = client
        self.Z, self.y = torch.tensor(client.features), torch.tensor(client.targets)
        self.scaffold = None

    def train(self, received: FLModel, local_steps: int, local_step: float, send_diff: bool) -> FLModel:
        w0 = np.asarray(received.params[KEY], dtype=np.float64).reshape(-1)
        model, global_model = _net(w0), _net(w0)
        optimizer = torch.optim.SGD(model.parameters(), lr=local_step)
        mu = (received.meta or {}).get(AlgorithmConstants.FEDPROX_MU)
        prox = PTFedProxLoss(mu=float(mu)) if mu else None
        ctrl = None
        if AlgorithmConstants.SCAFFOLD_CTRL_GLOBAL in (received.meta or {}):
            if self.scaffold is None:
                self.scaffold = PTScaffoldHelper()
                self.scaffold.init(model)
            self.scaffold._prepare_model(model)
            self.scaffold.load_global_controls(received.meta[AlgorithmConstants.SCAFFOLD_CTRL_GLOBAL])
            ctrl = self.scaffold.get_params()
        for _ in range(local_steps):
            optimizer.zero_grad()
            loss = 0.5 * torch.mean((model(self.Z).view(-1) - self.y) ** 2)
            if prox is not None:
                loss = loss + prox(model, global_model)
            loss.backward()
            optimizer.step()
            if ctrl is not None:
                self.scaffold.model_update(model, local_step, *ctrl)
        meta = {FLMetaKey.NUM_STEPS_CURRENT_ROUND: local_steps}
        if ctrl is not None:
            self.scaffold.terms_update(model, local_step, *ctrl, global_model)
            meta[AlgorithmConstants.SCAFFOLD_CTRL_DIFF] = self.scaffold.get_delta_controls()
        w = _weights(model)
        params = {KEY: w - w0[None, :]} if send_diff else {KEY: w}
        return FLModel(params=params, params_type=ParamsType.DIFF if send_diff else ParamsType.FULL, meta=meta,
                       current_round=received.current_round)


# ----------------------------------------------------------------- the runtime around a controller

class _Silent:
    def __call__(self, *a, **k):
        return None


def _build_component(config: dict):
    """What the server engine's component builder does with {"path": ..., "args": ...} (or "class_path", the
    key of newer NVFlare defaults)."""
    module, _, name = config.get("path", config.get("class_path", "")).rpartition(".")
    return getattr(importlib.import_module(module), name)(**config.get("args", {}))


class _Engine:
    """The server engine as ``sample_clients`` reads it: the connected clients, each with its ``name``."""

    def __init__(self, names):
        self.names = list(names)

    def get_clients(self):
        return [_Client(name) for name in self.names]


class _Client:
    def __init__(self, name: str):
        self.name = name


def _wire(ctl, sites: dict, local_steps, local_step, send_diff=False, own_sampler=False, sent=None):
    """Replace the controller's runtime (context, events, network) by in-process calls. With ``own_sampler`` the
    controller's own ``sample_clients`` draws from the engine's connected sites (every site of ``sites``); the
    sites a task is sent to are appended to ``sent``."""
    ctl.fl_ctx = FLContext()
    ctl.engine = _Engine(sites) if own_sampler else None
    ctl.abort_signal = Signal()
    for name in ("info", "warning", "debug", "error", "exception", "event", "fire_event_with_data", "save_model",
                 "log_info", "log_warning", "log_debug", "_maybe_cleanup_memory"):
        setattr(ctl, name, _Silent())
    ctl.panic = lambda msg, *a, **k: (_ for _ in ()).throw(RuntimeError(msg))
    if not own_sampler:
        ctl.sample_clients = lambda num_clients=None: list(sites)
    ctl.get_num_standing_tasks = lambda: 0
    ctl.build_component = _build_component

    def run_sites(targets, data):
        if sent is not None:
            sent.extend(targets)
        out = []
        for name in targets:
            res = sites[name].train(copy.deepcopy(data), local_steps, local_step, send_diff)
            res.meta["client_name"] = name
            out.append(res)
        return out

    def send_model(task_name="train", targets=None, data=None, callback=None, **_):
        for res in run_sites(targets, data):
            callback(res)

    ctl.send_model = send_model
    ctl.send_model_and_wait = lambda task_name="train", targets=None, data=None, **_: run_sites(targets, data)


def _sites(clients, by_cid: bool = False):
    """site name -> KitClient for this round's participants ("site-<cid>" for the stateful SCAFFOLD, whose
    state is keyed by client; positions otherwise, since the kit may list one client twice)."""
    return {f"site-{c.cid if by_cid else pos}": KitClient(c) for pos, c in enumerate(clients)}


def _cids(names) -> list[int]:
    return [int(name.split("-")[1]) for name in names]


def _new_run(rng) -> None:
    """A run of the controller's own sampler starts: Python's ``random`` (``sample_clients``' shuffle) seeded from
    the kit's generator, once, as a job's process would start it."""
    random.seed(int(rng.integers(0, 2**31 - 1)))


def fedavg(fedprox: bool = False):
    """NVFlare's ``FedAvg`` controller (``fedprox_mu`` set for FedProx). It has no server step: checked with
    ``fixed=["server_step"]``, another value is refused rather than ignored. Given ``clients_per_round`` (FedAvg
    only), ``FedAvg(num_clients=m)`` samples its own sites."""
    last: dict = {}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=None, server_step=1.0,
             clients_per_round=None, **_):
        if server_step != 1.0:
            raise ValueError(f"NVFlare's FedAvg has no server step; server_step must be 1.0, got {server_step}")
        own = clients_per_round is not None and not fedprox
        if own and not np.array_equal(last.get("x", np.empty(0)), x):  # a call from a model it did not return
            _new_run(rng)
        ctl = FedAvg(num_clients=int(clients_per_round) if own else len(clients), num_rounds=1,
                     model=FLModel(params={KEY: np.asarray(x)[None, :]}, params_type=ParamsType.FULL),
                     fedprox_mu=float(prox) if fedprox else None)
        sent: list = []
        _wire(ctl, _sites(clients, by_cid=own), local_steps, local_step, own_sampler=own, sent=sent)
        model = {}
        update = ctl.update_model
        ctl.update_model = lambda m, r: model.setdefault("m", update(m, r))
        ctl.run()
        x_new = np.asarray(model["m"].params[KEY], dtype=np.float64).reshape(-1)
        last["x"] = x_new
        return (x_new, None, {"drawn": _cids(sent)}) if own else x_new
    return impl


def fedprox():
    return fedavg(fedprox=True)


def scaffold():
    """NVFlare's ``Scaffold`` controller with ``PTScaffoldHelper`` sites. Each site keeps c_i in its helper (as
    a site does between rounds): the kit's state is loaded into the helpers and into the controller's
    ``_global_ctrl_weights`` before the round and read back after it. Given ``clients_per_round``,
    ``Scaffold(num_clients=m)`` samples its own sites from the population (a run starts with no state)."""

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, num_clients=None,
             clients_per_round=None, **_):
        if server_step != 1.0:
            raise ValueError(f"NVFlare's Scaffold has no server step; server_step must be 1.0, got {server_step}")
        own = clients_per_round is not None
        if own and state is None:
            _new_run(rng)
        ctl = Scaffold(num_clients=int(clients_per_round) if own else len(clients), num_rounds=1)
        sites = _sites(clients, by_cid=True)
        sent: list = []
        _wire(ctl, sites, local_steps, local_step, own_sampler=own, sent=sent)
        ctl.load_model = lambda: FLModel(params={KEY: np.asarray(x)[None, :]}, params_type=ParamsType.FULL)
        ctl.start_round, ctl.current_round = 0, 0
        ctl.initialize = None
        ctl.model = ctl.load_model()
        c = np.zeros(x.size) if state is None else np.asarray(state["c"], dtype=np.float64)
        ctl._global_ctrl_weights = {KEY: c[None, :].copy()}
        for name, site in sites.items():
            cid = int(name.split("-")[1])
            ci = None if state is None else state["c_i"].get(cid)
            site.scaffold = PTScaffoldHelper()
            site.scaffold.init(_net(x))
            if ci is not None:
                site.scaffold.c_local.load_state_dict({KEY: torch.tensor(np.asarray(ci)[None, :])})
        ctl._run_rounds()
        c_i = dict((state or {"c_i": {}})["c_i"])
        for name in (sent if own else sites):  # the sites that trained (a site not sampled keeps its c_i)
            c_i[int(name.split("-")[1])] = sites[name].scaffold.c_local.state_dict()[KEY].numpy().reshape(-1).copy()
        out = (np.asarray(ctl.model.params[KEY], dtype=np.float64).reshape(-1),
               {"c": np.asarray(ctl._global_ctrl_weights[KEY], dtype=np.float64).reshape(-1), "c_i": c_i})
        return (*out, {"drawn": _cids(sent)}) if own else out
    return impl


def _user_model(d: int) -> Net:
    """The server's ``source_model`` as a user builds it: the model class with torch's default initialisation (a
    fixed seed, so a run is repeatable), not loaded from the initial checkpoint."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return Net(d)


def _fedopt(optimizer: str, constant_lr: bool = True, checkpoint: bool = False):
    """NVFlare's ``FedOpt`` controller with a torch optimizer on the server (``optimizer_args``). With
    ``constant_lr`` (configured as the paper: Reddi et al. 2021, Alg. 2 has one eta) the schedule is
    ``ConstantLR`` with factor 1; without it, ``FedOpt``'s default ``lr_scheduler_args`` (as shipped), stepped
    by the controller after every round. The controller (with its server model, optimizer and schedule state)
    lives in the worker across calls; the kit's state names the round, and a state the kit did not produce
    restarts the controller. Given ``clients_per_round``, ``num_clients`` = m and ``FedAvg.run``'s
    ``sample_clients`` draws the sites (a new controller starts a run). With ``checkpoint`` the kit's x is the initial checkpoint (``FedOpt(model=...)``, as
    a persistor's ``source_ckpt_file_full_name`` or ``FedOptRecipe(initial_ckpt=...)`` provides it) and
    ``source_model`` is the user's model object as built (:func:`_user_model`); without it the driver builds the
    source model at x, so the two agree."""
    kept: dict = {}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=0.1, beta1=0.9,
             beta2=0.99, tau=1e-3, initial_v=0.0, clients_per_round=None, **_):
        args = _optimizer_args(optimizer, server_step, beta1, beta2, tau, initial_v)["args"]
        token = None if state is None else state.get("token")
        own = clients_per_round is not None
        if token is None or kept.get("token") != token:
            if own:
                _new_run(rng)
            source = _user_model(np.size(x)) if checkpoint else _net(x)
            schedule = {"lr_scheduler_args": {"path": "torch.optim.lr_scheduler.ConstantLR",
                                              "args": {"factor": 1.0, "total_iters": 0}}} if constant_lr else {}
            ctl = FedOpt(num_clients=len(clients), num_rounds=1, source_model=source,
                         optimizer_args={"path": f"torch.optim.{optimizer}", "args": args}, device="cpu",
                         model=FLModel(params={KEY: np.asarray(x)[None, :]}, params_type=ParamsType.FULL),
                         **schedule)
            kept.clear()
            kept.update(ctl=ctl, round=0, first=True)
        ctl = kept["ctl"]
        ctl.num_clients = int(clients_per_round) if own else len(clients)  # FedAvg.run samples num_clients sites
        sent: list = []
        _wire(ctl, _sites(clients, by_cid=own), local_steps, local_step, send_diff=True, own_sampler=own, sent=sent)
        ctl.model = FLModel(params={KEY: np.asarray(x)[None, :]}, params_type=ParamsType.FULL)
        ctl.start_round = kept["round"]
        if kept.pop("first", False):
            ctl.run()          # builds the optimizer and the schedule, then FedAvg.run's round
        else:
            FedAvg.run(ctl)    # later rounds: the same optimizer (its state is the server state)
        kept["round"] += 1
        kept["token"] = f"{id(ctl)}:{kept['round']}"
        x_new = np.asarray(ctl.torch_model.lin.weight.detach().numpy(), dtype=np.float64).reshape(-1).copy()
        return (x_new, {"token": kept["token"]}) + (({"drawn": _cids(sent)},) if own else ())
    return impl


def fedavgm():
    """FedOpt with torch.optim.SGD(lr = eta, momentum = beta1): heavy ball on -Delta (FedAvgM)."""
    return _fedopt("SGD")


def fedadam():
    """FedOpt with torch.optim.Adam(lr = eta, betas = (beta1, beta2), eps = tau)."""
    return _fedopt("Adam")


def fedadagrad():
    """FedOpt with torch.optim.Adagrad(lr = eta, eps = tau, initial_accumulator_value = v_-1)."""
    return _fedopt("Adagrad")


def fedavgm_shipped():
    """FedOpt SGD with momentum and ``FedOpt``'s default learning-rate schedule (as shipped)."""
    return _fedopt("SGD", constant_lr=False)


def fedadam_shipped():
    """FedOpt Adam with ``FedOpt``'s default learning-rate schedule (as shipped)."""
    return _fedopt("Adam", constant_lr=False)


def fedadagrad_shipped():
    """FedOpt Adagrad with ``FedOpt``'s default learning-rate schedule (as shipped)."""
    return _fedopt("Adagrad", constant_lr=False)


def fedavgm_checkpoint():
    """FedOpt SGD with momentum, a constant schedule, and the kit's x as the initial checkpoint while the server
    optimizer's ``source_model`` is the user's model as built."""
    return _fedopt("SGD", checkpoint=True)


# ----------------------------------------------------------------- FedOptRecipe's path (NVFlare's quick start)

class _RecipeEngine:
    """What the server engine gives the recipe's components: its components by id and the component builder."""

    def __init__(self, components: dict):
        self.components = components

    def get_component(self, cid):
        return self.components.get(cid)

    def build_component(self, config: dict):
        return _build_component(config)

    def fire_event(self, *a, **k):   # the components' log events (no handlers here)
        return None


def _optimizer_args(optimizer: str, server_step, beta1, beta2, tau, initial_v) -> dict:
    """The recipe's ``optimizer_args`` for the kit's hyperparameters (eta = lr, beta1 = momentum or Adam's first
    beta, tau = eps, v_-1 = Adagrad's initial accumulator), in the recipe's own format."""
    args = {"lr": float(server_step)}
    if optimizer == "SGD":
        args["momentum"] = float(beta1)
    elif optimizer == "Adam":
        args.update(betas=(float(beta1), float(beta2)), eps=float(tau))
    else:
        if beta1 != 0.0:
            raise ValueError(f"torch.optim.Adagrad has no momentum; beta1 must be 0.0, got {beta1}")
        args.update(eps=float(tau), initial_accumulator_value=float(initial_v))
    return {"path": f"torch.optim.{optimizer}", "args": args, "config_type": "dict"}


def _server_components(recipe) -> dict:
    """The server components a recipe registered (id -> object), as its job would deploy them: the recipe's
    ``_job`` and the job's ``_deploy_map`` are private, but they hold the very objects ``FedOptRecipe`` built."""
    return recipe._job._deploy_map["server"].app_config.components


def _recipe_fedopt(optimizer: str, checkpoint: bool = False):
    """``FedOptRecipe`` (``nvflare/app_opt/pt/recipes/fedopt.py``) as its server runs it. The driver builds the
    recipe itself (``model``, ``optimizer_args``, ``device="cpu"``, the recipe's default ``lr_scheduler_args=None``
    and aggregator) and runs the server components it registered: ``PTFileModelPersistor(model="model")`` loads
    the initial global model, ``ScatterAndGather`` sends it through ``PTFedOptModelShareableGenerator``'s
    ``learnable_to_shareable``, the clients return WEIGHT_DIFF with ``NUM_STEPS_CURRENT_ROUND`` (the recipe's
    ``TransferType.DIFF``), ``InTimeAccumulateWeightedAggregator(expected_data_kind=WEIGHT_DIFF)`` averages them,
    and the generator's ``shareable_to_learnable`` (``server_update``) steps the ``"model"`` component with the torch
    optimizer. The calls are ``ScatterAndGather.start_controller`` / ``control_flow``'s
    (``scatter_and_gather.py:201-221``, 254-308); the driver replaces the controller's task machinery (and the
    client's ``train_script``, whose training is :class:`KitClient`), not what it calls.

    The ``"model"`` component is the model the user passes to the recipe: built at the kit's x, so the persistor's
    initial global model is x. With ``checkpoint`` it is the user's model as built (:func:`_user_model`) and the
    kit's x is the recipe's ``initial_ckpt``, an absolute path the persistor loads. The components (the optimizer's
    state is the server state) live in the worker across calls, as the server keeps them across rounds; the kit's
    state names the round."""
    # here, not at the top: the recipe's modules, so that the controller factories do not need them
    import os
    import tempfile

    from nvflare.apis.event_type import EventType
    from nvflare.apis.fl_constant import FLContextKey, ReservedKey
    from nvflare.app_common.app_constant import AppConstants
    from nvflare.app_common.utils.fl_model_utils import FLModelUtils
    from nvflare.app_opt.pt.recipes.fedopt import FedOptRecipe

    kept: dict = {}
    workspace = tempfile.mkdtemp(prefix="fedtheory-nvflare-")
    script = os.path.join(workspace, "client.py")   # the recipe's train_script: its training is KitClient's
    with open(script, "w") as f:
        f.write("# the clients' training is fedtheory's KitClient (drivers/nvflare.py)\n")

    def start(x, hyper) -> None:
        model = _user_model(np.size(x)) if checkpoint else _net(x)
        ckpt = None
        if checkpoint:
            ckpt = os.path.join(workspace, f"initial-{len(os.listdir(workspace))}.pt")
            torch.save({KEY: torch.tensor(np.asarray(x, dtype=np.float64)[None, :])}, ckpt)
        recipe = FedOptRecipe(model=model, initial_ckpt=ckpt, min_clients=1, train_script=script,
                              optimizer_args=_optimizer_args(optimizer, **hyper), device="cpu")
        components = _server_components(recipe)
        persistor, generator = components["persistor"], components["shareable_generator"]
        aggregator = components["aggregator"]
        fl_ctx = FLContext()
        fl_ctx.set_prop(ReservedKey.ENGINE, _RecipeEngine(components), private=True, sticky=False)
        fl_ctx.set_prop(FLContextKey.APP_ROOT, workspace, private=True, sticky=False)
        for component in (persistor, generator, aggregator):
            component.log_info = _Silent()
            component.handle_event(EventType.START_RUN, fl_ctx)   # the engine fires START_RUN on every component
        global_model = persistor.load_model(fl_ctx)
        kept.clear()
        kept.update(fl_ctx=fl_ctx, generator=generator, aggregator=aggregator, global_model=global_model, round=0)

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=0.1, beta1=0.9,
             beta2=0.99, tau=1e-3, initial_v=0.0, **_):
        token = None if state is None else state.get("token")
        if token is None or kept.get("token") != token:
            start(x, dict(server_step=server_step, beta1=beta1, beta2=beta2, tau=tau, initial_v=initial_v))
        fl_ctx, generator, aggregator = kept["fl_ctx"], kept["generator"], kept["aggregator"]
        fl_ctx.set_prop(AppConstants.GLOBAL_MODEL, kept["global_model"], private=True, sticky=True)
        fl_ctx.set_prop(AppConstants.CURRENT_ROUND, kept["round"], private=True, sticky=True)
        task = generator.learnable_to_shareable(kept["global_model"], fl_ctx)
        for name, site in _sites(clients).items():
            received = FLModelUtils.from_shareable(copy.deepcopy(task))
            result = FLModelUtils.to_shareable(site.train(received, local_steps, local_step, send_diff=True))
            result.set_peer_props({ReservedKey.IDENTITY_NAME: name})
            result.add_cookie(AppConstants.CONTRIBUTION_ROUND, kept["round"])
            if not aggregator.accept(result, fl_ctx):
                raise RuntimeError(f"InTimeAccumulateWeightedAggregator refused {name}'s result")
        kept["global_model"] = generator.shareable_to_learnable(aggregator.aggregate(fl_ctx), fl_ctx)
        kept["round"] += 1
        kept["token"] = f"{id(generator)}:{kept['round']}"
        weights = kept["global_model"]["weights"][KEY]
        return np.asarray(weights, dtype=np.float64).reshape(-1).copy(), {"token": kept["token"]}
    return impl


def fedavgm_recipe():
    """``FedOptRecipe`` with ``optimizer_args`` torch.optim.SGD(lr = eta, momentum = beta1), no schedule."""
    return _recipe_fedopt("SGD")


def fedadam_recipe():
    """``FedOptRecipe`` with torch.optim.Adam(lr = eta, betas = (beta1, beta2), eps = tau), no schedule."""
    return _recipe_fedopt("Adam")


def fedadagrad_recipe():
    """``FedOptRecipe`` with torch.optim.Adagrad(lr = eta, eps = tau, initial_accumulator_value = v_-1)."""
    return _recipe_fedopt("Adagrad")


def fedavgm_recipe_checkpoint():
    """``FedOptRecipe(initial_ckpt=...)`` with SGD momentum: the kit's x is the checkpoint file, the ``"model"``
    component the user's model as built."""
    return _recipe_fedopt("SGD", checkpoint=True)


def fedavg_data_weighted():
    """NVFlare's ``FedAvg`` controller configured as McMahan et al.: ``aggregation_weights`` = {site: n_k} (the
    option ``FedAvgRecipe(aggregation_weights=...)`` passes through, ``recipe/fedavg.py``). The controller weighs a
    result by ``aggregation_weight * NUM_STEPS_CURRENT_ROUND`` (``workflows/fedavg.py:286-292``); every site
    reports the same K, so the weights are n_k / n. A user writes the sites' data sizes into the job; the driver
    writes the kit's ``num_examples``."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, **_):
        if server_step != 1.0:
            raise ValueError(f"NVFlare's FedAvg has no server step; server_step must be 1.0, got {server_step}")
        sites = _sites(clients)
        ctl = FedAvg(num_clients=len(clients), num_rounds=1, model=FLModel(params={KEY: np.asarray(x)[None, :]},
                                                                          params_type=ParamsType.FULL),
                     aggregation_weights={name: float(site.client.num_examples) for name, site in sites.items()})
        _wire(ctl, sites, local_steps, local_step)
        model = {}
        update = ctl.update_model
        ctl.update_model = lambda m, r: model.setdefault("m", update(m, r))
        ctl.run()
        return np.asarray(model["m"].params[KEY], dtype=np.float64).reshape(-1)
    return impl


# ----------------------------------------------------------------- FedAvgRecipeWithHE's path (CKKS, TenSEAL)

def _task_filter(filters, task: str):
    """The one filter a client app applies to ``task`` (its ``task_data_filters`` or ``task_result_filters``)."""
    found = [f for tasks, chain in filters if task in tasks for f in chain]
    if len(found) != 1:
        raise RuntimeError(f"expected one filter for task {task!r}, found {found}")
    return found[0]


def fedavg_he():
    """``FedAvgRecipeWithHE`` (``nvflare/app_opt/pt/recipes/fedavg_he.py``) with its defaults, built by the driver
    (``model`` at the kit's x): the server components it registers -- ``PTFileModelPersistor``,
    ``HEInTimeAccumulateWeightedAggregator(expected_data_kind=WEIGHTS, weigh_by_local_iter=False)`` (the encrypted
    sum over the sum of the steps), ``HEModelShareableGenerator`` (the new global model is the encrypted aggregate)
    -- and the clients' ``train`` filters, ``HEModelDecryptor`` (task data) and
    ``HEModelEncryptor(weigh_by_local_iter=True)`` (task result: each site's FULL weights times its
    ``NUM_STEPS_CURRENT_ROUND``, encrypted). The TenSEAL CKKS context is NVFlare's provisioning's
    (``nvflare.lighter.impl.he.HEBuilder``: poly_modulus_degree 8192, coeff_mod_bit_sizes [60, 40, 40], scale
    2^40; the server's copy without the secret key). The new model is what the next round's clients decrypt, returned
    to the kit. The ciphertexts cross from client to server as bytes (``serialize``), re-read with the server's
    context, as NVFlare's FOBS decomposers do. The calls are ``ScatterAndGather``'s (as :func:`_recipe_fedopt`)."""
    # here, not at the top: TenSEAL is NVFlare's `he` extra (the HE components import it)
    import os
    import tempfile

    import tenseal as ts
    from nvflare.apis.dxo import from_shareable
    from nvflare.apis.event_type import EventType
    from nvflare.apis.fl_constant import ReservedKey
    from nvflare.app_common.app_constant import AppConstants
    from nvflare.app_common.utils.fl_model_utils import FLModelUtils
    from nvflare.app_opt.pt.recipes.fedavg_he import FedAvgRecipeWithHE
    from nvflare.lighter.impl.he import HEBuilder

    contexts: dict = {}
    workspace = tempfile.mkdtemp(prefix="fedtheory-nvflare-he-")
    script = os.path.join(workspace, "client.py")   # the recipe's train_script: its training is KitClient's
    with open(script, "w") as f:
        f.write("# the clients' training is fedtheory's KitClient (drivers/nvflare.py)\n")

    def context(is_client: bool):
        if not contexts:   # provisioning: one key pair for the whole federation, as HEBuilder writes it
            builder = HEBuilder()
            builder.initialize(None, None)
            contexts["server"] = ts.context_from(builder.get_serialized_context())
            contexts["client"] = ts.context_from(builder.get_serialized_context(is_client=True))
        return contexts["client" if is_client else "server"]

    def to_server(shareable):
        """What FOBS does to the result on the wire: the ciphertexts as bytes, read back with the server's
        context (public and relinearisation keys only)."""
        dxo = from_shareable(shareable)
        dxo.data = {k: ts.ckks_vector_from(context(False), v.serialize()) if isinstance(v, ts.CKKSVector) else v
                    for k, v in dxo.data.items()}
        return dxo.to_shareable()

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, **_):
        if server_step != 1.0:
            raise ValueError(f"NVFlare's FedAvg with HE has no server step; server_step must be 1.0, got {server_step}")
        recipe = FedAvgRecipeWithHE(model=_net(x), min_clients=1, train_script=script)
        server = _server_components(recipe)
        persistor, generator, aggregator = server["persistor"], server["shareable_generator"], server["aggregator"]
        client_app = recipe._job._deploy_map["@ALL"].app_config   # private, as in _server_components
        decryptor = _task_filter(client_app.task_data_filters, "train")
        encryptor = _task_filter(client_app.task_result_filters, "train")
        fl_ctx = FLContext()
        for component in (persistor, generator, aggregator, decryptor, encryptor):
            component.log_info = component.log_debug = component.log_warning = _Silent()
        # their START_RUN handlers load the provisioned context files; here the contexts are the builder's
        generator.tenseal_context = context(False)
        decryptor.tenseal_context = encryptor.tenseal_context = context(True)
        encryptor.encrypt_layers = [True]   # the rest of HEModelEncryptor's START_RUN: encrypt_layers=None is all
        aggregator.handle_event(EventType.START_RUN, fl_ctx)
        global_model = persistor.load_model(fl_ctx)
        fl_ctx.set_prop(AppConstants.GLOBAL_MODEL, global_model, private=True, sticky=True)
        fl_ctx.set_prop(AppConstants.CURRENT_ROUND, 0, private=True, sticky=True)
        task = generator.learnable_to_shareable(global_model, fl_ctx)
        for name, site in _sites(clients).items():
            peer = FLContext()
            peer.set_prop(ReservedKey.IDENTITY_NAME, name, private=False, sticky=False)
            fl_ctx.set_peer_context(peer)
            received = decryptor.process(copy.deepcopy(task), fl_ctx)   # round 1: a plain model, passed through
            trained = site.train(FLModelUtils.from_shareable(received), local_steps, local_step, send_diff=False)
            result = to_server(encryptor.process(FLModelUtils.to_shareable(trained), fl_ctx))
            result.set_peer_props({ReservedKey.IDENTITY_NAME: name})
            result.add_cookie(AppConstants.CONTRIBUTION_ROUND, 0)
            if not aggregator.accept(result, fl_ctx):
                raise RuntimeError(f"HEInTimeAccumulateWeightedAggregator refused {name}'s result")
        new_model = generator.shareable_to_learnable(aggregator.aggregate(fl_ctx), fl_ctx)
        sent = generator.learnable_to_shareable(new_model, fl_ctx)        # the next round's task data
        plain = from_shareable(decryptor.process(sent, fl_ctx)).data[KEY]
        return np.asarray(plain, dtype=np.float64).reshape(-1)
    return impl
