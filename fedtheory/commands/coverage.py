"""``fedtheory coverage``: per paper, how many numbered statements have each status (checked as printed, in a
derived or a narrower form, measured, false as printed or under a reading, not checkable, open); ``--json``
prints one record per statement, ``--write`` writes the full table (docs/coverage.md)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..claims import load_all
from ..coverage.statements import (
    ASSERTED,
    STATUSES,
    checked_share,
    coverage,
    render_json,
    render_markdown,
    render_totals,
    shape_verdicts,
    totals,
)
from ..papers import all_papers


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("coverage", help="Show which numbered statements of the papers the ledger checks.",
                       description="Per paper, count the numbered statements by status: " + ", ".join(STATUSES) +
                                   " (see docs/coverage.md). Runs the shape tests of the measured statements (their "
                                   "exploratory claims, a few seconds) to say whether each stand-in reproduces the "
                                   "paper's shape.")
    p.add_argument("--write", metavar="FILE", type=Path,
                   help="Write every statement with its status, its claims or the reason, and its proof chain as a "
                        "Markdown file (the project's docs/coverage.md is made this way).")
    p.add_argument("--json", action="store_true",
                   help='Print every statement as a record {"paper", "statement", "status", "claims", "note", '
                        '"reproduced"} under a "statements" key, instead of the table.')
    p.add_argument("--open", action="store_true", help="List the statements that are checkable but not checked.")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    papers = all_papers()
    try:
        claims = list(load_all().values())
        rows = coverage(papers, claims, shapes=shape_verdicts(claims, papers))
    except ValueError as exc:  # a claim cites a statement missing from its paper's inventory
        print(f"fedtheory coverage: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(render_json(rows))
    else:
        print(render_totals(rows, {p.key: p.key for p in papers}))
    if args.open and not args.json:  # the JSON has every open statement already
        for r in rows:
            if r.status == "open":
                print(f"open: {r.paper}:{r.statement.label} ({r.statement.where}) {r.statement.summary}")
    if args.write is not None:
        if args.write.parent.exists() and not args.write.parent.is_dir():
            print(f"fedtheory coverage: --write {args.write}: {args.write.parent} is not a folder", file=sys.stderr)
            return 2
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(render_markdown(papers, rows))
    if args.json:
        return 0
    t = totals(rows)
    summed = {key: sum(x[key] for x in t.values()) for key in (*STATUSES, "total")}
    asserted = sum(summed[s] for s in ASSERTED)
    where = f"; table in {args.write}" if args.write is not None else ""
    print(f"{summed['total']} statements: {asserted} with an asserted verdict ({checked_share(summed):.0%} of the "
          f"{summed['total'] - summed['not-checkable']} checkable), {summed['measured']} only measured, "
          f"{summed['open']} open, {summed['not-checkable']} not checkable{where}")
    return 0
