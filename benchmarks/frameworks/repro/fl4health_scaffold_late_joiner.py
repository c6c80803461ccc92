"""fl4health 0.4.2 SCAFFOLD: a client that joins after the first round starts from c_i = c, not 0, without fedtheory.

Run with fl4health's venv (from the repository's root):
    /work/fw-venvs/fl4health/bin/python benchmarks/frameworks/repro/fl4health_scaffold_late_joiner.py

Karimireddy et al. (2020), Alg. 1, option II, with every c_i initialised to 0 (as fl4health's own ScaffoldServer
documents without warm start: "If false, variates are initialized to 0", fl4health/servers/scaffold_server.py
line 68): c = (1/N) sum_i c_i after every round, and a client's first local steps are corrected by c - 0 = c.
fl4health's ScaffoldClient.set_parameters (fl4health/clients/scaffold_client.py lines 134-135,
``if self.client_control_variates is None: self.client_control_variates =
copy.deepcopy(self.server_control_variates)``) starts a client that was not in the first round from c_i = c:
its first steps are uncorrected and c = (1/N) sum_i c_i no longer holds (the comment there says the copy keeps
c the average of the c_i; with N fixed it does not). With full participation from round 1 (c = 0 then) the two
agree.

Two clients, N = 2 (fraction_fit = 1/2 then 1): round 1 client 1 alone, round 2 both. fl4health's own Scaffold
strategy and ScaffoldClient against the same recursion in plain NumPy. The one cause: with
``clients[0].client_control_variates = [np.zeros((1, 1))]`` set before the loop, fl4health's numbers equal Alg. 1's
to the last digit.
"""
from pathlib import Path

import numpy as np
import torch
from fl4health.clients.scaffold_client import ScaffoldClient
from fl4health.strategies.scaffold import Scaffold
from flwr.common import Code, FitRes, Status, ndarrays_to_parameters, parameters_to_ndarrays

torch.set_default_dtype(torch.float64)
Z = [np.array([[1.0]]), np.array([[2.0]])]
Y = [np.array([1.0]), np.array([-1.0])]
K, lr, N, x0 = 5, 0.1, 2, np.array([0.0])


class Client(ScaffoldClient):
    def __init__(self, i):
        super().__init__(data_path=Path("."), metrics=[], device=torch.device("cpu"))
        self.i = i

    def get_data_loaders(self, config):
        data = torch.utils.data.TensorDataset(torch.tensor(Z[self.i]), torch.tensor(Y[self.i])[:, None])
        return torch.utils.data.DataLoader(data, batch_size=1), torch.utils.data.DataLoader(data, batch_size=1)

    def get_model(self, config):
        return torch.nn.Linear(1, 1, bias=False)

    def get_optimizer(self, config):
        return torch.optim.SGD(self.model.parameters(), lr=lr)

    def get_criterion(self, config):
        return torch.nn.MSELoss()  # (z x - y)^2 on one sample: gradient 2 z (z x - y)


clients = [Client(0), Client(1)]
packed = ndarrays_to_parameters([x0[None, :], np.zeros((1, 1))])      # model, then the server's c
for rnd, S in enumerate([[1], [0, 1]], start=1):
    strategy = Scaffold(initial_parameters=ndarrays_to_parameters(parameters_to_ndarrays(packed)[:1]),
                        initial_control_variates=ndarrays_to_parameters(parameters_to_ndarrays(packed)[1:]),
                        fraction_fit=len(S) / N, min_available_clients=1)
    results = []
    for i in S:
        out, n, _ = clients[i].fit(parameters_to_ndarrays(packed), {"current_server_round": rnd, "local_steps": K})
        results.append((None, FitRes(Status(Code.OK, ""), ndarrays_to_parameters(out), n, {})))
    packed, _ = strategy.aggregate_fit(rnd, results, [])
x_fl, c_fl = (a.reshape(-1) for a in parameters_to_ndarrays(packed))
ci_fl = [c.client_control_variates[0].reshape(-1) for c in clients]

x, c, ci = x0.copy(), np.zeros(1), [np.zeros(1), np.zeros(1)]         # Alg. 1, option II, c_i = 0, in NumPy
for S in ([1], [0, 1]):
    ys, dcs = [], []
    for i in S:
        y = x.copy()
        for _ in range(K):
            y -= lr * (2 * Z[i].T @ (Z[i] @ y - Y[i]) - ci[i] + c)
        new = ci[i] - c + (x - y) / (K * lr)
        ys.append(y), dcs.append(new - ci[i])
        ci[i] = new
    x, c = np.mean(ys, axis=0), c + sum(dcs) / N

print(f"fl4health: x = {x_fl}, c = {c_fl}, (1/N) sum c_i = {np.mean(ci_fl, axis=0)}")
print(f"Alg. 1:    x = {x}, c = {c}, (1/N) sum c_i = {np.mean(ci, axis=0)}")
assert np.allclose(c, np.mean(ci, axis=0))                  # the paper keeps the invariant
assert not np.allclose(c_fl, np.mean(ci_fl, axis=0))        # fl4health does not
assert not np.allclose(x_fl, x)                             # and its model leaves the paper's trajectory
