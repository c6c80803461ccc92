"""The five papers fedtheory verifies: every numbered statement and the statements its proof uses.

The inventories are data, below the claims that cite them: this package imports nothing of the ledger. What reads
the claims, the statements' statuses (``fedtheory coverage``) and the proof chains (``fedtheory verify --explain``),
is :mod:`fedtheory.coverage`, above the claims.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from .inventory import STATEMENT_KINDS, Paper, Statement

__all__ = ["LEDGER", "LEDGER_KEYS", "PAPER_KEYS", "STATEMENT_KINDS", "LedgerKey", "Paper", "Statement",
           "all_papers", "paper"]


@dataclass(frozen=True)
class LedgerKey:
    """One key of the claims ledger: a paper (``inventory=True``: its numbered statements are in
    ``fedtheory/papers/<key>.py``, its claims in ``fedtheory/claims/<key>/``), or a group of claims that is not a
    paper (the classic results the papers build on, the problem generators, the torch backend)."""

    key: str
    inventory: bool
    #: The repository's notebook that explores its claims (notebooks/ at the repository root).
    notebook: str


#: Every key of the ledger, in its order: the one place a paper is registered. The ledger's keys
#: (``fedtheory.claims.PAPERS``, ``fedtheory verify --paper``), the inventories (:data:`PAPER_KEYS`) and the
#: report's notebooks (``fedtheory.report.html.NOTEBOOKS``) are read from it; tests/papers/test_keys.py fails on
#: another static list of the keys.
LEDGER = (LedgerKey("foundation", False, "01_problem_generators.ipynb"),
          LedgerKey("classic", False, "02_client_drift.ipynb"),
          LedgerKey("fedelasticnet", True, "07_fedelasticnet.ipynb"),
          LedgerKey("docofl", True, "04_compression.ipynb"),
          LedgerKey("fedred", True, "03_hessian_dissimilarity.ipynb"),
          LedgerKey("ofediq", True, "05_ofediq.ipynb"),
          LedgerKey("efl", True, "06_efl.ipynb"),
          LedgerKey("neural", False, "08_neural.ipynb"))
LEDGER_KEYS = tuple(k.key for k in LEDGER)
#: The papers with an inventory, in the order of the claims ledger.
PAPER_KEYS = tuple(k.key for k in LEDGER if k.inventory)


def paper(key: str) -> Paper:
    """The inventory of one paper; ValueError naming the valid keys otherwise."""
    if key not in PAPER_KEYS:
        raise ValueError(f"paper must be one of {PAPER_KEYS}, got {key!r}")
    return importlib.import_module(f"{__name__}.{key}").PAPER


def all_papers() -> list[Paper]:
    return [paper(k) for k in PAPER_KEYS]
