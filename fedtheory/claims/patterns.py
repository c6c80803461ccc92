"""The check shapes the claims of every paper share, implemented once.

* :func:`expectation` -- an exact expectation over the next round: every outcome of the round's randomness
  (participation, coins, selected client, local step counts) from the algorithm's ``outcomes()``, weighted by
  its probability. Used for expected contractions, unbiasedness and expected updates.
* :func:`trajectory` -- the "run, then compare round by round" shape: the states along a sampled run, stopping
  at the floating-point floor of a potential (below 1e-12 of its start, per-round ratios are rounding).
* :func:`fixed_point_move` -- the fixed-point shape: the largest change of any state array over every outcome
  of one round started at the claimed fixed point.
* :func:`relative_error` -- the identity shape: max |got - want| relative to the size of ``want``.
* :func:`run_failure` -- why a run cannot support a verdict ("diverged at round r", or a target not reached):
  a check that compares runs ends as violated with this reason at once, instead of comparing the numbers of a
  run that diverged or stalled.

Every algorithm that is deterministic given its draw exposes ``outcomes(problem, state)`` (its exact law of
draws), so these work for all of them; algorithms with enumerable randomness that cannot be listed (local SGD
noise, geometric local-step counts) raise there, and a claim samples draws instead.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ..problems.base import Problem
from .tolerances import EXACT_REL

__all__ = ["expectation", "trajectory", "fixed_point_move", "relative_error", "run_failure", "STATE_ARRAYS"]

#: The float arrays a state may carry (server model, local models, control variates, server states).
STATE_ARRAYS = ("x", "X", "c", "C", "h", "G", "H")


def expectation(alg: Any, problem: Problem, state: Any, fn: Callable[[Any], Any]) -> Any:
    """E[fn(next state)] over every outcome of the next round, exactly: sum_draw P(draw) fn(round(draw))."""
    total = None
    for draw, prob in alg.outcomes(problem, state):
        value = prob * fn(alg.round_given(problem, state, draw)[0])
        total = value if total is None else total + value
    if total is None:
        raise ValueError(f"{type(alg).__name__}.outcomes() listed no outcome")
    return total


def trajectory(alg: Any, problem: Problem, state: Any, rounds: int, rng: np.random.Generator,
               potential: Callable[[Any], float] | None = None, floor: float = EXACT_REL) -> Iterator[Any]:
    """The states of a sampled run, from ``state`` on, for at most ``rounds`` rounds; with a ``potential``, the
    run stops once it falls to ``floor`` times its starting value (per-round ratios below are rounding)."""
    start = None if potential is None else potential(state)
    for _ in range(rounds):
        if potential is not None and potential(state) <= floor * start:
            return
        yield state
        state = alg.round(problem, state, rng)[0]


def fixed_point_move(alg: Any, problem: Problem, state: Any, draws: Iterable[Any] | None = None) -> float:
    """The largest absolute change of any state array after one round from ``state``, over every outcome of the
    round (``alg.outcomes``) or the given ``draws``."""
    draws = [draw for draw, _ in alg.outcomes(problem, state)] if draws is None else list(draws)
    worst = 0.0
    for draw in draws:
        new = alg.round_given(problem, state, draw)[0]
        for name in STATE_ARRAYS:
            a, b = getattr(new, name, None), getattr(state, name, None)
            if a is not None and b is not None:
                worst = max(worst, float(np.max(np.abs(np.asarray(a) - np.asarray(b)), initial=0.0)))
    return worst


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| relative to max(1, max |want|) (states of size O(1) compare absolutely)."""
    want = np.asarray(want, dtype=np.float64)
    return float(np.max(np.abs(np.asarray(got) - want), initial=0.0)) / max(1.0, float(np.max(np.abs(want),
                                                                                                   initial=0.0)))


def run_failure(trace: Any, name: str, need_target: bool = False) -> str | None:
    """The reason the run ``trace`` (a :class:`fedtheory.trace.Trace`) cannot support a verdict, or None:
    "<name> diverged at round r" (a non-finite state or a gap 1e12 times its start, fedtheory/run.py), or, with
    ``need_target``, "<name> did not reach its target in R rounds" (a run given ``tol`` that did not converge)."""
    if trace.status == "diverged":
        return f"{name} diverged at round {trace.stopped_at}"
    if need_target and trace.status != "converged":
        return f"{name} did not reach its target in {int(trace.round[-1])} rounds"
    return None
