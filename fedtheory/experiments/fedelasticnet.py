"""FedElasticNet (Kim, Woo, Seo & Kim) Tables 3-4 and Figures 2-5 in the paper's setting, scaled to a CPU.

The paper's setting (Section 4, App. A, following FedDyn's protocol): non-IID clients by a Dirichlet(0.3) label
split, 10% (Table 3) or 100% (Table 4) participation, local SGD with learning rate 0.1, FedProx / SCAFFOLD /
FedDyn against their FedElasticNet versions (Algorithms 1-3) with Table 5's (lambda1, lambda2, epsilon), the
entropy of the transmitted values with bin 0.01, and a fully connected network (FedDyn's MNIST model is a
two-hidden-layer MLP). Here: MNIST-1D (4,000 training signals of length 40, 10 classes;
:mod:`fedtheory.torch.mnist1d`) split over 20 clients instead of 100, an MLP 40-100-100-10, 10 local minibatch
steps of 32 samples, Table 5's CIFAR-10 row, the paper's learning rate for every method (the paper tunes
none of the baselines' step sizes; every method gets the same budget: none). Figures 3-5 sweep lambda1 over the
paper's {1e-8, 1e-6, 1e-4, 1e-2} for each algorithm at 10% participation.
"""
from __future__ import annotations

from typing import Any

from ..algorithms.feddyn import FedDyn
from ..algorithms.fedprox import FedProx
from ..algorithms.scaffold import Scaffold
from ..participation import Full, UniformSubset
from .protocol import Experiment
from .uploads import RunningUploads

__all__ = [
    "EXPERIMENTS",
    "LAMBDA1_SWEEP",
    "SWEEP",
    "TABLE3",
    "TABLE4",
    "TABLE5_CIFAR10",
    "problem",
    "sweep_methods",
    "table_methods",
]

#: Table 5's CIFAR-10 row: (lambda1, lambda2, epsilon) per algorithm; the baselines use no l1 and no threshold.
TABLE5_CIFAR10 = {"FedProx": (0.0, 1e-4, 0.0), "Alg. 1": (1e-6, 1e-4, 1e-3), "SCAFFOLD": (0.0, 0.0, 0.0),
                  "Alg. 2": (1e-4, 0.0, 1e-4), "FedDyn": (0.0, 1e-2, 0.0), "Alg. 3": (1e-4, 1e-2, 5e-3)}
#: The lambda1 values of Figures 3-5 (App. A.2).
LAMBDA1_SWEEP = (1e-8, 1e-6, 1e-4, 1e-2)
#: The paper's local learning rate, local steps and minibatch (scaled: 10 steps of 32 samples).
LOCAL_STEP, LOCAL_STEPS, BATCH = 0.1, 10, 32
#: The paper's Dirichlet concentration of the non-IID split.
DIRICHLET = 0.3
HIDDEN = (100, 100)


def problem(n_clients: int, seed: int, device: str = "cpu") -> Any:
    """MNIST-1D over ``n_clients`` by Dirichlet(0.3) (split drawn by ``seed``), MLP 40-100-100-10 initialised by
    ``seed``, minibatches of 32, float32."""
    # here, not at the top: fedtheory.torch imports torch, and mnist1d is needed (the experiments extra)
    from ..torch import TorchProblem, mlp
    from ..torch.mnist1d import MNIST1D_LENGTH, mnist1d_federated

    data, test = mnist1d_federated(n_clients, partition="dirichlet", dirichlet_alpha=DIRICHLET, seed=seed)
    return TorchProblem(mlp(MNIST1D_LENGTH, 10, hidden=HIDDEN), data, batch_size=BATCH, test=test,
                        dtype="float32", device=device, origin="init", init_seed=seed, power_iters=0)


def _algorithm(base: str, l1: float, l2: float, eps: float, participation: Any) -> Any:
    common = {"participation": participation, "upload_metrics": RunningUploads(), "local_steps": LOCAL_STEPS,
                  "local_step": LOCAL_STEP, "stochastic": True, "l1": l1, "threshold": eps}
    if base == "FedProx":
        return FedProx(prox=l2, solver="gd", l1_mode="proximal", **common)
    if base == "SCAFFOLD":
        return Scaffold(prox=l2, **common)
    return FedDyn(alpha=l2, solver="gd", l1_mode="proximal", **common)


_BASE = {"FedProx": "FedProx", "Alg. 1": "FedProx", "SCAFFOLD": "SCAFFOLD", "Alg. 2": "SCAFFOLD",
         "FedDyn": "FedDyn", "Alg. 3": "FedDyn"}


def _participation(prob: Any, fraction: float) -> Any:
    return Full() if fraction >= 1 else UniformSubset(max(1, round(fraction * prob.n_clients)))


def table_methods(fraction: float):
    """The six methods of Tables 3-4 with Table 5's CIFAR-10 row, at participation ``fraction``."""
    def methods(prob: Any) -> dict[str, Any]:
        part = _participation(prob, fraction)
        return {name: _algorithm(_BASE[name], *TABLE5_CIFAR10[name], part) for name in TABLE5_CIFAR10}
    return methods


def sweep_methods(prob: Any) -> dict[str, Any]:
    """Algorithms 1-3 at every lambda1 of :data:`LAMBDA1_SWEEP` (lambda2, epsilon of Table 5), 10% participation."""
    part = _participation(prob, 0.1)
    out = {}
    for name in ("Alg. 1", "Alg. 2", "Alg. 3"):
        _, l2, eps = TABLE5_CIFAR10[name]
        for l1 in LAMBDA1_SWEEP:
            out[f"{name} l1={l1:g}"] = _algorithm(_BASE[name], l1, l2, eps, part)
    return out


_SETTING = ("MNIST-1D (4,000 training signals, 1,000 test), {clients} clients by Dirichlet(0.3) label split, "
            "{part} participation, MLP 40-100-100-10, local SGD: 10 steps of 32 samples at learning rate 0.1, "
            "{rounds} rounds; Table 5's CIFAR-10 (lambda1, lambda2, epsilon); entropy with bin 0.01")

TABLE3 = Experiment(
    name="fedelasticnet.table3", paper="fedelasticnet", cites=("Table 3", "Figure 2"),
    setting=_SETTING.format(clients=20, part="10%", rounds=60), problem=problem, methods=table_methods(0.1),
    clients=20, rounds=60,
    paper_numbers={"CIFAR-10 cumulative entropy (Table 3)": {"FedProx": None, "FedDyn": 639.59, "Alg. 3": 140.71}})

TABLE4 = Experiment(
    name="fedelasticnet.table4", paper="fedelasticnet", cites=("Table 4",),
    setting=_SETTING.format(clients=10, part="100%", rounds=20), problem=problem, methods=table_methods(1.0),
    clients=10, rounds=20)

SWEEP = Experiment(
    name="fedelasticnet.lambda1_sweep", paper="fedelasticnet", cites=("Figure 3", "Figure 4", "Figure 5"),
    setting=_SETTING.format(clients=20, part="10%", rounds=40) + "; lambda1 in {1e-8, 1e-6, 1e-4, 1e-2}",
    problem=problem, methods=sweep_methods, clients=20, rounds=40)

EXPERIMENTS = (TABLE3, TABLE4, SWEEP)
