"""EFL, Theorem 2 (fedtheory/claims/efl/theorem2.py) on hypothesis-drawn instances, and the search that finds
the recorded counterexample of eq. (11)."""
from __future__ import annotations

import numpy as np
from hypothesis import find, given, settings
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY
from fedtheory.claims.efl import ARRIVAL_COUNTEREXAMPLE, theorem2_shift
from fedtheory.theory import efl as th


@st.composite
def theorem2_instances(draw, max_clients=4, max_dim=3):
    n = draw(st.integers(2, max_clients))
    d = draw(st.integers(1, max_dim))
    counts = draw(st.lists(st.integers(1, 50), min_size=n, max_size=n))
    lo = draw(st.floats(0.05, 2.0))
    hi = lo * draw(st.floats(1.0, 20.0))
    return dict(seed=draw(st.integers(0, 2**31 - 1)), n=n, d=d, counts=counts, curv=(lo, hi),
                spread=draw(st.floats(0.1, 5.0)))


@given(theorem2_instances())
def test_theorem2_departure_holds(inst):
    assert REGISTRY["efl.theorem2.departure"].check(inst).holds
    assert REGISTRY["efl.theorem2.departure.tight.derived"].check(inst).holds


@given(theorem2_instances())
def test_theorem2_arrival_corrected_holds(inst):
    assert REGISTRY["efl.theorem2.arrival.corrected"].check(inst).holds


def test_theorem2_arrival_violation_is_found_by_search():
    """Property-based search for a violation of eq. (11); the shrunk example is the recorded kind (a newcomer
    with more data than the federation)."""
    found = find(theorem2_instances(max_clients=3, max_dim=2), lambda inst: not REGISTRY["efl.theorem2.arrival"].check(inst).holds,
                 settings=settings(max_examples=2000, derandomize=True, database=None))
    m = theorem2_shift(found, "arrival")
    assert m["shift2"] > th.theorem2_arrival_bound(m["L"], m["mu"], m["n_a"], m["n"], m["D_hat"])
    # The recorded minimal counterexample violates (11) by the closed-form margin 4/9 vs 16/81.
    ev = REGISTRY["efl.theorem2.arrival"].check(ARRIVAL_COUNTEREXAMPLE)
    assert not ev.holds
    np.testing.assert_allclose([ev.measured, ev.theory], [4 / 9, 16 / 81], rtol=1e-12)
