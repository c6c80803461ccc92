"""pfl 0.6.0 SCAFFOLD's client control variate, both options, without fedtheory.

Karimireddy et al. (2020), Alg. 1 line 12: option I  c_i+ = g_i(x)  (the client's gradient at the server model);
option II  c_i+ = c_i - c + (x - y_i) / (K eta_l)  (y_i the client's model after K local steps). pfl builds both
from ``PyTorchModel.get_model_difference``, which returns y - x (current minus initial): option I runs one SGD
step of learning rate 1 and keeps the difference, -g_i(x); option II adds (y - x)/(K eta_l)
(pfl/algorithm/scaffold.py, ``SCAFFOLD.train_one_user``). One client, zero control variates, c = 0:
option I stores -g_i(x) instead of g_i(x); option II stores (y - x)/(K eta_l) instead of (x - y)/(K eta_l).
"""
import numpy as np
import torch
from pfl.algorithm.scaffold import SCAFFOLD, SCAFFOLDParams
from pfl.common_types import Population
from pfl.context import CentralContext
from pfl.data.dataset import Dataset
from pfl.data.user_state import InMemoryUserStateStorage
from pfl.hyperparam import NNTrainHyperParams
from pfl.model.pytorch import PyTorchModel
from pfl.stats import MappedVectorStatistics


class LeastSquares(torch.nn.Module):  # f(w) = 1/(2m) ||X w - y||^2, float64
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))

    def loss(self, X, y, eval=False):  # noqa: A002 - pfl's signature
        return 0.5 * torch.mean((X @ self.w - y) ** 2)

    def metrics(self, X, y, eval=False):  # noqa: A002
        return {}


X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
y = np.array([1.0, -1.0, 0.5])
x0, K, eta = np.array([0.3, -0.2]), 5, 0.1
grad = X.T @ (X @ x0 - y) / len(y)
yK = x0.copy()
for _ in range(K):  # the paper's local steps with c = c_i = 0: plain GD
    yK = yK - eta * X.T @ (X @ yK - y) / len(y)
paper = {"I": grad, "II": (x0 - yK) / (K * eta)}

for option in ("I", "II"):
    net = LeastSquares()
    model = PyTorchModel(model=net, local_optimizer_create=torch.optim.SGD,
                         central_optimizer=torch.optim.SGD(net.parameters(), lr=1.0))
    with torch.no_grad():
        net.w.copy_(torch.as_tensor(x0))
    storage = InMemoryUserStateStorage()
    params = SCAFFOLDParams(central_num_iterations=1, evaluation_frequency=1, train_cohort_size=1,
                            val_cohort_size=None, population=1, use_gradient_as_control_variate=option == "I",
                            user_state_storage=storage)
    algorithm = SCAFFOLD()
    algorithm._server_c = MappedVectorStatistics({"w": torch.zeros(2, dtype=torch.float64)})  # c = 0
    context = CentralContext(current_central_iteration=0, do_evaluation=False, cohort_size=1,
                             population=Population.TRAIN, algorithm_params=params,
                             model_train_params=NNTrainHyperParams(local_batch_size=None, local_num_epochs=K,
                                                                   local_learning_rate=eta))
    data = Dataset((torch.as_tensor(X), torch.as_tensor(y)), user_id="0")
    algorithm.train_one_user(model.get_parameters(), model, data, context)
    c_plus = storage.load_state("0", "local_c")["w"].detach().numpy()
    print(f"option {option}: pfl c_i+ = {c_plus}, Alg. 1 c_i+ = {paper[option]}")
    assert np.allclose(c_plus, -paper[option], rtol=1e-5), "pfl's sign matches the paper here"
