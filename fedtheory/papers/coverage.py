"""Coverage of the papers' statements by the claims ledger: what is checked, recorded false, not checkable, open.

The status of a statement is computed from the registered claims' ``cites`` and the paper's inventory
(:mod:`fedtheory.papers.inventory`), never written by hand, so the table cannot drift from the ledger:

* **false**: a claim citing it expects the paper's statement to be violated (``expected="violated"``, not a
  derived or corrected claim); the corrected statement is registered next to it;
* **checked**: some claim cites it, or (tables, figures) a notebook or docs section reproduces it;
* **not checkable**: the inventory gives the reason;
* **open**: none of these: checkable, not checked yet.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from ..claims.registry import Claim
from .inventory import Paper, Statement

__all__ = ["StatementCoverage", "coverage", "totals", "render_totals", "render_markdown", "numbered_statements",
           "STATUSES", "qualified_summary"]

STATUSES = ("checked", "false", "not checkable", "open")


@dataclass(frozen=True)
class StatementCoverage:
    paper: str
    statement: Statement
    status: str
    claims: tuple[str, ...]
    #: How a checked statement is checked, when not by an assertion of its printed form: "measured" (every
    #: citing claim records a measurement without asserting a verdict, e.g. an experiment's shape on a small
    #: stand-in) or "reconstructed" (every citing claim is fedtheory's derived form, e.g. where the printed
    #: formula is lost in the paper's text); empty otherwise.
    qualifier: str = ""
    #: (claim id, reason) of the citing bound or rate claims flagged as not discriminating their algorithm from
    #: a broken variant (:attr:`fedtheory.claims.registry.Claim.non_discriminating`).
    non_discriminating: tuple[tuple[str, str], ...] = ()

    @property
    def detail(self) -> str:
        if self.claims:
            prefix = {"measured": "measured, not asserted: ",
                      "reconstructed": "in a form derived by fedtheory: "}.get(self.qualifier, "")
            flags = "".join(f"; `{c}` does not discriminate: {why}" for c, why in self.non_discriminating)
            return prefix + ", ".join(f"`{c}`" for c in self.claims) + flags
        if self.statement.reproduced_in:
            return f"reproduced in {self.statement.reproduced_in}"
        return self.statement.not_checkable


def coverage(papers: Sequence[Paper], claims: Iterable[Claim]) -> list[StatementCoverage]:
    """Every statement of ``papers`` with its status; ValueError if a claim cites a statement not in the
    inventory (a typo there would silently leave the statement open)."""
    citing: dict[tuple[str, str], list[Claim]] = {}
    inventory = {(p.key, s.label) for p in papers for s in p.statements}
    keys = {p.key for p in papers}
    for c in claims:
        for cite in c.citations:
            if cite.paper not in keys:
                continue  # classic, foundation, neural: no paper text to inventory
            if (cite.paper, cite.label) not in inventory:
                raise ValueError(f"claim {c.id} cites {cite.paper}:{cite.label}, which is not in that paper's "
                                 f"inventory (fedtheory/papers/{cite.paper}.py)")
            citing.setdefault((cite.paper, cite.label), []).append(c)
    out = []
    for p in papers:
        for s in p.statements:
            cs = citing.get((p.key, s.label), [])
            if cs and s.not_checkable:
                raise ValueError(f"{p.key}:{s.label} is marked not checkable ({s.not_checkable!r}) but claims "
                                 f"{[c.id for c in cs]} check it: keep one")
            if any(c.expected == "violated" and not c.derived for c in cs):
                status = "false"
            elif cs or s.reproduced_in:
                status = "checked"
            elif s.not_checkable:
                status = "not checkable"
            else:
                status = "open"
            qualifier = ""
            if status == "checked" and cs:
                if all(c.expected == "exploratory" for c in cs):
                    qualifier = "measured"
                elif all(c.derived for c in cs):
                    qualifier = "reconstructed"
            flagged = tuple((c.id, getattr(c, "non_discriminating", "")) for c in cs
                            if getattr(c, "non_discriminating", ""))
            out.append(StatementCoverage(p.key, s, status, tuple(c.id for c in cs), qualifier, flagged))
    return out


def totals(rows: Sequence[StatementCoverage]) -> dict[str, dict[str, int]]:
    """Per paper: the count of each status and the total."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        t = out.setdefault(r.paper, {**{s: 0 for s in STATUSES}, "total": 0})
        t[r.status] += 1
        t["total"] += 1
    return out


def checked_share(t: Mapping[str, int]) -> float:
    """Checked or recorded false, as a share of the numerically checkable statements."""
    checkable = t["total"] - t["not checkable"]
    return (t["checked"] + t["false"]) / checkable if checkable else 1.0


def render_totals(rows: Sequence[StatementCoverage], citations: Mapping[str, str]) -> str:
    """The per-paper totals as a Markdown table (the README's and ``fedtheory coverage``'s)."""
    lines = ["| paper | checked | recorded false | not checkable | open | total | checked of checkable |",
             "|---|---|---|---|---|---|---|"]
    for key, t in totals(rows).items():
        lines.append(f"| {citations[key]} | {t['checked']} | {t['false']} | {t['not checkable']} | {t['open']} | "
                     f"{t['total']} | {checked_share(t):.0%} |")
    return "\n".join(lines)


def render_markdown(papers: Sequence[Paper], rows: Sequence[StatementCoverage]) -> str:
    """docs/coverage.md: the totals, then every statement of every paper with its status."""
    citations = {p.key: p.citation for p in papers}
    out = ["# Coverage of the papers' statements", "",
           "Generated by `fedtheory coverage --write docs/coverage.md` from the claims ledger and the papers' "
           "inventories (`fedtheory/papers/`); `tests/papers/test_coverage.py` fails when this page is out of date or a "
           "numbered statement of a paper has no entry.", "",
           "Status: **checked** (a claim of `fedtheory verify` checks it, or a notebook reproduces the "
           "experiment), **false** (the claim finds the paper's statement violated and a corrected statement is "
           "registered next to it), **not checkable** (the reason is given), **open** (checkable, not checked "
           "yet). A statement's proof chain is what `fedtheory verify --explain CLAIM` walks.", "",
           render_totals(rows, citations), "",
           qualified_summary(rows), ""]
    for p in papers:
        out += [f"## {p.citation}", "", "| statement | where | what it says | status | claims, or why not | "
                "proof uses |", "|---|---|---|---|---|---|"]
        for r in rows:
            if r.paper != p.key:
                continue
            s = r.statement
            out.append(f"| {s.label} | {s.where} | {_cell(s.summary)} | {r.status} | {_cell(r.detail)} | "
                       f"{', '.join(s.depends_on)} |")
        out.append("")
    return "\n".join(out)


def qualified_summary(rows: Sequence[StatementCoverage]) -> str:
    """The sentence saying how many checked statements are only measured, or checked in a derived form."""
    measured = sum(r.qualifier == "measured" for r in rows)
    reconstructed = sum(r.qualifier == "reconstructed" for r in rows)
    return (f"Of the checked statements, {measured} are *measured, not asserted* (an experiment's shape on a small "
            "offline stand-in, reported without a verdict; the paper's docs page says whether its shape "
            f"reproduces) and {reconstructed} are checked *in a form derived by fedtheory* (the printed formula is "
            "not recoverable from the paper's text, or the paper states it only up to constants): their claims "
            "are marked derived in the ledger.")


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


# Numbered statements as the papers' text conversions print them: a heading at the start of a line for the
# theorem-like kinds ("Lemma B.4.", "Theorem 3.1 (Convergence)"), any mention for algorithms and experiments.
_HEADING = re.compile(r"^(Theorem|Lemma|Corollary|Proposition|Remark|Definition|Assumption)[ ~]+"
                      r"([A-Z]?\.?\d+(?:\.\d+)*)\b", re.MULTILINE)
_MENTION = re.compile(r"\b(Algorithm|Table|Figure|Fig\.)[ ~]+(\d+)\b")


def numbered_statements(text: str) -> set[str]:
    """The labels of every numbered statement a paper's text prints (see the patterns above)."""
    found = {f"{kind} {number}" for kind, number in _HEADING.findall(text)}
    found |= {f"{'Figure' if kind == 'Fig.' else kind} {number}" for kind, number in _MENTION.findall(text)}
    return found
