"""Slips for the reference tests: a patched copy of an algorithm module, with one plausible slip written into its
source (a sign, a weight, a stale point, a missing correction, ...), and the first round at which a run of the
slipped algorithm differs from its reference (fedtheory.references.certify_run)."""
from __future__ import annotations

import importlib
import inspect
import itertools
import sys
import types
from typing import Any

import numpy as np
import pytest

from fedtheory.references import certify_run

_COUNTER = itertools.count()


def patched_module(module_name: str, replacements: list[tuple[str, str]],
                   inject: dict[str, Any] | None = None) -> types.ModuleType:
    """A copy of ``module_name`` with each (old, new) replacement applied to its source (each ``old`` must occur),
    the algorithm (or compressor) registration removed (the copy keeps the original's ``name``), and ``inject`` set in its
    namespace after its imports (e.g. a slipped helper of another module). A slipped base class must exist when
    the subclass is defined: pass it as ``inject={"_BASE": cls}`` with a replacement of its import line by
    ``Name = _BASE``."""
    module = importlib.import_module(module_name)
    source = inspect.getsource(module)
    for old, new in replacements:
        assert old in source, f"slip {old!r} not found in {module_name}"
        source = source.replace(old, new)
    source = source.replace("@register_algorithm\n", "").replace("@register_compressor\n", "")
    name = f"{module_name}_slip{next(_COUNTER)}"
    copy = types.ModuleType(name)
    copy.__package__ = module.__package__
    sys.modules[name] = copy  # dataclasses resolve the string annotations through sys.modules
    copy.__dict__.update(inject or {})
    exec(compile(source, f"<slip of {module_name}>", "exec"), copy.__dict__)
    copy.__dict__.update(inject or {})
    return copy


def first_mismatch(alg: Any, problem: Any, rounds: int = 6, seed: int = 0,
                   x0: np.ndarray | None = None) -> str | None:
    """Run ``rounds`` rounds of ``alg`` from its own state (:func:`fedtheory.references.certify_run`) and return the
    first round's mismatch sentence."""
    _, mismatch = certify_run(alg, problem, np.array([0.5, -1.0, 2.0]) if x0 is None else x0, rounds, seed)
    return None if mismatch is None else mismatch.sentence()


@pytest.fixture
def slips() -> tuple:
    return patched_module, first_mismatch


@pytest.fixture(name="patched_module")
def patched_module_fixture() -> Any:
    """:func:`patched_module` for the tests of this folder (a conftest is not imported by name)."""
    return patched_module
