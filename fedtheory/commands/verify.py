"""``fedtheory verify``: run the claims ledger and report every claim with its tightness."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..claims.registry import PAPERS, ClaimResult, evaluate, select


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help="check every registered paper claim numerically",
                       description="Run every registered claim on its default instances, print a table, and "
                                   "write claims.json and claims.md. Exit status 1 if a claim expected to hold "
                                   "is violated, a recorded counterexample is lost, or a check errors.")
    p.add_argument("--paper", action="append", choices=PAPERS, help="only this paper's claims (repeatable)")
    p.add_argument("--claim", action="append", metavar="ID", help="only this claim (repeatable)")
    p.add_argument("--thorough", action="store_true", help="more and larger instances")
    p.add_argument("--out", default="fedtheory-claims", help="output folder (default: %(default)s)")
    p.add_argument("--list", action="store_true", help="list the selected claims and exit")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=main)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def table_rows(results: list[ClaimResult]) -> list[tuple[str, ...]]:
    return [(r.claim.id, r.claim.paper, r.claim.reference, r.status, str(len(r.evidence)),
             _fmt(r.worst_tightness)) for r in results]


def render_table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(header), line(tuple("-" * w for w in widths)), *(line(r) for r in rows)])


def write_reports(results: list[ClaimResult], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "claims.json").write_text(json.dumps([r.as_dict() for r in results], indent=2))
    lines = ["# fedtheory claims ledger", "",
             "| claim | paper | reference | status | instances | worst tightness | statement |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        c = r.claim
        lines.append(f"| `{c.id}` | {c.paper} | {c.reference} | {r.status} | {len(r.evidence)} | "
                     f"{_fmt(r.worst_tightness)} | {c.statement.replace('|', '/')} |")
    failures = [r for r in results if r.status != "holds"]
    if failures:
        lines += ["", "## Details of claims that do not simply hold", ""]
        for r in failures:
            lines.append(f"### `{r.claim.id}`: {r.status}")
            if r.error:
                lines.append(f"```\n{r.error}\n```")
            for e in r.evidence:
                if not e.holds or r.claim.expected != "holds":
                    lines.append(f"- {e.instance}: measured {_fmt(e.measured)}, theory {_fmt(e.theory)}, "
                                 f"holds={e.holds} {dict(e.details) if e.details else ''}")
            lines.append("")
    (out / "claims.md").write_text("\n".join(lines) + "\n")


def main(args: argparse.Namespace) -> int:
    try:
        claims = select(args.paper, args.claim)
    except ValueError as exc:
        print(f"fedtheory verify: {exc}", file=sys.stderr)
        return 2
    if args.list:
        for c in claims:
            print(f"{c.id:55s} {c.paper:14s} {c.reference}")
        return 0
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        tqdm = None
    iterator = claims if (args.quiet or tqdm is None) else tqdm(claims, desc="claims", unit="claim",
                                                                 file=sys.stderr)
    results = []
    for c in iterator:
        if hasattr(iterator, "set_postfix_str"):
            iterator.set_postfix_str(c.id[-40:])
        results.append(evaluate(c, thorough=args.thorough))
    header = ("claim", "paper", "reference", "status", "instances", "worst tightness")
    print(render_table(table_rows(results), header))
    out = Path(args.out)
    write_reports(results, out)
    n_fail = sum(r.failed for r in results)
    counts = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    print(f"\n{len(results)} claims: {summary}. Reports in {out}/claims.json and {out}/claims.md")
    return 1 if n_fail else 0
