"""OFedIQ Figure 2 in the paper's setting: the verdict holds on a record with the paper's shape and fails on
the same record with the periods reversed or without the shrinking gap."""
from __future__ import annotations

from fedtheory.claims.ofediq.figure2_experiment import judge_figure2

SEEDS = (100, 101, 0, 1, 2, 3, 4)


def _record(early: dict[int, float], end: dict[int, float]) -> dict:
    methods = {}
    for L in (1, 2, 4):
        methods[f"L={L}"] = {str(s): {"final": {"avg_loss_early": early[L] + 0.001 * (s % 3),
                                                "avg_loss_end": end[L] + 0.001 * (s % 2)},
                                      "curve": {"round": [10, 20], "time_averaged_loss": [2.3, 2.0]}}
                             for s in SEEDS}
    return {"experiment": "ofediq.figure2", "scale": "full", "clients": 8, "rounds": 20, "dev_seeds": [100, 101],
            "held_seeds": [0, 1, 2, 3, 4], "setting": "s", "seconds": 0.0, "methods": methods}


PAPER = _record({1: 2.0, 2: 2.1, 4: 2.3}, {1: 1.0, 2: 1.01, 4: 1.02})


def test_the_paper_shape_holds_and_reversed_periods_fail() -> None:
    assert judge_figure2(PAPER).holds
    assert not judge_figure2(PAPER, (4, 2, 1)).holds


def test_an_ordering_without_a_shrinking_gap_fails() -> None:
    flat = _record({1: 2.0, 2: 2.1, 4: 2.3}, {1: 1.0, 2: 1.1, 4: 1.3})
    ev = judge_figure2(flat)
    assert not ev.holds
    assert [s["holds"] for s in ev.details["shapes"]] == [True, True, False, False]
