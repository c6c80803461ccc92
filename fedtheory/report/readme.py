"""The README's numbers, generated from the ledger so that none is typed by hand.

The README marks each generated block with ``<!-- generated: NAME -->`` and ``<!-- /generated -->``; :func:`blocks`
renders every block from the registered claims (their expectations: a claim expected to hold that does not fails
``fedtheory verify`` and the test suite, so the expectations are the verdicts of a passing run), and
:func:`update_readme` rewrites them. ``python -m fedtheory.report.readme README.md docs/frameworks.md`` updates
the files; tests/test_readme.py and tests/report/test_frameworks.py fail when they are stale. The block
``framework-verdicts`` (README and docs/frameworks.md) is the third-party frameworks' verdict table
(:mod:`fedtheory.report.frameworks`, from docs/frameworks.md and benchmarks/frameworks/results/ of the checkout);
the block ``discrimination`` is the discrimination figure (:mod:`fedtheory.report.discrimination`, from
benchmarks/mutation/results/discrimination.json of the checkout).
"""
from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from typing import Iterable

from ..claims import Claim, load_all
from ..claims.registry import FALSE_KINDS
from ..coverage.statements import coverage, qualified_summary, render_totals, shape_verdicts
from ..papers import all_papers
from .discrimination import readme_block as discrimination_block
from .files import DEFAULT_OUT
from .findings import EXPECTED_STATUS, Verdict, closing_line, summary_line
from .frameworks import verdict_table
from .symbols import symbols

__all__ = ["ledger_counts", "blocks", "update_readme"]

_BLOCK = re.compile(r"(<!-- generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.S)


def ledger_counts(claims: Iterable[Claim]) -> dict[str, int]:
    """How many claims there are, and how many are expected to hold, are measurements, and record a false statement
    (each with its counterexample), split by kind (``false_printed``, ``false_reading``, ``false_ours``); ``neural``:
    the claims that need the torch extra to register."""
    claims = list(claims)
    by_expectation = Counter(c.expected for c in claims)
    by_kind = Counter(c.false_kind for c in claims if c.expected == "violated")
    return {"claims": len(claims), "hold": by_expectation["holds"], "measured": by_expectation["exploratory"],
            "false": by_expectation["violated"], "neural": sum(c.paper == "neural" for c in claims),
            "derived": sum(c.derived for c in claims), **{f"false_{k}": by_kind[k] for k in FALSE_KINDS}}


def _printed_statements(claims: Iterable[Claim]) -> set[tuple[str, str]]:
    """The (paper, statement) pairs that claims find false as printed."""
    return {(x.paper, x.label) for c in claims if c.expected == "violated" and c.false_kind == "printed"
            for x in c.citations}


#: The papers whose claims need the torch extra: without it they register nothing (README command 1).
TORCH_PAPERS = ("neural",)


def _expected_verdicts(claims: Iterable[Claim]) -> list[Verdict]:
    """The verdicts of a passing run: each claim with the status its expectation gives it."""
    return [Verdict(EXPECTED_STATUS[c.expected], c.false_kind, tuple(f"{x.paper}:{x.label}" for x in c.citations))
            for c in claims]


def _ledger_summary(claims: list[Claim]) -> str:
    n = ledger_counts(claims)
    printed = len(_printed_statements(claims))
    base = [c for c in claims if c.paper not in TORCH_PAPERS]
    verdicts = _expected_verdicts(base)
    return (f"`fedtheory verify` checks {n['claims']} claims from the five papers, the classic results they build "
            "on, the problem generators and the neural backend. With the `torch` extra, a passing run reports "
            f"{n['hold']} that hold, {n['measured']} measurements (recorded next to the papers' numbers, never failing "
            "the run; for a statement that is only measured, their shape test says whether the paper's experiment, "
            f"re-run offline, reproduces the paper's shape) and {n['false']} recorded false: {n['false_printed']} claims find {printed} of the "
            "papers' "
            f"statements false as printed, {n['false_reading']} find statements false under a named reading, and "
            f"{n['false_ours']} find fedtheory's own readings or folklore false (not statements of the papers). "
            "Each finds its counterexample, and a corrected statement is registered next to it.\n\n"
            f"README command 1 installs no `torch`, so the {n['claims'] - len(base)} claims that need it (paper "
            f"{', '.join(f'`{p}`' for p in TORCH_PAPERS)}) register nothing and it checks {len(base)} claims; a "
            f"passing run of it ends with these two lines:\n\n"
            f"```text\n{summary_line((v.status for v in verdicts), DEFAULT_OUT)}\n"
            f"{closing_line(verdicts, 0)}\n```\n")


def _cell(text: str) -> str:
    return symbols(text).replace("|", chr(92) + "|").replace("\n", " ")


def _cited(c: Claim) -> str:
    return "; ".join(f"{x.paper} {x.label}" for x in c.citations) or "-"


def _false_table(claims: list[Claim]) -> str:
    """Three tables: the papers' statements false as printed, those false under a named reading (with the verdict
    under the other reading), and fedtheory's own readings or folklore found false."""
    false = sorted((c for c in claims if c.expected == "violated"), key=lambda c: c.id)
    out = [f"**False as printed** ({len(_printed_statements(false))} statements):", "",
           "| statement | claim | the printed statement, and what fails |", "|---|---|---|"]
    out += [f"| {_cited(c)} | `{c.id}` | {_cell(c.statement)} |" for c in false if c.false_kind == "printed"]
    out += ["", "**False under a named reading** (the verdict under the other reading is given):", "",
            "| statement | claim | the reading, and the verdict under the other |", "|---|---|---|"]
    out += [f"| {_cited(c)} | `{c.id}` | {_cell(c.reading)} |" for c in false if c.false_kind == "reading"]
    out += ["", "**fedtheory's own readings or folklore found false** (not statements of the papers):", "",
            "| claim | the reading found false |", "|---|---|"]
    out += [f"| `{c.id}` | {_cell(c.statement)} |" for c in false if c.false_kind == "ours"]
    return "\n".join(out) + "\n"


def _coverage_totals(claims: list[Claim]) -> str:
    """The per-paper coverage totals and the sentence on derived, narrower and measured statements."""
    papers = all_papers()
    rows = coverage(papers, claims, shapes=shape_verdicts(claims, papers))
    return render_totals(rows, {p.key: p.key for p in papers}) + "\n\n" + qualified_summary(rows) + "\n"


#: The checkout this module sits in (an editable install); the command line uses the checkout of each file given.
ROOT = Path(__file__).resolve().parents[2]


def blocks(claims: Iterable[Claim] | None = None, root: Path | None = None) -> dict[str, str]:
    """Every generated block of the README by name; ``root`` is the checkout holding docs/frameworks.md and
    benchmarks/frameworks/results/ (default :data:`ROOT`)."""
    claims = list(load_all().values() if claims is None else claims)
    return {"ledger-summary": _ledger_summary(claims), "false-statements": _false_table(claims),
            "coverage-totals": _coverage_totals(claims), "framework-verdicts": verdict_table(root or ROOT),
            "discrimination": discrimination_block(root or ROOT)}


def update_readme(text: str, rendered: dict[str, str] | None = None) -> str:
    """``text`` with every generated block re-rendered; ValueError naming a block the README marks but this module
    does not generate."""
    rendered = blocks() if rendered is None else rendered

    def replace(m: re.Match) -> str:
        if m["name"] not in rendered:
            raise ValueError(f"the README marks a generated block {m['name']!r}; known: {sorted(rendered)}")
        return m.group(1) + rendered[m["name"]] + m.group(4)

    return _BLOCK.sub(replace, text)


def checkout_of(path: Path) -> Path:
    """The checkout a generated file belongs to: the nearest folder at or above ``path``'s holding
    docs/frameworks.md (README.md is at the root, docs/frameworks.md one level down); :data:`ROOT` if none."""
    return next((p for p in path.resolve().parents if (p / "docs" / "frameworks.md").is_file()), ROOT)


if __name__ == "__main__":  # pragma: no cover - a maintainer's command
    for path in map(Path, sys.argv[1:] or ["README.md"]):
        path.write_text(update_readme(path.read_text(), blocks(root=checkout_of(path))))
