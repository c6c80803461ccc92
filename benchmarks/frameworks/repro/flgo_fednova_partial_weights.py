"""flgo 0.4.4's FedNova with aggregate='weighted_scale' or 'weighted_com' below full participation, without fedtheory.

Wang et al. (2020), eq. (7): x+ = x - tau_eff sum_i p_i (x - y_i)/||a_i||_1 with tau_eff = sum_i p_i ||a_i||_1 and
weights p_i summing to 1; with equal tau_i it is FedAvg (Section 4). flgo's FedNova (flgo/algorithm/fednova.py:17-33)
takes p_i = n_i / (all N members' data) for the K received clients and, for these two options, does not renormalise
them: tau_eff = sum_S p_i tau_i carries the factor sum_S p_i (= K/N for equal data), and so does
Delta = sum_S p_i d_i ('weighted_com'; 'weighted_scale' multiplies Delta alone by N/K). With equal tau_i the round is
then K/N times the step of flgo's own FedAvg under the same option (BasicServer.aggregate, flgo/algorithm/fedbase.py,
whose table documents 'weighted_scale' as N/K sum p_k model_k and 'weighted_com' as (1 - sum p_k) w_old +
sum p_k model_k). N = 4 clients with one example each, f_i(x) = (x - c_i)^2 / 2, K = 2 received, tau = 3 each.
Run in flgo's venv: python flgo_fednova_partial_weights.py
"""
import torch
from flgo.algorithm import fedavg as flgo_fedavg
from flgo.algorithm import fednova as flgo_fednova
from flgo.utils import fmodule

torch.set_default_dtype(torch.float64)
lr, tau, x0, centres, received = 0.1, 3, 0.0, [1.0, 2.0, -1.0, 4.0], [0, 1]


class Scalar(fmodule.FModule):
    def __init__(self, w=x0):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([w]))


class Member:
    datavol = 1  # one example each: p_i = 1/4 over the federation, 1/2 over the round's two clients


def local(c):
    """tau plain SGD steps on (w - c)^2 / 2 from x0 (flgo's BasicClient.train with momentum 0)."""
    model = Scalar()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(tau):
        opt.zero_grad()
        (0.5 * (model.w - c) ** 2).sum().backward()
        opt.step()
    return model


def server(module, option):
    s = object.__new__(module.Server)
    s.model, s.aggregation_option, s.clients = Scalar(), option, [Member() for _ in centres]
    s.num_clients, s.received_clients = len(centres), list(received)
    return s


models = [local(centres[i]) for i in received]
for option in ("weighted_scale", "weighted_com"):
    nova = server(flgo_fednova, option)
    ds = [(m - nova.model) / tau for m in models]  # flgo's FedNova Server.iterate, lines 14-17
    vols = [c.datavol for c in nova.clients]
    p = [vols[cid] / sum(vols) for cid in nova.received_clients]
    nova_step = float(nova.aggregate(ds, [tau] * len(ds), p=p).w.detach()[0] - x0)
    fedavg_step = float(server(flgo_fedavg, option).aggregate(models).w.detach()[0] - x0)
    ratio = nova_step / fedavg_step
    print(f"{option}: FedNova step {nova_step:.6f}, flgo's FedAvg step under the same option {fedavg_step:.6f}, "
          f"ratio {ratio:.3f} (K/N = {len(received) / len(centres):.3f}; equal tau_i must give 1)")
    assert abs(ratio - len(received) / len(centres)) < 1e-12
# eq. (7) with p renormalised over the round's clients (flgo's default option 'other') gives FedAvg's step
other = server(flgo_fednova, "other")
paper = float(other.aggregate([(m - other.model) / tau for m in models], [tau] * 2, p=[0.25, 0.25]).w.detach()[0])
print(f"aggregate='other' (p renormalised): FedNova step {paper - x0:.6f} = the mean of the local steps "
      f"{sum(float(m.w.detach()[0]) for m in models) / 2 - x0:.6f}")
