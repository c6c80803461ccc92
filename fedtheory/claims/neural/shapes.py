"""The shape test of the papers' neural experiments: does an effect the paper reports replicate across seeds?

An experiment (:mod:`fedtheory.experiments`) runs every method on *development* seeds and on *held-out* seeds.
A shape (Alg. 3 sends less entropy than FedDyn, accuracy falls as lambda1 grows, ...) is a per-seed effect
e_s (a paired difference of two methods on the same seed: the same split, initialisation and draws). The
margin is fixed on the development seeds,

    margin = SHAPE_MARGIN_FRACTION * max(0, mean_{s in dev} e_s),

and the shape is reproduced when the held-out seeds (at least :data:`MIN_HELD_OUT`) show it beyond that margin
at one-sided confidence SHAPE_CONFIDENCE (Student t):

    mean_{held} e - t_{conf, n-1} * sd_{held}(e) / sqrt(n) > margin.

The development seeds never enter the held-out statistic, so the margin is not tuned on the data that judges it.
A statement that states its own threshold (non-inferiority within the paper's margin) is tested against that
threshold instead (``stated_margin``).
An effect that is zero or of the wrong sign on the held-out seeds fails (its lower bound is at most 0 <= margin).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import stdtrit  # the Student t quantile (scipy.special: lighter than scipy.stats)

from ...experiments.protocol import load_record
from ..registry import Evidence
from ..tolerances import SHAPE_CONFIDENCE, SHAPE_MARGIN_FRACTION

__all__ = ["MIN_HELD_OUT", "ShapeResult", "best_on_dev", "judge", "record_instances", "seed_curves", "seed_finals",
           "shape_test", "with_curve_summaries"]

#: The fewest held-out seeds a verdict is computed from (the issue's "at least 5 seeds").
MIN_HELD_OUT = 5


@dataclass(frozen=True)
class ShapeResult:
    """One shape's verdict: the held-out mean effect, its lower confidence bound, the margin fixed on the
    development seeds, and whether lower > margin."""
    name: str
    dev: tuple[float, ...]
    held: tuple[float, ...]
    mean: float
    lower: float
    margin: float

    @property
    def holds(self) -> bool:
        return bool(self.lower > self.margin)

    def as_record(self) -> dict[str, Any]:
        return {"name": self.name, "holds": self.holds, "held_out_mean": self.mean, "lower_bound": self.lower,
                "margin": self.margin, "dev_effects": list(self.dev), "held_out_effects": list(self.held)}


def shape_test(name: str, dev: Sequence[float], held: Sequence[float],
               stated_margin: float | None = None) -> ShapeResult:
    """The shape test of the module docstring on per-seed effects (positive = the paper's shape).

    ``stated_margin`` replaces the development seeds' margin when the statement itself gives the threshold: a
    non-inferiority statement ("within 0.98 points of FedAvg") has effect = difference + the paper's margin and
    stated margin 0. Half the development mean would there measure how much *better* the method was on the
    development seeds, which the statement does not claim; the development effects are still reported.

    ValueError when fewer than :data:`MIN_HELD_OUT` held-out or no development effects are given, or one is not
    finite (a diverged run has no effect to compare)."""
    d = np.asarray(dev, dtype=float)
    h = np.asarray(held, dtype=float)
    if d.ndim != 1 or d.size < 1:
        raise ValueError(f"dev must hold at least one development seed's effect, got {d.size}")
    if h.ndim != 1 or h.size < MIN_HELD_OUT:
        raise ValueError(f"held must hold at least {MIN_HELD_OUT} held-out seeds' effects, got {h.size}")
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(h))):
        raise ValueError(f"{name}: every effect must be finite, got dev={d.tolist()} held={h.tolist()}")
    margin = SHAPE_MARGIN_FRACTION * max(0.0, float(d.mean())) if stated_margin is None else float(stated_margin)
    n = h.size
    half_width = float(stdtrit(n - 1, SHAPE_CONFIDENCE)) * float(h.std(ddof=1)) / np.sqrt(n)
    mean = float(h.mean())
    return ShapeResult(name, tuple(map(float, d)), tuple(map(float, h)), mean, mean - half_width, margin)


def seed_finals(record: Mapping[str, Any], seed: int) -> dict[str, dict[str, float]]:
    """{method: its final metrics on ``seed``} of an experiment record (:mod:`fedtheory.experiments.protocol`)."""
    return {m: seeds[str(seed)]["final"] for m, seeds in record["methods"].items()}


def seed_curves(record: Mapping[str, Any], methods: Sequence[str] | None = None, metric: str = "test_accuracy",
                xlabel: str = "round") -> dict[str, dict[str, Any]]:
    """Per method (``methods``, all by default): ``metric`` of its curve (test accuracy by default) against
    rounds, the mean over the held-out seeds and its band (min, max over them), for the HTML report's curves;
    each entry names its ``metric`` and ``xlabel`` (what the curve's "round" counts)."""
    out = {}
    for m in (methods or list(record["methods"])):
        runs = [record["methods"][m][str(s)]["curve"] for s in record["held_seeds"]]
        acc = np.array([r[metric] for r in runs], dtype=float)
        out[m] = {"round": runs[0]["round"], "mean": acc.mean(0).tolist(), "low": acc.min(0).tolist(),
                  "high": acc.max(0).tolist(), "metric": metric, "xlabel": xlabel}
    return out


def judge(record: Mapping[str, Any], effects: Mapping[str, Callable[[dict], float]],
          methods: Sequence[str] | None = None, metric: str = "test_accuracy", xlabel: str = "round",
          extra: Mapping[str, Any] | None = None, stated_margins: Mapping[str, float] | None = None) -> Evidence:
    """The Evidence of an experiment's shape: every effect (finals of one seed -> a number, positive = the
    paper's shape) goes through :func:`shape_test`; it holds when all hold. ``measured`` is the smallest
    lower-bound-minus-margin (> 0 when reproduced), ``theory`` 0. The details carry the curves of ``methods``
    (all by default) for ``metric`` against ``xlabel`` (:func:`seed_curves`), and ``extra`` (the stand-in's
    constants, the chosen hyperparameters, ...). ``stated_margins`` (effect name -> margin) gives the effects whose
    threshold the statement states (:func:`shape_test`).

    A smoke record (fewer than :data:`MIN_HELD_OUT` held-out seeds: CI's check that the experiment runs) gives
    no verdict on the statement: the Evidence then holds when every effect is positive on its seeds, and its
    instance says "smoke, not a verdict"."""
    dev, held = record["dev_seeds"], record["held_seeds"]
    where = (f"{record['experiment']} ({record['scale']}: {record['clients']} clients, {record['rounds']} rounds, "
             f"dev seeds {dev}, held-out seeds {held})")
    per = {name: ([f(seed_finals(record, s)) for s in dev], [f(seed_finals(record, s)) for s in held])
           for name, f in effects.items()}
    details: dict[str, Any] = {"setting": record["setting"], "seconds": record["seconds"],
                               "paper_numbers": record.get("paper_numbers", {}),
                               "curves": seed_curves(record, methods, metric, xlabel), **(extra or {})}
    if len(held) < MIN_HELD_OUT:
        signs = {name: bool(np.all(np.asarray(d + h) > 0)) for name, (d, h) in per.items()}
        low = min(min(d + h) for d, h in per.values())
        return Evidence(f"smoke, not a verdict: {where}", low, 0.0, all(signs.values()),
                        details={**details, "effects": {k: v[0] + v[1] for k, v in per.items()}})
    stated = dict(stated_margins or {})
    unknown = set(stated) - set(per)
    if unknown:
        raise ValueError(f"stated_margins names effects that are not given: {sorted(unknown)}")
    results = [shape_test(name, d, h, stated.get(name)) for name, (d, h) in per.items()]
    measured = min(r.lower - r.margin for r in results)
    return Evidence(where, measured, 0.0, all(r.holds for r in results),
                    details={**details, "shapes": [r.as_record() for r in results]})


def record_instances(name: str) -> Callable[[bool], Iterator[dict]]:
    """A claim's ``instances``: the one record of experiment ``name`` (:func:`fedtheory.experiments.load_record`:
    the fresh run of ``verify --experiments``, else the recorded full-scale one)."""
    def instances(thorough: bool) -> Iterator[dict]:

        yield load_record(name)
    return instances


def with_curve_summaries(record: Mapping[str, Any], tail_fraction: float = 0.25) -> dict[str, Any]:
    """A copy of ``record`` whose every run's ``final`` also holds what its curve says:
    ``best_test_accuracy`` (the largest test accuracy over the recorded rounds: the papers' "best accuracy"
    tables) and ``late_loss_std`` (the standard deviation of the training loss over the last ``tail_fraction``
    of the recorded rounds, at least 3 of them: the instability a figure of loss against rounds shows)."""
    if not 0 < tail_fraction <= 1:
        raise ValueError(f"tail_fraction must be in (0, 1], got {tail_fraction!r}")
    methods = {}
    for m, seeds in record["methods"].items():
        methods[m] = {}
        for s, run in seeds.items():
            acc = np.asarray(run["curve"]["test_accuracy"], dtype=float)
            loss = np.asarray(run["curve"]["train_loss"], dtype=float)
            tail = loss[-max(3, int(round(tail_fraction * loss.size))):]
            methods[m][s] = {**run, "final": {**run["final"], "best_test_accuracy": float(acc.max()),
                                              "late_loss_std": float(tail.std())}}
    return {**record, "methods": methods}


def best_on_dev(record: Mapping[str, Any], candidates: Sequence[str], metric: str) -> str:
    """The candidate method with the largest mean ``metric`` (a key of its finals) over the development seeds: a
    tuning choice made without the held-out seeds that judge it. A smoke record has no development seeds; its
    held-out seed decides (a smoke run gives no verdict)."""
    if not candidates:
        raise ValueError("candidates must name at least one method of the record")
    seeds = record["dev_seeds"] or record["held_seeds"]
    return max(candidates, key=lambda m: float(np.mean([record["methods"][m][str(s)]["final"][metric]
                                                         for s in seeds])))
