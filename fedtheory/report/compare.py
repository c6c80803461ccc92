"""Comparing two ledger runs (``fedtheory verify --compare``): verdicts must agree, measured numbers may move.

Two runs on different BLAS kernels or thread counts round differently, so their measured numbers differ in the
last bits; a difference is reported as a *move* only when it exceeds both floors below, and is otherwise
counted as rounding residue. The records must also keep the same shape: an instance's ``details`` must have the
same keys in both runs, so a key is never a number computed at run time (it would change with the kernel).
"""
from __future__ import annotations

import math
import sys
from typing import Any, Iterator

__all__ = ["COMPARE_REPORT_RTOL", "COMPARE_ABSOLUTE_FLOOR", "compare_runs", "is_move", "detail_keys"]


#: Relative floor: a measured number moved when |a - b| > 1e-6 max(|a|, |b|). Kernel rounding moves a
#: well-conditioned measurement by ~1e-15..1e-12 of itself, so 1e-6 singles out measurements that count
#: something at a rounding-level threshold (rounds to a floor, non-zeros at a cut-off).
COMPARE_REPORT_RTOL = 1e-6
#: Absolute floor, in units of the number's scale max(1, |theory|): a measured number moved only when
#: |a - b| > √ε · scale (ε = 2.2e-16, so 1.5e-8). A number computed through a difference of nearly equal
#: quantities, a square root of a rounded one, or an iterative solve stopped at a tolerance keeps only about
#: √ε of its scale between two kernels: an identity's error of 1e-16, a distance of 2e-12 between two
#: iterates, or an error at the 1e-8 stopping tolerance of a run can change by 100% of itself without saying
#: anything about the run. A change that matters to a verdict is caught as a verdict difference anyway.
COMPARE_ABSOLUTE_FLOOR = math.sqrt(sys.float_info.epsilon)


def is_move(a: object, b: object, theory: object) -> bool:
    """Whether ``a`` and ``b`` (a measured number or bound in two runs) differ by more than both floors:
    |a - b| > :data:`COMPARE_REPORT_RTOL` max(|a|, |b|) and > :data:`COMPARE_ABSOLUTE_FLOOR` max(1, |theory|).

    Non-numbers (None, strings, lists) and non-finite values move when they are not equal (NaN equals NaN).
    """
    if not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return a != b
    if not (math.isfinite(a) and math.isfinite(b)):
        return not (a == b or (math.isnan(a) and math.isnan(b)))
    scale = max(1.0, abs(theory)) if isinstance(theory, (int, float)) and math.isfinite(theory) else 1.0
    distance = abs(a - b)
    return distance > COMPARE_REPORT_RTOL * max(abs(a), abs(b)) and distance > COMPARE_ABSOLUTE_FLOOR * scale


def _relative_change(a: object, b: object) -> float:
    if not (isinstance(a, (int, float)) and isinstance(b, (int, float))):  # None, strings, lists: all or nothing
        return 0.0 if a == b else float("inf")
    if math.isnan(a) or math.isnan(b):
        return 0.0 if math.isnan(a) and math.isnan(b) else float("inf")
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def detail_keys(details: Any, prefix: str = "") -> Iterator[str]:
    """Every key of a (nested) ``details`` mapping, as a path ``"outer/inner"``; lists are entered, not keyed."""
    if isinstance(details, dict):
        for key, value in details.items():
            path = f"{prefix}/{key}" if prefix else str(key)
            yield path
            yield from detail_keys(value, path)
    elif isinstance(details, list):
        for value in details:
            yield from detail_keys(value, prefix)


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
    """(differences, [(relative change, where, residue)] of measured numbers) between two claims.json lists.

    Differences are verdicts (claim statuses and per-instance ``holds`` flags, matched by claim id and
    instance description; a claim present in only one run) and the shape of the records (an instance whose
    ``details`` keys differ). Each number that differs carries a flag: True when the difference is rounding
    residue, False when it is a move (:func:`is_move`).
    """
    ref = {r["id"]: r for r in reference}
    diffs: list[str] = []
    moved: list[tuple[float, str, bool]] = []
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
            mine, yours = set(detail_keys(e.get("details"))), set(detail_keys(o.get("details")))
            if mine != yours:
                diffs.append(f"{r['id']} [{e['instance']}]: details keys differ (here only: "
                             f"{sorted(mine - yours)[:3]}; reference only: {sorted(yours - mine)[:3]}); a key must "
                             "not be a number computed at run time")
            for field in ("measured", "theory"):
                change = _relative_change(e[field], o[field])
                if change > 0:
                    where = f"{r['id']} [{e['instance']}] {field}: {e[field]!r} vs {o[field]!r}"
                    moved.append((change, where, not is_move(e[field], o[field], e["theory"])))
    diffs += [f"{cid}: only in the reference run" for cid in ref]
    return diffs, sorted(moved, reverse=True)
