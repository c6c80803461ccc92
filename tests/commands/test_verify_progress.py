"""The progress bar of ``fedtheory verify``: its time left comes from the previous run's seconds per claim in
``--out``'s claims.json (:class:`fedtheory.ledger.RunEstimate`), so its first estimate is that run's time."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fedtheory.cli import main as cli_main
from fedtheory.ledger import RunEstimate

CHEAP = ("classic.fedavg.k1_is_gd", "classic.fedavg.fixed_point")


def test_the_first_estimate_is_the_previous_runs_time_over_the_workers() -> None:
    previous = {"a": 10.0, "b": 30.0, "gone": 99.0}
    one = RunEstimate(["a", "b", "new"], previous, jobs=1)
    # a new claim weighs the previous run's mean over the claims of this run that it timed: (10 + 30) / 2
    assert one.weights == {"a": 10.0, "b": 30.0, "new": 20.0}
    assert one.remaining(0.0) == 60.0
    assert RunEstimate(["a", "b", "new"], previous, jobs=2).remaining(0.0) == 30.0


def test_the_estimate_follows_this_run_when_it_is_as_fast_or_slower() -> None:
    est = RunEstimate(["a", "b", "c"], {"a": 10.0, "b": 30.0, "c": 20.0}, jobs=1)
    est.finished("b")  # as fast as last time: 30 s of the previous run's work done in 30 s
    assert est.remaining(30.0) == pytest.approx(30.0)
    slow = RunEstimate(["a", "b", "c"], {"a": 10.0, "b": 30.0, "c": 20.0}, jobs=1)
    slow.finished("b")  # twice as slow: the estimate grows beyond the previous run's 30 s left ...
    halfway = slow.remaining(60.0)
    assert 30.0 < halfway < 60.0
    slow.finished("c")  # ... and approaches twice the previous time as the run goes on
    assert slow.remaining(100.0) == pytest.approx(10.0 / ((50.0 + 15.0) / (100.0 + 15.0)))


def test_without_a_previous_run_there_is_no_estimate_until_a_claim_has_finished() -> None:
    est = RunEstimate(["a", "b", "c", "d"], None, jobs=1)
    assert est.remaining(0.0) is None
    est.finished("a")
    assert est.remaining(2.0) == pytest.approx(6.0)  # by count: one claim in 2 s, three left


def test_the_bar_shows_the_previous_runs_time_before_any_claim_finishes(tmp_path: Path, capsys) -> None:
    previous = [{"id": CHEAP[0], "seconds": 125.0}, {"id": CHEAP[1], "seconds": 35.0}]
    (tmp_path / "claims.json").write_text(json.dumps(previous))
    assert cli_main(["verify", "--claim", CHEAP[0], "--claim", CHEAP[1], "--jobs", "1", "--out", str(tmp_path)]) == 0
    first = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[0]
    assert first.endswith("0/2 [00:00, ~02:40 left by the last run]"), first  # 125 + 35 s = 2:40
    # the run replaced claims.json: the next run's estimate is this run's seconds
    assert {r["id"] for r in json.loads((tmp_path / "claims.json").read_text())} == set(CHEAP)
