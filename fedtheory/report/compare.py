"""Comparing two ledger runs (``fedtheory verify --compare``): verdicts must agree, measured numbers may move."""
from __future__ import annotations

import math

__all__ = ["COMPARE_REPORT_RTOL", "COMPARE_ROUNDING_FLOOR", "compare_runs"]


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


