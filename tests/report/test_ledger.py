"""A ledger read back from claims.json: the measured statements' "reproduced" is the recorded shape verdict."""
from __future__ import annotations

from fedtheory.report.ledger import recorded_coverage


def _record(holds: list[bool], error: str | None = None) -> dict:
    return {"id": "fedred.figure2.standin", "paper": "fedred", "expected": "exploratory", "cites": ["Figure 2"],
            "derived": False, "error": error, "status": "error" if error else "measured",
            "evidence": [{"instance": f"seed {k}", "holds": h} for k, h in enumerate(holds)]}


def _figure2(records: list[dict]):
    rows, unplaced = recorded_coverage(records)
    assert not unplaced
    return next(r for r in rows if (r.paper, r.statement.label) == ("fedred", "Figure 2"))


def test_the_recorded_shape_verdict_decides_reproduced() -> None:
    assert _figure2([_record([True, True])]).reproduced is True
    row = _figure2([_record([True, False])])  # one instance of the shape test fails
    assert (row.status, row.reproduced) == ("measured", False)
    assert row.note.startswith("not reproduced (the shape test of fedred.figure2.standin fails)")
    for unknown in ([_record([True], error="Traceback ...")], [_record([])], []):  # errored, no instance, not run
        row = _figure2(unknown)
        assert row.reproduced is None and "reproduced (" not in row.note
