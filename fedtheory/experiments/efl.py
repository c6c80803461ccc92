"""EFL (Ma, Lu, Lu, Li, Yi & Cui, "Towards Heterogeneous Clients with Elastic Federated Learning") Table 2 and
Figure 2 in the paper's setting, scaled to a CPU.

The paper's setting (§5): non-IID(m) clients (each holds m classes: McMahan et al.'s pathological label shards),
deep models, partial participation with clients that do not finish all E local steps, EFL (Alg. 1: the
aggregation p_tau^k = E p^k / s_tau^k and the elastic term lambda/2 sum_i (w - w^i)^T diag(I_i) (w - w^i) of
eqs. 2-4) against FedAvg and other baselines; Table 2 reports the best mean test accuracy over rounds, and
Figure 2 EFL with the best lambda against lambda = 0 (test accuracy and training loss against rounds).

Here: MNIST-1D (4,000 training signals of length 40, 10 classes; :mod:`fedtheory.torch.mnist1d`) over 20
clients by 2 label shards each (non-IID(2)), an MLP 40-64-64-10, every client active with probability 0.5 and
then running s ~ U{1, ..., E = 5} local SGD steps (minibatch 32, learning rate 0.2 for every method), 150
rounds. FedAvg and FedProx use only the updates of clients that finish all E steps (the paper's description of
FedAvg: a client is kept when active and complete, probability 0.5 / E, with E full steps; the same law as EFL's
draws, not the same realisation). Every method has the same budget: the shared learning rate, and a grid of 3
values of its own hyperparameter (EFL's lambda in {0, 0.1, 0.3}, FedProx's mu in {1e-3, 1e-2, 1e-1}; FedAvg has
none), the best chosen on the development seeds.

The elastic term's scale (docs/torch.md, "EFL's Fisher term"): U = sum_i diag(I_i) sums the Fisher diagonals of
the round's reporters, so the local step multiplies w by (1 - eta lambda U) coordinate-wise and is stable only
while eta lambda max(U) < 2. On this model the empirical Fisher diagonal is below 0.1 on all but the largest
coordinates, whose sum over ten reporters is about 2 at the initialisation (0.84 over four) and grows while
training. On a development run (seed 0, 20 clients) lambda = 1 (eta lambda max(U) about 0.4 at the start)
diverged after about 100 rounds, and lambda = 3 (MLP 40-100-100-10, eta = 0.3) within 30 rounds; lambda = 0.1 and 0.3
trained. The grid {0.1, 0.3} is that stable window (lambda = 0.01 stayed within a point of lambda = 0 on a
60-round development run). The Fisher is the empirical one (the observed labels' squared gradients; 10
times cheaper than the true Fisher, which loops over the classes).
"""
from __future__ import annotations

from typing import Any

from ..algorithms.efl import EFL
from ..algorithms.fedavg import FedAvg
from ..algorithms.fedprox import FedProx
from ..participation import Bernoulli
from .protocol import Experiment

__all__ = ["ACTIVITY", "EXPERIMENTS", "LAMBDAS", "MUS", "TABLE2", "methods", "problem"]

#: EFL's lambda grid (0 is Figure 2's comparison point) and FedProx's mu grid: the same budget, 3 values each.
LAMBDAS = (0.0, 0.1, 0.3)
MUS = (1e-3, 1e-2, 1e-1)
#: Local steps E, the learning rate and minibatch of every method, and the probability a client is active.
E, STEP, BATCH, ACTIVITY = 5, 0.2, 32, 0.5
HIDDEN = (64, 64)
#: Label shards per client (non-IID(2)).
SHARDS = 2


def problem(n_clients: int, seed: int, device: str = "cpu") -> Any:
    """MNIST-1D over ``n_clients`` by 2 label shards each (split drawn by ``seed``), MLP 40-64-64-10 initialised
    by ``seed``, minibatches of 32, float32, empirical Fisher."""
    from ..torch import TorchProblem, mlp
    from ..torch.mnist1d import MNIST1D_LENGTH, mnist1d_federated

    data, test = mnist1d_federated(n_clients, partition="shards", shards_per_client=SHARDS, seed=seed)
    return TorchProblem(mlp(MNIST1D_LENGTH, 10, hidden=HIDDEN), data, batch_size=BATCH, test=test,
                        dtype="float32", device=device, origin="init", init_seed=seed, power_iters=0,
                        fisher="empirical")


def methods(prob: Any) -> dict[str, Any]:
    """EFL at every lambda of :data:`LAMBDAS`, FedAvg, and FedProx at every mu of :data:`MUS`."""

    complete = Bernoulli(ACTIVITY / E)  # active and finished all E steps
    out: dict[str, Any] = {f"EFL lambda={lam:g}": EFL(E=E, step=STEP, s_min=1, s_max=E, participation=ACTIVITY,
                                                      lam=lam) for lam in LAMBDAS}
    out["FedAvg"] = FedAvg(local_steps=E, local_step=STEP, stochastic=True, participation=complete)
    for mu in MUS:
        out[f"FedProx mu={mu:g}"] = FedProx(prox=mu, solver="gd", local_steps=E, local_step=STEP, stochastic=True,
                                            participation=complete)
    return out


TABLE2 = Experiment(
    name="efl.table2", paper="efl", cites=("Table 2", "Figure 2"),
    setting=("MNIST-1D (4,000 training signals, 1,000 test), 20 clients by 2 label shards each (non-IID(2)), "
             "each client active w.p. 0.5 and then running s ~ U{1..5} local SGD steps (batch 32, learning rate "
             "0.2), MLP 40-64-64-10, 150 rounds; EFL (weights E p^k / s, empirical Fisher) with lambda in "
             "{0, 0.1, 0.3}; FedAvg and FedProx (mu in {1e-3, 1e-2, 1e-1}) keep only complete updates; each "
             "method's best setting chosen on the development seeds"),
    problem=problem, methods=methods, clients=20, rounds=150, record_every=2,
    paper_numbers={"best mean test accuracy %, non-IID (Table 2)": {
        "FedAvg": {"MNIST": 98.30, "CIFAR100": 2.27, "Sent140": 59.14, "Shakespeare": 51.35},
        "EFL": {"MNIST": 99.10, "CIFAR100": 81.38, "Sent140": 68.95, "Shakespeare": 60.49}}})

EXPERIMENTS = (TABLE2,)
