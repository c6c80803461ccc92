"""FedML 0.9.6's single-process FedNova drops its server momentum ``gmf``: without fedtheory, FedML, torch and NumPy
only, in a few seconds.

    pip install fedml==0.9.6 "setuptools<81" "sentry-sdk<2" torch
    python fedml_fednova_gmf.py

Wang et al. (2020), "Tackling the Objective Inconsistency Problem in Heterogeneous Federated Optimization", with
server (global) momentum as in their code and in FedML's own ``FedNovaTrainer.aggregate``: with d_r = tau_eff sum_i
p_i a_i-normalised update of round r (the plain FedNova step, x_{r+1} = x_r - d_r when gmf = 0),

    buf_1 = d_1 / lr,   buf_r = gmf buf_{r-1} + d_r / lr,   x_{r+1} = x_r - lr buf_r,

so round 1 equals plain FedNova and round 2 is x_3 = x_2 - gmf d_1 - d_2. FedML's ``FedNovaTrainer.train``
(``fedml/simulation/sp/fednova/fednova_trainer.py:80``) sets ``self.global_momentum_buffer = dict()`` at the top of
*every* round, so ``aggregate`` (lines 151-160) always takes the first-round branch and buf_r = d_r / lr: the run with
gmf = 0.9 is the run with gmf = 0, round after round. (The MPI ``FedNovaAggregator`` builds the buffer once, in
``__init__``, line 55, and keeps it.)

Two clients with equal sizes (weights 1/2, exact in float32), K = 3 local SGD steps of size 0.1 on
1/2 mean (z w - y)^2, three rounds of FedML's own loop (``comm_round = 3``, one ``train()``), the model read after
each round by the per-round test callback FedML calls (``local_test_on_all_clients``).
"""
from __future__ import annotations

import types

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
import fedml.simulation.sp.fednova.fednova_trainer as sp_fednova  # noqa: E402

K, LR, GMF, ROUNDS, D = 3, 0.1, 0.9, 3, 2
rng = np.random.default_rng(0)
Z = [rng.standard_normal((4, D)) for _ in range(2)]
Y = [rng.standard_normal(4) for _ in range(2)]
X0 = rng.standard_normal(D)


class HalfMSE(torch.nn.Module):  # FedNova's Client hard-codes nn.CrossEntropyLoss; this is a regression
    def forward(self, out, y):
        return 0.5 * torch.mean((out.view(-1) - y) ** 2)


def fedml_rounds(gmf: float) -> list[np.ndarray]:
    """The model after each round of FedML's own FedNova loop with server momentum ``gmf``."""
    train = {i: [(torch.tensor(Z[i]), torch.tensor(Y[i]))] * K for i in range(2)}  # K batches: K steps per epoch
    dataset = [8, 0, None, None, {0: 4, 1: 4}, train, {0: [], 1: []}, 1]
    args = types.SimpleNamespace(learning_rate=LR, gmf=gmf, mu=0.0, momentum=0.0, dampening=0.0, wd=0.0,
                                 nesterov=False, epochs=1, comm_round=ROUNDS, client_num_in_total=2,
                                 client_num_per_round=2, frequency_of_the_test=1, dataset="toy", enable_wandb=False)
    model = torch.nn.Linear(D, 1, bias=False)
    with torch.no_grad():
        model.weight[:] = torch.tensor(X0)[None, :]
    trainer = sp_fednova.FedNovaTrainer(dataset, model, torch.device("cpu"), args)
    for client in trainer.client_list:
        client.criterion = HalfMSE()
    seen = []
    trainer.local_test_on_all_clients = lambda model_global, round_idx: seen.append(
        model_global.weight.detach().numpy().ravel().copy())
    trainer.train()
    return seen


def plain_step(x: np.ndarray) -> np.ndarray:
    """d = tau_eff sum_i p_i (x - y_i) / tau_i for equal p_i = 1/2 and tau_i = K: x minus the mean local model."""
    ys = []
    for z, y in zip(Z, Y):
        w = x.copy()
        for _ in range(K):
            w = w - LR * z.T @ (z @ w - y) / len(y)
        ys.append(w)
    return x - np.mean(ys, axis=0)


def expected_rounds(gmf: float) -> list[np.ndarray]:
    """Wang et al.'s FedNova with server momentum (their code's gmf), in NumPy."""
    x, buf, out = X0.copy(), None, []
    for _ in range(ROUNDS):
        d = plain_step(x)
        buf = d / LR if buf is None else gmf * buf + d / LR
        x = x - LR * buf
        out.append(x)
    return out


plain, momentum, paper = fedml_rounds(0.0), fedml_rounds(GMF), expected_rounds(GMF)
for r in range(ROUNDS):
    print(f"round {r + 1}: FedML gmf=0 {plain[r]}  FedML gmf={GMF} {momentum[r]}  expected gmf={GMF} {paper[r]}")
assert np.allclose(plain[0], paper[0], rtol=1e-6), "round 1 of FedNova with momentum is plain FedNova"
# equal up to the rounding of (d / lr) * lr, which the first-round branch computes
assert all(np.allclose(a, b, rtol=1e-12, atol=0) for a, b in zip(plain, momentum)), "FedML's gmf changed the rounds"
gap = np.abs(momentum[1] - paper[1]).max()
print(f"FedML with gmf={GMF} equals FedML with gmf=0 in every round (to 1e-12); round 2 is off the paper's by {gap:.3g}")
assert gap > 1e-3
