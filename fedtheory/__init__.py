"""fedtheory: numerical verification of federated-optimization theory.

Exact federated problems with certificates (:mod:`fedtheory.problems`), paper-faithful algorithms
(:mod:`fedtheory.algorithms`), the papers' bounds (:mod:`fedtheory.theory`) and the claims ledger
(:mod:`fedtheory.claims`, ``fedtheory verify``). Subpackages are imported on demand: ``import fedtheory``
itself is cheap.

A regular package (not an implicit namespace package), so that another ``fedtheory/`` folder on
``sys.path`` cannot silently merge into this one.
"""
from __future__ import annotations

from importlib import metadata as _metadata

try:
    __version__: str = _metadata.version("fedtheory")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
