"""``fedtheory verify``: run the claims ledger and report every claim with its tightness."""
from __future__ import annotations

import argparse
import json
import math
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


def table_rows(results: list[ClaimResult]) -> list[tuple[str, ...]]:
    return [(r.claim.id, r.claim.paper, r.claim.reference, r.status, str(len(r.evidence)),
             _fmt(r.worst_tightness)) for r in results]


def render_table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(header), line(tuple("-" * w for w in widths)), *(line(r) for r in rows)])


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


def _report_comparison(results: list[ClaimResult], path: Path) -> int:
    try:
        reference = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        print(f"fedtheory verify: cannot read --compare {path}: {exc}", file=sys.stderr)
        return 2
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


def render_worst_case(results: list[ClaimResult], worst: dict[str, dict]) -> str:
    rows = []
    for r in results:
        w = worst.get(r.claim.id)
        if w is None:
            continue
        rows.append((r.claim.id, r.status, _fmt(r.worst_tightness), _fmt(w["adversarial_tightness"]),
                     _fmt(w["pep_worst_case"]), json.dumps(w["adversarial_instance"])[:90]))
    header = ("claim", "status", "default tightness", "adversarial tightness", "PEP worst case",
              "instance attaining it")
    return "\nWorst case over each claim's instance space:\n" + render_table(rows, header)


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
    worst = run_worst_case(results, args.evaluations) if args.worst_case else None
    write_reports(results, out, worst)
    n_fail = sum(r.failed for r in results)
    counts = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    print(f"\n{len(results)} claims: {summary}. Reports in {out}/claims.json and {out}/claims.md")
    status = 1 if n_fail else 0
    if worst is not None:
        print(render_worst_case(results, worst))
        found = [cid for cid, w in worst.items() if w["counterexample_to_expected"]]
        for cid in found:
            print(f"COUNTEREXAMPLE FOUND by the search for {cid}: {worst[cid]['adversarial_instance']}")
        status = max(status, 1 if found else 0)
    if args.compare is not None:
        status = max(status, _report_comparison(results, args.compare))
    return status
