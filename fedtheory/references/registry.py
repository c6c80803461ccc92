"""The registry of reference rounds and :func:`certify_round` (the package docstring, fedtheory/references/__init__.py,
says what a reference is). A module of its own so that the reference modules import it, not the package
that auto-loads them."""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from ..autoload import load_submodules

__all__ = ["Expected", "Mismatch", "REFERENCES", "reference", "certify_round", "certify_run", "recorded_rounds",
           "has_reference"]


@dataclass(frozen=True)
class Expected:
    """What the paper's equations say one round produces.

    ``state``: the new state's fields the equations determine, by the implementation's field name (``"x"``,
    ``"c"``, ``"h"``, ...), each an array compared with the implementation's field at :data:`RTOL` relative to
    its scale. ``log``: the logged quantities (a :class:`~fedtheory.algorithms.base.RoundLog` field by its name,
    such as ``"uplink_bits"``, or ``"extra.<key>"`` for an entry of ``RoundLog.extra``, such as a regret term),
    compared the same way. A field the reference leaves out is not compared: leave out only what the paper does
    not determine (say why in the reference's docstring).
    """

    state: Mapping[str, Any]
    log: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Mismatch:
    """Where a recorded round differs from the reference: the field, the relative difference, the round."""

    algorithm: str
    round_index: int
    field: str
    difference: float
    detail: str = ""

    def sentence(self) -> str:
        return (f"the run differs from the paper's algorithm ({self.algorithm}) at round {self.round_index} by "
                f"{self.difference:.3g} relative in {self.field}" + (f" ({self.detail})" if self.detail else ""))


#: Relative tolerance of a recorded round against its reference: a round is O(K d^2) flops on the ledger's
#: instances (condition numbers up to 1e4), so two evaluation orders differ by about K cond eps ~ 1e-10 at the
#: worst; 1e-7 leaves three orders of margin and is far below any modelling slip (those change a field at O(1)
#: relative size, or at least 1e-4 for a slip confined to one client of many).
RTOL = 1e-7
#: Absolute floor of that comparison, relative to the largest entry of the round's inputs (a field that should be
#: 0 compared with 1e-17 of rounding).
ATOL_SCALE = 1e-12

ReferenceRound = Callable[[Any, Any, Any, Any], Expected]
REFERENCES: dict[str, ReferenceRound] = {}


def reference(*names: str) -> Callable[[ReferenceRound], ReferenceRound]:
    """Register ``fn(alg, problem, state, draw) -> Expected`` as the reference round of the algorithms named
    ``names`` (their class attribute ``name``)."""
    def register(fn: ReferenceRound) -> ReferenceRound:
        for name in names:
            if name in REFERENCES and REFERENCES[name] is not fn:
                raise ValueError(f"reference for {name!r} registered twice")
            REFERENCES[name] = fn
        return fn
    return register


def has_reference(name: str) -> bool:
    _load()
    return name in REFERENCES


_LOADED: list[bool] = []


def _load() -> None:
    """Import every module of this package (each registers its references on import): on first use, not at the
    package's import, so the modules may import this one without a cycle. Once per process: listing the package's
    modules costs about 0.1 ms, more than a small reference round."""
    if _LOADED:
        return
    # the package by name, not by an import statement: the package imports this module (no import cycle)
    load_submodules(sys.modules[__name__.rpartition(".")[0]], {})
    _LOADED.append(True)


def _as_array(value: Any) -> np.ndarray:
    if hasattr(value, "toarray") and not isinstance(value, np.ndarray):  # a client table or sparse matrix
        value = value.toarray()
    return np.asarray(value, dtype=float)


def _field(obj: Any, name: str) -> Any:
    if name.startswith("extra."):
        return obj.extra[name[len("extra."):]]
    return getattr(obj, name)


def _scale(*values: Any) -> float:
    scale = 0.0
    for v in values:
        a = _as_array(v)
        if a.size:
            scale = max(scale, float(np.max(np.abs(a))))
    return scale


def certify_round(alg: Any, problem: Any, state: Any, draw: Any, new_state: Any, log: Any,
                  round_index: int) -> Mismatch | None:
    """Compare one recorded round with the reference of ``alg.name``: the first field that differs by more than
    :data:`RTOL` relative (to the larger of the two values' scales, with a floor of :data:`ATOL_SCALE` of the
    round's inputs), or None when every field the reference determines agrees. KeyError when the algorithm has no
    reference (:func:`has_reference`)."""
    _load()
    name = type(alg).name
    expected = REFERENCES[name](alg, problem, state, draw)
    floor = ATOL_SCALE * max(1.0, _scale(*(getattr(state, f.name) for f in fields(state)
                                           if is_dataclass(state) and _numeric(getattr(state, f.name)))))
    for source, values in ((new_state, expected.state), (log, expected.log)):
        for key, want in values.items():
            got = _as_array(_field(source, key))
            want = _as_array(want)
            if got.shape != want.shape:
                return Mismatch(name, round_index, key, math.inf, f"shape {got.shape}, the paper's {want.shape}")
            if not np.all(np.isfinite(got)) and not np.array_equal(got, want, equal_nan=True):
                return Mismatch(name, round_index, key, math.inf, "non-finite values")
            diff = float(np.max(np.abs(got - want))) if got.size else 0.0
            scale = max(_scale(got, want), floor)
            if diff > RTOL * scale + floor:
                return Mismatch(name, round_index, key, diff / scale if scale > 0 else math.inf)
    return None


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float, np.ndarray)) and not isinstance(value, bool)


def recorded_rounds(alg: Any, problem: Any, x0: Any, rounds: int,
                    seed: int = 0) -> Iterator[tuple[int, Any, Any, Any, Any]]:
    """The run every certification compares: ``rounds`` rounds of ``alg`` from ``alg.init(problem, x0)``, each from
    the state the previous one returned, with a generator seeded by ``seed``; a randomised algorithm draws then
    applies (``draw`` / ``round_given``), a deterministic one runs ``round`` (its draw is None). Yields
    ``(round index, state before, draw, new state, log)``."""
    state = alg.init(problem, np.asarray(x0, dtype=float))
    rng = np.random.default_rng(seed)
    for r in range(rounds):
        if hasattr(alg, "round_given"):
            draw = alg.draw(problem, state, rng)
            new_state, log = alg.round_given(problem, state, draw)
        else:
            draw = None
            new_state, log = alg.round(problem, state, rng)
        yield r, state, draw, new_state, log
        state = new_state


def certify_run(alg: Any, problem: Any, x0: Any, rounds: int, seed: int = 0) -> tuple[int, Mismatch | None]:
    """Certify every round of :func:`recorded_rounds` against the reference: ``(rounds certified, the first
    mismatch or None)``."""
    for r, state, draw, new_state, log in recorded_rounds(alg, problem, x0, rounds, seed):
        mismatch = certify_round(alg, problem, state, draw, new_state, log, r)
        if mismatch is not None:
            return r, mismatch
    return rounds, None
