"""The registry of paper claims. Each submodule registers the claims of one paper (or of the foundation)."""
import sys as _sys
from typing import Sequence

from .registry import (
    KINDS,
    PAPERS,
    REGISTRY,
    STATEMENT_KINDS,
    Citation,
    Claim,
    ClaimResult,
    Evidence,
    claim,
    evaluate,
    verdict,
)

__all__ = ["KINDS", "PAPERS", "REGISTRY", "STATEMENT_KINDS", "Citation", "Claim", "ClaimResult", "Evidence", "claim",
           "evaluate", "load_all", "select", "verdict"]

from ..autoload import load_submodules  # noqa: E402  (after the registry: claim modules import it)

load_submodules(_sys.modules[__name__], globals())


def load_all() -> dict[str, Claim]:
    """Every registered claim by id (importing this package registers them all)."""
    return REGISTRY


def select(papers: Sequence[str] | None = None, ids: Sequence[str] | None = None) -> list[Claim]:
    """The claims of ``papers`` (keys of :data:`PAPERS`) and/or with ``ids``, in registration order; ValueError
    naming unknown keys or ids."""
    claims = list(REGISTRY.values())
    if papers:
        unknown = set(papers) - set(PAPERS)
        if unknown:
            raise ValueError(f"unknown paper key(s) {sorted(unknown)}; choose from {PAPERS}")
        claims = [c for c in claims if c.paper in papers]
    if ids:
        missing = [i for i in ids if i not in REGISTRY]
        if missing:
            raise ValueError(f"unknown claim id(s) {missing}; see `fedtheory verify --list`")
        claims = [c for c in claims if c.id in ids]
    return claims
