"""The conformance kit's families: one package each, ``fedtheory/conformance/families/<family>/``.

A family package declares ``HYPER`` (its default hyperparameters) in its ``__init__`` and holds its properties
(declared with :func:`fedtheory.conformance.kit.prop` at each check), its independent expected side, the
deliberately wrong and differently written implementations of the power test (``variants.py``: ``WRONG`` and
``CORRECT``) and fedtheory's own implementation through the contract (``native.py``).

:data:`FAMILIES` is a static list, so ``fedtheory conform --help`` can offer it without importing hypothesis
(an optional extra) or any family; :func:`load` imports a family when it is checked.
"""
from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["FAMILIES", "load"]

#: Every family, in the order ``fedtheory conform --as`` lists them (tests check it against the packages).
FAMILIES: tuple[str, ...] = ("fedavg", "fedprox", "scaffold", "feddyn", "scaffnew", "compressor", "dane", "fedred",
                             "fedelasticnet_fedavg", "fedelasticnet_scaffold", "fedelasticnet_feddyn", "efl",
                             "docofl", "ofediq", "server_optimizer", "fednova")


def load(family: str, part: str = "") -> ModuleType:
    """Import the family's package (which declares its properties), or its module ``part`` ("variants", ...)."""
    if family not in FAMILIES:
        raise ValueError(f"claims must be one of {', '.join(FAMILIES)}, got {family!r}")
    return importlib.import_module(f"{__name__}.{family}" + (f".{part}" if part else ""))
