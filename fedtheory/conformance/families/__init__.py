"""The conformance kit's families: one package each, ``fedtheory/conformance/families/<family>/``, and the loader
and registry readers of the kit (as :mod:`fedtheory.claims` is for the claims).

A family package declares ``HYPER`` (its default hyperparameters) in its ``__init__`` and holds its properties
(declared with :func:`fedtheory.conformance.families.registry.prop` at each check), its independent expected
side, the deliberately wrong and differently written implementations of the power test (``variants.py``:
``WRONG`` and ``CORRECT``) and fedtheory's own implementation through the contract (``native.py``).

:data:`FAMILIES` is a static list, so ``fedtheory conform --help`` can offer it without importing hypothesis
(an optional extra) or any family; :func:`load` imports a family when it is checked. The family modules import
:mod:`.registry` and :mod:`fedtheory.conformance.kit`, never this package, so no import runs in a circle.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:
    from ..kit import Property

__all__ = ["FAMILIES", "load", "properties_of", "property_by_id", "hyper_ranges", "varied_hyper", "default_hyper",
           "check_hyper", "VARIATIONS", "VARIATION_SEED"]

#: Every family, in the order ``fedtheory conform --as`` lists them (tests check it against the packages).
FAMILIES: tuple[str, ...] = ("fedavg", "fedprox", "scaffold", "feddyn", "scaffnew", "compressor", "dane", "fedred",
                             "fedelasticnet_fedavg", "fedelasticnet_scaffold", "fedelasticnet_feddyn", "efl",
                             "docofl", "ofediq", "server_optimizer", "fednova")

#: Hyperparameter sets the kit draws per check, and the seed they are drawn from (fixed: the same every run).
VARIATIONS, VARIATION_SEED = 2, 20240611


def load(family: str, part: str = "") -> ModuleType:
    """Import the family's package (which declares its properties), or its module ``part`` ("variants", ...)."""
    if family not in FAMILIES:
        # "claims": the parameter of fedtheory.conformance.check that reaches here first
        raise ValueError(f"claims must be one of {', '.join(FAMILIES)}, got {family!r}")
    return importlib.import_module(f"{__name__}.{family}" + (f".{part}" if part else ""))


def properties_of(family: str) -> tuple[Property, ...]:
    """The properties of ``family`` (one of :data:`FAMILIES`), in declared order."""
    load(family)
    from .registry import REGISTRY  # here, not at the top: it needs hypothesis (an optional extra), FAMILIES must not
    return tuple(REGISTRY.get(family, ()))


def property_by_id(property_id: str) -> Property:
    """The property of ``property_id`` ("family.name", or "family.name @ hyper" for a kit-drawn hyperparameter set)."""
    property_id = property_id.split(" @ ", 1)[0]
    family = property_id.split(".", 1)[0]
    found = [p for p in properties_of(family) if p.id == property_id] if family in FAMILIES else []
    if not found:
        raise ValueError(f"no conformance property {property_id!r}")
    return found[0]


def hyper_ranges(family: str) -> Mapping[str, tuple]:
    """The ranges of the paper's hyperparameters the kit draws from (its properties module's ``RANGES``)."""
    return getattr(load(family, "properties"), "RANGES", {})


def varied_hyper(family: str, hyper: Mapping[str, Any], index: int, fixed: Sequence[str] = ()) -> dict:
    """The ``index``-th hyperparameter set drawn by the kit: ``hyper`` with every hyperparameter of
    :func:`hyper_ranges` redrawn in its range (integers uniformly, reals uniformly), away from the user's value;
    ``None`` values (an exact local solve), choices (weighting, options) and the names in ``fixed`` (what the
    implementation declares it does not take, e.g. a server step it does not have) are kept as declared."""
    rng = np.random.default_rng(VARIATION_SEED + index)
    out = dict(hyper)
    for name, (lo, hi) in hyper_ranges(family).items():
        if hyper.get(name) is None or name in fixed:
            continue
        for _ in range(20):
            value = int(rng.integers(lo, hi + 1)) if isinstance(lo, int) and isinstance(hi, int) else \
                round(float(rng.uniform(lo, hi)), 4)
            if value != hyper[name]:
                break
        out[name] = value
    return out


def default_hyper(family: str) -> Mapping[str, Any]:
    """The family's hyperparameters when the user gives none (its package's ``HYPER``)."""
    return load(family).HYPER


def check_hyper(family: str, hyper: Mapping[str, Any]) -> None:
    """Raise ValueError naming a hyperparameter outside its valid range, where the family's package declares
    ``check_hyper`` (e.g. FedProx's gamma in [0, 1))."""
    validate = getattr(load(family), "check_hyper", None)
    if validate is not None:
        validate(hyper)
