"""A ledger read back from ``claims.json``: the records, checked, and the papers' coverage computed from them.

The HTML report renders from ``claims.json`` alone plus the installed package's inventories
(:mod:`fedtheory.papers`), so that it works on a ledger written on another machine: nothing here needs the
claims registry.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..claims.registry import FAILING_STATUSES, Citation
from ..papers import all_papers
from ..papers.coverage import StatementCoverage, coverage

__all__ = ["ClaimsFileError", "RecordedClaim", "read_claims", "recorded_coverage", "FAILED_STATUSES",
           "REQUIRED_FIELDS"]

#: Statuses of a claim whose run went wrong (``ClaimResult.failed``): its statement's proof chain breaks there.
FAILED_STATUSES = FAILING_STATUSES
#: The fields every claim record of a claims.json has (``ClaimResult.as_dict``) and the report reads.
REQUIRED_FIELDS = ("id", "paper", "statement", "status", "expected", "evidence")


_JSON_TYPES = {dict: "object", str: "string", int: "number", float: "number", bool: "boolean",
               type(None): "null"}


class ClaimsFileError(ValueError):
    """A claims.json that cannot be read: the message is one line and names the file."""


def read_claims(path: Path) -> list[dict[str, Any]]:
    """The claim records of ``path`` (a ``claims.json`` written by ``fedtheory verify``).

    ClaimsFileError naming the file when it is missing, unreadable, not JSON (e.g. truncated), or JSON of
    another shape than a list of claim records with the fields of :data:`REQUIRED_FIELDS`.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ClaimsFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ClaimsFileError(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        records = json.loads(text)
    except ValueError as exc:
        raise ClaimsFileError(f"{path}: not valid JSON, truncated? ({exc})") from None
    expected = f"expected a list of claim records with the fields {', '.join(REQUIRED_FIELDS)}"
    if not isinstance(records, list):
        found = _JSON_TYPES.get(type(records), "value")
        raise ClaimsFileError(f"{path}: not a claims.json ({expected}; found a JSON {found})")
    for k, r in enumerate(records):
        missing = [f for f in REQUIRED_FIELDS if not isinstance(r, dict) or f not in r]
        if missing:
            raise ClaimsFileError(f"{path}: not a claims.json (record {k} lacks {', '.join(missing)}; {expected})")
        if not isinstance(r["evidence"], list) or not all(isinstance(e, dict) for e in r["evidence"]):
            raise ClaimsFileError(f"{path}: not a claims.json (record {k}, {r['id']!r}: evidence is not a list of "
                                  "records)")
    return records


@dataclass(frozen=True)
class RecordedClaim:
    """What :func:`fedtheory.papers.coverage` needs of a claim, from its claims.json record."""

    id: str
    expected: str
    derived: bool
    citations: tuple[Citation, ...]
    statement: str = ""
    false_kind: str = ""
    reading: str = ""
    narrower: str = ""


def recorded_coverage(records: Sequence[dict[str, Any]]) -> tuple[list[StatementCoverage], list[str]]:
    """Every inventoried statement's coverage by the claims of ``records``, and the citations that the installed
    inventories cannot place (a ledger from another version of fedtheory), described one per line; those are
    left out of the coverage instead of failing the report."""
    papers = all_papers()
    known = {(p.key, s.label): s for p in papers for s in p.statements}
    keys = {p.key for p in papers}
    claims, unplaced = [], []
    for r in records:
        cites = []
        for text in r.get("cites") or ():
            try:
                cite = Citation.parse(text, r["paper"])
            except ValueError:
                unplaced.append(f"{r['id']} cites {text!r}, which is not a statement label")
                continue
            statement = known.get((cite.paper, cite.label))
            if cite.paper in keys and (statement is None or statement.not_checkable):
                why = "not in" if statement is None else "marked not checkable in"
                unplaced.append(f"{r['id']} cites {cite.paper}:{cite.label}, {why} the installed inventory")
                continue
            cites.append(cite)
        derived = bool(r.get("derived"))
        # a ledger written before false_kind was recorded: a non-derived violated claim reads as printed
        false_kind = r.get("false_kind") or ("" if r["expected"] != "violated" else "ours" if derived else "printed")
        claims.append(RecordedClaim(r["id"], r["expected"], derived, tuple(cites), r.get("statement", ""),
                                    false_kind, r.get("reading", ""), r.get("narrower", "")))
    return coverage(papers, claims, strict=False), unplaced
