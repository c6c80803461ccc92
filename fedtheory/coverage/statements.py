"""Coverage of the papers' statements by the claims ledger: one status per statement, from a stated set.

The status of a statement is computed from the registered claims that cite it and the paper's inventory
(:mod:`fedtheory.papers.inventory`), never written by hand, so the table cannot drift from the ledger. In order
of precedence:

* **false**: a claim citing it finds the printed statement violated (``expected="violated"``,
  ``false_kind="printed"``); the corrected statement is registered next to it;
* **false-under-reading**: a claim finds it violated under one reading of an ambiguous text
  (``false_kind="reading"``; the claim names the reading and the verdict under the other reading);
* **checked**: a claim checks the printed statement as printed (expected to hold, not derived, not narrower);
* **checked-derived**: the printed formula is not recoverable; the inventory's ``reconstruction`` says what is
  checked instead, and the claims checking it are marked derived;
* **checked-narrower**: the claims check less than the statement (participation, horizon, the proof's weaker
  form, a factor); their ``narrower`` says what;
* **measured**: only exploratory claims measure it (an experiment on a stand-in, never counted as checked).
  Each exploratory claim's verdict is its shape test (does the stand-in show the paper's shape?), so the
  statement is *reproduced* when every shape test citing it passes in a run, *not reproduced* when one fails,
  and has no such word when no run's verdicts are given (:func:`shape_verdicts` runs them); the inventory's
  ``stand_in`` only describes the stand-in. Where an experiment in the paper's setting cites the statement (the
  neural experiments of ``fedtheory/experiments/``, an exploratory claim without ``narrower``), its shape tests
  alone decide; the convex stand-ins (exploratory claims with ``narrower``) stay as narrower checks;
* **not-checkable**: the inventory gives the reason;
* **open**: none of these: checkable, not checked yet.

fedtheory's own readings that turn out false (``false_kind="ours"``) are not statements of the papers and give
no statement a status.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..claims.registry import Claim, evaluate
from ..papers.inventory import Paper, Statement

__all__ = ["StatementCoverage", "coverage", "statement_coverage", "shape_verdicts", "totals", "render_totals",
           "render_markdown", "render_json", "numbered_statements", "STATUSES", "ASSERTED", "qualified_summary"]

STATUSES = ("checked", "checked-derived", "checked-narrower", "measured", "false", "false-under-reading",
            "not-checkable", "open")
#: The statuses with an asserted verdict on the statement (it can fail): what "checked of checkable" counts.
ASSERTED = ("checked", "checked-derived", "checked-narrower", "false", "false-under-reading")


@dataclass(frozen=True)
class StatementCoverage:
    paper: str
    statement: Statement
    status: str
    claims: tuple[str, ...]
    #: What the status rests on, in one line: the reconstruction, what is narrower, whether the stand-in
    #: reproduces the paper's shape, the reading, the counterexample's claim, or why it cannot be checked.
    note: str = ""
    #: For a measured statement: True when every shape test citing it passed in the run whose verdicts were
    #: given, False when one failed, None when no verdict was given (and for every other status).
    reproduced: bool | None = None

    @property
    def detail(self) -> str:
        """The claims (or the notebook) and the note, for the coverage page."""
        cited = ", ".join(f"`{c}`" for c in self.claims)
        if not cited and self.statement.reproduced_in:
            cited = f"reproduced in {self.statement.reproduced_in}"
        return " - ".join(x for x in (cited, self.note) if x)

    def as_record(self) -> dict[str, Any]:
        """The record of ``fedtheory coverage --json``."""
        return {"paper": self.paper, "statement": self.statement.label, "status": self.status,
                "claims": list(self.claims), "note": self.note, "reproduced": self.reproduced}


def _status(paper: str, s: Statement, cs: Sequence[Claim], strict: bool = True,
            shapes: Mapping[str, bool] | None = None) -> tuple[str, str]:
    """The status of statement ``s`` and its note, from the claims ``cs`` citing it; ValueError where the
    claims' flags and the inventory disagree (the message names the claim or statement to fix), or, with
    ``strict=False`` (a recorded ledger of another version), the closest status with the disagreement as its
    note."""
    where = f"{paper}:{s.label}"

    def disagree(message: str, fallback: str) -> tuple[str, str]:
        if strict:
            raise ValueError(message)
        return fallback, f"(the ledger's flags disagree with the inventory: {message})"

    if cs and s.not_checkable:
        return disagree(f"{where} is marked not checkable ({s.not_checkable!r}) but claims "
                        f"{[c.id for c in cs]} check it: keep one", "not-checkable")
    printed = [c for c in cs if c.expected == "violated" and c.false_kind == "printed"]
    if printed:
        return "false", "; ".join(f"the printed statement fails: {c.statement} ({c.id})" for c in printed)
    readings = [c for c in cs if c.expected == "violated" and c.false_kind == "reading"]
    if readings:
        return "false-under-reading", "; ".join(f"false under the reading: {c.reading} ({c.id})" for c in readings)
    holds = [c for c in cs if c.expected == "holds"]
    full = [c for c in holds if not c.derived and not c.narrower]
    narrower = [c for c in holds if c.narrower]
    if s.reconstruction:
        if full:
            return disagree(f"{where} is reconstructed ({s.reconstruction!r}), but {[c.id for c in full]} cite "
                            "it as printed: mark them derived=True, or say on each what it checks of it (narrower=)",
                            "checked-derived")
        if any(c.derived and not c.narrower for c in holds):
            return "checked-derived", s.reconstruction
        if narrower:
            return "checked-narrower", _narrower_note(narrower) + f" (reconstruction: {s.reconstruction})"
        return disagree(f"{where} declares a reconstruction but no claim expected to hold checks it", "open")
    if full:
        return "checked", ""
    if narrower:
        return "checked-narrower", _narrower_note(narrower)
    if holds:
        return disagree(f"{where} is checked only by derived claims {[c.id for c in holds]}: declare the "
                        "reconstruction in the inventory (reconstruction=), or what the check leaves out on the "
                        "claim (narrower=)", "checked-derived")
    measured = [c for c in cs if c.expected == "exploratory"]
    if measured or s.reproduced_in:
        if measured and not s.stand_in:
            return disagree(f"{where} is only measured ({[c.id for c in measured]}): describe the stand-in "
                            "(stand_in=...)", "measured")
        return "measured", _shape_note(s, measured, shapes)
    if s.not_checkable:
        return "not-checkable", s.not_checkable
    return "open", ""


def _deciding(cs: Sequence[Claim]) -> list[Claim]:
    """The shape tests that decide a measured statement: the experiments in the paper's setting (exploratory
    claims without ``narrower``, such as the neural experiments of fedtheory/experiments/) when there are any;
    otherwise the stand-ins (a convex stand-in's claim says what it leaves out in ``narrower``: it is a narrower
    check, reported but not deciding, once the paper's setting is run)."""
    tests = [c for c in cs if c.expected == "exploratory"]
    full = [c for c in tests if not c.narrower]
    return full or tests


def _reproduced(cs: Sequence[Claim], shapes: Mapping[str, bool] | None) -> bool | None:
    """Whether the paper's shape is reproduced: every deciding shape test (:func:`_deciding`) citing the
    statement passed, one failed (False), or None when a verdict is missing."""
    tests = [c.id for c in _deciding(cs)]
    if not tests or shapes is None or any(t not in shapes for t in tests):
        return None
    return all(shapes[t] for t in tests)


def _shape_note(s: Statement, measured: Sequence[Claim], shapes: Mapping[str, bool] | None) -> str:
    """The measured statement's note: the shape verdicts of its claims in the run given, then the stand-in."""
    stand_in = s.stand_in or ""
    if not measured:
        return stand_in
    deciding = _deciding(measured)
    narrower = [c for c in measured if c not in deciding]
    if narrower:  # the paper's setting decides; the convex stand-ins stay, as narrower checks
        stand_in = (f"{stand_in} (a narrower check, not deciding: "
                    f"{', '.join(c.id for c in narrower)})" if stand_in else "")
    reproduced = _reproduced(measured, shapes)
    if reproduced is None:
        missing = [c.id for c in deciding if shapes is None or c.id not in shapes]
        return (f"shape not run here (`fedtheory verify --claim {missing[0]}` gives its verdict): {stand_in}"
                if missing else stand_in)
    passed = [c.id for c in deciding if shapes[c.id]]
    failed = [c.id for c in deciding if not shapes[c.id]]
    verdicts = "; ".join(f"the shape test of {', '.join(ids)} {word}"
                         for ids, word in ((failed, "fails"), (passed, "passes")) if ids)
    return f"{'reproduced' if reproduced else 'not reproduced'} ({verdicts}): {stand_in}"


def _narrower_note(claims: Sequence[Claim]) -> str:
    return "; ".join(f"{c.narrower} ({c.id})" for c in claims)


def coverage(papers: Sequence[Paper], claims: Iterable[Claim], strict: bool = True,
             shapes: Mapping[str, bool] | None = None) -> list[StatementCoverage]:
    """Every statement of ``papers`` with its status; ValueError if a claim cites a statement not in the
    inventory (a typo there would silently leave the statement open), or if the claims' flags and the inventory
    disagree (see :func:`_status`; ``strict=False`` reports the disagreement in the note instead, for a ledger
    recorded by another version). ``shapes`` maps an exploratory claim's id to its shape verdict in a run (all
    its instances hold; :func:`shape_verdicts`): it decides whether a measured statement is reproduced."""
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
    return [_row(p.key, s, citing.get((p.key, s.label), []), strict, shapes) for p in papers for s in p.statements]


def statement_coverage(paper: Paper, label: str, claims: Iterable[Claim], strict: bool = True,
                       shapes: Mapping[str, bool] | None = None) -> StatementCoverage:
    """The coverage of one statement, ``label`` of ``paper``, by the claims among ``claims`` that cite it: the one
    function every view of a statement's status uses (``fedtheory coverage``, docs/coverage.md, the README, the
    HTML report and ``fedtheory verify --explain``), so no two of them can disagree."""
    s = paper.statement(label)
    cs = [c for c in claims if any((x.paper, x.label) == (paper.key, label) for x in c.citations)]
    return _row(paper.key, s, cs, strict, shapes)


def shape_verdicts(claims: Iterable[Claim], papers: Sequence[Paper]) -> dict[str, bool]:
    """Run the shape test of every measured statement of ``papers``: {exploratory claim id: its verdict holds on
    every default instance}. A claim that errors or yields no instance gives no verdict (its statement then says
    "shape not run here"). The claims are derandomised, so the verdicts are the same on every run; they are
    cached per claim for the process (the README, docs/coverage.md and ``fedtheory coverage`` ask in turn)."""
    claims = list(claims)
    tests = {c for r in coverage(papers, claims) if r.status == "measured" for c in r.claims}
    out = {}
    for c in claims:
        if c.id in tests and c.expected == "exploratory":
            key = (c.id, id(c.check))
            if key not in _SHAPES:
                result = evaluate(c, False)
                _SHAPES[key] = (None if result.error or not result.evidence
                                else all(e.holds for e in result.evidence))
            if _SHAPES[key] is not None:
                out[c.id] = _SHAPES[key]
    return out


#: The cache of :func:`shape_verdicts`, by claim id and check function (a claim redefined runs again).
_SHAPES: dict[tuple[str, int], bool | None] = {}


def _row(paper: str, s: Statement, cs: Sequence[Claim], strict: bool,
         shapes: Mapping[str, bool] | None = None) -> StatementCoverage:
    status, note = _status(paper, s, cs, strict, shapes)
    flagged = [f"`{c.id}` does not discriminate its algorithm from a broken variant: {c.non_discriminating}"
               for c in cs if getattr(c, "non_discriminating", "")]
    note = "; ".join(x for x in (note, *flagged) if x)
    reproduced = _reproduced(cs, shapes) if status == "measured" else None
    return StatementCoverage(paper, s, status, tuple(c.id for c in cs), note, reproduced)


def totals(rows: Sequence[StatementCoverage]) -> dict[str, dict[str, int]]:
    """Per paper: the count of each status, of measured statements that do not reproduce, and the total."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        t = out.setdefault(r.paper, {**{s: 0 for s in STATUSES}, "not reproduced": 0, "total": 0})
        t[r.status] += 1
        t["not reproduced"] += r.reproduced is False
        t["total"] += 1
    return out


def checked_share(t: Mapping[str, int]) -> float:
    """The statements with an asserted verdict (checked in any form, or found false), as a share of the
    numerically checkable ones (measured and open statements are checkable and not checked)."""
    checkable = t["total"] - t["not-checkable"]
    return sum(t[s] for s in ASSERTED) / checkable if checkable else 1.0


def render_totals(rows: Sequence[StatementCoverage], citations: Mapping[str, str]) -> str:
    """The per-paper totals as a Markdown table (the README's and ``fedtheory coverage``'s)."""
    lines = ["| paper | checked | checked, derived form | checked, narrower form | measured (not reproduced) | "
             "false as printed | false under a reading | not checkable | open | total | asserted of checkable |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, t in totals(rows).items():
        lines.append(f"| {citations[key]} | {t['checked']} | {t['checked-derived']} | {t['checked-narrower']} | "
                     f"{t['measured']} ({t['not reproduced']}) | {t['false']} | {t['false-under-reading']} | "
                     f"{t['not-checkable']} | {t['open']} | {t['total']} | {checked_share(t):.0%} |")
    return "\n".join(lines)


def render_json(rows: Sequence[StatementCoverage]) -> str:
    """``fedtheory coverage --json``: every statement's record under ``"statements"``, and the status set."""
    return json.dumps({"statuses": list(STATUSES), "statements": [r.as_record() for r in rows]}, indent=1,
                      ensure_ascii=False)


def render_markdown(papers: Sequence[Paper], rows: Sequence[StatementCoverage]) -> str:
    """docs/coverage.md: the totals, then every statement of every paper with its status."""
    citations = {p.key: p.citation for p in papers}
    out = ["# Coverage of the papers' statements", "",
           "Generated by `fedtheory coverage --write docs/coverage.md` from the claims ledger and the papers' "
           "inventories (`fedtheory/papers/`); `tests/coverage/test_statements.py` fails when this page is out of date or a "
           "numbered statement of a paper has no entry. `fedtheory coverage --json` gives the same statuses as "
           "records.", "",
           "Each statement has exactly one status: **checked** (a claim of `fedtheory verify` checks the printed "
           "statement on instances inside its hypotheses), **checked-derived** (the printed formula is not "
           "recoverable; the reconstruction checked instead is given), **checked-narrower** (the check covers "
           "less than the statement; what is narrower is given), **measured** (an experiment on an offline "
           "stand-in, never counted as checked: *reproduced* when the shape test of every claim measuring it passes "
           "in the run that made this page, *not reproduced* when one fails), "
           "**false** (the printed statement fails; the claim finds the counterexample and a corrected statement "
           "is registered next to it), **false-under-reading** (false under the reading named, with the verdict "
           "under the other reading), **not-checkable** (the reason is given), **open** (checkable, not checked "
           "yet). \"Asserted of checkable\" counts the statements with a verdict that can fail (checked in any "
           "form, or found false) among those that are not not-checkable. A statement's proof chain is what "
           "`fedtheory verify --explain CLAIM` walks.", "",
           render_totals(rows, citations), "",
           qualified_summary(rows), ""]
    for p in papers:
        out += [f"## {p.citation}", "", "| statement | where | what it says | status | claims, and what the "
                "status rests on | proof uses |", "|---|---|---|---|---|---|"]
        for r in rows:
            if r.paper != p.key:
                continue
            s = r.statement
            out.append(f"| {s.label} | {s.where} | {_cell(s.summary)} | {r.status} | {_cell(r.detail)} | "
                       f"{', '.join(s.depends_on)} |")
        out.append("")
    return "\n".join(out)


def qualified_summary(rows: Sequence[StatementCoverage]) -> str:
    """The sentence counting the statements that are checked only in a derived or narrower form, or only
    measured."""
    n = {s: sum(r.status == s for r in rows) for s in STATUSES}
    not_reproduced = sum(r.reproduced is False for r in rows)
    # a narrower check of a statement whose printed formula is lost is also of a reconstruction: say so
    rebuilt = sum(r.status == "checked-narrower" and bool(r.statement.reconstruction) for r in rows)
    also = (f"; {rebuilt} of these check a reconstruction too, the printed formula being lost" if rebuilt else "")
    return (f"Of {len(rows)} statements, {n['checked']} are checked as printed, {n['checked-derived']} in a form "
            f"derived by fedtheory (the printed formula is not recoverable; the reconstruction is given) and "
            f"{n['checked-narrower']} in a narrower form (what is narrower is given{also}); {n['false']} are false as "
            f"printed and {n['false-under-reading']} false under a named reading. {n['measured']} are *measured, "
            f"not asserted* (an experiment's shape: the paper's experiment re-run on offline data and scaled to a CPU, "
            f"or a small offline stand-in where none runs; never counted as checked), and "
            f"{not_reproduced} of these do not reproduce the paper's shape (the ledger's shape test fails).")


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
