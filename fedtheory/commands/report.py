"""``fedtheory report``: the HTML site of a claims.json (index, one page per paper, figures), for reading in a
browser instead of claims.md."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..report.html import write_site
from ..report.ledger import ClaimsFileError, read_claims


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="Write the HTML report of a claims.json.",
                       description="Write a static, self-contained HTML site of a ledger run: an index with the "
                                   "coverage of every paper's statements, and a page per paper with every "
                                   "statement, its proof chain, and every claim with its figures. Renders from "
                                   "the claims.json alone (plus the installed papers' inventories), so it works "
                                   "on a ledger from another machine. Exit status 2 if the file is not a "
                                   "readable claims.json.")
    p.add_argument("claims_json", metavar="CLAIMS_JSON", type=Path, help="A claims.json from `fedtheory verify`.")
    p.add_argument("--out", type=Path, help="Output folder (default: the folder of CLAIMS_JSON).")
    p.add_argument("--quiet", action="store_true", help="No progress bar.")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    try:
        records = read_claims(args.claims_json)
    except ClaimsFileError as exc:
        print(f"fedtheory report: {exc}", file=sys.stderr)
        return 2
    out = args.claims_json.parent if args.out is None else args.out
    from tqdm import tqdm  # here, not at the top: tqdm (0.1 s) only draws the progress bar

    # the same bar as `fedtheory verify`'s (on stderr, none with --quiet): one step per claim drawn
    bar = None if args.quiet else tqdm(total=len(records), desc="report", unit="claim", file=sys.stderr)

    def done(claim_id: str) -> None:
        if bar is not None:
            bar.set_postfix_str(claim_id[-40:], refresh=False)
            bar.update(1)

    try:
        summary = write_site(records, out, source=args.claims_json.name, progress=done)
    except OSError as exc:
        print(f"fedtheory report: --out {out}: cannot write the site ({exc.strerror or exc})", file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.close()
    print(f"{summary.claims} claims, {summary.claims_with_figure} with a figure ({summary.figures} figures); "
          f"{len(summary.pages)} pages, {summary.bytes / 1e6:.1f} MB in {time.perf_counter() - start:.0f} s: "
          f"{summary.out / 'index.html'}")
    return 0
