"""``fedtheory verify --compare``: a number moved only when the change exceeds both a relative and an absolute
floor, and the records' details keys must be the same in both runs."""
from __future__ import annotations

import math

import pytest

from fedtheory.report.compare import COMPARE_ABSOLUTE_FLOOR, COMPARE_REPORT_RTOL, compare_runs, is_move


def _run(measured: float, theory: float = 1.0, details: dict | None = None, holds: bool = True) -> list[dict]:
    return [{"id": "c", "status": "holds", "evidence": [
        {"instance": "i", "measured": measured, "theory": theory, "holds": holds, "details": details or {}}]}]


def test_the_floors_are_the_named_constants() -> None:
    assert COMPARE_REPORT_RTOL == 1e-6
    assert COMPARE_ABSOLUTE_FLOOR == pytest.approx(math.sqrt(2.220446049250313e-16))  # √ε of a double


@pytest.mark.parametrize("a, b, theory, moved", [
    # rounding residue that a relative test alone reports: a distance of 2e-12 is 1.4e-3 of these values
    (1.4e-9, 1.4e-9 + 2e-12, 1.0, False),
    # an error at a 1e-8 stopping tolerance that changes by 86% of itself
    (9.9e-9, 1.4e-9, 1e-8, False),
    # an identity's error of 1e-16 against 0
    (1e-16, 0.0, 1e-9, False),
    # a large number changed in its 10th digit: above the absolute floor, below the relative one
    (1.0e6, 1.0e6 + 1e-3, 1.0e6, False),
    # real moves: a measurement of 0.5 moving by 1e-3; a count moving by one
    (0.5, 0.5005, 1.0, True),
    (3.0, 4.0, 10.0, True),
    # the absolute floor scales with the bound: 1e-6 is residue next to a bound of 1e3, not next to 1
    (2.0, 2.0 + 1e-5, 1e3, False),
    (2.0, 2.0 + 1e-5, 1.0, True),
    # non-numbers and non-finite values move when they differ
    (None, 1.0, 1.0, True),
    (float("nan"), float("nan"), 1.0, False),
    (float("inf"), 1.0, 1.0, True),
])
def test_a_move_exceeds_both_floors(a, b, theory, moved) -> None:
    assert is_move(a, b, theory) is moved
    assert is_move(b, a, theory) is moved


def test_compare_lists_moves_and_counts_residue_apart() -> None:
    diffs, changed = compare_runs(_run(0.5), _run(0.5005))
    assert diffs == [] and [residue for _, _, residue in changed] == [False]
    diffs, changed = compare_runs(_run(1.4e-9), _run(1.4e-9 + 2e-12))
    assert diffs == [] and [residue for _, _, residue in changed] == [True]


def test_compare_reports_details_keys_that_differ_between_runs() -> None:
    # a key named after a computed float (str(0.5 * beta)) changes when beta is rounded differently
    here = _run(0.5, details={"limit_errors": {"1.6441972697554292": 1e-12}})
    there = _run(0.5, details={"limit_errors": {"1.6441972697554294": 1e-12}})
    diffs, _ = compare_runs(here, there)
    assert len(diffs) == 1 and "details keys differ" in diffs[0] and "1.6441972697554292" in diffs[0]
    same = _run(0.5, details={"limit_errors": {"lambda2/beta=0.5": 2e-12}})
    assert compare_runs(same, _run(0.5, details={"limit_errors": {"lambda2/beta=0.5": 1e-12}}))[0] == []


def test_a_verdict_that_differs_is_a_difference_whatever_the_floors() -> None:
    diffs, _ = compare_runs(_run(1.0, holds=True), _run(1.0, holds=False))
    assert len(diffs) == 1 and "holds=True here, False in the reference" in diffs[0]
