"""Figure 3's stand-in comparison can fail: DoCoFL whose anchors are never refreshed after round 0 (every client
corrects against C_w(w_0)) has the same final loss at every K V and is rejected, and so is the comparison with its
configurations' roles swapped."""
from __future__ import annotations

import numpy as np

from fedtheory.algorithms.docofl import DoCoFL
from fedtheory.claims import REGISTRY
from fedtheory.claims.docofl.figure3 import DEGRADATION, figure3_evidence, final_rounds, standin_docofl

INSTANCE = next(iter(REGISTRY["docofl.appendix.figure3"].instances(False)))


class NeverRefreshed(DoCoFL):
    """A broken DoCoFL: the server enqueues an anchor at round 0 only and every client downloads that one."""

    def enqueue(self, state, rng):
        return super().enqueue(state, rng) if state.t == 0 else state

    def client_estimates(self, state, leads, rng):
        return super().client_estimates(state, np.full_like(leads, state.t), rng)


def test_docofl_degrades_at_large_kv_and_less_with_a_larger_correction_budget():
    ev = figure3_evidence(INSTANCE)
    assert ev.holds, ev.details
    low, high = ev.details["degradation b_c low"], ev.details["degradation b_c high"]
    assert low >= DEGRADATION > high
    # swapped roles: "the larger budget degrades more" must fail on the same runs
    assert not high >= DEGRADATION * low


def test_anchors_never_refreshed_are_rejected():
    ev = figure3_evidence(INSTANCE, cls=NeverRefreshed)
    assert not ev.holds
    # with one anchor for the whole run, K and V change nothing: the factor is exactly 1 at both budgets
    assert ev.details["degradation b_c low"] == 1.0 and ev.details["degradation b_c high"] == 1.0


def test_the_stand_in_uses_the_queue_widest_window():
    alg = standin_docofl(50, 5, 2.0, 2.0)
    assert alg.participation.max_lead == 50 * 4 == alg.period * (alg.queue_size - 1)
    assert list(final_rounds(300)) == list(range(241, 301))
