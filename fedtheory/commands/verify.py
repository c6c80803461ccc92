"""``fedtheory verify``: run the claims ledger and report every claim with its tightness."""
from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from pathlib import Path

from ..claims import PAPERS, Claim, ClaimResult, select
from ..coverage.chain import explain
from ..experiments.command import add_arguments as add_experiment_arguments
from ..experiments.command import run_selected, selected_statements
from ..ledger import SCALE_EXTRA_HINT, RunEstimate, available_cores, dask_client_class, run_claims, run_worst_case
from ..optional import MissingExtra
from ..report import (
    COMPARE_ABSOLUTE_FLOOR,
    COMPARE_REPORT_RTOL,
    TABLE_HEADER,
    compare_runs,
    render_table,
    render_worst_case,
    table_rows,
    terminal_width,
    write_reports,
)
from ..report.files import DEFAULT_OUT
from ..report.findings import Verdict, closing_line, render_findings, summary_line
from ..report.html import write_html_report
from ..report.table import REFERENCE_LINES, REFERENCE_MIN_WIDTH


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help="Check every claim of the ledger numerically and report its tightness.",
                       description="Run every registered claim on its default instances, print a table, and "
                                   "write claims.json and claims.md. Exit status 1 if a claim expected to hold "
                                   "is violated, a recorded counterexample is lost, or a check errors.")
    p.add_argument("--paper", action="append", choices=PAPERS, help="Only this paper's claims (repeatable).")
    p.add_argument("--claim", action="append", metavar="ID", help="Only this claim (repeatable).")
    p.add_argument("--thorough", action="store_true", help="More and larger instances.")
    p.add_argument("--out", default=DEFAULT_OUT, help="Output folder (default: %(default)s).")
    p.add_argument("--list", action="store_true", help="List the selected claims and exit.")
    p.add_argument("--explain", metavar="ID",
                   help="Run claim ID and every claim along the proof chains of the statements it cites (their "
                        "lemmas, in proof order), and name the first link that fails.")
    p.add_argument("--quiet", action="store_true", help="No progress bar.")
    p.add_argument("--html", action="store_true",
                   help="Also write the HTML report (index.html and a page per paper) next to claims.json.")
    p.add_argument("--worst-case", action="store_true",
                   help="Also search each claim's instance space for the largest measured/bound (adversarial "
                        "tightness; claims that declare a space), and report exact PEP worst cases where one applies.")
    p.add_argument("--evaluations", type=int, default=200,
                   help="Check evaluations per claim for --worst-case (default: %(default)s).")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="Run the claims in N worker processes (default: every core this process may use, here "
                        f"{available_cores()}; 1 runs them in this process); the reports are the same.")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="Run the claims on the Dask cluster at ADDRESS (tcp://host:port); needs "
                        f"{SCALE_EXTRA_HINT}.")
    add_experiment_arguments(p)
    p.add_argument("--compare", metavar="CLAIMS_JSON", type=Path,
                   help="Compare with the claims.json of another run (e.g. another machine or BLAS kernel): "
                        "exit 1 if any claim's status, any instance's verdict or any instance's details keys "
                        "differ; list the measured numbers that moved by more than both a relative and an "
                        "absolute floor (smaller changes are rounding residue, counted only).")
    p.set_defaults(func=main)


def _report_comparison(results: list[ClaimResult], reference: list[dict], path: Path) -> int:
    """Print how this run compares with ``reference``; the number of differences (verdicts, record shapes)."""
    diffs, changed = compare_runs([r.as_dict() for r in results], reference)
    moved = [(change, where) for change, where, residue in changed if not residue]
    residue = len(changed) - len(moved)
    print(f"compared with {path}: {len(diffs)} differences in verdicts or record keys; {len(moved)} measured "
          f"numbers moved (by more than {COMPARE_REPORT_RTOL:g} of themselves and {COMPARE_ABSOLUTE_FLOOR:.2g} of "
          f"their scale), largest relative change {moved[0][0] if moved else 0.0:.2g}; {residue} more differ by "
          "rounding residue")
    for d in diffs:
        print(f"  {'KEYS DIFFER' if 'details keys differ' in d else 'VERDICT DIFFERS'}: {d}")
    for change, where in moved[:20]:
        print(f"  moved {change:.2g}: {where}")
    return len(diffs)


def _prepare_out(out: Path) -> str | None:
    """Create the output folder before any claim runs; the reason it cannot be used, or None."""
    for folder in (out, *out.parents):
        if folder.exists() and not folder.is_dir():
            return f"--out {out}: {folder} is a file, not a folder"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"--out {out}: cannot create the folder ({exc.strerror or exc})"
    if not os.access(out, os.W_OK):
        return f"--out {out}: the folder is not writable"
    return None


def _read_reference(path: Path) -> list[dict] | str:
    """The claims.json of another run, or why it cannot be read."""
    try:
        reference = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return f"cannot read --compare {path}: {exc}"
    if not isinstance(reference, list):
        return f"--compare {path}: not a claims.json (expected a list of claim records)"
    return reference


def _seconds_of(records: list[dict] | str | None) -> dict[str, float]:
    """{claim id: seconds} of a claims.json (empty when there is none or it cannot be read)."""
    if not isinstance(records, list):
        return {}
    return {r["id"]: r["seconds"] for r in records
            if isinstance(r, dict) and isinstance(r.get("id"), str) and isinstance(r.get("seconds"), (int, float))}


class _ProgressBar:
    """A progress bar over the claims (tqdm, on stderr) whose time left is :class:`RunEstimate`'s: from the
    previous run's seconds per claim, so the first estimate is the previous run's time."""

    def __init__(self, claims: list[Claim], seconds: dict[str, float], jobs: int) -> None:
        from tqdm import tqdm  # here, not at the top: tqdm (0.1 s) only draws the progress bar

        self.estimate = RunEstimate([c.id for c in claims], seconds, max(1, min(jobs, len(claims))))
        first = self.estimate.remaining(0.0)
        self.bar = tqdm(total=len(claims), desc="claims", unit="claim", file=sys.stderr,
                        postfix=None if first is None else f"~{tqdm.format_interval(first)} left by the last run",
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]")

    def done(self, claim_id: str) -> None:
        self.estimate.finished(claim_id)
        left = self.estimate.remaining(self.bar.format_dict["elapsed"])
        self.bar.set_postfix_str(f"{'?' if left is None else '~' + self.bar.format_interval(left)} left, "
                                 f"{claim_id[-40:]}", refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def _run_experiments(args: argparse.Namespace, out: Path, claims: list[Claim]) -> list[Claim] | None:
    """Run the neural experiments (``--experiments``); the claims to run then: those selected, or without
    --paper/--claim the ones judging the experiments (the exploratory claims in the paper's setting, without
    ``narrower``, citing the experiments' statements). None (after one line) when they cannot run."""
    try:
        names = run_selected(args.paper, args, out)
    except (MissingExtra, ValueError) as exc:
        print(f"fedtheory verify: {exc}", file=sys.stderr)
        return None
    if args.paper or args.claim:
        return claims
    statements = selected_statements(names)
    return [c for c in claims if c.expected == "exploratory" and not c.narrower
            and any((x.paper, x.label) in statements for x in c.citations)]


def _list(claims: list[Claim], width: int) -> str:
    """Each selected claim: its id, paper and the numbered statements it cites, then its full reference."""
    lines = []
    for c in claims:
        cites = ", ".join(x.label if x.paper == c.paper else f"{x.paper}:{x.label}" for x in c.citations)
        lines.append(f"{c.id}  [{c.paper}{'; ' + cites if cites else ''}]")
        lines += textwrap.wrap(c.reference, width=max(width, 40), initial_indent="    ", subsequent_indent="    ")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    try:
        claims = select(args.paper, args.claim)
    except ValueError as exc:
        print(f"fedtheory verify: {exc}", file=sys.stderr)
        return 2
    width = terminal_width()
    if args.list:
        print(_list(claims, width))
        return 0
    if args.explain is not None:
        try:
            explanation = explain(args.explain, thorough=args.thorough)
        except ValueError as exc:
            print(f"fedtheory verify: {exc}", file=sys.stderr)
            return 2
        print(explanation.render())
        return 1 if explanation.result.failed else 0
    # Everything that can be refused is refused before the first claim runs (a full run takes minutes).
    out = Path(args.out)
    problem = _prepare_out(out)
    reference = _read_reference(args.compare) if args.compare is not None else None
    if isinstance(reference, str):
        problem = problem or reference
    jobs = available_cores() if args.jobs is None else args.jobs
    if jobs < 1:
        problem = problem or f"--jobs must be >= 1 (1 runs the claims in this process), got {jobs}"
    if args.scheduler is not None:
        try:
            dask_client_class()
        except ImportError:
            problem = problem or f"--scheduler needs dask.distributed: {SCALE_EXTRA_HINT}"
    if problem is not None:
        print(f"fedtheory verify: {problem}", file=sys.stderr)
        return 2
    if args.experiments:
        claims = _run_experiments(args, out, claims)
        if claims is None:
            return 2
    # The previous run in --out (or the compared run), when there is one: its seconds per claim start the
    # longest claims first and give the progress bar its first estimate.
    seconds = _seconds_of(_read_reference(out / "claims.json")) or _seconds_of(reference)
    bar = None if args.quiet else _ProgressBar(claims, seconds, jobs if args.scheduler is None else 1)
    results = run_claims(claims, thorough=args.thorough, jobs=jobs, scheduler=args.scheduler, seconds=seconds,
                         progress=None if bar is None else bar.done)
    if bar is not None:
        bar.close()
    print(render_table(table_rows(results), TABLE_HEADER, width=width, cut_lines=REFERENCE_LINES,
                       cut_min=REFERENCE_MIN_WIDTH))
    findings = render_findings(results, width)
    if findings:
        print(findings)
    worst = (run_worst_case(results, args.evaluations, jobs=jobs, scheduler=args.scheduler)
             if args.worst_case else None)
    write_reports(results, out, worst)
    if args.html:
        write_html_report(out / "claims.json")
    status = 1 if any(r.failed for r in results) else 0
    other_reasons = []
    if worst is not None:
        print(render_worst_case(results, worst, width))
        found = [cid for cid, w in worst.items() if w["counterexample_to_expected"]]
        for cid in found:
            print(f"COUNTEREXAMPLE FOUND by the search for {cid}: {worst[cid]['adversarial_instance']}")
        if found:
            status = 1
            other_reasons.append(f"the worst-case search found a counterexample to {len(found)} claim(s) expected "
                                 "to hold")
    if reference is not None:
        differences = _report_comparison(results, reference, args.compare)
        if differences:
            status = 1
            other_reasons.append(f"{differences} verdict(s) or record key(s) differ from {args.compare}")
    print("\n" + summary_line((r.status for r in results), str(out)))
    # The last line explains the exit status, whatever came before it.
    print(closing_line([Verdict.of(r) for r in results], status, other_reasons))
    return status
