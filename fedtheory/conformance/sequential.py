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
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

__all__ = ["SequentialResult", "bernoulli_sprt", "DELTA", "ALPHA", "BETA", "MAX_SAMPLES"]

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
    if not 0.0 < alpha < 1.0 or not 0.0 < beta < 1.0:
        raise ValueError(f"alpha and beta must be in (0, 1), got alpha={alpha}, beta={beta}")
    if not isinstance(max_samples, int) or max_samples < 1:
        raise ValueError(f"max_samples must be an int >= 1, got {max_samples!r}")
    threshold, accept = math.log(2.0 / alpha), math.log(beta)
    # per side: (log-LR increment of an event, of a non-event)
    steps = [(math.log(p1 / p0), math.log((1.0 - p1) / (1.0 - p0))) for p1 in (p0 + delta, p0 - delta)]
    log_lr = [0.0, 0.0]
    watching = [True, True]
    n = events = 0
    while n < max_samples and any(watching):
        event = bool(sample())
        n, events = n + 1, events + event
        for side, (up, down) in enumerate(steps):
            log_lr[side] += up if event else down
            if watching[side] and log_lr[side] >= threshold:
                return SequentialResult(True, n, events, (log_lr[0], log_lr[1]), threshold)
            if log_lr[side] <= accept:
                watching[side] = False
    return SequentialResult(False, n, events, (log_lr[0], log_lr[1]), threshold)
