"""The five papers fedtheory verifies: every numbered statement and the statements its proof uses.

The inventories are data, below the claims that cite them: this package imports nothing of the ledger.
:mod:`fedtheory.papers.coverage` (``fedtheory coverage``: per paper, how many statements are checked, recorded
false, not checkable and open) and :mod:`fedtheory.papers.chain` (``fedtheory verify --explain CLAIM``: the first
lemma of a proof chain that fails) read the claims, and are imported from their modules.
"""
from __future__ import annotations

import importlib

from .inventory import STATEMENT_KINDS, Paper, Statement

__all__ = ["PAPER_KEYS", "STATEMENT_KINDS", "Paper", "Statement", "all_papers", "paper"]

#: The papers with an inventory, in the order of the claims ledger.
PAPER_KEYS = ("fedelasticnet", "docofl", "fedred", "ofediq", "efl")


def paper(key: str) -> Paper:
    """The inventory of one paper; ValueError naming the valid keys otherwise."""
    if key not in PAPER_KEYS:
        raise ValueError(f"paper must be one of {PAPER_KEYS}, got {key!r}")
    return importlib.import_module(f"{__name__}.{key}").PAPER


def all_papers() -> list[Paper]:
    return [paper(k) for k in PAPER_KEYS]
