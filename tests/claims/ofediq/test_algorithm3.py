"""OFedIQ, Algorithm 3 (fedtheory/claims/ofediq/algorithm3.py): a search over every gamma finds the recorded
counterexample."""
from __future__ import annotations

from hypothesis import find, settings
from hypothesis import strategies as st

from fedtheory.claims.ofediq import first_invalid_p
from fedtheory.theory import ofediq as th


def test_algorithm3_over_every_gamma_finds_the_counterexample():
    """hypothesis search over (0, 1]: the printed algorithm's p exceeds 1 (recorded in the ledger)."""
    g = find(st.floats(1e-9, 1.0), lambda x: not th.algorithm3_raw(x, 34826).valid,
             settings=settings(max_examples=2000, derandomize=True, database=None))
    assert th.algorithm3_raw(g, 34826).p > 1 or th.algorithm3_raw(g, 34826).b < 1
    assert g >= first_invalid_p(34826) or th.algorithm3_raw(g, 34826).b < 1
