"""FedML 0.9.6's MPI FedNova (``backend: MPI``, ``federated_optimizer: FedNova``) weighs each client of a round by
n_i / n over the *whole federation*, so below full participation the weights do not sum to 1 and the round's step
shrinks. Without fedtheory: FedML, torch and NumPy only, in a few seconds. It calls the classes
``FedML_FedNova_distributed`` wires on each rank (``FedNovaTrainer`` on ``FedNovaModelTrainer``, and rank 0's
``FedNovaAggregator``) in the order the client and server managers call them; the MPI messages only carry these
dicts.

    pip install fedml==0.9.6 "setuptools<81" "sentry-sdk<2" torch
    python fedml_mpi_fednova_sampling.py

Two clients with n = (1, 3) samples, one drawn per round (``client_num_per_round = 1``, one worker rank), K = 4
local SGD steps on 1/2 (z w - y)^2. ``FedNovaTrainer.train`` passes ``ratio = local_sample_number /
total_train_num`` (``fedml/simulation/mpi/fednova/FedNovaTrainer.py:27, 64``), n_i over every client's samples;
the server's ``get_average_weight`` computes the round's normalised weights n_i / sum_{j in S} n_j and sends them,
but ``FedNovaClientManager.add_client_model`` (``FedNovaClientManager.py:82, 111``) ignores its ``weight``.

Expected (Wang et al. 2020, normalised averaging over the round's clients S, p_i = n_i / sum_{j in S} n_j, as
FedML's single-process ``FedNovaTrainer`` and its own ``get_average_weight`` compute it): with one client drawn,
p = 1 and x+ = x - tau_eff d / ||a||_1 = y, the client's model after its K steps. Actual: x+ = x - p^2 (x - y) with
p = n_i / n, a step p^2 times too short (1/16 or 9/16 here).
"""
from __future__ import annotations

import types

import fedml.ml.trainer.fednova_trainer as fednova_trainer
import numpy as np
import torch
from fedml.ml.aggregator.aggregator_creator import create_server_aggregator
from fedml.simulation.mpi.fednova.FedNovaAggregator import FedNovaAggregator
from fedml.simulation.mpi.fednova.FedNovaTrainer import FedNovaTrainer

torch.set_default_dtype(torch.float64)
K, ETA, X0 = 4, 0.1, 0.5
DATA = {0: (torch.tensor([[1.0]]), torch.tensor([2.0])), 1: (torch.tensor([[2.0], [1.0], [0.5]]),
                                                             torch.tensor([1.0, -1.0, 3.0]))}
SIZES = {0: 1, 1: 3}


class HalfMSE(torch.nn.Module):
    def forward(self, out, target):
        return 0.5 * torch.mean((out.view(-1) - target) ** 2)


fednova_trainer.nn = types.SimpleNamespace(CrossEntropyLoss=HalfMSE)  # the trainer hard-codes cross-entropy


def model():
    net = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        net.weight[:] = X0
    return net


def local_steps(i: int) -> float:
    z, y = DATA[i][0].numpy(), DATA[i][1].numpy()
    w = np.array([X0])
    for _ in range(K):
        w = w - ETA * z.T @ (z @ w - y) / len(y)
    return float(w[0])


if __name__ == "__main__":
    args = types.SimpleNamespace(
        federated_optimizer="FedNova", learning_rate=ETA, epochs=1, gmf=0.0, mu=0.0, momentum=0.0, dampening=0.0,
        weight_decay=0.0, nesterov=False, client_num_in_total=2, client_num_per_round=1, dataset="kit",
        frequency_of_the_test=1 << 30, comm_round=1, batch_size=1, enable_wandb=False, client_optimizer="sgd")
    train = {i: [DATA[i]] * K for i in DATA}  # tau_i = K batches, one epoch
    server = create_server_aggregator(model(), args)
    aggregator = FedNovaAggregator(None, None, 4, train, {0: None, 1: None}, SIZES, 1, torch.device("cpu"), args,
                                   server)
    worker = FedNovaTrainer(0, train, SIZES, {0: None, 1: None}, 4, torch.device("cpu"), args,
                            fednova_trainer.FedNovaModelTrainer(model(), args))
    for round_idx in range(2):
        server.set_model_params(model().state_dict())  # each round from x = X0, to compare with the closed form
        drawn = aggregator.client_sampling(round_idx, 2, 1)
        schedule = aggregator.generate_client_schedule(round_idx, drawn)
        results = []
        for i in schedule[0]:  # the one worker rank's __train
            worker.update_model(aggregator.get_global_model_params())
            worker.update_dataset(int(i))
            _, grad, t_eff = worker.train(round_idx)
            results.append({"grad": grad, "t_eff": t_eff})
        aggregator.add_local_trained_result(0, results)
        assert aggregator.check_whether_all_receive()
        got = float(aggregator.aggregate()["weight"])
        i = int(drawn[0])
        y, p = local_steps(i), SIZES[i] / sum(SIZES.values())
        print(f"round {round_idx}: drawn client {i} (n_i / n = {p:g}); FedML x+ = {got:.12f}; "
              f"expected y_i = {y:.12f}; x - p^2 (x - y_i) = {X0 - p * p * (X0 - y):.12f}")
        assert abs(got - (X0 - p * p * (X0 - y))) < 1e-12 and abs(got - y) > 1e-3
    print("DEFECT: the round's weights are n_i over the whole federation; the normalised weights are sent and ignored")
