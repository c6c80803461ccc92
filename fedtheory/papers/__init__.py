"""The five papers fedtheory verifies: every numbered statement, its proof chain, and its coverage by the ledger.

``fedtheory coverage`` prints, per paper, how many statements are checked, recorded false, not checkable (with
the reason) and open, and writes docs/coverage.md; ``fedtheory verify --explain CLAIM`` walks a statement's
proof chain and names the first lemma that fails.
"""
from __future__ import annotations

import importlib

from .coverage import (STATUSES, StatementCoverage, coverage, numbered_statements, qualified_summary,
                       render_markdown, render_totals)
from .inventory import Paper, Statement

__all__ = ["PAPER_KEYS", "Paper", "Statement", "StatementCoverage", "STATUSES", "all_papers", "paper", "coverage",
           "numbered_statements", "qualified_summary", "render_markdown", "render_totals"]

#: The papers with an inventory, in the order of the claims ledger.
PAPER_KEYS = ("fedelasticnet", "docofl", "fedred", "ofediq", "efl")


def paper(key: str) -> Paper:
    """The inventory of one paper; ValueError naming the valid keys otherwise."""
    if key not in PAPER_KEYS:
        raise ValueError(f"paper must be one of {PAPER_KEYS}, got {key!r}")
    return importlib.import_module(f"{__name__}.{key}").PAPER


def all_papers() -> list[Paper]:
    return [paper(k) for k in PAPER_KEYS]
