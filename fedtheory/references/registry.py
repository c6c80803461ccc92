"""The registry of reference rounds: :class:`Expected` and the :func:`reference` decorator (a module of its own so
that the reference modules register through it without importing the package that loads them; the package
re-exports both, see :mod:`fedtheory.references`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["Expected", "REFERENCES", "ReferenceRound", "reference"]


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
