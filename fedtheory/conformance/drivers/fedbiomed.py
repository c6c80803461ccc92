"""Fed-BioMed 6.4.1's FedAvg, FedProx, SCAFFOLD and server optimizers through the conformance contract, run in
Fed-BioMed's own virtual environment (not imported by fedtheory: it needs torch and fedbiomed). docs/frameworks.md
has the verdicts.

    cd fedtheory/conformance && /work/fw-venvs/fedbiomed/bin/python remote_worker.py drivers/fedbiomed.py:fedavg
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

Server: what ``Experiment.run_once`` (``fedbiomed/researcher/federated_workflows/_experiment.py``) does with the
nodes' training replies, without the network between researcher and nodes: Fed-BioMed's ``DefaultStrategy``
samples the nodes (``sample_nodes``: every node, its default) and turns the replies into weights
(``refine``: each node's ``sample_size`` over their total); the aggregator (``FedAverage``, its default, or
``Scaffold``) aggregates, and an ``agg_optimizer`` (``Experiment(agg_optimizer=Optimizer(lr, modules=[...]))``,
declearn's modules) refines the aggregate through ``Experiment._run_agg_optimizer`` itself.

Nodes: each node trains a ``TorchTrainingPlan`` as a researcher writes one (a linear model, the loss
1/(2m)||Z y - t||^2, ``torch.optim.SGD``) with Fed-BioMed's own ``training_routine``: ``num_updates`` = K batches of
the node's whole data (``loader_args`` batch size n_k), ``fedprox_mu`` (FedProx: the loss plus mu/2 ||w - w_global||^2,
``_torchnn.py`` ``_train_over_batch``) and the Scaffold correction the aggregator sends (``aggregator_args``:
gradient minus c_i - c). A reply is built as ``fedbiomed/node/round.py`` builds it: ``sample_size`` =
``len(training_data_loader.dataset)`` = n_k (so the weights are n_k/n), ``params`` = ``after_training_params()``,
``optimizer_args`` = the plan's (its learning rate, which Scaffold reads).

Models are float64 (the kit's rtol 1e-8 judges the framework's arithmetic, not rounding); Fed-BioMed's default is
float32 torch models.
"""
from __future__ import annotations

import os
import tempfile
import types

# Importing Fed-BioMed's researcher creates a researcher component (config, a self-signed certificate, logs) in
# the working directory unless told where: a temporary folder, so a run leaves nothing in the checkout
os.environ.setdefault("FBM_RESEARCHER_COMPONENT_ROOT", tempfile.mkdtemp(prefix="fbm-researcher-"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from declearn.model.api import Vector  # noqa: E402
from declearn.optimizer.modules import (  # noqa: E402
    AdaGradModule,
    AdamModule,
    MomentumModule,
    ScaffoldClientModule,
    ScaffoldServerModule,
    YogiModule,
)
from fedbiomed.common.dataloader import PytorchDataLoader  # noqa: E402
from fedbiomed.common.optimizers import Optimizer  # noqa: E402
from fedbiomed.common.training_args import TrainingArgs  # noqa: E402
from fedbiomed.common.training_plans import TorchTrainingPlan  # noqa: E402
from fedbiomed.researcher.aggregators import FedAverage, Scaffold  # noqa: E402
from fedbiomed.researcher.datasets import FederatedDataset  # noqa: E402
from fedbiomed.researcher.federated_workflows import Experiment  # noqa: E402
from fedbiomed.researcher.strategies.default_strategy import DefaultStrategy  # noqa: E402
from torch.utils.data import TensorDataset  # noqa: E402

torch.set_default_dtype(torch.float64)


class _Plan(TorchTrainingPlan):
    """The researcher's training plan: a linear model without bias, the least-squares loss, SGD."""

    def init_model(self, model_args):
        return torch.nn.Linear(model_args["d"], 1, bias=False)

    #: a node's own declearn-backed ``Optimizer`` (declearn's Scaffold), kept between rounds as the node keeps its
    #: optimizer's state; None: the torch SGD a researcher declares
    node_optimizer = None

    def init_optimizer(self, optimizer_args):
        if self.node_optimizer is not None:
            return self.node_optimizer
        return torch.optim.SGD(self.model().parameters(), lr=optimizer_args["lr"])

    def training_step(self, data, target):
        return 0.5 * torch.mean((self.model()(data).reshape(-1) - target) ** 2)

    def training_data(self):
        """Not called: the driver gives the plan its node's data loader, as the node's Round does."""


def _plan(x, local_steps, local_step, batch, *, mu=None, aggregator_args=None, optimizer=None) -> _Plan:
    """A training plan set up as a node's Round sets it up (``post_init`` with the researcher's training arguments,
    then the global model's parameters)."""
    args = {"optimizer_args": {"lr": float(local_step)}, "num_updates": int(local_steps),
            "loader_args": {"batch_size": int(batch)}}
    if mu is not None:
        args["fedprox_mu"] = float(mu)
    plan = _Plan()
    plan.node_optimizer = optimizer
    plan.post_init({"d": int(np.size(x))}, TrainingArgs(args, only_required=False), aggregator_args)
    plan.set_model_params({"weight": torch.tensor(np.asarray(x, dtype=np.float64))[None, :]})
    return plan


def _reply(node, x, client, local_steps, local_step, *, mu=None, aggregator_args=None, optimizer=None,
           aux=None) -> dict:
    """Node ``node`` trains with Fed-BioMed's ``training_routine`` and replies as ``node/round.py`` does. With a
    declearn ``optimizer``, the researcher's auxiliary variables ``aux`` are restored and set first and the
    optimizer's own are collected after training (``process_optim_aux_var``, ``collect_optim_aux_var``)."""
    plan = _plan(x, local_steps, local_step, client.num_examples, mu=mu, aggregator_args=aggregator_args,
                 optimizer=optimizer)
    if optimizer is not None:
        weights = plan.get_model_params(only_trainable=False, exclude_buffers=False, local_params=None)
        optimizer.set_aux(optimizer.restore_aux(aux, weights, []))
    data = TensorDataset(torch.tensor(np.asarray(client.features, dtype=np.float64)),
                         torch.tensor(np.asarray(client.targets, dtype=np.float64)))
    plan.training_data_loader = PytorchDataLoader(data, batch_size=client.num_examples, shuffle=False)
    plan.training_routine()
    reply = {"success": True, "node_id": node, "sample_size": len(plan.training_data_loader.dataset),
             "params": plan.after_training_params(), "optimizer_args": plan.optimizer_args()}
    if optimizer is not None:
        reply["optim_aux_var"] = optimizer.get_aux()
    return reply


def _vec(t) -> np.ndarray:
    return np.asarray(t.detach().numpy() if isinstance(t, torch.Tensor) else t, dtype=np.float64).reshape(-1).copy()


def _averaged(x, clients, local_steps, local_step, mu=None) -> dict:
    """``DefaultStrategy`` + ``FedAverage``: the nodes' models averaged with the weights ``refine`` gives."""
    nodes = [f"NODE_{pos}" for pos in range(len(clients))]
    strategy = DefaultStrategy()
    sampled = strategy.sample_nodes(from_nodes=nodes, round_i=0)
    replies = {node: _reply(node, x, c, local_steps, local_step, mu=mu)
               for node, c in zip(nodes, clients) if node in sampled}
    model_params, weights, _total, _factors = strategy.refine(replies, 0)
    return FedAverage().aggregate(model_params, weights)


def _no_server_step(server_step) -> None:
    if server_step != 1.0:
        raise ValueError(f"Fed-BioMed's FedAverage has no server learning rate; server_step must be 1.0, "
                         f"got {server_step}")


def fedavg():
    """``DefaultStrategy`` + ``FedAverage``: the sample-size-weighted average of the nodes' models, no server
    learning rate (checked with ``fixed=["server_step"]``; another server step is refused rather than ignored)."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, **_):
        _no_server_step(server_step)
        return _vec(_averaged(x, clients, local_steps, local_step)["weight"])
    return impl


def fedprox():
    """FedProx as Fed-BioMed ships it: ``training_args['fedprox_mu']`` = the kit's lambda on every node (Li et
    al. 2020, eq. (2): h_k(w) = F_k(w) + mu/2 ||w - w^t||^2), ``DefaultStrategy`` + ``FedAverage`` on the server
    (n_k/n weights, no server learning rate)."""
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, prox=0.1, **_):
        _no_server_step(server_step)
        return _vec(_averaged(x, clients, local_steps, local_step, mu=prox)["weight"])
    return impl


def _same(state, returned) -> bool:
    """Whether the kit hands back the state this worker returned last (the run goes on)."""
    if state is None or returned is None:
        return False
    flat = {k: v for k, v in returned.items() if k != "c_i"}
    if not all(np.shape(state.get(k)) == np.shape(v) and np.array_equal(state[k], v) for k, v in flat.items()):
        return False
    mine, theirs = returned.get("c_i", {}), state.get("c_i", {})
    return set(mine) == set(theirs) and all(np.array_equal(mine[k], theirs[k]) for k in mine)


def _load_scaffold(agg: Scaffold, nodes: dict, state) -> None:
    """The kit's (c, c_i) into Fed-BioMed's three dicts: ``global_state`` c, ``nodes_states`` c_i and
    ``nodes_deltas`` c_i - c (what the nodes receive), as the aggregator keeps them between rounds."""
    as_weight = lambda v: {"weight": torch.tensor(np.asarray(v, dtype=np.float64))[None, :]}  # noqa: E731
    c = np.asarray(state["c"], dtype=np.float64)
    agg.global_state = as_weight(c)
    of = {node: cid for cid, node in nodes.items()}  # the fillers have no cid: c_i = 0
    agg.nodes_states = {node: as_weight(state["c_i"].get(of.get(node), np.zeros_like(c)))
                        for node in agg._fds.node_ids()}
    agg.nodes_deltas = {node: as_weight(_vec(s["weight"]) - c) for node, s in agg.nodes_states.items()}


def scaffold():
    """Fed-BioMed's ``Scaffold`` aggregator (``researcher/aggregators/scaffold.py``) with its default
    ``server_lr`` = 1.0 set to the kit's server step, and the nodes' correction in the torch training plan.

    The aggregator keeps the state: c (``global_state``), every node's c_i (``nodes_states``) and c_i - c
    (``nodes_deltas``), for the N nodes of its ``FederatedDataset``. Between the kit's rounds it lives in this worker
    while the kit hands back the state returned last and the round's nodes are among its nodes; otherwise a new one
    is loaded from the kit's state (or starts at zeros, round 0). Nodes are named ``NODE_<cid>``; the nodes with no
    state yet and not in the round fill the federation up to N (``num_clients``) with c_i = 0."""
    kept: dict = {}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, num_clients=None,
             **_):
        cids = [int(c.cid) for c in clients]
        go_on = _same(state, kept.get("returned")) and all(cid in kept["nodes"] for cid in cids)
        if not go_on:
            known = sorted({int(k) for k in (state or {}).get("c_i", {})} | set(cids))
            n = int(num_clients or len(known))
            if len(known) > n:
                raise ValueError(f"{len(known)} distinct clients with a state or in the round, but "
                                 f"num_clients={num_clients}")
            nodes = {cid: f"NODE_{cid}" for cid in known}
            fillers = [f"FILLER_{j}" for j in range(n - len(known))]
            agg = Scaffold(server_lr=float(server_step))
            agg.set_fds(FederatedDataset({node: [{"dataset_id": node, "shape": [1]}]
                                          for node in [*nodes.values(), *fillers]}))
            kept.update(agg=agg, nodes=nodes, round=0)
            if state is not None:
                _load_scaffold(agg, nodes, state)
                kept["round"] = 1  # Scaffold.aggregate zeroes the states at round 0 only
        agg, nodes = kept["agg"], kept["nodes"]
        researcher = _plan(x, local_steps, local_step, 1)
        global_model = researcher.after_training_params()
        round_nodes = [nodes[cid] for cid in cids]
        args = agg.create_aggregator_args(global_model, round_nodes)
        replies = {nodes[int(c.cid)]: _reply(nodes[int(c.cid)], x, c, local_steps, local_step,
                                             aggregator_args=args[nodes[int(c.cid)]]) for c in clients}
        # DefaultStrategy samples every node it is given: here the round's participants (the nodes online)
        strategy = DefaultStrategy()
        strategy.sample_nodes(from_nodes=round_nodes, round_i=kept["round"])
        model_params, weights, _total, _factors = strategy.refine(replies, kept["round"])
        out = agg.aggregate(model_params, weights, global_model=global_model, training_plan=researcher,
                            training_replies=replies, node_ids=round_nodes, n_updates=int(local_steps),
                            n_round=kept["round"])
        kept["round"] += 1
        kept["returned"] = {"c": _vec(agg.global_state["weight"]),
                            "c_i": {cid: _vec(agg.nodes_states[node]["weight"]) for cid, node in nodes.items()}}
        returned = {"c": kept["returned"]["c"].copy(), "c_i": {k: v.copy() for k, v in kept["returned"]["c_i"].items()}}
        return _vec(out["weight"]), returned
    return impl


def scaffold_declearn():
    """SCAFFOLD through declearn's modules, the alternative to the ``Scaffold`` aggregator that Fed-BioMed's
    ``Scaffold.check_values`` recommends with secure aggregation: each node's training plan returns
    ``Optimizer(lr=eta_l, modules=[ScaffoldClientModule()])`` (gradient minus c_i - c; c_i+ = the mean of the
    gradients of its K steps, option II), the researcher sets ``agg_optimizer=Optimizer(lr=eta_g,
    modules=[ScaffoldServerModule()])``, and ``Experiment``'s own ``_collect_optim_aux_var``,
    ``_aggregate_cleartext_optim_auxvar`` and ``_run_agg_optimizer`` carry c and the c_i updates; the model is
    ``FedAverage``'s (n_k/n). The nodes' optimizers and the server's live in this worker for the run, as a node
    keeps its optimizer state between rounds; the state returned to the kit is an opaque token of the run
    (declearn's server holds the sum of the c_i and the set of clients it heard from, which no (c, c_i) of the
    kit's can be loaded into without choosing that set)."""
    kept: dict = {"run": 0}

    # no weighting argument: the model is always FedAverage's n_k/n and c declearn's plain mean; the kit's
    # declared weighting is only what it compares with
    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, **_):
        if state is None or list(state) != kept.get("token"):  # a new run
            kept.update(run=kept["run"] + 1, round=0, nodes={},
                        server=Optimizer(lr=float(server_step), modules=[ScaffoldServerModule()]))
        workflow = types.SimpleNamespace(_agg_optimizer=kept["server"])
        aux = Experiment._collect_optim_aux_var(workflow)
        replies = {}
        for c in clients:
            node = f"NODE_{int(c.cid)}"
            optimizer = kept["nodes"].setdefault(node, Optimizer(lr=float(local_step),
                                                                 modules=[ScaffoldClientModule()]))
            replies[node] = _reply(node, x, c, local_steps, local_step, optimizer=optimizer, aux=aux)
        nodes_aux = {node: reply.pop("optim_aux_var") for node, reply in replies.items()}
        strategy = DefaultStrategy()
        strategy.sample_nodes(from_nodes=list(replies), round_i=kept["round"])
        model_params, weights, _total, _factors = strategy.refine(replies, kept["round"])
        aggregated = FedAverage().aggregate(model_params, weights)
        kept["server"].set_aux(Experiment._aggregate_cleartext_optim_auxvar(workflow, nodes_aux))
        researcher = _plan(x, local_steps, local_step, 1)
        x_new = Experiment._run_agg_optimizer(workflow, researcher, aggregated)["weight"]
        kept["round"] += 1
        kept["token"] = ["fedbiomed declearn scaffold", kept["run"], kept["round"]]
        return _vec(x_new), list(kept["token"])
    return impl


def _module(name: str, beta1, beta2, tau):
    """declearn's module for ``name``, the kit's betas and tau as its arguments, every other option its default
    (``round_reset=False``, ``amsgrad=False``, ``nesterov=False``)."""
    if name == "fedavgm":
        return MomentumModule(beta=float(beta1))
    if name == "fedadagrad":
        if beta1 != 0.0:
            raise ValueError(f"declearn's AdaGradModule has no first moment; beta1 must be 0.0, got {beta1}")
        return AdaGradModule(eps=float(tau))
    cls = AdamModule if name == "fedadam" else YogiModule
    return cls(beta_1=float(beta1), beta_2=float(beta2), eps=float(tau))


def _read(module, grads) -> dict:
    """The module's state in the kit's names and sign (Fed-BioMed's gradient is x - aggregate = -Delta)."""
    if isinstance(module, MomentumModule):
        return {"m": -_vec(module.velocity.coefs["weight"])}
    if isinstance(module, AdaGradModule):  # no first moment: with beta1 = 0, Alg. 2's m_t is Delta_t
        return {"m": -_vec(grads.coefs["weight"]), "v": _vec(module.state.coefs["weight"])}
    return {"m": -_vec(module.ewma_1.state.coefs["weight"]), "v": _vec(module.ewma_2.state.coefs["weight"])}


def _write(module, state) -> None:
    """A state the kit made, into the module (as ``Optimizer.load_state`` would restore it)."""
    vector = lambda v: Vector.build({"weight": torch.tensor(np.asarray(v, dtype=np.float64))[None, :]})  # noqa: E731
    if isinstance(module, MomentumModule):
        module.velocity = vector(-np.asarray(state["m"]))
    elif isinstance(module, AdaGradModule):
        module.state = vector(state["v"])
    else:
        module.ewma_1.state, module.ewma_2.state = vector(-np.asarray(state["m"])), vector(state["v"])


def _server_optimizer(name: str):
    """``Experiment(agg_optimizer=Optimizer(lr=eta, modules=[<module>]))`` after ``FedAverage``: the aggregate is
    refined by ``Experiment._run_agg_optimizer`` (gradient x - aggregate, one declearn step, x + update)."""
    kept: dict = {}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=0.1, beta1=0.9,
             beta2=0.99, tau=1e-3, weighting="num_examples", **_):
        if weighting != "num_examples":
            raise ValueError(f"Fed-BioMed's DefaultStrategy weighs nodes by sample size; weighting must be "
                             f"'num_examples', got {weighting!r}")
        if not _same(state, kept.get("returned")):
            module = _module(name, beta1, beta2, tau)
            kept["optimizer"], kept["module"] = Optimizer(lr=float(server_step), modules=[module]), module
            if state is not None:
                _write(module, state)
        aggregated = _averaged(x, clients, local_steps, local_step)
        researcher = _plan(x, local_steps, local_step, 1)
        workflow = types.SimpleNamespace(_agg_optimizer=kept["optimizer"])
        x_new = Experiment._run_agg_optimizer(workflow, researcher, aggregated)["weight"]
        grads = Vector.build(researcher.after_training_params()) - Vector.build(aggregated)
        kept["returned"] = _read(kept["module"], grads)
        return _vec(x_new), {k: v.copy() for k, v in kept["returned"].items()}
    return impl


def fedadam():
    """declearn's ``AdamModule`` (Kingma & Ba's bias correction, eps outside the square root, v_-1 = 0)."""
    return _server_optimizer("fedadam")


def fedyogi():
    """declearn's ``YogiModule`` (Adam's bias correction with Yogi's second moment)."""
    return _server_optimizer("fedyogi")


def fedadagrad():
    """declearn's ``AdaGradModule`` (no first moment: checked with beta1 = 0)."""
    return _server_optimizer("fedadagrad")


def fedavgm():
    """declearn's ``MomentumModule`` (m = beta m + Delta, heavy ball; Hsu et al. 2019's FedAvgM)."""
    return _server_optimizer("fedavgm")
