"""FedLab 1.3.0 FedNova (default option 'weighted_scale') against Wang et al. (2020), eq. (7), without fedtheory.

Two of four clients take part (``sample_ratio`` 0.5), tau = (2, 4), local models y = (1, 3) from x = 0. With the
round's weights p_i = 1/|S| (what FedLab sets: "we simply set it 1/m here"), eq. (7) is
x+ = x + tau_eff sum_i p_i (y_i - x)/tau_i, tau_eff = sum_i p_i tau_i: 3 * (1/2)(1/2 + 3/4) = 1.875.
FedLab's ``FedNovaServerHandler.global_update`` (fedlab/contrib/algorithm/fednova.py) also multiplies the step by
N/|S| = 2: 3.75. (The authors' 'weighted_scale' rescales population weights p_i = n_i/n, which sum to |S|/N over a
round's clients; FedLab rescales weights that already sum to 1.) At full participation N/|S| = 1 and the two agree.
Run in a venv with ``pip install fedlab==1.3.0``.
"""
import torch
from fedlab.contrib.algorithm.fednova import FedNovaServerHandler

torch.set_default_dtype(torch.float64)
model = torch.nn.Linear(1, 1, bias=False)
with torch.no_grad():
    model.weight.fill_(0.0)
N, ratio = 4, 0.5                          # 2 of 4 clients per round
server = FedNovaServerHandler(model, global_round=1, sample_ratio=ratio, cuda=False)
server.num_clients = N                     # as StandalonePipeline sets it from the trainer
server.setup_optim()                       # the default option, 'weighted_scale'
x = server.model_parameters.clone()
y = [torch.tensor([1.0]), torch.tensor([3.0])]      # the two sampled clients' local models
tau = [torch.Tensor([2.0]), torch.Tensor([4.0])]    # their local steps, as FedNovaSerialClientTrainer uploads them
server.global_update([[yi, ti] for yi, ti in zip(y, tau)])
got = server.model_parameters
m = len(y)
tau_eff = sum(float(t) for t in tau) / m
paper = x + tau_eff * sum((yi - x) / float(ti) for yi, ti in zip(y, tau)) / m
print(f"option {server.option}, {m} of {N} clients")
print(f"FedLab x+ = {got.item()}, eq. (7) x+ = {paper.item()}, ratio {(got - x).item() / (paper - x).item()}")
assert abs(got.item() - 3.75) < 1e-12 and abs(paper.item() - 1.875) < 1e-12
