"""The shape test of the neural experiments: a replicated effect passes, an absent or reversed one fails, the
margin comes from the development seeds only, and a record is judged through every effect."""
from __future__ import annotations

import math

import pytest

from fedtheory.claims.neural.shapes import MIN_HELD_OUT, judge, shape_test

#: Student t quantile t_{0.95, 4}, from a table (not computed by the code under test).
T95_4 = 2.131847
HELD = [1.0, 2.0, 3.0, 4.0, 5.0]  # mean 3, sample variance 2.5: lower bound 3 - t * sqrt(2.5 / 5) = 1.4926


def test_the_lower_bound_and_the_margin_are_the_formula_of_the_docstring() -> None:
    r = shape_test("e", dev=[2.0, 4.0], held=HELD)
    assert r.lower == pytest.approx(3.0 - T95_4 * math.sqrt(2.5 / 5), rel=1e-6)
    assert r.margin == pytest.approx(1.5)  # half the development mean 3
    assert not r.holds  # 1.4926 < 1.5: the effect did not replicate at half its development size
    assert shape_test("e", dev=[2.0, 3.0], held=HELD).holds  # margin 1.25 < 1.4926


def test_an_absent_or_reversed_effect_fails_whatever_the_development_seeds_say() -> None:
    assert not shape_test("zero", dev=[-1.0], held=[-0.1, 0.1, -0.2, 0.2, 0.0]).holds
    assert not shape_test("reversed", dev=[5.0], held=[-h for h in HELD]).holds
    # a negative development effect fixes margin 0; a clearly positive held-out effect still passes
    r = shape_test("late", dev=[-1.0, -2.0], held=[10.0, 11.0, 9.0, 10.5, 9.5])
    assert r.margin == 0.0 and r.holds


def test_too_few_seeds_or_a_diverged_run_are_refused_with_the_parameter_named() -> None:
    with pytest.raises(ValueError, match=f"held must hold at least {MIN_HELD_OUT}"):
        shape_test("e", dev=[1.0], held=HELD[:MIN_HELD_OUT - 1])
    with pytest.raises(ValueError, match="dev must hold at least one"):
        shape_test("e", dev=[], held=HELD)
    with pytest.raises(ValueError, match="finite"):
        shape_test("e", dev=[1.0], held=[*HELD[:-1], float("nan")])


def _record(values: dict[int, tuple[float, float]], dev=(100,), held=(0, 1, 2, 3, 4), scale="full") -> dict:
    """A record of two methods whose metric x is given per seed as (base, variant)."""
    methods = {"base": {}, "variant": {}}
    for seed, (b, v) in values.items():
        curve = {"round": [0, 2], "test_accuracy": [0.1, 0.5 + seed / 100]}
        methods["base"][str(seed)] = {"final": {"x": b}, "curve": curve}
        methods["variant"][str(seed)] = {"final": {"x": v}, "curve": curve}
    return {"experiment": "t", "scale": scale, "clients": 4, "rounds": 2, "dev_seeds": list(dev),
            "held_seeds": list(held), "setting": "s", "seconds": 0.0, "methods": methods}


def test_judge_holds_only_when_every_effect_replicates() -> None:
    values = {100: (10.0, 5.0), 0: (10.0, 5.1), 1: (10.0, 4.9), 2: (10.0, 5.0), 3: (10.0, 5.2), 4: (10.0, 4.8)}
    lower = {"variant below base": lambda f: f["base"]["x"] - f["variant"]["x"]}
    ev = judge(_record(values), lower)
    assert ev.holds and ev.measured > 0
    assert ev.details["shapes"][0]["held_out_effects"] == pytest.approx([4.9, 5.1, 5.0, 4.8, 5.2])
    band = ev.details["curves"]["base"]  # the held-out seeds 0..4 end at 0.50..0.54
    assert band["mean"] == pytest.approx([0.1, 0.52]) and band["low"][1] == 0.5 and band["high"][1] == 0.54
    # the same record with the effect reversed on the held-out seeds fails
    broken = {s: (v, b) if s != 100 else (b, v) for s, (b, v) in values.items()}
    assert not judge(_record(broken), lower).holds
    # a second effect that fails makes the whole shape fail
    both = {**lower, "variant above base": lambda f: f["variant"]["x"] - f["base"]["x"]}
    assert not judge(_record(values), both).holds


def test_a_smoke_record_says_it_is_not_a_verdict() -> None:
    ev = judge(_record({0: (2.0, 1.0)}, dev=(), held=(0,), scale="smoke"),
               {"e": lambda f: f["base"]["x"] - f["variant"]["x"]})
    assert ev.instance.startswith("smoke, not a verdict") and ev.holds


def test_curve_summaries_are_the_peak_accuracy_and_the_late_loss_spread() -> None:
    from fedtheory.claims.neural.shapes import with_curve_summaries

    run = {"final": {"x": 1.0}, "curve": {"round": list(range(8)), "test_accuracy": [0.1, 0.6, 0.4, 0.5, 0.5, 0.5,
                                                                                     0.5, 0.5],
                                          "train_loss": [3.0, 2.0, 1.0, 1.0, 1.2, 0.8, 1.2, 0.8]}}
    out = with_curve_summaries({"methods": {"m": {"0": run}}}, tail_fraction=0.5)
    final = out["methods"]["m"]["0"]["final"]
    assert final["best_test_accuracy"] == 0.6 and final["x"] == 1.0
    assert final["late_loss_std"] == pytest.approx(0.2)  # the last 4 losses 1.2, 0.8, 1.2, 0.8
    assert "best_test_accuracy" not in run["final"]  # the record itself is not changed
    with pytest.raises(ValueError, match="tail_fraction"):
        with_curve_summaries({"methods": {}}, tail_fraction=0.0)


def test_the_best_setting_is_chosen_on_the_development_seeds() -> None:
    from fedtheory.claims.neural.shapes import best_on_dev

    values = {100: (1.0, 2.0), 0: (5.0, 0.0), 1: (5.0, 0.0), 2: (5.0, 0.0), 3: (5.0, 0.0), 4: (5.0, 0.0)}
    assert best_on_dev(_record(values), ["base", "variant"], "x") == "variant"  # 2 > 1 on seed 100 only
    with pytest.raises(ValueError, match="candidates"):
        best_on_dev(_record(values), [], "x")


def test_a_stated_margin_replaces_the_development_one() -> None:
    r = shape_test("e", dev=[10.0, 10.0], held=HELD, stated_margin=0.0)
    assert r.margin == 0.0 and r.holds  # lower bound 1.4926 > 0, though below half the development mean 5
    assert not shape_test("e", dev=[10.0, 10.0], held=HELD).holds
    assert not shape_test("e", dev=[0.0], held=HELD, stated_margin=2.0).holds  # 1.4926 < 2
    values = {100: (10.0, 5.0), 0: (10.0, 5.1), 1: (10.0, 4.9), 2: (10.0, 5.0), 3: (10.0, 5.2), 4: (10.0, 4.8)}
    with pytest.raises(ValueError, match="stated_margins names effects that are not given"):
        judge(_record(values), {"e": lambda f: 1.0}, stated_margins={"other": 0.0})
