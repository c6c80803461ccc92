"""A researcher's own claim through the public API (fedtheory.extend) and the pytest plugin: it gets default
instances, hypothesis examples from its space, the worst-case search, PEP when declared, and the report."""
from __future__ import annotations

import json
import textwrap

import pytest

from fedtheory.claims import load_all
from fedtheory.extend import (
    Evidence,
    InstanceSpace,
    Param,
    claim,
    pep_worst_case,
    property_test,
    run,
    worst_case,
    write_report,
)

#: GD with step 1/L on f(x) = mu x^2/2 + ... : the distance contracts by exactly 1 - mu/L per step. The bound
#: claims 1 - mu/L (true, attained) or, falsely, 1 - 2 mu/L above condition number 20.
SPACE = InstanceSpace(params=[Param("mu", 1e-2, 1.0, log=True), Param("kappa", 1.5, 1e3, log=True)],
                      defaults=[{"mu": 0.1, "kappa": 10.0}, {"mu": 0.5, "kappa": 100.0}])


def gd_factor(point: dict) -> float:
    """Measured on the quadratic L x^2/2 (the slowest direction is mu x^2/2: 1 - mu/L there)."""
    mu, L = point["mu"], point["mu"] * point["kappa"]
    x = 1.0
    x_next = x - (1.0 / L) * mu * x  # one GD step on mu x^2/2 with step 1/L
    return abs(x_next) / abs(x)


def _bound_check(bound_of):
    def check(point: dict) -> Evidence:
        measured, bound = gd_factor(point), bound_of(point)
        return Evidence(str(point), measured, bound, measured <= bound * (1 + 1e-12), measured / bound)
    return check


def test_a_true_claim_gets_the_ledger_hypothesis_and_the_search() -> None:
    c = claim(id="mylab.gd", reference="Doe (2026), Thm 1", statement="GD contracts by 1 - mu/L", kind="bound",
              space=SPACE)(_bound_check(lambda p: 1 - 1 / p["kappa"]))
    result = run(c)
    assert result.status == "holds" and len(result.evidence) == 2
    assert result.worst_tightness == pytest.approx(1.0)
    assert property_test(c, max_examples=15) == 15
    search = worst_case(c, evaluations=40)
    assert search.ratio == pytest.approx(1.0) and not search.counterexample


def test_a_false_variant_is_rejected_with_its_counterexample() -> None:
    false = claim(id="mylab.gd.twice", reference="r", statement="GD contracts by 1 - 2 mu/L", kind="bound",
                  space=SPACE)(_bound_check(lambda p: 1 - 2 / p["kappa"] if p["kappa"] > 20 else 1.0))
    assert run(false).status == "VIOLATED"  # the second default point has kappa = 100
    with pytest.raises(AssertionError, match="mylab.gd.twice fails at"):
        property_test(false, max_examples=25)
    search = worst_case(false, evaluations=60)
    assert search.counterexample and search.ratio > 1 and search.point["kappa"] > 20


def test_a_claim_recorded_false_must_find_its_counterexample() -> None:
    recorded = claim(id="mylab.gd.recorded", reference="r", statement="s", kind="bound", space=SPACE,
                     expected="violated")(_bound_check(lambda p: 1 - 2 / p["kappa"] if p["kappa"] > 20 else 1.0))
    assert run(recorded).status == "violated-as-recorded"
    assert property_test(recorded) == 1


def test_a_declared_pep_formulation_is_reported() -> None:
    pytest.importorskip("PEPit", reason="the worst-case extra (PEPit) is not installed")
    from fedtheory.pep import gd_contraction

    c = claim(id="mylab.gd.pep", reference="r", statement="s", kind="bound", space=SPACE,
              pep=lambda p: (gd_contraction(p["mu"], p["mu"] * p["kappa"], 1 / (p["mu"] * p["kappa"])),
                             (1 - 1 / p["kappa"]) ** 2))(_bound_check(lambda p: 1 - 1 / p["kappa"]))
    assert pep_worst_case(c) == pytest.approx(1.0, rel=1e-4)


@pytest.mark.parametrize("field, kwargs, error", [
    ("space.params", {"space": InstanceSpace(params=[], defaults=[{}])}, ValueError),
    ("space.defaults", {"space": InstanceSpace(params=[Param("mu", 0.1, 1.0)])}, ValueError),
    ("space", {"space": {"mu": (0.1, 1.0)}}, TypeError),
    ("kind", {"space": SPACE, "kind": "theorem"}, ValueError),
    ("expected", {"space": SPACE, "expected": "true"}, ValueError),
    ("instances/space", {}, ValueError),
    ("cites", {"space": SPACE, "cites": "Theorem 1"}, TypeError),
])
def test_bad_declarations_name_the_field(field: str, kwargs: dict, error: type) -> None:
    kw = {"id": "mylab.bad", "reference": "r", "statement": "s", "kind": "bound", **kwargs}
    with pytest.raises(error, match=field.split(".")[0]):
        claim(**kw)(_bound_check(lambda p: 1.0))


def test_an_id_taken_by_a_builtin_claim_is_refused() -> None:
    taken = next(iter(load_all()))
    with pytest.raises(ValueError, match="already a built-in claim"):
        claim(id=taken, reference="r", statement="s", kind="bound", space=SPACE)


def test_a_check_returning_the_wrong_type_is_an_error_naming_evidence(tmp_path) -> None:
    c = claim(id="mylab.float", reference="r", statement="s", kind="bound", space=SPACE)(gd_factor)
    result = run(c)
    assert result.status == "ERROR" and "must return fedtheory Evidence" in result.error and "float" in result.error
    path = write_report([result], tmp_path / "out")
    assert json.loads((path / "claims.json").read_text())[0]["status"] == "ERROR"


USER_TEST_FILE = '''
from fedtheory.extend import Evidence, InstanceSpace, Param, claim

SPACE = InstanceSpace(params=[Param("mu", 1e-2, 1.0, log=True), Param("kappa", 1.5, 1e3, log=True)],
                      defaults=[{"mu": 0.1, "kappa": 10.0}, {"mu": 0.5, "kappa": 100.0}])

def factor(p):
    return 1 - 1 / p["kappa"]

@claim(id="plugin.gd", reference="Doe (2026), Theorem 1", statement="GD contracts by 1 - mu/L", kind="bound",
       space=SPACE)
def gd_contraction(p):
    return Evidence(str(p), factor(p), 1 - 1 / p["kappa"], True, 1.0)

@claim(id="plugin.gd.twice", reference="Doe (2026), Theorem 2", statement="GD contracts by 1 - 2 mu/L",
       kind="bound", space=SPACE)
def gd_twice(p):
    bound = 1 - 2 / p["kappa"] if p["kappa"] > 20 else 1.0
    return Evidence(str(p), factor(p), bound, factor(p) <= bound, factor(p) / bound)

def test_ordinary():
    assert True
'''


def test_the_plugin_collects_claims_reports_failures_in_sentences_and_writes_the_ledger(pytester) -> None:
    pytester.makepyfile(test_mine=textwrap.dedent(USER_TEST_FILE))
    result = pytester.runpytest("-p", "no:cacheprovider", "--fedtheory-examples", "8")
    result.assert_outcomes(passed=3, failed=2)  # ordinary, gd[ledger], gd[hypothesis]; gd_twice both items
    result.stdout.fnmatch_lines(["*plugin.gd.twice (Doe (2026), Theorem 2): VIOLATED*",
                                 "*fails on {'mu': 0.5, 'kappa': 100.0}: measured 0.99, bound/closed form 0.98*",
                                 "*claims ledger report in fedtheory-claims/claims.json*"])
    records = json.loads((pytester.path / "fedtheory-claims" / "claims.json").read_text())
    assert {r["id"]: r["status"] for r in records} == {"plugin.gd": "holds", "plugin.gd.twice": "VIOLATED"}


def test_the_plugin_runs_the_worst_case_search_on_request(pytester) -> None:
    pytester.makepyfile(test_mine=textwrap.dedent(USER_TEST_FILE))
    result = pytester.runpytest("-p", "no:cacheprovider", "--fedtheory-examples", "0", "--fedtheory-worst-case",
                                "--fedtheory-evaluations", "40", "-k", "worst")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*plugin.gd.twice: the worst-case search found a counterexample*"])


CONTRADICTING_FILE = '''
from fedtheory.extend import Evidence, InstanceSpace, Param, claim

SPACE = InstanceSpace(params=[Param("mu", 1e-2, 1.0, log=True)], defaults=[{"mu": 0.1}])

@claim(id="plugin.says_holds", reference="r", statement="measured <= 1", kind="bound", space=SPACE)
def says_holds(p):
    return Evidence(str(p), 5.0, 1.0, True, 5.0)  # holds=True, but its own numbers say 5 > 1
'''


def _says_holds_above_its_bound(point: dict) -> Evidence:
    return Evidence(str(point), 5.0, 1.0, True, 5.0)


def test_a_bound_claim_saying_holds_above_its_bound_fails_everywhere() -> None:
    """The one consistency check (fedtheory.claims.registry.judged_evidence) judges the ledger, property_test and
    the worst-case search alike: measured 5 above bound 1 with holds=True is refused by all three."""
    c = claim(id="mylab.says_holds", reference="r", statement="measured <= 1", kind="bound",
              space=SPACE)(_says_holds_above_its_bound)
    result = run(c)
    assert result.status == "ERROR" and "measured 5 > bound 1" in result.error
    with pytest.raises(AssertionError, match="mylab.says_holds at .*measured 5 > bound 1"):
        property_test(c, max_examples=5)
    assert worst_case(c, evaluations=10).counterexample


def test_the_plugins_ledger_and_hypothesis_items_agree_on_a_contradicting_claim(pytester) -> None:
    pytester.makepyfile(test_contradicting=textwrap.dedent(CONTRADICTING_FILE))
    result = pytester.runpytest("-p", "no:cacheprovider", "--fedtheory-examples", "5", "--fedtheory-worst-case",
                                "--fedtheory-evaluations", "10")
    result.assert_outcomes(failed=3)  # [ledger], [hypothesis] and [worst-case]: none of them passes it
    result.stdout.fnmatch_lines(["*claim plugin.says_holds [[]ledger[]]*", "*measured 5 > bound 1*",
                                 "*claim plugin.says_holds [[]hypothesis[]]*", "*measured 5 > bound 1*"])


def test_the_builtin_ledger_runs_through_the_same_plugin(pytester) -> None:
    pytester.makepyfile(test_empty="def test_nothing():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--fedtheory-ledger", "--fedtheory-paper", "foundation")
    n_foundation = sum(c.paper == "foundation" for c in load_all().values())
    result.assert_outcomes(passed=1 + n_foundation)
    assert (pytester.path / "fedtheory-claims" / "claims.md").exists()


def test_bad_plugin_options_are_usage_errors(pytester) -> None:
    pytester.makepyfile(test_empty="def test_nothing():\n    pass\n")
    result = pytester.runpytest("--fedtheory-ledger", "--fedtheory-paper", "nosuch")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --fedtheory-paper: unknown paper key(s)*nosuch*"])


def test_the_algorithm_extension_api_is_public_and_documented() -> None:
    import fedtheory.algorithms as algorithms
    import fedtheory.local as local
    import fedtheory.strategies as strategies

    for name in ("Algorithm", "FederatedAlgorithm", "FederatedState", "State", "Draw", "RoundLog", "upload_log",
                 "dense_log", "aggregation_weights", "threshold", "register_algorithm"):
        assert name in algorithms.__all__ and getattr(algorithms, name).__doc__, name
    assert "local_gd" in local.__all__ and local.local_gd.__doc__
    assert strategies.__all__ and all(callable(getattr(strategies, n)) for n in strategies.__all__)


def test_the_example_package_uses_only_the_public_api() -> None:
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "examples" / "momentum_fedavg"
    imports = [m for p in root.rglob("*.py") for m in re.findall(r"^(?:from|import) (fedtheory[\w.]*)",
                                                                  p.read_text(), flags=re.M)]
    assert imports and not [m for m in imports if any(part.startswith("_") for part in m.split("."))], imports


def test_every_type_a_replay_through_round_given_needs_is_public() -> None:
    """A user replaying recorded coins builds the algorithm's draw and state types and calls ``round_given``:
    every type that ``init``, ``draw`` and ``outcomes()`` return, for every registered algorithm, is importable
    from ``fedtheory.algorithms`` under its own name (the one definition, not a copy) and documented."""
    import dataclasses

    import numpy as np

    import fedtheory.algorithms as algorithms
    from fedtheory.algorithms import ALGORITHMS
    from fedtheory.problems import quadratic

    seen: set[type] = set()
    for name, cls in sorted(ALGORITHMS.items()):
        alg = cls.example()
        maker = getattr(cls, "example_problem", None)
        problem = maker() if callable(maker) else quadratic(5, 4, mu=0.5, L=2.0, delta_B=0.3, zeta2=1.0, seed=0)
        state = alg.init(problem, np.zeros(problem.dim))
        types = {type(state)}
        if hasattr(alg, "draw") and hasattr(alg, "round_given"):
            types.add(type(alg.draw(problem, state, np.random.default_rng(0))))
            try:
                types |= {type(draw) for draw, _ in alg.outcomes(problem, state)}
            except (ValueError, NotImplementedError, AttributeError):
                pass  # stochastic or unbounded draws cannot be enumerated (the draw above is checked)
        for kind in types:
            assert getattr(algorithms, kind.__name__, None) is kind, \
                f"{name}: {kind.__module__}.{kind.__name__} is not exported by fedtheory.algorithms"
            assert kind.__name__ in algorithms.__all__, (name, kind.__name__)
            auto = f"{kind.__name__}(" if dataclasses.is_dataclass(kind) else None  # dataclass's generated doc
            assert kind.__doc__ and not (auto and kind.__doc__.startswith(auto)), f"{kind.__name__} needs a docstring"
        seen |= types
    assert algorithms.Draw in seen and algorithms.FederatedState in seen  # the classic algorithms' own types
