"""The README's discrimination figure, read from the discrimination tool's results.

``benchmarks/mutation/discrimination.py`` runs every claim that runs an algorithm under broken variants of it
(coarse ones and a catalogue of subtle slips) and writes ``benchmarks/mutation/results/discrimination.json``,
whose ``summary`` gathers the outcomes per numbered statement (docs/verification-power.md). :func:`figure` is the
one sentence both docs/verification-power.md and the README quote, so the two cannot disagree, and neither
number is typed by hand.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["figure", "readme_block", "RESULTS"]

#: Where the tool writes its results, relative to the checkout.
RESULTS = Path("benchmarks") / "mutation" / "results" / "discrimination.json"


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.0f}%" if whole else "-"


def figure(s: dict[str, Any]) -> str:
    """The sentence quoting the per-statement totals of a discrimination run's ``summary``."""
    n = s["pairs"]
    opening = "Across" if s["examined"] >= s["selected"] else (
        f"In a run stopped after {s['examined']} of the {s['selected']} claims with a verdict (the cheapest first; "
        f"the others are not measured yet), across")
    return (f"{opening} the {s['statements']} numbered statements whose claims run an algorithm ({s['claims']} "
            f"claims of kinds {', '.join(s['kinds'])}), a broken variant (the coarse ones and {s['slips_live']} of "
            f"the {s['slips']} subtle slips of the catalogue, each live on some claim) changes the run in {n} "
            f"(statement, variant) pairs: the statement's own claims reject **{s['rejected_own']} of {n} "
            f"({_pct(s['rejected_own'], n)}) by their own checks** and **{s['rejected_certified']} of {n} "
            f"({_pct(s['rejected_certified'], n)}) with run certification** ({s['no_reference']} not rejected "
            f"where certification has no reference yet); {s['variant_errors']} pairs where the variant itself "
            f"raised are counted apart, never as rejections.")


def readme_block(root: Path) -> str:
    """The README block ``discrimination``: :func:`figure` of the checkout's results (a note if there are none)."""
    path = root / RESULTS
    if not path.is_file():
        return "(no discrimination results in this checkout: run `python benchmarks/mutation/discrimination.py`)\n"
    data = json.loads(path.read_text())
    if "summary" not in data:
        return "(the discrimination results predate the per-statement summary: rerun the tool)\n"
    return figure(data["summary"]) + "\n"
