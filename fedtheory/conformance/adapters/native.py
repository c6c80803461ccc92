"""fedtheory's own implementation of every family through the conformance contract (what the kit must pass).

Each family's adapter is ``families/<family>/native.py`` (on :mod:`fedtheory.conformance.adapters.problem`);
:data:`NATIVE` maps each family to it. :func:`round_function` turns any algorithm written with fedtheory's API
into a round function for the stateless families.
"""
from __future__ import annotations

from typing import Any, Callable

from ..families import FAMILIES, load
from .problem import round_function

__all__ = ["NATIVE", "round_function"]

#: family -> fedtheory's implementation through the contract.
NATIVE: dict[str, Callable[..., Any] | Any] = {family: getattr(load(family, "native"), family) for family in FAMILIES}
