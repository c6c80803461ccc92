"""The registry of paper claims. Each submodule registers the claims of one paper (or of the foundation)."""
import sys as _sys

from .registry import (KINDS, PAPERS, REGISTRY, STATEMENT_KINDS, Citation, Claim, ClaimResult, Evidence, claim,
                       evaluate, load_all, select, verdict)

__all__ = ["KINDS", "PAPERS", "REGISTRY", "STATEMENT_KINDS", "Citation", "Claim", "ClaimResult", "Evidence", "claim",
           "evaluate", "load_all", "select", "verdict"]

from ..autoload import load_submodules  # noqa: E402  (after the registry: claim modules import it)

load_submodules(_sys.modules[__name__], globals())
