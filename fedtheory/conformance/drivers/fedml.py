"""FedML 0.9.6 through the conformance contract, run in FedML's own virtual environment (not imported by fedtheory:
it needs torch and fedml). docs/frameworks.md has the command and the verdicts.

    cd fedtheory/conformance && /work/fw-venvs/fedml/bin/python remote_worker.py drivers/fedml.py:scaffold
    (loaded by path; driven by fedtheory.conformance.adapters.remote.Remote)

SCAFFOLD: FedML's single-process simulator ``fedml.simulation.sp.scaffold.scaffold_trainer.ScaffoldTrainer``
runs its own ``train()`` for one communication round (``comm_round = 1``) with its ``Client`` objects, its
``ScaffoldModelTrainer`` and ``FedMLAggOperator.agg``. The driver supplies what a FedML user supplies: the
dataset tuple (one full batch per client, so ``epochs`` = K gives K steps), the model (a float64
``Linear(d, 1, bias=False)``) and the ``args``. Two things are replaced around it: the trainer's criterion
(``nn.CrossEntropyLoss`` is hard-coded in ``ScaffoldModelTrainer.train``; the kit's regression needs
1/(2m)||Z x - y||^2, so the module's ``nn`` is given that loss under the name) and the MLOps/testing calls
(no-ops). State: the server's ``c_model_global`` and each ``Client.c_model_local``, loaded from the kit's mapping
and read back.

Participants. Given the kit's participants (no ``clients_per_round``), ``_client_sampling`` returns them. Given the
whole population and ``clients_per_round`` = m (the kit's sampling protocol, ``scaffold.own_sampler``), FedML's own
``_client_sampling`` draws them with ``client_num_per_round`` = m: ``np.random.seed(round_idx)``, then
``np.random.choice(range(N), m, replace=False)``. The driver runs one ``train()`` per call (``comm_round`` = 1),
whose loop index is always 0; it passes the run's round index instead (0 at the run's first round, when the kit
gives no state, then 1, 2, ...), which is the index FedML's own loop would pass, and reports the drawn indexes as
the kit's cids.
"""
from __future__ import annotations

import types

import numpy as np
import torch

torch.set_default_dtype(torch.float64)

import fedml.ml.trainer.scaffold_trainer as fedml_scaffold_model_trainer  # noqa: E402
import fedml.simulation.sp.scaffold.scaffold_trainer as fedml_scaffold  # noqa: E402


class HalfMSE(torch.nn.Module):
    """The kit's least squares 1/(2m)||Z x - y||^2 (FedML's trainer calls it as criterion(model(Z), y))."""

    def forward(self, out, target):
        return 0.5 * torch.mean((out.view(-1) - target) ** 2)


fedml_scaffold_model_trainer.nn = types.SimpleNamespace(CrossEntropyLoss=HalfMSE)


class _Silent:
    """MLOps reporting off: every attribute is a no-op callable that also has every attribute."""

    def __getattr__(self, name):
        return _Silent()

    def __call__(self, *a, **k):
        return None


fedml_scaffold.mlops = _Silent()


def _model(x):
    model = torch.nn.Linear(x.size, 1, bias=False)
    with torch.no_grad():
        model.weight[:] = torch.tensor(np.asarray(x, dtype=np.float64))[None, :]
    return model


def scaffold():
    run = {"round": 0}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, num_clients=None,
             clients_per_round=None, **_):
        N = int(num_clients or len(clients))
        # FedML numbers its clients 0..N-1; the kit's cids are labels (10.., sparse): the cids with a state and
        # this round's participants, sorted, take the first indices (the state is loaded and read back through it)
        known = sorted({int(cid) for cid in (state or {"c_i": {}})["c_i"]} | {int(c.cid) for c in clients})
        if len(known) > N:
            raise ValueError(f"{len(known)} distinct clients with a state or in the round, but num_clients={N}")
        index = {cid: pos for pos, cid in enumerate(known)}
        ids = [index[int(c.cid)] for c in clients]
        train = {i: [] for i in range(N)}
        sizes = {i: 1 for i in range(N)}
        for c in clients:
            train[index[int(c.cid)]] = [(torch.tensor(c.features), torch.tensor(c.targets))]
            sizes[index[int(c.cid)]] = c.num_examples
        args = types.SimpleNamespace(
            federated_optimizer="SCAFFOLD", client_optimizer="sgd", learning_rate=float(local_step),
            epochs=int(local_steps), server_lr=float(server_step), comm_round=1, client_num_in_total=N,
            client_num_per_round=int(clients_per_round or len(ids)), initialize_all_clients=True, frequency_of_the_test=1, dataset="kit",
            weight_decay=0.0)
        dataset = [sum(sizes.values()), 0, None, None, sizes, train, {i: [] for i in range(N)}, 1]
        trainer = fedml_scaffold.ScaffoldTrainer(dataset, _model(x), torch.device("cpu"), args)
        drawn = []
        if clients_per_round is None:
            trainer._client_sampling = lambda round_idx, total, per_round: list(ids)
        else:  # FedML's own sampler, at the run's round index (its loop's round_idx; a call runs one round)
            run["round"] = 0 if state is None else run["round"] + 1
            own = trainer._client_sampling

            def sampling(round_idx, total, per_round):
                drawn.extend(int(i) for i in own(run["round"], total, per_round))
                return list(drawn)
            trainer._client_sampling = sampling
        trainer._local_test_on_all_clients = lambda round_idx: None
        key = "weight"
        if state is not None:
            trainer.c_model_global.weight.data[:] = torch.tensor(np.asarray(state["c"]))[None, :]
            for cid, ci in state["c_i"].items():
                local = trainer.client_list[index[int(cid)]].c_model_local
                local.weight.data[:] = torch.tensor(np.asarray(ci))[None, :]
        trainer.train()
        x_new = trainer.model_trainer.get_model_params()[key].numpy().reshape(-1).copy()
        c_i = dict((state or {"c_i": {}})["c_i"])
        for c in clients:
            local = trainer.client_list[index[int(c.cid)]].c_model_local
            c_i[int(c.cid)] = local.weight.detach().numpy().reshape(-1).copy()
        new_state = {"c": trainer.c_model_global.weight.detach().numpy().reshape(-1).copy(), "c_i": c_i}
        if clients_per_round is None:
            return x_new, new_state
        cid_of = {pos: cid for cid, pos in index.items()}
        return x_new, new_state, {"drawn": [int(cid_of[int(i)]) for i in drawn]}
    return impl


def fednova():
    """FedML's single-process FedNova (``fedml.simulation.sp.fednova.fednova_trainer.FedNovaTrainer``, its
    ``Client`` and the ``FedNova`` optimiser ported from the authors' code), one ``train()`` per call
    (``comm_round = 1``); checked as ``fednova``. FedML's tau_i is epochs x the batches of the client's loader: the
    driver gives client i a loader of tau_i full batches and ``epochs = 1``, so it runs the kit's tau_i full-batch
    steps. Its ``Client`` hard-codes ``nn.CrossEntropyLoss``; the driver sets the kit's least squares as the
    client's criterion. ``momentum`` and ``prox`` are FedML's ``args.momentum`` and ``args.mu``; ``gmf`` (server
    momentum) is 0. Given the population and ``clients_per_round`` (``fednova.own_sampler``), FedML's own
    ``client_sampling`` draws, at the run's round index, as for SCAFFOLD."""
    import fedml.simulation.sp.fednova.fednova_trainer as fedml_fednova

    run = {"round": 0, "last": None}

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, momentum=0.0, prox=0.0,
             tau_eff="norm", clients_per_round=None, **_):
        n = len(clients)
        taus = [int(local_steps[c.cid]) for c in clients]
        train = {i: [(torch.tensor(c.features), torch.tensor(c.targets))] * t
                 for i, (c, t) in enumerate(zip(clients, taus))}
        sizes = {i: c.num_examples for i, c in enumerate(clients)}
        args = types.SimpleNamespace(
            learning_rate=float(local_step), gmf=0.0, mu=float(prox), momentum=float(momentum), dampening=0.0,
            wd=0.0, nesterov=False, epochs=1, comm_round=1, client_num_in_total=n,
            client_num_per_round=int(clients_per_round or n),
            frequency_of_the_test=1, dataset="kit", enable_wandb=False)
        dataset = [sum(sizes.values()), 0, None, None, sizes, train, {i: [] for i in range(n)}, 1]
        trainer = fedml_fednova.FedNovaTrainer(dataset, _model(x), torch.device("cpu"), args)
        drawn = []
        if clients_per_round is None:
            trainer.client_sampling = lambda round_idx, total, per_round: list(range(n))
        else:  # FedML's own sampler at the run's round index (a new run: a model the driver did not return)
            last = run["last"]
            fresh = last is None or last.shape != x.shape or not np.array_equal(last, x)
            run["round"] = 0 if fresh else run["round"] + 1
            own = trainer.client_sampling

            def sampling(round_idx, total, per_round):
                drawn.extend(int(i) for i in own(run["round"], total, per_round))
                return list(drawn)
            trainer.client_sampling = sampling
        trainer.local_test_on_all_clients = lambda *a, **k: None
        for c in trainer.client_list:
            c.criterion = HalfMSE()
        trainer.train()
        x_new = run["last"] = trainer.model_global.weight.detach().numpy().reshape(-1).copy()
        if clients_per_round is None:
            return x_new
        return x_new, None, {"drawn": [int(clients[i].cid) for i in drawn]}
    return impl
