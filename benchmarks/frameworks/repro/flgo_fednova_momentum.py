"""flgo 0.4.4's FedNova with local momentum (option['momentum'] > 0), without fedtheory.

Wang et al. (2020), eqs. (6)-(7) and Section 4: the server divides each client's progress by ||a_i||_1 of its local
solver; for heavy-ball momentum rho over tau_i steps ||a_i||_1 = sum_{k=1}^{tau_i} (1 - rho^k)/(1 - rho), not
tau_i. flgo's FedNova (flgo/algorithm/fednova.py) divides by the tau that Client.pack reports (its num_steps, or
the simulator's _working_amount) whatever the optimiser, so with momentum the clients' weights are p_i ||a_i||/tau_i
instead of p_i: the objective inconsistency FedNova removes comes back. Two clients, f_i(x) = (x - c_i)^2 / 2,
tau = 1 and 5, momentum 0.5, x = 0: the update's direction is sum_i p_i (||a_i||/tau_i) grad f_i(x), not grad F(x).
Run in flgo's venv: python flgo_fednova_momentum.py
"""
import numpy as np
import torch
from flgo.algorithm import fednova as flgo_fednova
from flgo.utils import fmodule

torch.set_default_dtype(torch.float64)
rho, lr, x0, centres, taus = 0.5, 1e-4, 0.0, [1.0, -1.0], [1, 5]


class Scalar(fmodule.FModule):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([x0]))


def local(c, tau):
    """tau steps of torch SGD with momentum on (w - c)^2 / 2, as flgo's BasicClient.train runs them."""
    model = Scalar()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=rho)
    for _ in range(tau):
        opt.zero_grad()
        (0.5 * (model.w - c) ** 2).sum().backward()
        opt.step()
    return model


client = object.__new__(flgo_fednova.Client)
client.num_steps = taus[1]
print("tau reported by flgo's Client.pack with momentum 0.5:", client.pack(None)["tau"],
      "; the paper's ||a||_1:", sum((1 - rho ** k) / (1 - rho) for k in range(1, taus[1] + 1)))

server = object.__new__(flgo_fednova.Server)
server.model, server.aggregation_option = Scalar(), "other"
models = [local(c, t) for c, t in zip(centres, taus)]
ds = [(m - server.model) / t for m, t in zip(models, taus)]  # flgo's Server.iterate
new = server.aggregate(ds, taus, p=[0.5, 0.5])
step = float(new.w.detach()[0] - x0)
norms = [sum((1 - rho ** k) / (1 - rho) for k in range(1, t + 1)) for t in taus]  # the paper's ||a_i||_1
paper = server.aggregate([(m - server.model) / a for m, a in zip(models, norms)], norms, p=[0.5, 0.5])
paper_step = float(paper.w.detach()[0] - x0)
# x0 = 0 is x* of F = (f_1 + f_2)/2: FedNova's step from it is O(lr^2); flgo's is O(lr)
print(f"step from x* = {x0}: flgo {step:.3e}, the paper's normalisation {paper_step:.3e} (lr = {lr:g})")
assert abs(paper_step) < 1e-3 * lr and abs(step) > 0.5 * lr
