"""FedML 0.9.6 SCAFFOLD (single-process simulator) against Karimireddy et al. (2020), Alg. 1, without fedtheory.

Three deviations, read in FedML's source and each visible below:
1. fedml/ml/aggregator/agg_operator.py:116-117 -- after summing the clients' deltas, the SCAFFOLD branch
   overwrites the sums with the LAST client's: total_weights_delta[k] = weights_delta[k] and
   total_c_delta_para[k] = c_delta_para[k] * (1 / client_num_in_total).
2. fedml/simulation/sp/scaffold/client.py:44-53 -- c_new_para is computed into a dict that is never loaded
   back into c_model_local, so every client's c_i stays 0.
3. fedml/simulation/sp/scaffold/scaffold_trainer.py:81 keeps w_global = model.state_dict(), whose tensors are
   the shared model's; fedml/ml/trainer/scaffold_trainer.py:65 rebinds param.data after the first local step,
   so w_global freezes at client 0's FIRST local iterate, and client 1 starts there instead of at x.
Two clients, K = 2 steps of size 0.1, from x = 0 and zero control variates: FedML's round equals client 1's
K steps started from x - 0.1 grad f_0(x), and c+ = its dc / N.
"""
import types

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
import fedml.ml.trainer.scaffold_trainer as model_trainer  # noqa: E402
import fedml.simulation.sp.scaffold.scaffold_trainer as sp  # noqa: E402


class HalfMSE(torch.nn.Module):  # the trainer hard-codes nn.CrossEntropyLoss; this is a regression
    def forward(self, out, y):
        return 0.5 * torch.mean((out.view(-1) - y) ** 2)


class Off:
    def __getattr__(self, name):
        return Off()

    def __call__(self, *a, **k):
        return None


model_trainer.nn, sp.mlops = types.SimpleNamespace(CrossEntropyLoss=HalfMSE), Off()
rng = np.random.default_rng(0)
Z = [rng.standard_normal((5 + i, 3)) for i in range(2)]
y = [rng.standard_normal(5 + i) for i in range(2)]
K, eta, N = 2, 0.1, 2
args = types.SimpleNamespace(federated_optimizer="SCAFFOLD", client_optimizer="sgd", learning_rate=eta, epochs=K,
                             server_lr=1.0, comm_round=1, client_num_in_total=N, client_num_per_round=N,
                             initialize_all_clients=True, frequency_of_the_test=1, dataset="toy", weight_decay=0.0)
data = {i: [(torch.tensor(Z[i]), torch.tensor(y[i]))] for i in range(N)}
dataset = [11, 0, None, None, {i: len(y[i]) for i in range(N)}, data, {i: [] for i in range(N)}, 1]
model = torch.nn.Linear(3, 1, bias=False)
torch.nn.init.zeros_(model.weight)
trainer = sp.ScaffoldTrainer(dataset, model, torch.device("cpu"), args)
trainer._local_test_on_all_clients = lambda round_idx: None
trainer.train()
fedml_x = trainer.model_trainer.get_model_params()["weight"].numpy().ravel()


def grad(i, w):
    return Z[i].T @ (Z[i] @ w - y[i]) / len(y[i])


def local(i, w):
    for _ in range(K):
        w = w - eta * grad(i, w)
    return w


x = np.zeros(3)
paper_x = np.mean([local(i, x) for i in range(N)], axis=0)         # Alg. 1 from zero control variates
start_1 = x - eta * grad(0, x)                                      # client 0's first local iterate
replica_x = local(1, start_1)
print("FedML x+", fedml_x, "\nAlg. 1 x+", paper_x, "\nreplica of the three deviations", replica_x)
print("FedML c_i", [c.c_model_local.weight.detach().numpy().ravel() for c in trainer.client_list])
assert np.allclose(fedml_x, replica_x, atol=1e-12) and not np.allclose(fedml_x, paper_x, atol=1e-3)
