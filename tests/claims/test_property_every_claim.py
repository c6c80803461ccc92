"""Every claim that declares its instance space holds (or, if recorded false, is violated) on points hypothesis
draws from that space (docs/design.md, "Claims"): :func:`fedtheory.extend.property_test`, the same call a
researcher uses on their own claims.

The ledger runs each claim's default points; here hypothesis draws new admissible points of the theorem's class,
so a check that only passes at its defaults fails here. A claim declared ``cost="slow"`` (one point takes more
than about a second) is marked ``slow``: it runs under ``pytest -m slow`` and is left out of the default run
(tests/conftest.py). The example counts are small because every example runs a claim's whole check; a fast
claim whose examples take long is a performance problem of that claim, reported by the timing test below rather
than failed here.
"""
from __future__ import annotations

import time

import pytest

from fedtheory.claims import REGISTRY
from fedtheory.extend import property_test

#: Hypothesis examples per claim: in the default run (fast claims) and under ``-m slow`` (slow claims).
FAST_EXAMPLES = 4
SLOW_EXAMPLES = 3
#: Seconds a fast claim's examples may take before it is reported as mis-declared (about a second per point).
FAST_BUDGET = 2.0 * FAST_EXAMPLES

WITH_SPACE = sorted((c for c in REGISTRY.values() if c.space is not None), key=lambda c: c.id)


def _param(c):
    return pytest.param(c.id, id=c.id, marks=[pytest.mark.slow] if c.cost == "slow" else [])


def test_there_are_claims_with_spaces_in_every_paper_that_declares_any():
    assert WITH_SPACE
    assert {c.paper for c in WITH_SPACE} >= {"foundation", "classic"}


@pytest.mark.parametrize("claim_id", [_param(c) for c in WITH_SPACE])
def test_claim_on_points_drawn_from_its_space(claim_id, record_property):
    c = REGISTRY[claim_id]
    start = time.perf_counter()
    ran = property_test(c, max_examples=SLOW_EXAMPLES if c.cost == "slow" else FAST_EXAMPLES)
    seconds = time.perf_counter() - start
    record_property("seconds", seconds)
    assert ran >= 1
    if c.cost == "fast" and seconds > FAST_BUDGET:
        # a performance finding, not a verdict: the claim should declare cost="slow"
        import warnings

        warnings.warn(f"{claim_id}: {ran} examples took {seconds:.1f} s; declare cost='slow' at its @claim",
                      stacklevel=1)
