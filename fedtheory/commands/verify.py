"""``fedtheory verify``: run the claims ledger and report every claim with its tightness."""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import textwrap
from pathlib import Path

from ..claims.registry import PAPERS, Claim, ClaimResult, evaluate, select


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
    p.add_argument("--explain", metavar="ID",
                   help="run claim ID and every claim along the proof chains of the statements it cites (their "
                        "lemmas, in proof order), and name the first link that fails")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--worst-case", action="store_true",
                   help="also search each claim's instance space for the largest measured/bound (adversarial "
                        "tightness; claims that declare a space), and report exact PEP worst cases where one applies")
    p.add_argument("--evaluations", type=int, default=200,
                   help="check evaluations per claim for --worst-case (default: %(default)s)")
    p.add_argument("--compare", metavar="CLAIMS_JSON", type=Path,
                   help="compare with the claims.json of another run (e.g. another machine or BLAS kernel): "
                        "exit 1 if any claim's status or any instance's verdict differs; report how far the "
                        "measured numbers moved")
    p.set_defaults(func=main)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


#: The ledger table's columns: the claim id names its paper (``fedred.dane.lyapunov``), so there is no paper
#: column; the reference is cut to what fits (the full one is in claims.md and ``--list``).
TABLE_HEADER = ("claim", "status", "n", "tightness", "reference")


def table_rows(results: list[ClaimResult]) -> list[tuple[str, ...]]:
    return [(r.claim.id, r.status, str(len(r.evidence)), _fmt(r.worst_tightness), r.claim.reference)
            for r in results]


def terminal_width() -> int:
    """The terminal's width (COLUMNS, else the terminal, else 100 when the output is not a terminal)."""
    return shutil.get_terminal_size((100, 24)).columns


def render_table(rows: list[tuple[str, ...]], header: tuple[str, ...], width: int | None = None,
                 cut: int | None = None, wrap: int | None = 0) -> str:
    """A plain-text table at most ``width`` characters wide (default: unlimited).

    Column ``cut`` (default: the last) is shortened with an ellipsis, down to nothing, to fit; if the rest is
    still too wide, column ``wrap`` (default: the first, the claim ids) wraps after dots onto continuation lines
    rather than losing characters of an id.
    """
    ncol = len(header)
    cut = ncol - 1 if cut is None else cut
    widths = [max([len(header[i]), *(len(r[i]) for r in rows)]) for i in range(ncol)]
    if width is not None:
        others = sum(widths) - widths[cut] + 2 * (ncol - 1)
        widths[cut] = max(0, min(widths[cut], width - others))
        if wrap is not None and others + widths[cut] > width:
            widths[wrap] = max(12, widths[wrap] - (others + widths[cut] - width))

    def cells(row: tuple[str, ...]) -> list[list[str]]:
        out = []
        for i, text in enumerate(row):
            if i == cut and len(text) > widths[i]:
                text = text[:widths[i] - 1] + "…" if widths[i] > 1 else ""
            out.append(_wrap_at_dots(text, widths[i]) if i == wrap else [text])
        return out

    lines = []
    for row in [header, tuple("-" * w for w in widths), *rows]:
        parts = cells(row)
        for k in range(max(len(p) for p in parts)):
            lines.append("  ".join((p[k] if k < len(p) else "").ljust(w) for p, w in zip(parts, widths)).rstrip())
    return "\n".join(lines)


def _wrap_at_dots(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken after dots where possible (claim ids)."""
    lines: list[str] = []
    while len(text) > width:
        k = text.rfind(".", 0, width)
        k = width if k < 0 else k + 1
        lines.append(text[:k])
        text = "  " + text[k:]  # the continuation is indented so it reads as part of the same id
    return [*lines, text]


def write_reports(results: list[ClaimResult], out: Path, worst_case: dict[str, dict] | None = None) -> None:
    """claims.json and claims.md; ``worst_case`` adds each searched claim's ``adversarial_tightness``,
    ``adversarial_instance`` and ``pep_worst_case`` to its JSON record."""
    out.mkdir(parents=True, exist_ok=True)
    records = [{**r.as_dict(), **(worst_case or {}).get(r.claim.id, {})} for r in results]
    (out / "claims.json").write_text(json.dumps(records, indent=2))
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


#: Measured numbers that moved by more than this (relative) between two runs are listed by ``--compare``:
#: kernel rounding moves a well-conditioned measurement by ~1e-15..1e-12, so 1e-6 singles out measurements that
#: count something at a rounding-level threshold (rounds to a floor, non-zeros at a cut-off).
COMPARE_REPORT_RTOL = 1e-6
#: Numbers below this fraction of their scale (max(1, |theory|)) are rounding residue: an identity's error of
#: 1e-16, a gap already at its floor. Every measured number comes from double-precision arithmetic on data of
#: size O(scale), so below 1e-12 of it the value is dominated by rounding (tens of ulps times a condition
#: number), and its relative change between two BLAS kernels carries no information: counted, not listed.
COMPARE_ROUNDING_FLOOR = 1e-12


def _relative_change(a: object, b: object) -> float:
    if not (isinstance(a, (int, float)) and isinstance(b, (int, float))):  # None, strings, lists: all or nothing
        return 0.0 if a == b else float("inf")
    if math.isnan(a) or math.isnan(b):
        return 0.0 if math.isnan(a) and math.isnan(b) else float("inf")
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def _by_occurrence(evidence: list[dict]) -> dict[tuple[str, int], dict]:
    """Evidence keyed by (instance description, how many times it occurred before): descriptions can repeat."""
    seen: dict[str, int] = {}
    out = {}
    for e in evidence:
        k = seen.get(e["instance"], 0)
        seen[e["instance"]] = k + 1
        out[(e["instance"], k)] = e
    return out


def compare_runs(results: list[dict], reference: list[dict]) -> tuple[list[str], list[tuple[float, str, bool]]]:
    """(verdict differences, [(relative change, where)] of measured numbers) between two claims.json lists.

    Verdicts are claim statuses and per-instance ``holds`` flags, matched by claim id and instance
    description; claims present in only one run are verdict differences too. Each moved number carries a flag:
    True when both values are rounding residue (:func:`_rounding_level`).
    """
    ref = {r["id"]: r for r in reference}
    diffs: list[str] = []
    moved: list[tuple[float, str]] = []
    for r in results:
        other = ref.pop(r["id"], None)
        if other is None:
            diffs.append(f"{r['id']}: not in the reference run")
            continue
        if r["status"] != other["status"]:
            diffs.append(f"{r['id']}: status {r['status']} here, {other['status']} in the reference")
        theirs = _by_occurrence(other["evidence"])
        for key, e in _by_occurrence(r["evidence"]).items():
            o = theirs.get(key)
            if o is None:
                diffs.append(f"{r['id']}: instance {e['instance']} not in the reference")
                continue
            if e["holds"] != o["holds"]:
                diffs.append(f"{r['id']} [{e['instance']}]: holds={e['holds']} here, {o['holds']} in the reference")
            for field in ("measured", "theory"):
                change = _relative_change(e[field], o[field])
                if change > 0:
                    where = f"{r['id']} [{e['instance']}] {field}: {e[field]!r} vs {o[field]!r}"
                    moved.append((change, where, _rounding_level(e[field], o[field], e["theory"])))
    diffs += [f"{cid}: only in the reference run" for cid in ref]
    return diffs, sorted(moved, reverse=True)


def _rounding_level(a: object, b: object, theory: object) -> bool:
    """Both values below :data:`COMPARE_ROUNDING_FLOOR` of the scale max(1, |theory|)."""
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (a, b)):
        return False
    scale = max(1.0, abs(theory)) if isinstance(theory, (int, float)) and math.isfinite(theory) else 1.0
    return max(abs(a), abs(b)) <= COMPARE_ROUNDING_FLOOR * scale


def _report_comparison(results: list[ClaimResult], reference: list[dict], path: Path) -> int:
    diffs, moved = compare_runs([r.as_dict() for r in results], reference)
    rounding = [m for m in moved if m[2]]
    moved = [m for m in moved if not m[2]]
    large = [(c, w) for c, w, _ in moved if c > COMPARE_REPORT_RTOL]
    print(f"compared with {path}: {len(diffs)} verdict differences; {len(moved)} measured numbers differ, "
          f"largest relative change {moved[0][0] if moved else 0.0:.2g}; {len(large)} above {COMPARE_REPORT_RTOL:g}; "
          f"{len(rounding)} more differ at rounding level (below {COMPARE_ROUNDING_FLOOR:g} of their scale)")
    for d in diffs:
        print(f"  VERDICT DIFFERS: {d}")
    for change, where in large[:20]:
        print(f"  moved {change:.2g}: {where}")
    return 1 if diffs else 0


def run_worst_case(results: list[ClaimResult], evaluations: int) -> dict[str, dict]:
    """Adversarial search on every claim that declares an instance space (fedtheory.worstcase)."""
    from ..worstcase import adversarial_search, pep_worst_case

    out: dict[str, dict] = {}
    for r in results:
        if r.claim.space is None or r.error is not None or r.worst_tightness is None:
            continue  # no space declared, or no bound to approach (identity, rate, ... claims)
        search = adversarial_search(r.claim, evaluations=evaluations, seed=0)
        record = {**search.as_dict(), "pep_worst_case": pep_worst_case(r.claim)}
        # A point where a claim expected to hold fails its own check is a counterexample (its verdict, not
        # the ratio alone, decides: some checks compare with a stated relative tolerance).
        record["counterexample_to_expected"] = r.claim.expected == "holds" and search.counterexample
        out[r.claim.id] = record
    return out


def render_worst_case(results: list[ClaimResult], worst: dict[str, dict], width: int | None = None) -> str:
    rows = []
    for r in results:
        w = worst.get(r.claim.id)
        if w is None:
            continue
        rows.append((r.claim.id, r.status, _fmt(r.worst_tightness), _fmt(w["adversarial_tightness"]),
                     _fmt(w["pep_worst_case"]), json.dumps(w["adversarial_instance"])))
    header = ("claim", "status", "default tightness", "adversarial tightness", "PEP worst case",
              "instance attaining it")
    return "\nWorst case over each claim's instance space:\n" + render_table(rows, header, width=width)


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
        from ..papers.chain import explain

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
    if problem is not None:
        print(f"fedtheory verify: {problem}", file=sys.stderr)
        return 2
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
    print(render_table(table_rows(results), TABLE_HEADER, width=width))
    worst = run_worst_case(results, args.evaluations) if args.worst_case else None
    write_reports(results, out, worst)
    status = 1 if any(r.failed for r in results) else 0
    if worst is not None:
        print(render_worst_case(results, worst, width))
        found = [cid for cid, w in worst.items() if w["counterexample_to_expected"]]
        for cid in found:
            print(f"COUNTEREXAMPLE FOUND by the search for {cid}: {worst[cid]['adversarial_instance']}")
        status = max(status, 1 if found else 0)
    if reference is not None:
        status = max(status, _report_comparison(results, reference, args.compare))
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    # The last line is the one-line summary, whatever came before it.
    print(f"\n{len(results)} claims: {summary}. Reports in {out}/claims.json and {out}/claims.md")
    return status
