"""Apple's pfl (``pfl``) FedAvg through the conformance contract, with a float64 PyTorch linear model.

One round reproduces the per-user loop of pfl's ``SimulatedBackend`` with pfl's own pieces: for each
participant, ``model.set_parameters(x)``, ``FederatedAveraging.train_one_user`` (pfl's PyTorch SGD bridge:
``local_steps`` full-batch epochs with ``local_step``), a weighting postprocessor (``WeightByDatapoints`` or
``WeightByUser``, the user's choice in pfl), summation of the ``WeightedStatistics`` with ``+`` after cloning
the first (what ``SimulatedBackend`` and ``SumAggregator`` do); then ``process_aggregated_statistics`` (``statistics.average()`` and the central
optimiser, SGD with learning rate ``server_step``). pfl computes model differences in float32
(``PyTorchModel.get_model_difference``), so check with ``rtol=1e-4``.

Participants. Given the kit's participants (no ``clients_per_round``), the cohort is all of them
(``train_cohort_size`` = their number). Given the whole population and ``clients_per_round`` = m (the kit's
sampling protocol, ``<family>.own_sampler``), pfl's own ``FederatedDataset`` draws the cohort, as
``SimulatedBackend`` does each central iteration: ``FederatedDataset.from_slices`` over the population with
``get_user_sampler(kind, user_ids)`` and ``get_cohort(m)``. ``kind='random'`` (pfl's benchmarks' choice for
datasets with natural users, and ``from_slices_with_dirichlet_class_distribution``'s) draws each cohort member
uniformly and independently, ``user_ids[np.random.randint(0, N)]`` under a per-draw seed from the dataset's own
``RandomState``: with replacement, so a user drawn twice trains and counts twice; the driver reports that multiset.
``kind='minimize_reuse'`` (the user guide's example) cycles through the users in order. The dataset lives for a run
(its random state and the cycle continue from round to round, as in pfl's loop) and is built when a run starts
(the model given is not the one returned last), after NumPy's global generator is seeded from the kit's generator
(restored afterwards), so a verdict is reproducible. ``law`` declares the law pfl documents for its sampler in the
report (``"uniform_replacement"`` for ``'random'``): the kit then judges the draws under that law, not the
paper's (fedtheory.conformance.sampling).

Zero-argument factories (``fedavg``, ``fedprox``, ``scaffold``, ...) serve ``benchmarks/frameworks/run.py``, which
runs this module in pfl's own venv (loaded by path; it imports only pfl, torch and NumPy).

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
    from pfl.data.federated_dataset import FederatedDataset
    from pfl.data.sampling import get_user_sampler
    from pfl.data.user_state import InMemoryUserStateStorage
    from pfl.hyperparam import NNTrainHyperParams
    from pfl.metrics import Metrics
    from pfl.model.pytorch import PyTorchModel
    from pfl.stats import MappedVectorStatistics
except ImportError as exc:  # pragma: no cover - exercised where the extra is missing
    raise ImportError("the pfl adapter needs pfl and torch: pip install 'fedtheory[pfl]'") from exc

__all__ = ["fedavg_round", "fedprox_round", "scaffold_round", "sampling_round", "SAMPLERS"]

#: pfl's user samplers (``pfl.data.sampling.get_user_sampler``) and the law each documents: 'random' draws each
#: cohort member uniformly and independently (with replacement); 'minimize_reuse' cycles through the users.
SAMPLERS = {"random": "uniform_replacement", "minimize_reuse": None}


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


def _cohort(kept: dict, x, clients, m: int, kind: str, rng) -> list:
    """The round's cohort as pfl's ``FederatedDataset.get_cohort(m)`` draws it with ``get_user_sampler(kind)``; the
    dataset is built when a run starts (``x`` is not the model returned last) and then kept."""
    last = kept.get("last")
    if last is None or last.shape != np.shape(x) or not np.array_equal(last, x):
        data = {str(c.cid): [torch.as_tensor(c.features), torch.as_tensor(c.targets)] for c in clients}
        saved = np.random.get_state()
        # the dataset's RandomState (the per-draw seeds) comes from NumPy's global generator: seeded from the kit's
        np.random.seed(int(rng.integers(0, 2**32)) if rng is not None else 0)
        try:
            kept["dataset"] = FederatedDataset.from_slices(data, get_user_sampler(kind, list(data)))
        finally:
            np.random.set_state(saved)
    by_id = {str(c.cid): c for c in clients}
    return [by_id[str(user.user_id)] for user, _seed in kept["dataset"].get_cohort(m)]


def sampling_round(algorithm: str = "fedavg", kind: str = "random", *, law: str | None = None,
                   declare: bool = False):
    """The round of pfl's ``algorithm`` ("fedavg", "fedprox" or "scaffold") whose cohort, under the sampling
    protocol, pfl's ``FederatedDataset`` draws with the user sampler ``kind`` (:data:`SAMPLERS`); with ``declare``
    the report names the law pfl documents for that sampler (``SAMPLERS[kind]``), or ``law`` when given."""
    if algorithm not in ("fedavg", "fedprox", "scaffold"):
        raise ValueError(f"algorithm must be 'fedavg', 'fedprox' or 'scaffold', got {algorithm!r}")
    if kind not in SAMPLERS:
        raise ValueError(f"kind must be one of {sorted(SAMPLERS)} (pfl's get_user_sampler), got {kind!r}")
    declared = law or (SAMPLERS[kind] if declare else None)
    kept: dict = {}

    def impl(x, clients, *, state=None, rng=None, clients_per_round=None, **hyper):
        extra = {"scaffold": True} if algorithm == "scaffold" else {"prox": None} if algorithm == "fedavg" else {}
        if clients_per_round is None:
            return _round(x, clients, state=state, **{**hyper, **extra})
        cohort = _cohort(kept, x, clients, int(clients_per_round), kind, rng)
        out = _round(x, cohort, state=state, **{**hyper, **extra, "num_clients": len(clients)})
        x_new, new_state = out if isinstance(out, tuple) else (out, None)
        kept["last"] = x_new
        return x_new, new_state, {"drawn": [int(c.cid) for c in cohort], **({"law": declared} if declared else {})}
    impl.__qualname__ = f"pfl.{algorithm}[{kind}]"
    return impl


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


# Zero-argument factories for benchmarks/frameworks/run.py (the out-of-process worker calls ``factory()``). As
# shipped, the cohort is drawn by get_user_sampler('random') (pfl's benchmarks) and judged under the paper's law.
def fedavg():
    return sampling_round("fedavg")


def fedavg_pfl_law():
    """'random' judged under the law pfl documents for it: uniform draws with replacement."""
    return sampling_round("fedavg", declare=True)


def fedavg_minimize_reuse():
    return sampling_round("fedavg", "minimize_reuse")


def fedprox():
    return sampling_round("fedprox")


def fedprox_pfl_law():
    return sampling_round("fedprox", declare=True)


def scaffold():
    return sampling_round("scaffold")
