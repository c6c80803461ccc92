"""FedML 0.9.6 FedNova (single-process) computes a float64 model's step with float32 client weights, without
fedtheory.

fedml/simulation/sp/fednova/fednova_trainer.py:109-111 passes each client's weight p_i = n_i / (the round's
examples) as torch.FloatTensor([...]). Client.get_local_norm_grad (fedml/simulation/sp/fednova/client.py:50-59)
multiplies the float64 update x - y_i by that float32 weight times 1/||a_i||_1, and Client.get_local_tau_eff
(client.py:61-65) multiplies ||a_i||_1 by it, so tau_eff is a float32 tensor too. A user who chose a float64 model
gets FedNova's step at float32 precision. Wang et al. (2020), eq. (7): x+ = x - tau_eff sum_i p_i d_i with
d_i = (x - y_i) / ||a_i||_1 and tau_eff = sum_i p_i ||a_i||_1 (plain SGD: ||a_i||_1 = tau_i).

Three clients of one example each (p_i = 1/3, which float32 rounds), tau_i = K = 2 plain gradient steps of size 0.1
on 1/2 (z_i x - t_i)^2, float64 model. FedML's round differs from eq. (7) computed in float64 by float32's rounding
(about 1e-8 relative), not by O(lr) as an algorithmic slip would.
"""
import types

import fedml.simulation.sp.fednova.fednova_trainer as sp
import numpy as np
import torch

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(0)
n, d, K, lr = 3, 2, 2, 0.1
Z = [rng.normal(size=d) for _ in range(n)]
t = [float(rng.normal()) for _ in range(n)]
x = rng.normal(size=d)


class HalfMSE(torch.nn.Module):  # FedNova's Client hard-codes nn.CrossEntropyLoss; least squares here
    def forward(self, out, target):
        return 0.5 * torch.mean((out.view(-1) - target) ** 2)


args = types.SimpleNamespace(learning_rate=lr, gmf=0.0, mu=0.0, momentum=0.0, dampening=0.0, wd=0.0, nesterov=False,
                             epochs=1, comm_round=1, client_num_in_total=n, client_num_per_round=n,
                             frequency_of_the_test=1, dataset="repro", enable_wandb=False)
train = {i: [(torch.tensor(Z[i])[None, :], torch.tensor([t[i]]))] * K for i in range(n)}  # K batches: tau_i = K
dataset = [n, 0, None, None, {i: 1 for i in range(n)}, train, {i: [] for i in range(n)}, 1]
model = torch.nn.Linear(d, 1, bias=False)
with torch.no_grad():
    model.weight[:] = torch.tensor(x)[None, :]
trainer = sp.FedNovaTrainer(dataset, model, torch.device("cpu"), args)
trainer.local_test_on_all_clients = lambda *a, **k: None
for client in trainer.client_list:
    client.criterion = HalfMSE()
trainer.train()
fedml = trainer.model_global.weight.detach().numpy().reshape(-1)
assert trainer.model_global.weight.dtype == torch.float64  # the model stays float64; its step was float32


def local(i):  # K plain gradient steps on client i
    y = x.copy()
    for _ in range(K):
        y = y - lr * Z[i] * (Z[i] @ y - t[i])
    return y


p = 1.0 / n
paper = x - (n * p * K) * sum(p * (x - local(i)) / K for i in range(n))  # eq. (7) in float64
step = np.abs(paper - x).max()
err = np.abs(fedml - paper).max() / step
print(f"FedML {fedml}  eq. (7) {paper}  |difference| / |step| = {err:.2e}")
assert 1e-9 < err < 1e-6, err  # float32's rounding of p_i (about 6e-8), far below an algorithmic slip
