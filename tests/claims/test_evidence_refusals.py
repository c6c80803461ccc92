"""What cannot be a verdict is refused, naming the claim and the field; one bad claim never hides the others.

The cases are the ones a researcher's own claim can produce through fedtheory.extend: a NaN that "holds", a bound
that "holds" with measured > bound, arrays where one number belongs, duplicate ids, default points outside their
space, and a worst-case search whose evaluations raise.
"""
from __future__ import annotations

import json
import math
import textwrap

import numpy as np
import pytest

from fedtheory.extend import Evidence, InstanceSpace, Param, claim, run, verdict, worst_case

SPACE = InstanceSpace(params=[Param("a", 0.0, 1.0)], defaults=[{"a": 0.5}])


def _declare(cid: str, check, kind: str = "bound", space: InstanceSpace = SPACE):
    return claim(id=cid, reference="test", statement="s", kind=kind, space=space)(check)


@pytest.mark.parametrize("field", ["measured", "theory"])
def test_a_nan_that_holds_is_refused(field: str) -> None:
    values = {"measured": 0.5, "theory": 1.0, field: math.nan}
    with pytest.raises(ValueError, match=f"{field} is nan but holds=True"):
        Evidence("x", holds=True, **values)


@pytest.mark.parametrize("field", ["measured", "theory"])
def test_a_claim_whose_check_returns_a_nan_that_holds_is_an_error_naming_it(field: str) -> None:
    values = {"measured": 0.5, "theory": 1.0, field: math.nan}
    c = _declare(f"t.nan.{field}", lambda p: Evidence(str(p), holds=True, **values))
    result = run(c)
    assert result.status == "ERROR" and result.failed
    assert f"t.nan.{field}" in result.error and field in result.error


def test_a_nan_that_does_not_hold_is_a_failure_not_an_error() -> None:
    c = _declare("t.nan.fails", lambda p: Evidence(str(p), math.nan, 1.0, False))
    assert run(c).status == "VIOLATED"


def test_a_bound_that_holds_with_measured_above_the_bound_is_an_error_naming_the_claim() -> None:
    c = _declare("t.bound.contradiction", lambda p: Evidence(str(p), 2.0, 1.0, True, 2.0))
    result = run(c)
    assert result.status == "ERROR"
    assert "t.bound.contradiction" in result.error and "measured 2 > bound 1" in result.error


def test_a_bound_may_hold_at_rounding_level_above_the_bound() -> None:
    # 1 ulp above: the built-in checks compare with a relative slack of 1e-12..1e-9 of the scale
    c = _declare("t.bound.rounding", lambda p: Evidence(str(p), 1.0 + 2.3e-16, 1.0, True, 1.0))
    assert run(c).status == "holds"


def test_an_identity_claim_is_not_held_to_measured_below_theory() -> None:
    # only bound claims read (measured, theory) as "measured <= bound"; an identity compares an error with a tolerance
    c = _declare("t.identity", lambda p: Evidence(str(p), 2.0, 1.0, True), kind="identity")
    assert run(c).status == "holds"


@pytest.mark.parametrize("field", ["measured", "theory", "tightness"])
def test_a_vector_where_a_number_belongs_is_refused_naming_the_field(field: str) -> None:
    values = {"measured": 0.5, "theory": 1.0, "tightness": 0.5, field: np.array([0.5, 0.6])}
    with pytest.raises(TypeError, match=f"Evidence.{field} must be a single real number"):
        Evidence("x", holds=True, **values)
    c = _declare(f"t.vector.{field}", lambda p: Evidence(str(p), holds=True, **values))
    result = run(c)
    assert result.status == "ERROR" and f"t.vector.{field}" in result.error and f"Evidence.{field}" in result.error


def test_a_vector_verdict_is_refused() -> None:
    with pytest.raises(TypeError, match="Evidence.holds must be a single truth value"):
        Evidence("x", 0.5, 1.0, np.array([True, False]))


def test_numpy_scalars_and_zero_dimensional_arrays_are_numbers() -> None:
    e = Evidence("x", np.float32(0.5), np.array(1.0), np.bool_(True), np.float64(0.5))
    assert type(e.measured) is float and type(e.theory) is float and e.holds is True
    assert json.dumps(e.as_dict())


@pytest.mark.parametrize("bad", ["0.5", None, 1 + 2j, True])
def test_a_measured_value_that_is_not_a_real_number_is_refused(bad: object) -> None:
    with pytest.raises(TypeError, match="Evidence.measured must be"):
        Evidence("x", bad, 1.0, False)


def test_verdict_computes_holds_and_tightness_and_never_holds_on_nan() -> None:
    e = verdict({"a": 1}, 0.5, 2.0)
    assert e.holds and e.tightness == 0.25 and e.instance == "{'a': 1}"
    assert not verdict("x", 2.0, 1.0).holds
    assert verdict("x", 1.0 + 1e-13, 1.0, rtol=1e-12).holds
    assert not verdict("x", math.nan, 1.0).holds and not verdict("x", 0.5, math.nan).holds
    assert not verdict("x", 0.5, math.inf).holds  # an infinite bound proves nothing
    with pytest.raises(ValueError, match="rtol and atol"):
        verdict("x", 0.5, 1.0, rtol=-1.0)


def test_duplicate_ids_are_refused_at_declaration() -> None:
    _declare("t.dup", lambda p: verdict(p, 0.5, 1.0))

    def another_check(p: dict) -> Evidence:
        return verdict(p, 0.5, 1.0)

    with pytest.raises(ValueError, match="claim id 't.dup' is declared twice"):
        _declare("t.dup", another_check)


@pytest.mark.parametrize("defaults, message", [
    ([{}], r"lacks the parameter\(s\) \['a'\]"),
    ([{"a": 0.5, "b": 1}], r"has key\(s\) \['b'\]"),
    ([{"a": 2.0}], r"a=2.0, outside its range \[0.0, 1.0\]"),
    ([{"a": "x"}], "outside its range"),
])
def test_default_points_outside_their_space_are_refused_at_declaration(defaults: list, message: str) -> None:
    space = InstanceSpace(params=[Param("a", 0.0, 1.0)], defaults=defaults)
    with pytest.raises(ValueError, match=message):
        claim(id="t.defaults", reference="r", statement="s", kind="bound", space=space)


def test_a_default_point_outside_the_regime_is_refused_at_declaration() -> None:
    space = InstanceSpace(params=[Param("a", 0.0, 1.0)], defaults=[{"a": 0.9}], regime=lambda p: p["a"] < 0.5)
    with pytest.raises(ValueError, match="outside the theorem's regime"):
        claim(id="t.regime", reference="r", statement="s", kind="bound", space=space)


def test_the_worst_case_search_counts_the_evaluations_that_raised() -> None:
    def check(p: dict) -> Evidence:
        if p["a"] > 0.6:
            raise ValueError("infeasible above 0.6")
        return verdict(p, p["a"], 1.0)

    search = worst_case(_declare("t.search.raises", check), evaluations=40)
    assert search.raised > 0 and "infeasible above 0.6" in search.first_error
    record = search.as_dict()
    assert record["raised_evaluations"] == search.raised and record["first_error"] == search.first_error
    assert search.ratio <= 0.6


PLUGIN_FILE = """
    import math
    import numpy as np
    from fedtheory.extend import Evidence, InstanceSpace, Param, claim, verdict

    SPACE = InstanceSpace(params=[Param("a", 0.0, 1.0)], defaults=[{"a": 0.5}])

    @claim(id="u.vector_holds", reference="r", statement="s", kind="bound", space=SPACE)
    def vector_holds(p):
        return Evidence(str(p), 0.5, 1.0, np.array([True, True]))

    @claim(id="u.vector_measured", reference="r", statement="s", kind="bound", space=SPACE)
    def vector_measured(p):
        return Evidence(str(p), np.array([0.5, 0.6]), 1.0, True)

    @claim(id="u.false_theorem", reference="r", statement="a <= a/2", kind="bound", space=SPACE)
    def false_theorem(p):
        return verdict(p, p["a"], p["a"] / 2)

    @claim(id="u.true_theorem", reference="r", statement="a <= 1", kind="bound", space=SPACE)
    def true_theorem(p):
        return verdict(p, p["a"], 1.0)
"""


@pytest.mark.parametrize("workers", [0, 2])
def test_one_bad_claim_hides_no_other_report(pytester: pytest.Pytester, workers: int) -> None:
    pytester.makepyfile(test_user_claims=textwrap.dedent(PLUGIN_FILE))
    args = ["--fedtheory-examples", "0", "-p", "no:cacheprovider"] + (["-n", str(workers)] if workers else [])
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(passed=1, failed=3)
    text = result.stdout.str()
    assert "u.vector_holds" in text and "Evidence.holds" in text
    assert "u.vector_measured" in text and "Evidence.measured" in text
    assert "fails on {'a': 0.5}: measured 0.5, bound/closed form 0.25" in text  # the false theorem's counterexample
    records = json.loads((pytester.path / "fedtheory-claims" / "claims.json").read_text())
    assert {r["id"]: r["status"] for r in records} == {
        "u.vector_holds": "ERROR", "u.vector_measured": "ERROR", "u.false_theorem": "VIOLATED",
        "u.true_theorem": "holds"}
    assert not (pytester.path / "fedtheory-claims" / "gw0").exists()  # xdist: one merged report, no worker folders


def test_claims_md_shows_symbols_tightness_and_the_worst_case(tmp_path) -> None:
    from fedtheory.extend import write_report

    c = claim(id="t.md", reference="r", kind="bound", space=SPACE,
              statement="||x_t - x*||^2 <= (1 - mu/L) ||x_0 - x*||^2")(lambda p: verdict(p, 0.25, 0.5))
    search = worst_case(c, evaluations=5)
    write_report([run(c)], tmp_path, {"t.md": {**search.as_dict(), "pep_worst_case": 0.75}})
    md = (tmp_path / "claims.md").read_text()
    assert "‖x_t - x*‖^2 ≤ (1 - μ/L) ‖x_0 - x*‖^2" in md and "//" not in md
    row = next(line for line in md.splitlines() if line.startswith("| `t.md`"))
    cells = [x.strip() for x in row.split(" | ")]
    assert cells[5:8] == ["0.5", "0.5", "0.75"]  # tightness, worst case found, PEP worst case
