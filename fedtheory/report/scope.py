"""What a ledger ran, against the installed registry of claims: a report of a selection (``fedtheory verify
--paper fedred``, ``--claim ID``, a pytest run of one's own claims) must say which papers ran and must not show
the others as open or 0% asserted.

A paper key *ran* when the ledger has at least one of its claims; it ran *completely* when the ledger has every
claim of that key the installed fedtheory registers (a ledger of another version may have more). A statement is
*not run here* when the installed registry has claims citing it and none of them is in the ledger: its status in
the full ledger is unknown to this one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..claims import PAPERS, REGISTRY

__all__ = ["PaperRun", "RunScope", "run_scope", "NOT_RUN"]

#: The words a page shows for a paper or statement the ledger did not run.
NOT_RUN = "not run here"


@dataclass(frozen=True)
class PaperRun:
    """One paper key: how many of its claims the ledger has, of how many the installed fedtheory registers."""

    key: str
    ran: int
    registered: int

    @property
    def state(self) -> str:
        """``"complete"``, ``"partial"`` (some of its claims ran) or ``"not run"``."""
        if self.ran == 0:
            return "not run"
        return "complete" if self.ran >= self.registered else "partial"

    def words(self) -> str:
        """The paper's run in words, for the pages: "all 45 claims ran", "3 of 45 claims ran", "not run here"."""
        if self.state == "not run":
            return NOT_RUN
        if self.state == "complete":
            return f"all {self.ran} claim{'s' if self.ran != 1 else ''} ran"
        return f"{self.ran} of {self.registered} claims ran"


@dataclass(frozen=True)
class RunScope:
    """The ledger's run per paper key, and per inventoried statement the installed claims citing it."""

    papers: Mapping[str, PaperRun]
    #: (paper, statement label) -> ids of the installed claims citing it.
    citing: Mapping[tuple[str, str], tuple[str, ...]]
    ran_ids: frozenset[str]
    #: The installed claims that find a statement false as printed (expected violated, false_kind "printed").
    printed: frozenset[str] = frozenset()

    @property
    def partial(self) -> bool:
        """Whether some installed paper key did not run completely."""
        return any(p.state != "complete" for p in self.papers.values())

    def ran(self) -> list[str]:
        """The paper keys with at least one claim in the ledger, in the order of the papers."""
        return [k for k, p in self.papers.items() if p.state != "not run"]

    def statement_not_run(self, paper: str, label: str) -> bool:
        """Whether installed claims cite the statement and none of them is in the ledger."""
        citing = self.citing.get((paper, label), ())
        return bool(citing) and not any(c in self.ran_ids for c in citing)

    def citing_missing(self, paper: str, label: str) -> tuple[str, ...]:
        """The installed claims citing the statement that are not in the ledger."""
        return tuple(c for c in self.citing.get((paper, label), ()) if c not in self.ran_ids)


def run_scope(records: Sequence[Mapping[str, Any]]) -> RunScope:
    """The :class:`RunScope` of the claim records of a claims.json, against the installed registry (importing
    it registers every claim: about a second)."""
    ids = frozenset(r["id"] for r in records)
    present = [r["paper"] for r in records]
    keys = list(PAPERS) + sorted(set(present) - set(PAPERS))
    papers = {k: PaperRun(k, sum(p == k for p in present), sum(c.paper == k for c in REGISTRY.values()))
              for k in keys}
    # a key that registers no claim here and has none in the ledger (``neural`` without torch) was not left out
    # of this run: nothing of it is installed, so it neither ran nor makes the run partial
    papers = {k: p for k, p in papers.items() if p.ran or p.registered}
    citing: dict[tuple[str, str], list[str]] = {}
    for c in REGISTRY.values():
        for cite in c.citations:
            citing.setdefault((cite.paper, cite.label), []).append(c.id)
    printed = frozenset(c.id for c in REGISTRY.values() if c.expected == "violated" and c.false_kind == "printed")
    return RunScope(papers, {k: tuple(v) for k, v in citing.items()}, ids, printed)
