"""Your own theorem as a claim, checked with everything the built-in ledger has.

A claim is a statement, its reference, its kind, the theorem's class as an instance space, and a check that takes
one instance and returns :class:`Evidence` (measured, bound or closed form, verdict, tightness)::

    from fedtheory.extend import Evidence, InstanceSpace, Param, claim

    space = InstanceSpace(params=[Param("mu", 1e-2, 1.0, log=True), Param("kappa", 1.5, 1e3, log=True)],
                          defaults=[{"mu": 0.1, "kappa": 10.0}])

    @claim(id="mylab.gd.contraction", reference="Doe (2026), Theorem 1", kind="bound", space=space,
           statement="GD with step 1/L contracts the distance to x* by at least 1 - mu/L per step")
    def gd_contraction(point: dict) -> Evidence:
        ...  # build the instance, measure, compare with the bound
        return verdict(point, measured=ratio, bound=bound, rtol=1e-12)  # holds iff ratio <= bound (1 + 1e-12)

Then, exactly as for the built-in claims:

* :func:`run` checks it on the space's default points (a :class:`ClaimResult`: status, evidence, tightness);
* :func:`property_test` draws hypothesis examples from the space (an ``AssertionError`` names the point);
* :func:`worst_case` searches the space for the largest measured / bound, and :func:`pep_worst_case` gives the
  exact worst case over the function class when the claim declares a PEP formulation (``pep=``);
* :func:`write_report` writes ``claims.json`` and ``claims.md`` as ``fedtheory verify`` does;
* in a pytest test file, a claim declared at module level is collected as test items by fedtheory's pytest
  plugin (``pytest --fedtheory-worst-case`` adds the search), and the session writes the ledger report.

A claim expected to be false (``expected="violated"``) must *find* its counterexample; ``"exploratory"`` only
measures. Bad declarations are refused with the field named when the decorator is applied (see
:func:`fedtheory.claims.registry.declaration`): an id already taken by a built-in claim or by another of your
claims, and default points of the space with a missing, unknown or out-of-range parameter. What a check returns
is refused when it cannot be a verdict (a non-finite number that "holds", an array where a number belongs, a bound
claim that "holds" with measured > bound): the claim's result is an error naming the claim and the field, and the
other claims' results are unaffected. :func:`run`, :func:`property_test`, :func:`worst_case` and the plugin's items
judge it through the same check (:func:`fedtheory.claims.registry.judged_evidence`), so they agree. :func:`verdict` computes verdict and tightness from measured and bound with
these rules.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .claims import load_all
from .claims.registry import (
    KINDS,
    Claim,
    ClaimResult,
    Evidence,
    Expectation,
    Kind,
    NotAVerdict,
    declaration,
    evaluate,
    judged_evidence,
    verdict,
    with_check,
)
from .claims.space import InstanceSpace, Param
from .optional import require
from .report import write_reports
from .worstcase import SearchResult, adversarial_search, pep_worst_case

__all__ = ["KINDS", "Claim", "ClaimResult", "Evidence", "InstanceSpace", "Param", "SearchResult", "claim", "run",
           "property_test", "worst_case", "pep_worst_case", "write_report", "verdict"]

#: The ids of the claims declared through :func:`claim` in this process, with where each check is defined
#: (module and qualified name): a second declaration of an id from elsewhere is refused, a re-import of the same
#: module (pytest, importlib.reload) is not.
_DECLARED: dict[str, tuple[str, str]] = {}


def claim(*, id: str, statement: str, kind: Kind, reference: str = "", space: InstanceSpace | None = None,
          instances: Callable[[bool], Iterable[Any]] | None = None, expected: Expectation = "holds",
          paper: str = "user", derived: bool = False, notes: str = "", cites: Sequence[str] = (),
          pep: Callable[[Any], tuple[float, float] | None] | None = None
          ) -> Callable[[Callable[[Any], Evidence]], Claim]:
    """Decorator turning ``check(instance) -> Evidence`` into a :class:`Claim` (not added to fedtheory's own
    ledger: ``fedtheory verify`` stays the papers' ledger).

    ``space`` declares the theorem's class (default points, hypothesis examples and the worst-case search all
    derive from it); ``instances`` (a function ``thorough -> instances``) is the alternative for claims without
    a class to search. ``pep(instance) -> (PEP worst value, bound)`` is an exact worst case over the function
    class when you have a performance-estimation formulation (see :mod:`fedtheory.pep` for examples).
    """
    if isinstance(id, str) and id in load_all():
        raise ValueError(f"claim id {id!r} is already a built-in claim of fedtheory; choose another id (a prefix "
                         f"of your own, e.g. 'mylab.{id}')")

    fields = declaration(id=id, paper=paper, reference=reference, statement=statement, kind=kind,
                         instances=instances, expected=expected, derived=derived, notes=notes, space=space,
                         cites=cites, pep=pep)
    if space is not None:
        space.check_defaults(f"claim {id!r}")

    def wrap(check: Callable[[Any], Evidence]) -> Claim:
        where = (getattr(check, "__module__", "?"), getattr(check, "__qualname__", repr(check)))
        previous = _DECLARED.get(id)
        if previous is not None and previous != where:
            raise ValueError(f"claim id {id!r} is declared twice: by {previous[0]}.{previous[1]} and by "
                             f"{where[0]}.{where[1]}; give each claim its own id")
        c = with_check(fields, check)
        _DECLARED[id] = where
        return c

    return wrap


def run(c: Claim, thorough: bool = False, budget: float | None = None) -> ClaimResult:
    """Check ``c`` on its default instances (``thorough``: the space's thorough points too) within a wall-clock
    ``budget`` in seconds (default: the ledger's per-claim budget, :mod:`fedtheory.claims.budget`; ``math.inf``:
    none). A check that runs past it ends as an ERROR naming the budget."""
    return evaluate(c, thorough, budget=budget)


def property_test(c: Claim, max_examples: int = 25) -> int:
    """Draw points from the claim's space with hypothesis and check each; returns the number of examples run.

    A claim expected to hold must hold at every point (``AssertionError`` naming the first failing point that
    hypothesis shrinks to); a claim expected to be violated must be violated at some point (``AssertionError``
    when none is found); an exploratory claim is only run. Derandomized: the same points on every run.
    """
    if c.space is None:
        raise ValueError(f"claim {c.id!r} declares no space: property tests draw from the theorem's class")
    require("hypothesis", "fedtheory.extend.property_test")
    from hypothesis import HealthCheck, Phase, find, given, settings
    from hypothesis.errors import NoSuchExample

    config = settings(max_examples=max_examples, deadline=None, database=None, derandomize=True,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

    def judged(point: dict) -> Evidence:
        # the ledger's own consistency check (judged_evidence): a bound claim that says "holds" above its bound
        # fails here exactly as it errors in the ledger's [ledger] item
        try:
            return judged_evidence(c, c.check(c.space.build(point)))
        except (NotAVerdict, TypeError) as exc:
            raise AssertionError(f"{c.id} at {point}: {exc}") from None

    if c.expected == "violated":
        try:
            # Only the existence of a violation is asserted, so the shrink phase (hundreds of further checks to
            # minimise the point found) is skipped.
            point = find(c.space.strategy(), lambda p: not judged(p).holds,
                         settings=settings(config, max_examples=max_examples * 4,
                                           phases=[Phase.explicit, Phase.reuse, Phase.generate]))
        except NoSuchExample:
            raise AssertionError(f"{c.id}: expected to be false, but no violation among {max_examples * 4} points "
                                 "drawn from its space") from None
        return 1 if point is not None else 0
    runs = []

    @config
    @given(point=c.space.strategy())
    def prop(point: dict) -> None:
        e = judged(point)
        runs.append(point)
        if c.expected == "holds":
            assert e.holds, (f"{c.id} fails at {point}: measured {e.measured:.6g}, bound/closed form "
                             f"{e.theory:.6g}")

    prop()
    return len(runs)


def worst_case(c: Claim, evaluations: int = 200, seed: int = 0) -> SearchResult:
    """The largest measured / bound over the claim's space (random starts refined by Nelder-Mead; see
    :mod:`fedtheory.worstcase`); ``.counterexample`` is True when the claim's own check fails at that point."""
    if c.space is None:
        raise ValueError(f"claim {c.id!r} declares no space: the worst-case search explores the theorem's class")
    return adversarial_search(c, evaluations=evaluations, seed=seed)


def write_report(results: Sequence[ClaimResult], out: str | Path,
                 worst: dict[str, dict] | None = None) -> Path:
    """``claims.json`` and ``claims.md`` in ``out`` (created), as ``fedtheory verify`` writes them."""
    path = Path(out)
    write_reports(list(results), path, worst)
    return path
