"""What ``fedtheory verify`` says after its table: why each failing or recorded-false claim is what it is, and one
closing line that explains the exit status.

A claim that is ``violated-as-recorded`` records a false statement: its check finds the counterexample, as the
ledger expects, so it does not fail the run (exit 0) even though the word "violated" is on screen. The console
therefore shows, for each such claim and for each claim that fails the run, its statement and why (the kind of
false statement, the counterexample's measured value against its bound, or the error), and the last line says
what the exit status means with the counts of this run. The README states what README command 1 prints with the
same functions (:mod:`fedtheory.report.readme`), so its numbers cannot drift from the console's.
"""
from __future__ import annotations

import textwrap
from collections import Counter
from typing import Iterable, NamedTuple, Sequence

from ..claims.registry import FAILING_STATUSES, FALSE_KINDS, ClaimResult

__all__ = ["Verdict", "EXPECTED_STATUS", "FALSE_KIND_WORDS", "count_line", "summary_line", "closing_line",
           "render_findings"]


class Verdict(NamedTuple):
    """A claim's status in a run and, for a claim expected to be violated, its kind of false statement and the
    statements it cites ("paper:label"), so that statements found false as printed are counted once each."""

    status: str
    false_kind: str = ""
    cites: tuple[str, ...] = ()

    @classmethod
    def of(cls, result: ClaimResult) -> "Verdict":
        c = result.claim
        return cls(result.status, c.false_kind, tuple(f"{x.paper}:{x.label}" for x in c.citations))


#: The status a claim has in a passing run, by its expectation (``Claim.expected``).
EXPECTED_STATUS = {"holds": "holds", "violated": "violated-as-recorded", "exploratory": "measured"}
#: How each kind of false statement (:data:`~fedtheory.claims.registry.FALSE_KINDS`) is named on screen.
FALSE_KIND_WORDS = {"printed": "false as printed", "reading": "false under a named reading",
                    "ours": "fedtheory's own reading or folklore found false (not a statement of the paper)"}
#: The statuses that fail a run (``ClaimResult.failed``).
FAILING = FAILING_STATUSES
#: How the compared number is named, by the claim's kind (a bound's right-hand side, an identity's closed form).
_THEORY_WORD = {"bound": "bound", "tightness": "bound", "rate": "stated rate", "identity": "closed form",
                "fixed_point": "closed form", "invariant": "closed form"}


def count_line(statuses: Iterable[str]) -> str:
    """``"252 claims: 215 holds, 20 measured, 17 violated-as-recorded"``: how many claims have each status."""
    counts = Counter(statuses)
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"{sum(counts.values())} claims: {summary}"


def summary_line(statuses: Iterable[str], out: str) -> str:
    """The line before the last: the count of each status and where the reports went (``out``, the folder)."""
    return f"{count_line(statuses)}. Reports in {out}/claims.json and {out}/claims.md"


def closing_line(verdicts: Sequence[Verdict], exit_status: int, other_reasons: Sequence[str] = ()) -> str:
    """The run's last line: what its exit status means, with this run's counts.

    ``other_reasons`` are the failures that are not a claim's status (a counterexample found by ``--worst-case``,
    a verdict that differs from ``--compare``'s run), each a short phrase.
    """
    counts = Counter(v.status for v in verdicts)
    failing = [f"{counts[s]} {s}" for s in FAILING if counts[s]]
    if exit_status != 0:
        reasons = ([f"{sum(counts[s] for s in FAILING)} claim(s) fail ({', '.join(failing)}; each is shown above "
                    "with its statement and why)"] if failing else []) + list(other_reasons)
        return f"exit {exit_status}: " + "; ".join(reasons or ["see above"])
    parts = ["every claim expected to hold holds"]
    recorded = [v for v in verdicts if v.status == "violated-as-recorded"]
    if recorded:
        kinds = Counter(v.false_kind for v in recorded)
        printed = len({cite for v in recorded if v.false_kind == "printed" for cite in v.cites})
        split = [f"{_find(kinds['printed'])} {printed} of the papers' statements false as printed",
                 f"{_find(kinds['reading'])} statements false under a named reading",
                 f"{_find(kinds['ours'])} fedtheory's own readings or folklore false"]
        unstated = len(recorded) - sum(kinds[k] for k in FALSE_KINDS)  # a researcher's claim need not say
        split += [f"{_find(unstated)} statements false without a stated kind"] if unstated else []
        parts.append(f"the {len(recorded)} violated-as-recorded {_plural(len(recorded), 'claim finds', 'claims find')}"
                     f", as recorded, false statements (listed above): "
                     + ", ".join(text for k, text in zip((*FALSE_KINDS, ""), split) if kinds[k] or not k))
    if counts["measured"]:
        parts.append(f"the {counts['measured']} measured "
                     f"{_plural(counts['measured'], 'claim carries', 'claims carry')} no verdict")
    return "exit 0: " + "; ".join(parts)


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def _find(n: int) -> str:
    return f"{n} {_plural(n, 'finds', 'find')}"


def _why(result: ClaimResult) -> list[str]:
    """The lines saying why a failing or recorded-false claim has its status."""
    c = result.claim
    if result.error is not None:
        return [f"error: {result.error.strip().splitlines()[0]}"]
    if result.differs is not None:
        return [f"{result.differs}: the verdict is not about the paper's algorithm"]
    word = _THEORY_WORD.get(c.kind, "theory")
    violated = [e for e in result.evidence if not e.holds]
    shown = violated[0] if violated else (result.evidence[0] if result.evidence else None)
    at = (f"{shown.instance}: measured {shown.measured:.6g} against {word} {shown.theory:.6g}"
          if shown is not None else "no instance")
    n = f"at {len(violated)} of {len(result.evidence)} instances"
    if result.status == "violated-as-recorded":
        kind = FALSE_KIND_WORDS.get(c.false_kind, "recorded false (no kind of false statement stated)")
        lines = [kind + (f": {c.reading}" if c.false_kind == "reading" and c.reading else "")]
        return lines + [f"counterexample {n}: {at}"]
    if result.status == "COUNTEREXAMPLE-LOST":
        return [f"the recorded counterexample is lost: every instance holds ({len(result.evidence)}), e.g. {at}"]
    return [f"violated {n}: {at}"]


def render_findings(results: Sequence[ClaimResult], width: int) -> str:
    """For every claim that fails the run, then every claim that is violated-as-recorded: its id and status,
    its statement and why, indented under it and wrapped to ``width``; empty when there is none."""
    width = max(width, 40)
    groups = (("Claims that fail the run:", [r for r in results if r.failed]),
              ("Recorded false statements (violated-as-recorded: the check finds the counterexample the ledger "
               "expects, so they do not fail the run):", [r for r in results if r.status == "violated-as-recorded"]))
    lines: list[str] = []
    for title, group in groups:
        if not group:
            continue
        lines += ["", *textwrap.wrap(title, width)]
        for r in group:
            lines.append(f"  {r.claim.id}  {r.status}")
            for text in [r.claim.statement, *_why(r)]:
                lines += textwrap.wrap(text, width, initial_indent="      ", subsequent_indent="        ",
                                       break_on_hyphens=False) or []
    return "\n".join(lines)
