"""Lemma 28 and Theorem 1 (fedtheory/claims/fedred/nonconvex.py) together on the non-convex family with any number of
local GD steps (the Lemma 28 claim declares default instances only)."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY


@given(st.integers(2, 6), st.integers(1, 4), st.floats(0.1, 2.0), st.floats(1.0, 6.0), st.integers(0, 10**6),
       st.sampled_from(["random", "fixed"]), st.integers(1, 30))
def test_nonconvex_descent_and_stationarity(n, d, delta_B, c, seed, averaging, local_steps):
    kw = dict(n_clients=n, dim=d, delta_B=delta_B, c=c, nu=0.1, seed=seed, rounds=12, local_steps=local_steps,
              averaging=averaging)
    for claim_id in ("fedred.nonconvex.descent.derived", "fedred.nonconvex.stationarity.derived"):
        ev = REGISTRY[claim_id].check(kw)
        assert ev.holds, (claim_id, ev.instance, ev.measured, ev.theory, dict(ev.details))
