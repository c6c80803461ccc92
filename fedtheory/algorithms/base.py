"""The algorithm contract: inert hyperparameters, immutable state, explicit randomness.

An algorithm is a frozen dataclass of hyperparameters validated in ``__post_init__``. It implements

    init(problem, x0) -> State
    round(problem, state, rng) -> (State, RoundLog)

``round`` draws everything random (sampled clients, coins, compressor noise) at its top and then applies a
deterministic update, so tests can take exact expectations by enumerating the draws. Algorithms that support
this expose ``round_given(problem, state, draw)`` next to ``draw(problem, state, rng)``.

Every algorithm class of fedtheory is registered with :func:`register_algorithm`, which makes it available to
``fedtheory bench`` by its ``name``. fedtheory's own algorithms also provide an ``example()`` classmethod (a
valid instance for a well-posed strongly convex problem), on which the project's generic algorithm tests run
(determinism, validation, the draw/round_given split); an algorithm of yours needs only ``name``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Protocol, TypeVar, runtime_checkable

import numpy as np

from ..problems.base import Problem

#: Bits used to send one float64 coordinate uncompressed.
FLOAT_BITS = 64


@dataclass(frozen=True)
class State:
    """The server model ``x`` (shape ``(d,)``); algorithms subclass this with their auxiliary state."""

    x: np.ndarray


@dataclass(frozen=True)
class RoundLog:
    """What one round cost, counted the way the algorithm's paper counts it.

    ``local_grad_evals`` is the total number of client gradient evaluations in the round (summed over
    clients); ``communicated`` is False for rounds without communication (Scaffnew/FedRed coin flips).
    ``extra`` carries algorithm-specific per-round quantities (entropy, regret terms, ...), recorded by the
    trace under their names.
    """

    uplink_bits: float = 0.0
    downlink_bits: float = 0.0
    uplink_nnz: int = 0
    downlink_nnz: int = 0
    vectors_up: float = 0.0
    vectors_down: float = 0.0
    local_grad_evals: int = 0
    participants: int = 0
    communicated: bool = True
    extra: Mapping[str, float] = field(default_factory=dict)


StateT = TypeVar("StateT", bound=State)


@runtime_checkable
class Algorithm(Protocol):
    """What :func:`fedtheory.run.run`, the bench and the claims need of an algorithm.

    ``init(problem, x0)`` returns the initial (immutable) :class:`State`; ``round(problem, state, rng)`` draws
    the round's randomness from ``rng`` at its top, applies a deterministic update and returns the new state
    and the :class:`RoundLog` of what was sent. Randomised algorithms also split ``round`` into
    ``draw(problem, state, rng)`` and ``round_given(problem, state, draw)`` and list ``outcomes(problem,
    state)`` (every draw with its probability); :class:`fedtheory.algorithms.FederatedAlgorithm` provides that.
    """

    name: ClassVar[str]

    def init(self, problem: Problem, x0: np.ndarray) -> State: ...

    def round(self, problem: Problem, state: Any, rng: np.random.Generator) -> tuple[State, RoundLog]: ...


ALGORITHMS: dict[str, type] = {}

A = TypeVar("A", bound=type)


def register_algorithm(cls: A) -> A:
    """Class decorator: make an algorithm available to ``fedtheory bench`` (``--algorithm NAME``, grids
    ``NAME.param=...``) under its class attribute ``name``.

    The class needs a non-empty string ``name`` not taken by another class; an ``example()`` classmethod
    returning a valid instance is optional (fedtheory's own algorithms have one, for its generic tests).
    """
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__} needs a class attribute `name` (a non-empty string: the name bench uses)")
    if name in ALGORITHMS and ALGORITHMS[name] is not cls:
        raise ValueError(f"algorithm name {name!r} registered twice: by {ALGORITHMS[name].__name__} and by "
                         f"{cls.__name__}")
    ALGORITHMS[name] = cls
    return cls


def dense_log(problem: Problem, *, up_vectors: float, down_vectors: float, participants: int,
              local_grad_evals: int, extra: Mapping[str, float] | None = None) -> RoundLog:
    """RoundLog for uncompressed float64 vectors: ``up_vectors`` and ``down_vectors`` are totals over clients."""
    d = problem.dim
    return RoundLog(
        uplink_bits=FLOAT_BITS * d * up_vectors, downlink_bits=FLOAT_BITS * d * down_vectors,
        uplink_nnz=int(d * up_vectors), downlink_nnz=int(d * down_vectors),
        vectors_up=up_vectors, vectors_down=down_vectors, local_grad_evals=int(local_grad_evals),
        participants=int(participants), communicated=True, extra=dict(extra or {}))
