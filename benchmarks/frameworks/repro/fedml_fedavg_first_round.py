"""FedML 0.9.6 single-process FedAvg, FedProx and FedOpt: the clients of a round are chained, without fedtheory.

McMahan et al. (2017): every client of a round starts from the round's model x and the server averages the
results, x+ = sum_i n_i/n y_i(x). FedML's FedAvgAPI.train (fedml/simulation/sp/fedavg/fedavg_api.py:68) keeps
w_global = self.model_trainer.get_model_params(), which is ModelTrainerCLS's self.model.cpu().state_dict()
(fedml/ml/trainer/my_model_trainer_classification.py:15-16): tensors that share storage with the model's
parameters. Client 0's training moves them in place, so client 1 starts from client 0's result y_0(x), and the
average is n_0/n y_0(x) + n_1/n y_1(y_0(x)). FedProxTrainer.train (fedml/simulation/sp/fedprox/fedprox_trainer.py)
does the same, and FedProxModelTrainer anchors client 1's proximal term at y_0(x) too. After round 1 w_global is
the aggregate (a new dict), so FedAvg's and FedProx's later rounds are right. FedOptAPI.train
(fedml/simulation/sp/fedopt/fedopt_api.py:89) re-reads w_global from the model at the top of every round: every
round is chained, and its "reset weight after standalone simulation" (set_model_params(w_global)) restores the
last client's model, not x. Two clients, K = 2 steps of size 0.1, from a random x:
"""
import types

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
import fedml.ml.trainer.fedprox_trainer as prox_trainer  # noqa: E402
import fedml.ml.trainer.my_model_trainer_classification as cls_trainer  # noqa: E402
import fedml.simulation.sp.fedavg.fedavg_api as sp_fedavg  # noqa: E402
import fedml.simulation.sp.fedopt.fedopt_api as sp_fedopt  # noqa: E402
import fedml.simulation.sp.fedprox.fedprox_trainer as sp_fedprox  # noqa: E402


class HalfMSE(torch.nn.Module):  # the trainers hard-code nn.CrossEntropyLoss; this is a regression
    def forward(self, out, y):
        return 0.5 * torch.mean((out.view(-1) - y) ** 2)


class Targets(torch.Tensor):  # ModelTrainerCLS casts the labels with labels.long(); a regression keeps them
    def long(self):
        return self


class Off:
    def __getattr__(self, name):
        return Off()

    def __call__(self, *a, **k):
        return None


cls_trainer.nn = prox_trainer.nn = types.SimpleNamespace(CrossEntropyLoss=HalfMSE)
sp_fedavg.mlops = sp_fedprox.mlops = Off()
rng = np.random.default_rng(0)
N, d, K, eta, mu = 2, 3, 2, 0.1, 0.5
Z = [rng.standard_normal((5 + i, d)) for i in range(N)]
y = [rng.standard_normal(5 + i) for i in range(N)]
n = np.array([len(t) for t in y])
x = rng.standard_normal(d)


def run(cls, name, **extra):
    data = {i: [(torch.tensor(Z[i]), torch.tensor(y[i]).as_subclass(Targets))] for i in range(N)}
    dataset = [int(n.sum()), 0, None, None, {i: int(n[i]) for i in range(N)}, data, {i: None for i in range(N)}, 1]
    args = types.SimpleNamespace(federated_optimizer=name, client_optimizer="sgd", learning_rate=eta, epochs=K,
                                 comm_round=1, client_num_in_total=N, client_num_per_round=N, frequency_of_the_test=1,
                                 dataset="toy", weight_decay=0.0, **extra)
    model = torch.nn.Linear(d, 1, bias=False)
    with torch.no_grad():
        model.weight[:] = torch.tensor(x)[None, :]
    device = torch.device("cpu")
    trainer = cls(args, device, dataset, model) if name != "FedProx" else cls(dataset, model, device, args)
    trainer._local_test_on_all_clients = lambda round_idx: None
    trainer.train()
    return trainer.model_trainer.get_model_params()["weight"].numpy().ravel()


def local(i, w, prox=0.0):
    anchor = w
    for _ in range(K):
        w = w - eta * (Z[i].T @ (Z[i] @ w - y[i]) / n[i] + prox * (w - anchor))
    return w


p = n / n.sum()
for name, cls, extra, prox in (("FedAvg", sp_fedavg.FedAvgAPI, {}, 0.0),
                               ("FedProx", sp_fedprox.FedProxTrainer, {"fedprox_mu": mu}, mu),
                               ("FedOpt", sp_fedopt.FedOptAPI, {"server_optimizer": "sgd", "server_lr": 1.0}, 0.0)):
    fedml = run(cls, name, **extra)
    paper = p[0] * local(0, x, prox) + p[1] * local(1, x, prox)              # every client from x
    y0 = local(0, x, prox)
    chained = p[0] * y0 + p[1] * local(1, y0, prox)                            # client 1 from client 0's result
    print(f"{name:8s} FedML {fedml}\n{'':8s} paper {paper}\n{'':8s} chain {chained}")
    assert np.allclose(fedml, chained, atol=1e-12) and not np.allclose(fedml, paper, atol=1e-3)
