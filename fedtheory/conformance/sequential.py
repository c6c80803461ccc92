"""A sequential test of a coin's probability: the law of an implementation's own randomness, in few calls.

The kit calls an implementation without a draw and records one event per call (it communicated, a client was
selected, a coordinate was rounded up); the events are independent Bernoulli(p') draws, and the paper requires
p' = p0. :func:`bernoulli_sprt` runs two one-sided sequential probability ratio tests at once (Wald 1945), H0:
p' = p0 against H1+: p' = p0 + delta and against H1-: p' = p0 - delta, with log-likelihood ratios after n calls
and C events

    log LR(n) = C log(p1 / p0) + (n - C) log((1 - p1) / (1 - p0)),   p1 = p0 +- delta.

* **False rejection <= alpha, exactly.** Under H0 each LR(n) is a non-negative martingale of mean 1, so by Ville's
  inequality P(sup_n LR(n) >= 2 / alpha) <= alpha / 2 for each side, whatever the stopping and the truncation:
  the test rejects when either log LR reaches log(2 / alpha).
* **Power >= 0.95 at |p' - p0| >= delta**, measured, not a theorem: a side stops watching (accepts) once its
  log LR falls to log(beta); with alpha = 1e-6, beta = 0.02, delta = 0.03 and at most 16,000 calls, simulated
  coins are rejected in 97-98% of runs at p0 = 0.5 (the hardest p0 in [0.1, 0.9]) and 98% at p0 = 0.1 and 0.9
  (tests/conformance/test_sequential.py recomputes this with its own coins).
* **Calls.** A right coin stops after 1,200 (p0 = 0.1) to 3,200 (p0 = 0.5) calls on average (95th percentile
  6,200); a coin off by delta after 3,000 to 8,000; never more than ``max_samples``, where an undecided test does not
  reject (then p' is within about delta of p0).

:func:`categorical_sprt` runs the same test on each category of a draw (a selected client: its indicator is
Bernoulli(w_i)) at level alpha / k for k categories, so that the false-rejection rate of the whole test stays
<= alpha.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from .tolerances import PROBABILITY_SUM_TOL

__all__ = ["SequentialResult", "CategoricalResult", "bernoulli_sprt", "categorical_sprt", "DELTA", "ALPHA",
           "BETA", "MAX_SAMPLES"]

#: The smallest error |p' - p0| the test must detect with power 0.95.
DELTA = 0.03
#: Its false-rejection rate (of a right coin), exact by Ville's inequality.
ALPHA = 1e-6
#: The acceptance boundary of each side, chosen for power >= 0.95 at |p' - p0| = DELTA (see the module docstring).
BETA = 0.02
#: The most calls one test makes.
MAX_SAMPLES = 16_000


@dataclass(frozen=True)
class SequentialResult:
    """``rejected``: the coin is not Bernoulli(p0); ``samples`` calls made, ``events`` of them positive;
    ``log_lr``: the final log-likelihood ratios (H1+ over H0, H1- over H0); ``threshold``: log(2 / alpha)."""

    rejected: bool
    samples: int
    events: int
    log_lr: tuple[float, float]
    threshold: float

    @property
    def frequency(self) -> float:
        return self.events / self.samples if self.samples else math.nan


def bernoulli_sprt(sample: Callable[[], bool], p0: float, *, delta: float = DELTA, alpha: float = ALPHA,
                   beta: float = BETA, max_samples: int = MAX_SAMPLES) -> SequentialResult:
    """Test H0: ``sample()`` is Bernoulli(``p0``) against |p' - p0| >= ``delta`` (module docstring), calling
    ``sample`` one event at a time until a decision or ``max_samples`` calls."""
    if not 0.0 < p0 < 1.0:
        raise ValueError(f"p0 must be in (0, 1) (a coin of probability 0 or 1 has nothing to test), got {p0}")
    if not 0.0 < delta < min(p0, 1.0 - p0):
        raise ValueError(f"delta must be in (0, min(p0, 1 - p0)) = (0, {min(p0, 1.0 - p0):g}), got {delta}")
    result = categorical_sprt(lambda: 0 if sample() else 1, [p0, 1.0 - p0], tested=[0], delta=delta, alpha=alpha,
                              beta=beta, max_samples=max_samples)
    return SequentialResult(result.rejected, result.samples, result.counts[0], result.log_lr[0], result.threshold)


@dataclass(frozen=True)
class CategoricalResult:
    """``rejected``: the draws do not follow ``probs``; ``samples`` calls, ``counts`` per category; ``log_lr``:
    each tested category's final (H1+, H1-) log-likelihood ratios; ``threshold``: log(2 k / alpha) for k tested
    categories; ``worst``: the tested category whose ratio came closest to the threshold."""

    rejected: bool
    samples: int
    counts: tuple[int, ...]
    log_lr: tuple[tuple[float, float], ...]
    threshold: float
    worst: int


def categorical_sprt(sample: Callable[[], int], probs: Sequence[float], *, tested: Sequence[int] | None = None,
                     delta: float = DELTA, alpha: float = ALPHA, beta: float = BETA,
                     max_samples: int = MAX_SAMPLES) -> CategoricalResult:
    """Test H0: ``sample()`` returns category i with probability ``probs[i]``, one two-sided test per tested
    category (its indicator is Bernoulli(probs[i]); sides whose alternative probs[i] +- delta leaves (0, 1) are
    left out) at level alpha / k each, so the false-rejection rate is <= alpha by Ville's inequality and the union
    bound. ``tested`` defaults to every category."""
    probs = [float(q) for q in probs]
    if not probs or any(not 0.0 <= q <= 1.0 for q in probs) or abs(sum(probs) - 1.0) > PROBABILITY_SUM_TOL:
        raise ValueError(f"probs must be probabilities summing to 1, got {probs}")
    tested = list(range(len(probs))) if tested is None else [int(i) for i in tested]
    if not tested or any(not 0 <= i < len(probs) for i in tested):
        raise ValueError(f"tested must name categories in 0..{len(probs) - 1}, got {tested}")
    if not 0.0 < delta < 1.0 or not 0.0 < alpha < 1.0 or not 0.0 < beta < 1.0:
        raise ValueError(f"delta, alpha and beta must be in (0, 1), got delta={delta}, alpha={alpha}, beta={beta}")
    if not isinstance(max_samples, int) or max_samples < 1:
        raise ValueError(f"max_samples must be an int >= 1, got {max_samples!r}")
    threshold, accept = math.log(2.0 * len(tested) / alpha), math.log(beta)
    # per (tested category, side): the log-LR increments of a hit and a miss; None where the side is left out
    steps: list[list[tuple[float, float] | None]] = []
    for i in tested:
        q = probs[i]
        steps.append([(math.log(p1 / q), math.log((1.0 - p1) / (1.0 - q))) if 0.0 < q < 1.0 and 0.0 < p1 < 1.0
                      else None for p1 in (q + delta, q - delta)])
    log_lr = [[0.0, 0.0] for _ in tested]
    watching = [[step is not None for step in pair] for pair in steps]
    counts = [0] * len(probs)
    n = 0

    def result(rejected: bool) -> CategoricalResult:
        worst = max(range(len(tested)), key=lambda j: max(log_lr[j]))
        return CategoricalResult(rejected, n, tuple(counts), tuple((a, b) for a, b in log_lr), threshold,
                                 tested[worst])

    while n < max_samples and any(any(w) for w in watching):
        got = int(sample())
        if not 0 <= got < len(probs):
            raise ValueError(f"the sample returned category {got}, not one of 0..{len(probs) - 1}")
        n += 1
        counts[got] += 1
        for j, i in enumerate(tested):
            for side, step in enumerate(steps[j]):
                if step is None:
                    continue
                log_lr[j][side] += step[0] if got == i else step[1]
                if watching[j][side] and log_lr[j][side] >= threshold:
                    return result(True)
                if log_lr[j][side] <= accept:
                    watching[j][side] = False
    return result(False)
