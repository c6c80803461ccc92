"""fl4health 0.4.2 NumpyClippingClient sends a zero update in the first round on CPU, without fedtheory.

Run with fl4health's venv (from the repository's root):
    /work/fw-venvs/fl4health/bin/python benchmarks/frameworks/repro/fl4health_clipping_first_round.py

NumpyClippingClient.set_parameters, first fitting round (fl4health/clients/clipping_client.py line 176, the branch
``current_server_round == 1 and fitting_round``), keeps its reference weights as
``self.parameter_exchanger.push_parameters(self.model)``, i.e. ``[val.cpu().numpy() for val in
model.state_dict().values()]`` (fl4health/parameter_exchange/full_exchanger.py line 30). On CPU ``.cpu()`` is the same
tensor and ``.numpy()`` shares its memory, so the optimizer's in-place steps move the "initial" weights with the
model and ``compute_weight_update_and_clip`` returns new - old = 0. The server (ClientLevelDPFedAvgM, client-level
DP FedAvgM; Andrew et al. 2021 / McMahan et al. 2018, DP-FedAvg) then does not move in round 1 and its momentum
starts from 0. On CUDA ``.cpu()`` copies, so GPU runs are not affected. From round 2 the reference is the
received array and the update is right. Second confirmation: the same K gradient steps in plain NumPy.
"""
from pathlib import Path

import numpy as np
import torch
from fl4health.clients.clipping_client import NumpyClippingClient

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(0)
Z, y, x0, K, lr = rng.normal(size=(8, 3)), rng.normal(size=8), np.array([0.3, -0.2, 0.1]), 5, 0.1


class Client(NumpyClippingClient):
    def get_data_loaders(self, config):
        data = torch.utils.data.TensorDataset(torch.tensor(Z), torch.tensor(y)[:, None])
        loader = torch.utils.data.DataLoader(data, batch_size=len(data))
        return loader, loader

    def get_model(self, config):
        return torch.nn.Linear(3, 1, bias=False)

    def get_optimizer(self, config):
        return torch.optim.SGD(self.model.parameters(), lr=lr)

    def get_criterion(self, config):
        return torch.nn.MSELoss()  # 1/m ||Z x - y||^2


config = {"current_server_round": 1, "local_steps": K, "adaptive_clipping": False}
client = Client(data_path=Path("."), metrics=[], device=torch.device("cpu"))
packed, _, _ = client.fit([x0[None, :], np.array([1e12])], config)   # model, clipping bound 1e12 (no clipping)
fl4health_update = packed[0].reshape(-1)

x = x0.copy()                                  # the same K full-batch steps on 1/m ||Z x - y||^2, in NumPy
for _ in range(K):
    x -= lr * 2 * Z.T @ (Z @ x - y) / len(y)
print(f"round-1 update sent by NumpyClippingClient: {fl4health_update}")
print(f"y_K - x_0 from the same steps in NumPy:      {x - x0}")
assert np.allclose(fl4health_update, 0.0) and not np.allclose(x - x0, 0.0)
packed, _, _ = client.fit([x0[None, :], np.array([1e12])], {**config, "current_server_round": 2})
print(f"the same call as round 2:                    {packed[0].reshape(-1)}")
assert np.allclose(packed[0].reshape(-1), x - x0)   # round 2 is right: only the first round's reference aliases

t = torch.zeros(3)                             # the cause, in two lines of torch
view = t.cpu().numpy()
t.add_(1.0)
assert view[0] == 1.0                          # .cpu().numpy() of a CPU tensor is a view of it
