"""The kit's power, measured: deliberately wrong implementations it must reject, differently written correct
ones it must accept (tests/conformance/test_power.py asserts both; docs/conformance.md has the counts).

Each family's ``variants.py`` lists its own: ``WRONG`` (the slips of its textbook implementation, and for the
stateful families the state-carried slips of :mod:`fedtheory.conformance.statekit`, which only the multi-round
properties catch) and ``CORRECT`` (other precision -- float32 at rtol = 1e-4 --, summation order, derivation, or
an opaque state). A :class:`~fedtheory.conformance.kit.Variant` carries the hyperparameters and tolerance it is
checked with.
"""
from __future__ import annotations

from .families import FAMILIES, load
from .kit import Variant

__all__ = ["Variant", "WRONG", "CORRECT"]

WRONG: list[Variant] = [v for family in FAMILIES for v in load(family, "variants").WRONG]
CORRECT: list[Variant] = [v for family in FAMILIES for v in load(family, "variants").CORRECT]
