"""APPFL 1.12.0 secure aggregation: a new server's first round returns the averaged update, not the model plus it;
without fedtheory.

With aggregator_kwargs.use_secure_agg, each client sends its delta local - global plus pairwise masks
(VanillaTrainer.train, appfl/algorithm/trainer/vanilla_trainer.py:470-530; appfl/privacy/secure_aggregator.py),
and FedAvgAggregator.aggregate's masked-payload branch (appfl/algorithm/aggregator/fedavg_aggregator.py:171-214)
averages them. When the aggregator's global_state is None -- a new server, whose global_state is first set by an
aggregation (get_parameters returns the model's state without setting it) -- that branch sets
global_state = the averaged delta (lines 196-200), not the model plus it: the new global model is the update
alone. The non-secure branch starts global_state from the model (lines 228-240). From round 2 global_state is
set and the branch adds the delta; the masked flats are float32 (secure_aggregator.py:141), so a float64 model
is averaged at float32 precision. McMahan et al.'s round with equal weights: x+ = x + mean_i (y_i - x).
Two clients, K = 5 steps of size 0.1, from a random x:
"""
import numpy as np
import torch
from omegaconf import DictConfig

torch.set_default_dtype(torch.float64)
from appfl.algorithm.aggregator import FedAvgAggregator  # noqa: E402
from appfl.algorithm.trainer import VanillaTrainer  # noqa: E402


class HalfMSE(torch.nn.Module):
    def forward(self, out, target):
        return 0.5 * torch.mean((out.view(-1) - target) ** 2)


class Silent:
    def __getattr__(self, name):
        return lambda *a, **k: None


rng = np.random.default_rng(0)
d, K, eta = 3, 5, 0.1
Z = [rng.standard_normal((4 + i, d)) for i in range(2)]
y = [rng.standard_normal(4 + i) for i in range(2)]
x = rng.standard_normal(d)


def model(v):
    m = torch.nn.Linear(d, 1, bias=False)
    with torch.no_grad():
        m.weight[:] = torch.tensor(v)[None, :]
    return m


def local(i, w):
    for _ in range(K):
        w = w - eta * Z[i].T @ (Z[i] @ w - y[i]) / len(y[i])
    return w


ids = ["client0", "client1"]
payloads = {}
for i, cid in enumerate(ids):
    configs = DictConfig({"mode": "step", "num_local_steps": K, "optim": "SGD", "optim_args": {"lr": eta},
                          "train_batch_size": len(y[i]), "train_data_shuffle": False, "do_validation": False,
                          "device": "cpu", "use_secure_agg": True})
    data = torch.utils.data.TensorDataset(torch.tensor(Z[i]), torch.tensor(y[i]))
    trainer = VanillaTrainer(model=model(x), loss_fn=HalfMSE(), metric=lambda a, b: 0.0, train_dataset=data,
                             train_configs=configs, logger=Silent(), client_id=cid)
    trainer.runtime_context = {"all_client_ids": ids, "round_id": 0, "secure_agg_secret": b"secret"}
    trainer.train()
    out = trainer.get_parameters()
    payloads[cid] = out[0] if isinstance(out, tuple) else out

paper = np.mean([local(i, x) for i in range(2)], axis=0)
first = FedAvgAggregator(model(x), DictConfig({"use_secure_agg": True}), logger=Silent())
round_1 = first.aggregate(payloads)["weight"].numpy().ravel()
later = FedAvgAggregator(model(x), DictConfig({"use_secure_agg": True}), logger=Silent())
later.global_state = {"weight": torch.tensor(x)[None, :]}        # as from round 2: the aggregator holds x
round_2 = later.aggregate(payloads)["weight"].numpy().ravel()
print("APPFL round 1", round_1, "\nFedAvg       ", paper, "\naveraged delta", paper - x)
print("APPFL with global_state = x", round_2, "relative error", np.linalg.norm(round_2 - paper) / np.linalg.norm(paper))
assert np.allclose(round_1, paper - x, atol=1e-6) and not np.allclose(round_1, paper, atol=1e-3)
assert np.allclose(round_2, paper, rtol=1e-6, atol=0) and not np.allclose(round_2, paper, rtol=1e-10, atol=0)
