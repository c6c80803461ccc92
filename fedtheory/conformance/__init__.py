"""Conformance kit: check anyone's federated implementation against its paper (docs/conformance.md).

    from fedtheory import conformance
    report = conformance.check(my_fedavg_round, claims="fedavg", local_steps=5, local_step=0.1)
    report.passed, report.table(), report.failures[0].counterexample

Layout: :mod:`~fedtheory.conformance.kit` holds the vocabulary (:class:`~fedtheory.conformance.kit.Property`
declared with ``@prop`` at its check, :class:`~fedtheory.conformance.kit.Outcome` "holds" / "violated" / "not
applicable", the instance and round helpers); :mod:`~fedtheory.conformance.search` searches and reports;
:mod:`~fedtheory.conformance.contract` is how an implementation is called; each family is a package
``families/<family>/`` with its properties, expected side, the power test's variants and fedtheory's own
implementation (``native.py``); :mod:`~fedtheory.conformance.power` gathers the power set; the out-of-process adapter
is in :mod:`fedtheory.conformance.adapters`, and the drivers of third-party frameworks (Flower, pfl, flgo, ...) in
:mod:`fedtheory.conformance.drivers`, one module per framework.

:data:`FAMILIES` needs nothing optional; everything that runs a check needs hypothesis (the ``test`` extra).
"""
from __future__ import annotations

import importlib
from typing import Any

from .families import FAMILIES, default_hyper, properties_of

__all__ = ["FAMILIES", "check", "Report", "PropertyResult", "Counterexample", "properties_of", "Outcome",
           "Property", "Client", "Instance", "make_instance", "DEFAULT_HYPER", "PROPERTIES"]

#: The names that need hypothesis, imported when first used (so that ``FAMILIES`` does not need it).
_LAZY = {"check": "search", "Report": "search", "PropertyResult": "search", "Counterexample": "search",
         "properties_of": "families", "Outcome": "kit", "Property": "kit", "Client": "instance", "Instance": "instance",
         "make_instance": "instance"}


def __getattr__(name: str) -> Any:
    if name in _LAZY or name in ("DEFAULT_HYPER", "PROPERTIES"):
        try:
            import hypothesis  # noqa: F401
        except ImportError as exc:
            raise ImportError("fedtheory conform needs hypothesis: pip install 'fedtheory[test]'") from exc
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    if name == "DEFAULT_HYPER":  # every family's defaults (loads every family)
        return {f: default_hyper(f) for f in FAMILIES}
    if name == "PROPERTIES":  # every family's properties (loads every family)
        return tuple(p for f in FAMILIES for p in properties_of(f))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
