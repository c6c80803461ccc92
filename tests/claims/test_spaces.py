"""The claims' instance spaces (fedtheory/claims/space.py): every bound declares one, ``space.strategy()`` draws
admissible points, and hypothesis finds the recorded counterexamples of the false statements from the same space.

Every claim with a space is run on drawn points by tests/claims/test_property_every_claim.py; here the false
statements get a larger search budget (200 points) than that test gives them.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from fedtheory.claims import load_all
from fedtheory.claims.space import InstanceSpace, Param

CLAIMS = load_all()

#: False statements whose checks are cheap: hypothesis, drawing from the same space, must find a violation.
#: Lemma B.4 with the printed sign(0) = 0 reports a margin, not a ratio, so the adversarial search cannot look for
#: it; hypothesis can (m = 2, d = 1, lambda2 = beta, lambda1 = 1, one client per round, 7 rounds: smaller than
#: the ledger's recorded m = 5, d = 4 instance).
VIOLATED = ["ofediq.lemma3.stated", "efl.theorem2.arrival", "fedelasticnet.thm3_1.printed_no_condition",
            "fedelasticnet.lemmaB4.printed_sign"]


#: Bound claims added on main (fedred.py, outside its non-convex section, which this branch does not edit) after
#: the spaces branch was cut: they still list default instances. Give them spaces and remove them from here; the
#: test fails on any other claim without one.
PENDING_SPACES: set[str] = set()


def test_every_bound_claim_declares_a_space():
    """Issue 17: every bound / tightness claim declares its class, so the search and these tests reach it."""
    missing = {c.id for c in CLAIMS.values() if c.kind in ("bound", "tightness") and c.space is None}
    assert missing <= PENDING_SPACES, sorted(missing - PENDING_SPACES)


@pytest.mark.parametrize("claim_id", VIOLATED)
def test_hypothesis_finds_the_false_statements_counterexamples(claim_id):
    c = CLAIMS[claim_id]
    assert c.expected == "violated"
    point = find(c.space.strategy(), lambda pt: not c.check(c.space.build(pt)).holds,
                 settings=settings(max_examples=200, database=None))
    assert c.space.admissible(point) and not c.check(c.space.build(point)).holds


# ------------------------------------------------------------------------------------------ strategy() itself
_SPACE = InstanceSpace(
    params=(Param("k", 2, 9, integer=True), Param("x", -1.0, 3.0), Param("scale", 1e-3, 1e3, log=True),
            Param("big", 1, 10**6, log=True, integer=True)),
    fixed={"seed": 7}, regime=lambda pt: pt["x"] < pt["k"] - 1.5)


@settings(max_examples=60)
@given(point=_SPACE.strategy())
def test_strategy_draws_admissible_points_in_range_with_fixed_merged(point):
    assert point["seed"] == 7
    assert isinstance(point["k"], int) and 2 <= point["k"] <= 9
    assert isinstance(point["big"], int) and 1 <= point["big"] <= 10**6
    assert -1.0 <= point["x"] <= 3.0 and 1e-3 <= point["scale"] <= 1e3
    assert point["x"] < point["k"] - 1.5  # the regime


def test_log_parameters_are_drawn_on_the_log_scale():
    """A parameter on [1e-3, 1e3] drawn uniformly on the log scale falls below 1 about half the time; drawn on
    the linear scale, one time in a thousand. (hypothesis's floats are not exactly uniform -- they favour
    boundaries and simple values -- so the test asks for a clear share, not one half.)"""
    values = []

    @settings(max_examples=200, database=None)
    @given(v=_SPACE.strategy().map(lambda pt: pt["scale"]))
    def collect(v):
        values.append(v)

    collect()
    below = sum(v < 1.0 for v in values) / len(values)
    assert 0.05 < below < 0.95
    assert min(values) < 1e-1 and max(values) > 1e1


def test_strategy_does_not_need_hypothesis_at_import():
    """space.py imports hypothesis only inside strategy(): the core package runs without the test extra."""
    import ast
    import inspect

    import fedtheory.claims.space as space

    tree = ast.parse(inspect.getsource(space))
    top_level = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = {a.name for n in top_level for a in n.names} | {getattr(n, "module", None) for n in top_level}
    assert not any(name and name.startswith("hypothesis") for name in names)
    assert math.isfinite(1.0) and st is not None
