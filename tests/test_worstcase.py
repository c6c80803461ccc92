"""Instance spaces and the adversarial worst-case search (issue 17).

The search has power: from random starts, without being shown the ledger's recorded counterexamples, it finds
a violation of each false statement whose claim declares a space (Lemma 3 of OFedIQ, Theorem 2 (11) of EFL,
Theorem B.1 of FedElasticNet with C0 unsquared), and the point it returns reproduces the violation in one call.
"""
from __future__ import annotations

import math

import pytest

from fedtheory.claims import claim, load_all
from fedtheory.claims.space import InstanceSpace, Param, quadratic_space
from fedtheory.worstcase import adversarial_search, ratio_of

CLAIMS = load_all()
FALSE_WITH_SPACE = ["ofediq.lemma3.stated", "efl.theorem2.arrival", "fedelasticnet.thm3_1.printed_C0_unsquared"]


def test_param_maps_the_unit_interval():
    p = Param("x", 1e-2, 1e2, log=True)
    assert p.from_unit(0.0) == pytest.approx(1e-2) and p.from_unit(1.0) == pytest.approx(1e2)
    assert p.from_unit(0.5) == pytest.approx(1.0)
    assert p.from_unit(-3.0) == pytest.approx(1e-2) and p.from_unit(7.0) == pytest.approx(1e2)  # clipped
    k = Param("k", 2, 8, integer=True)
    assert {k.from_unit(u / 100) for u in range(101)} == set(range(2, 9))
    with pytest.raises(ValueError, match="low > 0"):
        Param("bad", 0.0, 1.0, log=True)
    with pytest.raises(ValueError, match="low <= high"):
        Param("bad", 2.0, 1.0)


def test_space_defaults_are_the_instances_and_must_be_in_the_regime():
    space = InstanceSpace(params=(Param("a", 0.0, 1.0),), build=lambda p: p["a"] * 2,
                          regime=lambda p: p["a"] <= 0.5, defaults=({"a": 0.25},), thorough=({"a": 0.5},))
    assert list(space.instances(False)) == [0.5] and list(space.instances(True)) == [0.5, 1.0]
    bad = InstanceSpace(params=(Param("a", 0.0, 1.0),), build=lambda p: p, regime=lambda p: False,
                        defaults=({"a": 0.1},))
    with pytest.raises(ValueError, match="outside the theorem's regime"):
        list(bad.instances(False))


def test_claim_takes_exactly_one_of_instances_and_space():
    space = quadratic_space(defaults=())
    with pytest.raises(ValueError, match="exactly one"):
        claim(id="x.y", paper="classic", reference="r", statement="s", kind="bound")
    with pytest.raises(ValueError, match="exactly one"):
        claim(id="x.y", paper="classic", reference="r", statement="s", kind="bound", space=space,
              instances=lambda thorough: iter(()))


@pytest.mark.parametrize("claim_id", FALSE_WITH_SPACE)
@pytest.mark.parametrize("seed", [0, 1])
def test_search_rediscovers_each_recorded_counterexample_from_random_starts(claim_id, seed):
    c = CLAIMS[claim_id]
    assert c.expected == "violated"
    result = adversarial_search(c, evaluations=150, seed=seed, include_defaults=False)
    assert result.counterexample and result.ratio > 1.0
    # reproducible in one call from the returned point, and the claim's own verdict agrees
    evidence = c.check(c.space.build(dict(result.point)))
    assert not evidence.holds and ratio_of(evidence) == result.ratio


def test_search_is_deterministic_and_never_below_the_defaults():
    c = CLAIMS["fedred.dane.gap_bound"]
    a = adversarial_search(c, evaluations=40, seed=3)
    b = adversarial_search(c, evaluations=40, seed=3)
    assert a.ratio == b.ratio and a.point == b.point and a.evaluations == b.evaluations <= 40
    defaults = max(ratio_of(c.check(inst)) for inst in c.instances(False))
    assert a.ratio >= defaults


@pytest.mark.parametrize("claim_id", ["efl.theorem2.departure", "efl.theorem2.departure.tight.derived",
                                      "ofediq.lemma3.stated.corrected"])
def test_true_bounds_survive_the_search(claim_id):
    result = adversarial_search(CLAIMS[claim_id], evaluations=150, seed=0)
    assert 0 < result.ratio <= 1 + 1e-9


def test_bad_input():
    with pytest.raises(ValueError, match="no instance space"):
        adversarial_search(CLAIMS["classic.fedavg.k1_is_gd"])
    with pytest.raises(ValueError, match="evaluations"):
        adversarial_search(CLAIMS["efl.theorem2.departure"], evaluations=0)
    assert ratio_of.__doc__ and math.isinf(-math.inf)


def test_a_slow_checks_space_caps_the_search_budget():
    """A space's ``max_evaluations`` caps the caller's budget (60 s per claim for slow checks, issue 17)."""
    calls = []
    space = InstanceSpace(params=(Param("a", 0.0, 1.0),), defaults=({"a": 0.5},), max_evaluations=7)

    @claim(id="test.capped.search", paper="classic", reference="r", statement="s", kind="bound", space=space)
    def check(inst):
        from fedtheory.claims.registry import Evidence

        calls.append(inst["a"])
        return Evidence("a", inst["a"], 1.0, True, tightness=inst["a"])

    try:
        result = adversarial_search(check, evaluations=200, seed=0)
        assert result.evaluations <= 7 and len(calls) <= 8  # + the verdict at the best point
    finally:
        from fedtheory.claims.registry import REGISTRY

        REGISTRY.pop("test.capped.search", None)
