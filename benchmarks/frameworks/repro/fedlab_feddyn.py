"""FedLab 1.3.0 FedDyn against Acar et al. (2021), Alg. 1, without fedtheory: one round, two clients, zero state.

The paper: client k minimises f_k(theta) - <g_k, theta> + alpha/2 ||theta - x||^2 (g_k = 0 in round 1), and the
server updates h+ = h - alpha/N sum_k (theta_k - x). FedLab (fedlab/contrib/algorithm/feddyn.py):
(1) FedDynSerialClientTrainer.train builds the linear and proximal terms from ``self.model_parameters``, which is
    SerializationTool.serialize_model (detached ``param.data``): they add no gradient, so the local steps are plain
    GD on f_k; (2) FedDynServerHandler.global_update computes h - alpha/N (sum_k theta_k - x), subtracting x once.
Run in a venv with ``pip install fedlab==1.3.0``.
"""
import numpy as np
import torch
from fedlab.contrib.algorithm.feddyn import FedDynSerialClientTrainer, FedDynServerHandler

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(0)
Z = [rng.standard_normal((6, 2)), rng.standard_normal((6, 2))]     # two clients' features
Y = [rng.standard_normal(6), rng.standard_normal(6)]               # and targets
x, alpha, K, eta, N = np.array([0.5, -0.3]), 1.0, 5, 0.1, 2


class FullBatch:  # FedLab's dataset interface: one full batch per client
    def get_dataloader(self, id, batch_size):  # noqa: A002 - FedLab's signature
        return [(torch.tensor(Z[id]), torch.tensor(Y[id])[:, None])]


def model_at(w):
    m = torch.nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        m.weight[:] = torch.tensor(w)[None, :]
    return m


server = FedDynServerHandler(model_at(x), global_round=1, sample_ratio=1.0)
server.setup_optim(alpha)
server.num_clients = N
trainer = FedDynSerialClientTrainer(model_at(x), N)
trainer.setup_dataset(FullBatch())
trainer.setup_optim(K, 6, eta, alpha)
trainer.criterion = lambda out, target: 0.5 * torch.mean((out - target) ** 2)  # f_k = 1/(2m) ||Z w - y||^2
trainer.local_process(server.downlink_package, [0, 1])
packs = trainer.uplink_package  # read once: the property hands over the trainer's cache and empties it
fedlab_theta = [pack[0].numpy().copy() for pack in packs]
for pack in packs:
    server.load(pack)


def local_gd(k, prox):  # K steps of GD on f_k + prox/2 ||. - x||^2 (g_k = 0)
    w = x.copy()
    for _ in range(K):
        w = w - eta * (Z[k].T @ (Z[k] @ w - Y[k]) / len(Y[k]) + prox * (w - x))
    return w


paper_theta = [local_gd(k, alpha) for k in range(N)]
plain_theta = [local_gd(k, 0.0) for k in range(N)]
for k in range(N):
    print(f"client {k}: FedLab theta {fedlab_theta[k]}, paper {paper_theta[k]}, plain GD on f_k {plain_theta[k]}")
    assert np.allclose(fedlab_theta[k], plain_theta[k]) and not np.allclose(fedlab_theta[k], paper_theta[k])
h_paper = -alpha / N * sum(t - x for t in fedlab_theta)      # the paper's h+ from FedLab's own theta_k
h_once = -alpha / N * (sum(fedlab_theta) - x)                # x subtracted once
print(f"h+: FedLab {server.h.numpy()}, paper {h_paper}")
assert np.allclose(server.h.numpy(), h_once) and not np.allclose(server.h.numpy(), h_paper)
