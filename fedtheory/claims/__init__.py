"""The registry of paper claims. Each submodule registers the claims of one paper (or of the foundation)."""
import sys as _sys

from .registry import (KINDS, PAPERS, REGISTRY, STATEMENT_KINDS, Citation, Claim, ClaimResult, Evidence, claim,
                       evaluate, load_all, select)

__all__ = ["KINDS", "PAPERS", "REGISTRY", "STATEMENT_KINDS", "Citation", "Claim", "ClaimResult", "Evidence", "claim",
           "evaluate", "load_all", "select"]

from .._autoload import load_submodules as _load  # noqa: E402

_load(_sys.modules[__name__], globals())
