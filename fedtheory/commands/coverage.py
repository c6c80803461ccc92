"""``fedtheory coverage``: per paper, how many numbered statements the ledger checks, records false, cannot
check (and why), and has not checked yet; ``--write`` writes the full table (docs/coverage.md)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..claims import load_all
from ..papers import all_papers
from ..papers.coverage import checked_share, coverage, render_markdown, render_totals, totals


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("coverage", help="Show which numbered statements of the papers the ledger checks.",
                       description="Per paper, count the numbered statements the ledger checks, records false, "
                                   "cannot check (with the reason) and has not checked yet.")
    p.add_argument("--write", metavar="FILE", type=Path,
                   help="Write every statement with its status, its claims or the reason, and its proof chain as a "
                        "Markdown file (the project's docs/coverage.md is made this way).")
    p.add_argument("--open", action="store_true", help="List the statements that are checkable but not checked.")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    papers = all_papers()
    try:
        rows = coverage(papers, load_all().values())
    except ValueError as exc:  # a claim cites a statement missing from its paper's inventory
        print(f"fedtheory coverage: {exc}", file=sys.stderr)
        return 2
    print(render_totals(rows, {p.key: p.key for p in papers}))
    if args.open:
        for r in rows:
            if r.status == "open":
                print(f"open: {r.paper}:{r.statement.label} ({r.statement.where}) {r.statement.summary}")
    if args.write is not None:
        if args.write.parent.exists() and not args.write.parent.is_dir():
            print(f"fedtheory coverage: --write {args.write}: {args.write.parent} is not a folder", file=sys.stderr)
            return 2
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(render_markdown(papers, rows))
    t = totals(rows)
    all_statements = sum(x["total"] for x in t.values())
    covered = sum(x["checked"] + x["false"] for x in t.values())
    not_checkable = sum(x["not checkable"] for x in t.values())
    share = checked_share({"total": all_statements, "not checkable": not_checkable, "checked": covered, "false": 0})
    where = f"; table in {args.write}" if args.write is not None else ""
    print(f"{all_statements} statements: {covered} checked or recorded false ({share:.0%} of the "
          f"{all_statements - not_checkable} checkable), {not_checkable} not checkable{where}")
    return 0
