"""Conformance kit: check anyone's federated implementation against its paper (docs/conformance.md).

    from fedtheory import conformance
    report = conformance.check(my_fedavg_round, claims="fedavg", local_steps=5, local_step=0.1)
    report.passed, report.table(), report.failures[0].counterexample

The contract an implementation follows is in :mod:`fedtheory.conformance.contract`, the properties (each with
its paper and equation) in :mod:`fedtheory.conformance.properties` and one ``properties_<family>.py`` per
family of the five papers (DANE+, FedRed, FedElasticNet, EFL, DoCoFL, OFedIQ; multi-round SCAFFOLD/FedDyn/
Scaffnew in ``properties_multiround.py``), their expected sides in ``expected*.py``, the problems in
:mod:`fedtheory.conformance.instance`; adapters for Flower, pfl, fedtheory itself and any out-of-process
implementation (``adapters/remote.py``, FedLab through it) in :mod:`fedtheory.conformance.adapters`; the
measured power in :mod:`fedtheory.conformance.variants`. See docs/conformance.md.
"""
from __future__ import annotations

try:
    import hypothesis  # noqa: F401
except ImportError as exc:  # pragma: no cover
    raise ImportError("fedtheory.conformance needs hypothesis: pip install 'fedtheory[test]'") from exc

from .check import Counterexample, PropertyResult, Report, check, properties_of
from .instance import Client, Instance, make_instance
from .properties import DEFAULT_HYPER, FAMILIES, PROPERTIES

__all__ = ["check", "Report", "PropertyResult", "Counterexample", "properties_of", "Client", "Instance",
           "make_instance", "DEFAULT_HYPER", "FAMILIES", "PROPERTIES"]
