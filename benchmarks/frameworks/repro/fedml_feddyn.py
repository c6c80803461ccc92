"""FedML 0.9.6 single-process FedDyn against Acar et al. (2021), Alg. 1, without fedtheory.

Alg. 1: client k minimises L_k(theta) - <grad L_k^{t-1}, theta> + (alpha/2)||theta - theta^{t-1}||^2, then
grad L_k^t = grad L_k^{t-1} - alpha (theta_k^t - theta^{t-1}); the server keeps
h^t = h^{t-1} - alpha (1/m) sum_{k in P} (theta_k^t - theta^{t-1}) and sets theta^t = mean_{k in P} theta_k^t -
(1/alpha) h^t. Three deviations, read in FedML's source; the first two are visible below:
1. fedml/ml/trainer/feddyn_trainer.py:70-78 computes both regularisers on param.data (lin_penalty and
   norm_penalty), which carries no gradient: loss.backward() sees L_k alone, so the clients run plain SGD on
   L_k (FedAvg's local step), whatever alpha and grad L_k^{t-1} are.
2. fedml/simulation/sp/feddyn/feddyn_trainer.py:140 reads old_w_global from the model after the clients trained,
   i.e. the last client's theta_k^t, not theta^{t-1}: h moves by alpha/m sum_k (theta_k^t - theta_last^t), which
   is 0 with one client.
3. feddyn_trainer.py:147 sets w_global -= server_state, without the 1/alpha of Alg. 1 (the line with
   1/feddyn_alpha is commented out at line 146).
One client, zero state, K = 50 full-batch steps of size 0.05, alpha = 0.5, from a random theta^0:
"""
import types

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
import fedml.ml.trainer.feddyn_trainer as dyn_trainer  # noqa: E402
import fedml.simulation.sp.feddyn.feddyn_trainer as sp_feddyn  # noqa: E402


class HalfMSE(torch.nn.Module):  # the trainer hard-codes nn.CrossEntropyLoss; this is a regression
    def forward(self, out, y):
        return 0.5 * torch.mean((out.view(-1) - y) ** 2)


class Off:
    def __getattr__(self, name):
        return Off()

    def __call__(self, *a, **k):
        return None


dyn_trainer.nn, sp_feddyn.mlops = types.SimpleNamespace(CrossEntropyLoss=HalfMSE), Off()
rng = np.random.default_rng(0)
d, K, eta, alpha = 3, 50, 0.05, 0.5
Z, y = rng.standard_normal((6, d)), rng.standard_normal(6)
x = rng.standard_normal(d)
args = types.SimpleNamespace(federated_optimizer="FedDyn", client_optimizer="sgd", learning_rate=eta, epochs=K,
                             comm_round=1, client_num_in_total=1, client_num_per_round=1, initialize_all_clients=True,
                             frequency_of_the_test=1, dataset="toy", weight_decay=0.0, feddyn_alpha=alpha)
dataset = [6, 0, None, None, {0: 6}, {0: [(torch.tensor(Z), torch.tensor(y))]}, {0: None}, 1]
model = torch.nn.Linear(d, 1, bias=False)
with torch.no_grad():
    model.weight[:] = torch.tensor(x)[None, :]
trainer = sp_feddyn.FedDynTrainer(dataset, model, torch.device("cpu"), args)
trainer.test = lambda *a, **k: None
trainer.train()
fedml = trainer.model_trainer.get_model_params()["weight"].numpy().ravel()


def local(w, dyn):  # K steps on L(w) (+ (alpha/2)||w - x||^2 with the dynamic regulariser; grad L^0 = 0)
    for _ in range(K):
        w = w - eta * (Z.T @ (Z @ w - y) / len(y) + (alpha * (w - x) if dyn else 0.0))
    return w


theta = local(x, dyn=True)
paper = theta - (-alpha * (theta - x)) / alpha                    # h^1 = -alpha (theta - x) (m = 1)
replica = local(x, dyn=False)                                     # deviations 1 and 2: plain SGD, h^1 = 0
h = trainer.server_state["weight"].numpy().ravel()
print("FedML theta^1", fedml, "\nAlg. 1 theta^1", paper, "\nreplica of deviations 1 and 2", replica)
print("FedML h^1", h, "\nAlg. 1 h^1", -alpha * (theta - x))
assert np.allclose(fedml, replica, atol=1e-10) and not np.allclose(fedml, paper, atol=1e-3)
assert np.allclose(h, 0.0) and not np.allclose(-alpha * (theta - x), 0.0, atol=1e-3)
