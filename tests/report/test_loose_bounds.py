"""Bounds that bite: ``loose_bounds`` lists exactly the holding bound/rate claims whose worst tightness is below
BITE (or not reported) and that do not say why."""
from __future__ import annotations

from fedtheory.claims.tolerances import BITE
from fedtheory.report.ledger import loose_bounds


def record(cid, *, kind="bound", t=None, flag="", expected="holds", status="holds"):
    return {"id": cid, "kind": kind, "worst_tightness": t, "non_discriminating": flag, "expected": expected,
            "status": status}


def test_only_unflagged_loose_bounds_are_listed():
    records = [record("tight", t=BITE), record("loose", t=BITE / 10), record("rate_loose", kind="rate", t=0.1),
               record("silent", t=None), record("flagged", t=0.01, flag="the bound is a worst case over T"),
               record("identity", kind="identity", t=0.01), record("false", t=0.01, expected="violated",
                                                                  status="violated-as-recorded"),
               record("failing", t=0.01, status="VIOLATED")]
    listed = loose_bounds(records)
    assert [x.split()[0] for x in listed] == ["loose", "rate_loose", "silent"]
    assert "not reported" in listed[2] and "0.05" in listed[0]
