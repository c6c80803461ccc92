"""Torch backend for the neural benchmarks (optional extra: ``pip install torch==2.13.0 'fedtheory[torch]'``).

One hyperparameter class, two execution backends: the *problem* is the backend. A
:class:`~fedtheory.torch.problem.TorchProblem` is a :class:`fedtheory.problems.base.Problem` whose oracles
evaluate a flat-parameter torch model (:mod:`fedtheory.torch.models`) for every client at once with
``torch.func.vmap``, so the NumPy algorithm classes of :mod:`fedtheory.algorithms` run unchanged on neural
networks through :func:`fedtheory.run.run`. See ``docs/torch.md``.

Example::

    from fedtheory.algorithms import FedProx
    from fedtheory.run import run
    from fedtheory.torch import TorchProblem, digits_federated, mlp

    data, test = digits_federated(10, partition="dirichlet", dirichlet_alpha=0.5)
    problem = TorchProblem(mlp(64, 10, hidden=32), data, batch_size=32, test=test)
    trace = run(FedProx(prox=1e-2, solver="gd", local_steps=10, local_step=0.1, stochastic=True),
                problem, 30, seed=0, x0=problem.initial_point())
    trace.accuracy, trace.test_accuracy   # extra columns recorded from problem.metrics
"""
try:
    import torch as _torch  # noqa: F401
except ImportError as _exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("fedtheory.torch needs the optional torch extra: pip install torch==2.13.0 "
                      "'fedtheory[torch]'") from _exc

from .data import digits_federated, neural_problem, synthetic_multinomial
from .models import ACTIVATIONS, FlatModel, cnn_digits, logistic_regression, mlp
from .problem import DTYPES, TorchProblem

__all__ = ["TorchProblem", "DTYPES", "FlatModel", "logistic_regression", "mlp", "cnn_digits", "ACTIVATIONS",
           "digits_federated", "synthetic_multinomial", "neural_problem"]
