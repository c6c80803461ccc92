"""APPFL 1.12.0 secure aggregation weighted by sample size: the server step is 1/|S| of McMahan et al.'s, or the
masks do not cancel; without fedtheory.

McMahan et al. (2017): x+ = x + sum_i (n_i/n) (y_i - x). APPFL's weighted secure aggregation is
aggregator_kwargs.secure_agg_client_weights_mode = "num_examples", which the server agent copies into the clients'
train_configs (appfl/agent/server.py:740-770): VanillaTrainer.train scales each delta by
n_i / runtime_context["global_num_examples_sum"] before masking (appfl/algorithm/trainer/vanilla_trainer.py:483-501).
FedAvgAggregator.aggregate's masked-payload branch (appfl/algorithm/aggregator/fedavg_aggregator.py:179-189) then
weighs the masked flats again: by 1/|S| at its default client_weights_mode ("equal"), so the step is
(1/|S|) sum_i (n_i/n) (y_i - x); or by n_i/n with client_weights_mode = "sample_size", so the pairwise masks, which
cancel only in an equally weighted sum, do not cancel. Two clients, K = 5 steps of size 0.1, from a random x, the
aggregator's global_state set to x (as from round 2):
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
n = [len(t) for t in y]
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
                          "device": "cpu", "use_secure_agg": True, "secure_agg_client_weights_mode": "num_examples"})
    data = torch.utils.data.TensorDataset(torch.tensor(Z[i]), torch.tensor(y[i]))
    trainer = VanillaTrainer(model=model(x), loss_fn=HalfMSE(), metric=lambda a, b: 0.0, train_dataset=data,
                             train_configs=configs, logger=Silent(), client_id=cid)
    trainer.runtime_context = {"all_client_ids": ids, "round_id": 0, "secure_agg_secret": b"secret",
                               "global_num_examples_sum": sum(n)}
    trainer.train()
    out = trainer.get_parameters()
    payloads[cid] = out[0] if isinstance(out, tuple) else out

paper_step = sum(n[i] / sum(n) * (local(i, x) - x) for i in range(2))
for mode in ("equal", "sample_size"):
    aggregator = FedAvgAggregator(model(x), DictConfig({"use_secure_agg": True, "client_weights_mode": mode,
                                                        "secure_agg_client_weights_mode": "num_examples"}),
                                  logger=Silent())
    aggregator.global_state = {"weight": torch.tensor(x)[None, :]}
    step = aggregator.aggregate(dict(payloads))["weight"].numpy().ravel() - x
    print(f"client_weights_mode={mode!r}: APPFL step {step}, McMahan et al.'s {paper_step}")
    if mode == "equal":
        assert np.allclose(step, paper_step / len(ids), rtol=1e-6) and not np.allclose(step, paper_step, rtol=1e-2)
    else:
        assert not np.allclose(step, paper_step, rtol=1e-2)
