"""The registry of reference rounds: :class:`Expected`, :class:`Mismatch`, the tolerances and :func:`reference`.

A module of its own, below the package: the reference modules register through it without importing the package
that auto-loads them (an import cycle, tests/test_architecture.py). Everything is re-exported by
:mod:`fedtheory.references`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["Expected", "Mismatch", "REFERENCES", "reference", "RTOL", "ATOL_SCALE"]


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
