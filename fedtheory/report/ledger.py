"""A ledger read back from ``claims.json``: the records, checked, and the papers' coverage computed from them.

The HTML report renders from ``claims.json`` alone plus the installed package's inventories
(:mod:`fedtheory.papers`), so that it works on a ledger written on another machine: nothing here needs the
claims registry.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..claims.registry import FAILING_STATUSES, Citation
from ..claims.tolerances import BITE
from ..coverage.statements import StatementCoverage, coverage
from ..papers import all_papers

__all__ = ["ClaimsFileError", "RecordedClaim", "read_claims", "recorded_coverage", "FAILED_STATUSES",
           "REQUIRED_FIELDS", "FALSE_KIND_WORDS", "certification_sentence", "false_kind", "verdict_key"]

#: Statuses of a claim whose run went wrong (``ClaimResult.failed``): its statement's proof chain breaks there.
FAILED_STATUSES = FAILING_STATUSES
#: The fields every claim record of a claims.json has (``ClaimResult.as_dict``) and the report reads.
REQUIRED_FIELDS = ("id", "paper", "statement", "status", "expected", "evidence")
#: What a claim recorded false says of the paper, by its ``false_kind`` (``fedtheory.claims.registry.FALSE_KINDS``):
#: only "printed" blames the paper's text; "reading" blames one reading of an ambiguous text (the claim names it);
#: "ours" is fedtheory's own reading or folklore found false, not a statement of the paper.
FALSE_KIND_WORDS = {"printed": "false as printed", "reading": "false under a reading",
                    "ours": "fedtheory's own reading, false"}


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


def loose_bounds(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The bound and rate claims that hold as expected but do not bite: their worst tightness (measured / bound)
    on the default instances is below :data:`fedtheory.claims.tolerances.BITE` (or not reported), and they do not
    say why in ``non_discriminating``. A slip that moves such a claim's measured value by a constant factor could
    pass it unseen."""
    out = []
    for r in records:
        if r.get("kind") not in ("bound", "rate") or r.get("expected") != "holds" or r.get("status") != "holds":
            continue
        t = r.get("worst_tightness")
        if (t is None or t < BITE) and not str(r.get("non_discriminating") or "").strip():
            out.append(f"{r['id']} (worst tightness {'not reported' if t is None else f'{t:.3g}'})")
    return out


def certification_sentence(record: Mapping[str, Any]) -> str:
    """What a claim record says of its run's certification against the paper's equations
    (:mod:`fedtheory.claims.certify`): "The run differs from the paper's algorithm ..." when it does, else the
    algorithms it runs with the rounds certified ("runs fedavg (12 rounds certified against the paper's
    equations)"), or "" for a claim that runs no algorithm (or a claims.json written before certification)."""
    cert = record.get("certification") or {}
    if cert.get("differs"):
        return f"{cert['differs'][0].upper()}{cert['differs'][1:]}: the verdict is not about the paper's algorithm"
    rounds = cert.get("rounds") or {}
    runs = sorted(set(record.get("runs") or ()) | set(rounds))
    if not runs:
        return ""
    return "Runs " + ", ".join(f"{name} ({rounds.get(name, 0)} rounds certified against the paper's equations)"
                               for name in runs)


def false_kind(record: Mapping[str, Any]) -> str:
    """The record's ``false_kind`` ("printed", "reading" or "ours"; "" for a claim not expected violated).

    A ledger written before false_kind was recorded: a derived violated claim is fedtheory's own reading, any
    other violated claim reads as printed."""
    if record["expected"] != "violated":
        return ""
    return record.get("false_kind") or ("ours" if record.get("derived") else "printed")


def verdict_key(record: Mapping[str, Any]) -> str:
    """The key a claim's verdict is shown and counted under: its status, except that a claim recorded false
    (status ``violated-as-recorded``) is counted by what it finds false, ``false-printed``, ``false-reading`` or
    ``false-ours`` (:data:`FALSE_KIND_WORDS`), so that a page never blames the paper for a reading."""
    if record["status"] == "violated-as-recorded":
        return f"false-{false_kind(record)}"
    return record["status"]


@dataclass(frozen=True)
class RecordedClaim:
    """What :func:`fedtheory.coverage.statements` needs of a claim, from its claims.json record."""

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
        claims.append(RecordedClaim(r["id"], r["expected"], bool(r.get("derived")), tuple(cites),
                                    r.get("statement", ""), false_kind(r), r.get("reading", ""),
                                    r.get("narrower", "")))
    # an exploratory claim's shape verdict in this run: every instance held (an error or no instance: none)
    shapes = {r["id"]: all(e.get("holds") is True for e in r["evidence"]) for r in records
              if r["expected"] == "exploratory" and r["evidence"] and not r.get("error")}
    return coverage(papers, claims, strict=False, shapes=shapes), unplaced
