"""Apple's pfl (``pfl``) FedAvg through the conformance contract, with a float64 PyTorch linear model.

One round reproduces the per-user loop of pfl's ``SimulatedBackend`` with pfl's own pieces: for each
participant, ``model.set_parameters(x)``, ``FederatedAveraging.train_one_user`` (pfl's PyTorch SGD bridge:
``local_steps`` full-batch epochs with ``local_step``), a weighting postprocessor (``WeightByDatapoints`` or
``WeightByUser``, the user's choice in pfl), summation of the ``WeightedStatistics`` with ``+`` after cloning
the first (what ``SimulatedBackend`` and ``SumAggregator`` do); then ``process_aggregated_statistics`` (``statistics.average()`` and the central
optimiser, SGD with learning rate ``server_step``). pfl computes model differences in float32
(``PyTorchModel.get_model_difference``), so check with ``rtol=1e-4``.

Install: ``pip install 'fedtheory[pfl]'`` (pins ``pfl``; uses the installed CPU torch).
"""
from __future__ import annotations

from typing import Any

import numpy as np

try:
    import torch
    from pfl.aggregate.weighting import WeightByDatapoints, WeightByUser
    from pfl.algorithm.base import NNAlgorithmParams
    from pfl.algorithm.federated_averaging import FederatedAveraging
    from pfl.algorithm.fedprox import FedProx, FedProxParams
    from pfl.algorithm.scaffold import SCAFFOLD, SCAFFOLDParams
    from pfl.common_types import Population
    from pfl.context import CentralContext, UserContext
    from pfl.data.dataset import Dataset
    from pfl.data.user_state import InMemoryUserStateStorage
    from pfl.hyperparam import NNTrainHyperParams
    from pfl.metrics import Metrics
    from pfl.model.pytorch import PyTorchModel
    from pfl.stats import MappedVectorStatistics
except ImportError as exc:  # pragma: no cover - exercised where the extra is missing
    raise ImportError("the pfl adapter needs pfl and torch: pip install 'fedtheory[pfl]'") from exc

__all__ = ["fedavg_round", "fedprox_round", "scaffold_round"]


class _LeastSquares(torch.nn.Module):
    """f(w) = 1/(2m) ||X w - y||^2 in float64 (pfl's PyTorchModel needs ``loss`` and ``metrics``)."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(d, dtype=torch.float64))

    def loss(self, X, y, eval=False):  # noqa: A002 - pfl's signature
        r = X @ self.w - y
        return 0.5 * (r * r).mean()

    def metrics(self, X, y, eval=False):  # noqa: A002  # pragma: no cover - not evaluated
        return {}


def fedavg_round(x, clients, **hyper: Any) -> np.ndarray:
    """pfl's ``FederatedAveraging`` (McMahan et al. 2017) for one round."""
    return _round(x, clients, **{**hyper, "prox": None})


def fedprox_round(x, clients, **hyper: Any) -> np.ndarray:
    """pfl's ``FedProx`` (Li et al. 2020; local ``do_proximal_sgd`` with ``mu`` = the kit's ``prox``)."""
    return _round(x, clients, **hyper)


def scaffold_round(x, clients, *, state=None, rng=None, **hyper: Any) -> tuple[np.ndarray, dict]:
    """pfl's ``SCAFFOLD`` (Karimireddy et al. 2020, Alg. 1): the kit's ``option`` "II" (default) is pfl's
    ``use_gradient_as_control_variate=False``, option "I" (c_i+ = grad f_i(x)) is ``True``.

    The kit's state ``{"c": server c, "c_i": {cid: c_i}}`` is loaded into pfl's own places (the algorithm's
    server control variate and an in-memory user-state storage holding each user's ``local_c``) before the
    round and read back from them after it; pfl's population N is the kit's ``num_clients`` (all clients of
    the instance; the participants when it is not given).
    """
    return _round(x, clients, state=state, scaffold=True, **hyper)


def _round(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, prox=None,
           weighting="num_examples", scaffold=False, num_clients=None, option="II", **_: Any):
    if local_steps is None:
        raise ValueError("pfl's clients train by local_steps epochs of full-batch SGD (got None)")
    net = _LeastSquares(x.size)
    model = PyTorchModel(model=net, local_optimizer_create=torch.optim.SGD,
                         central_optimizer=torch.optim.SGD(net.parameters(), lr=server_step))
    with torch.no_grad():
        net.w.copy_(torch.as_tensor(x))
    start = model.get_parameters()
    params = NNTrainHyperParams(local_batch_size=None, local_num_epochs=local_steps, local_learning_rate=local_step)
    common = dict(central_num_iterations=1, evaluation_frequency=1, train_cohort_size=len(clients),
                  val_cohort_size=None)
    if scaffold:
        storage = InMemoryUserStateStorage()
        state = state or {"c": np.zeros_like(x), "c_i": {}}
        for cid, ci in state["c_i"].items():
            storage.save_state(MappedVectorStatistics({"w": torch.as_tensor(np.array(ci))}), str(cid), "local_c")
        algo_params = SCAFFOLDParams(**common, population=int(num_clients or len(clients)),
                                     use_gradient_as_control_variate=option == "I", user_state_storage=storage)
        algorithm = SCAFFOLD()
        algorithm._server_c = MappedVectorStatistics({"w": torch.as_tensor(np.array(state["c"]))})
    elif prox is None:
        algo_params, algorithm = NNAlgorithmParams(**common), FederatedAveraging()
    else:
        algo_params, algorithm = FedProxParams(**common, mu=float(prox)), FedProx()
    context = CentralContext(current_central_iteration=0, do_evaluation=False, cohort_size=len(clients),
                             population=Population.TRAIN, algorithm_params=algo_params, model_train_params=params)
    weigh = WeightByDatapoints() if weighting == "num_examples" else WeightByUser()
    total = None
    for c in clients:  # SimulatedBackend's per-user loop
        model.set_parameters(start)
        data = Dataset((torch.as_tensor(c.features), torch.as_tensor(c.targets)), user_id=str(c.cid))
        stats, _ = algorithm.train_one_user(start, model, data, context)
        stats, _ = weigh.postprocess_one_user(stats=stats, user_context=UserContext(c.num_examples, seed=None))
        # as SimulatedBackend: the first user's statistics are pfl's reused difference buffer, so clone them
        total = stats.apply_elementwise(torch.clone) if total is None else stats + total
    model.set_parameters(start)
    model, _ = algorithm.process_aggregated_statistics(context, Metrics(), model, total)
    x_new = net.w.detach().numpy().astype(np.float64).copy()
    if not scaffold:
        return x_new
    c_i = dict(state["c_i"])
    for c in clients:
        c_i[c.cid] = storage.load_state(str(c.cid), "local_c")["w"].detach().numpy().astype(np.float64).copy()
    return x_new, {"c": algorithm._server_c["w"].detach().numpy().astype(np.float64).copy(), "c_i": c_i}
