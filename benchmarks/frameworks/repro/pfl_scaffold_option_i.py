"""pfl 0.6.0 SCAFFOLD, option I (use_gradient_as_control_variate=True), against Karimireddy et al. (2020), Alg. 1,
without fedtheory.

Run where pfl is installed (``pip install 'fedtheory[pfl]'``), from the repository's root:
    python benchmarks/frameworks/repro/pfl_scaffold_option_i.py

Option I sets c_i+ = grad f_i(x), the client's gradient at the server model. pfl/algorithm/scaffold.py lines 126-133
take one SGD step of learning rate 1 from x and keep ``local_c_plus = model.get_model_difference(initial_model_state)``.
Two deviations, both visible below on two users who train one after the other on one model, as pfl's
SimulatedBackend does:
1. the sign: the model difference is current - initial = -grad f_i(x), not +grad f_i(x) (option II has the same
   flipped sign, docs/conformance.md);
2. aliasing: ``get_model_difference`` returns a buffer that pfl reuses (the comment at lines 142-143 says so and
   clones the later ``model_diff``), but ``local_c_plus`` is saved uncloned (line 160), so the next user's
   difference overwrites it: after the round, user 0's stored c_i is user 1's.
The server's c (the average of the uploaded c_i+ - c_i) is computed before the overwrite and is the mean of -grad.
"""
import numpy as np
import torch
from pfl.aggregate.weighting import WeightByUser
from pfl.algorithm.scaffold import SCAFFOLD, SCAFFOLDParams
from pfl.common_types import Population
from pfl.context import CentralContext, UserContext
from pfl.data.dataset import Dataset
from pfl.data.user_state import InMemoryUserStateStorage
from pfl.hyperparam import NNTrainHyperParams
from pfl.metrics import Metrics
from pfl.model.pytorch import PyTorchModel
from pfl.stats import MappedVectorStatistics


class LeastSquares(torch.nn.Module):  # f_i(w) = 1/(2m) ||Z w - y||^2, float64
    def __init__(self, d):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(d, dtype=torch.float64))

    def loss(self, X, y, eval=False):
        r = X @ self.w - y
        return 0.5 * (r * r).mean()

    def metrics(self, X, y, eval=False):
        return {}


rng = np.random.default_rng(1)
data = [(rng.normal(size=(4, 2)), rng.normal(size=4)) for _ in range(2)]
x = np.array([0.3, -0.2])
net = LeastSquares(2)
model = PyTorchModel(model=net, local_optimizer_create=torch.optim.SGD,
                     central_optimizer=torch.optim.SGD(net.parameters(), lr=1.0))
with torch.no_grad():
    net.w.copy_(torch.as_tensor(x))
start = model.get_parameters()
storage = InMemoryUserStateStorage()
params = SCAFFOLDParams(central_num_iterations=1, evaluation_frequency=1, train_cohort_size=2, val_cohort_size=None,
                        population=2, use_gradient_as_control_variate=True, user_state_storage=storage)
algorithm = SCAFFOLD()
algorithm._server_c = MappedVectorStatistics({"w": torch.zeros(2, dtype=torch.float64)})
context = CentralContext(current_central_iteration=0, do_evaluation=False, cohort_size=2, population=Population.TRAIN,
                         algorithm_params=params,
                         model_train_params=NNTrainHyperParams(local_batch_size=None, local_num_epochs=5,
                                                               local_learning_rate=0.1))
total = None
for i, (Z, y) in enumerate(data):  # SimulatedBackend's per-user loop
    model.set_parameters(start)
    stats, _ = algorithm.train_one_user(start, model, Dataset((torch.as_tensor(Z), torch.as_tensor(y)), user_id=str(i)),
                                        context)
    stats, _ = WeightByUser().postprocess_one_user(stats=stats, user_context=UserContext(len(y), seed=None))
    total = stats.apply_elementwise(torch.clone) if total is None else stats + total
model.set_parameters(start)
algorithm.process_aggregated_statistics(context, Metrics(), model, total)

grads = [Z.T @ (Z @ x - y) / len(y) for Z, y in data]
stored = [storage.load_state(str(i), "local_c")["w"].detach().numpy().astype(np.float64) for i in range(2)]
server_c = algorithm._server_c["w"].detach().numpy().astype(np.float64)
for i in range(2):
    print(f"user {i}: pfl's stored c_i = {stored[i]}, Alg. 1 option I c_i = grad f_i(x) = {grads[i]}")
print(f"server c: pfl {server_c}, Alg. 1 {np.mean(grads, axis=0)}")
assert np.allclose(stored[1], -grads[1], atol=1e-6)                 # 1. the sign
assert np.allclose(stored[0], stored[1]) and not np.allclose(grads[0], grads[1])  # 2. user 0's c_i is user 1's
assert np.allclose(server_c, -np.mean(grads, axis=0), atol=1e-6)  # the server average, of the flipped signs
