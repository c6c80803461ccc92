"""Self-check of the slip catalogue: does every slip change some run of the ledger?

Usage: ``python benchmarks/mutation/catalogue_check.py [--known results.json] [--out FILE]``.

Cheaper than the discrimination run, and over the whole ledger: each claim with a verdict is run once with the
slipped methods line-traced (:class:`slips.LineTrace`), which tells which slips its run *reaches* (executes an
edited line of); then, for each slip not already known live (``--known``: a discrimination results file, whose
live cells count), the claims that reach it are run in shadow mode (the slip beside the faithful code, the
faithful results returned: :class:`slips.SlipPatch`) until one shows it live. A slip reached by no claim, or
reached but never live, is a catalogue bug (exit 1). Writes ``results/catalogue_check.json``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from discrimination import PASSING, _evaluate, clear_caches, family_classes  # noqa: E402
from slip_catalogue import SLIPS  # noqa: E402
from slips import LineTrace, SlipPatch, faithful_function  # noqa: E402


def reached_by(claims: list[Any], slips: list[Any]) -> dict[str, list[str]]:
    """Slip name -> the claims (in ledger order) whose faithful run executes one of its edited lines."""
    out: dict[str, list[str]] = {s.name: [] for s in slips}
    for c in claims:
        trace = LineTrace([faithful_function(s) for s in slips])
        clear_caches()
        with trace:
            r = _evaluate(c, 120.0)
        if r.status not in PASSING:
            continue
        for s in slips:
            if trace.reached(s):
                out[s.name].append(c.id)
    return out


def _entry(s: Any) -> tuple[type, str] | None:
    for cls, method in family_classes().values():
        if issubclass(s.cls, cls) or issubclass(cls, s.cls):
            return cls, method
    return None


def live_on(s: Any, claims: dict[str, Any], candidates: list[str]) -> tuple[str | None, str | None]:
    """The first candidate claim on which the slip is live (shadow run), and a variant error if one showed."""
    for cid in candidates:
        clear_caches()
        with SlipPatch(s, entry=_entry(s), shadow=True) as patch:
            _evaluate(claims[cid], 120.0)
        if patch.bug:
            return None, f"{cid}: {patch.bug}"
        if patch.live:
            return cid, None
    return None, None


def main(argv: list[str] | None = None) -> int:
    from fedtheory.claims import load_all

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--known", help="a discrimination results file: slips live there are not run again")
    ap.add_argument("--out", default=str(HERE / "results" / "catalogue_check.json"))
    ap.add_argument("--only", nargs="+", metavar="SLIP", help="only these slips")
    ap.add_argument("--papers", nargs="+", metavar="PAPER", help="only the claims of these papers")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    reg = load_all()
    claims = {c.id: c for c in reg.values() if c.expected in ("holds", "violated")
              and (not args.papers or c.paper in args.papers)}
    slips = [s for s in SLIPS if not args.only or s.name in args.only]
    known: dict[str, str] = {}
    if args.known:
        for r in json.loads(Path(args.known).read_text())["claims"]:
            for key, cell in r.get("cells", {}).items():
                if cell["cell"] in ("X", "E", ".") and cell.get("role") == "slip":
                    known.setdefault(key, r["id"])
    reach = reached_by(list(claims.values()), slips)
    rows = []
    for s in slips:
        live, error = (known[s.name], None) if s.name in known else live_on(s, claims, reach[s.name])
        rows.append({"name": s.name, "family": s.family, "category": s.category, "reached_by": reach[s.name],
                     "live_on": live, "error": error})
        print(f"{s.name:34s} reached by {len(reach[s.name]):3d} claims; live on {live}"
              + (f"; VARIANT ERROR {error}" if error else ""), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"seconds": round(time.perf_counter() - start), "slips": rows}, indent=1))
    bad = [r["name"] for r in rows if r["live_on"] is None]
    print(f"CATALOGUE slips={len(rows)} live={len(rows) - len(bad)} not_live={bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
