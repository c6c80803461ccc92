"""Federated algorithms, one module per family; each registers itself with :func:`register_algorithm`.

Every submodule is imported here and its ``__all__`` re-exported, so ``from fedtheory.algorithms import X``
works for every algorithm and adding a module is all it takes to add one.

Writing your own algorithm (the public extension API; docs/tutorials/add-your-own-algorithm.md):

* :class:`Algorithm` is the protocol: ``init(problem, x0) -> State`` and ``round(problem, state, rng) ->
  (State, RoundLog)``; a frozen dataclass of hyperparameters validated on construction.
* :class:`FederatedAlgorithm` is the base of the client-server algorithms: subclass it, add your
  hyperparameters, implement ``init`` and ``round_given(problem, state, draw)``, and you get ``draw`` (the
  round's randomness: :class:`Draw` -- participating clients, coin, local-SGD seed), ``round`` and
  ``outcomes()`` (every draw with its exact probability, so tests take exact expectations) and the
  ``participation`` option (Full, UniformSubset, Bernoulli) for free. A user replaying recorded coins builds a
  :class:`Draw` and calls ``round_given``.
* :class:`State` / :class:`FederatedState` hold the server model (immutable; subclass for auxiliary state);
  :func:`upload_log` / :func:`dense_log` count what a round sends (:class:`RoundLog`);
  :func:`aggregation_weights` gives the server weights of the participants; :func:`threshold` is the transmit
  operator T_eps. Local solvers: :func:`fedtheory.local.local_gd` (K batched local GD/SGD steps with
  gradient counting) and the problems' ``solve_local`` (exact prox).
* :func:`register_algorithm` adds a class to fedtheory's own registry (bench, CLI, the generic conformance
  suite); an algorithm of yours does not need it to run with :func:`fedtheory.run.run`.
"""
import sys as _sys

from ..autoload import load_submodules
from .base import ALGORITHMS, FLOAT_BITS, Algorithm, RoundLog, State, dense_log, register_algorithm
from .federated import (
                     Draw,
                     FederatedAlgorithm,
                     FederatedState,
                     UploadMetrics,
                     aggregation_weights,
                     threshold,
                     upload_log,
)

__all__ = ["ALGORITHMS", "FLOAT_BITS", "Algorithm", "RoundLog", "State", "dense_log", "register_algorithm",
           "Draw", "FederatedAlgorithm", "FederatedState", "UploadMetrics", "aggregation_weights", "threshold",
           "upload_log"]
__all__ += load_submodules(_sys.modules[__name__], globals())
