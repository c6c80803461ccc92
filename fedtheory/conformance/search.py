"""``check(impl, claims=FAMILY, **hyper) -> Report``: run a family's properties with hypothesis and shrink.

Each property is searched with hypothesis (derandomized, no example database, so a verdict is the same on
every run and machine). On a failure hypothesis shrinks the case to a minimal one; the report keeps it as a
:class:`Counterexample` (the case dict: instance parameters and seeds) that :meth:`Counterexample.reproduce`
re-runs in one call. Shrinking has a wall-clock budget per property: after it, untried cases are not run
(treated as passing), so hypothesis settles on the smallest failing case found so far and replays it from a
cache; ``Failure.shrink_budget_hit`` records that this happened.
"""
from __future__ import annotations

import json
import time
import traceback
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings

from .families import VARIATIONS, check_hyper, default_hyper, properties_of, property_by_id, varied_hyper
from .kit import HOLDS, MAX_CLIENTS, NOT_APPLICABLE, VIOLATED, Outcome, Property
from .tolerances import IDENTITY_RTOL

__all__ = ["check", "Report", "PropertyResult", "Counterexample", "SEARCH_SEED", "SHRINK_BUDGET_S", "PASS", "FAIL",
           "INCONCLUSIVE"]

#: A report's verdicts: no property violated and the core ones checked / a property violated / nothing violated
#: but a core property did not apply, or no property applied at all (``fedtheory conform`` exits 0 / 1 / 3).
PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"

#: Examples per property in the default profile (cheap properties / the convergence runs), and per core property
#: at each kit-drawn hyperparameter set.
DEFAULT_EXAMPLES = (20, 8)
VARIED_EXAMPLES = 8
SHRINK_BUDGET_S = 6.0
#: The seed of every search. Hypothesis derandomizes from a digest of the search function's source; this is that
#: digest for the source the kit's recorded verdicts were made with, pinned so that editing the search code does
#: not change the cases (and the verdicts) of every property.
SEARCH_SEED = int("15763956389102647341626104388299867016218382146390431712437898463037144591644570619152573351610994"
                  "104254946622764220")


@dataclass(frozen=True)
class Counterexample:
    """The shrunk failing case: enough to reproduce in one call (``reproduce(impl)``)."""

    property_id: str
    case: Mapping[str, Any]
    hyper: Mapping[str, Any]
    rtol: float

    def reproduce(self, impl: Any) -> Outcome:
        return _evaluate(property_by_id(self.property_id), impl, self.case, self.hyper, self.rtol)

    def as_dict(self) -> dict:
        return {"property_id": self.property_id, "case": _plain(self.case), "hyper": _plain(self.hyper),
                "rtol": self.rtol}

    def __str__(self) -> str:
        return f"{_describe(self.case)} (reproduce with Counterexample(**this.as_dict()).reproduce(impl))"


@dataclass(frozen=True)
class PropertyResult:
    prop: Property
    status: str                      # "holds" | "violated" | "not applicable" (the ledger's words)
    measured: float                  # worst measured value over the examples (the failing one on failure)
    theory: float
    examples: int
    seconds: float
    diagnosis: str = ""
    counterexample: Counterexample | None = None
    shrink_budget_hit: bool = False

    def as_dict(self) -> dict:
        return {"property": self.prop.id, "reference": self.prop.reference, "statement": self.prop.statement,
                "status": self.status, "measured": _num(self.measured), "theory": _num(self.theory),
                "examples": self.examples, "seconds": round(self.seconds, 3), "diagnosis": self.diagnosis,
                "counterexample": None if self.counterexample is None else self.counterexample.as_dict(),
                "shrink_budget_hit": self.shrink_budget_hit}

    def __str__(self) -> str:
        """One sentence: the property, its verdict, and for a failure the counterexample and the difference."""
        head = f"{self.prop.id} ({self.prop.reference}): {self.prop.statement}"
        if self.status != VIOLATED:
            return f"{head} -- {self.status} on {self.examples} examples"
        where = f" on {self.counterexample}" if self.counterexample is not None else ""
        return (f"{head} -- FAILS{where}: measured {_fmt(self.measured)} against {_fmt(self.theory)}"
                + (f"; {self.diagnosis}" if self.diagnosis else ""))


@dataclass
class Report:
    family: str
    name: str
    hyper: Mapping[str, Any]
    results: list[PropertyResult] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """"fail" when a property is violated; "inconclusive" when none is but a core property (one that compares
        the implementation's own output with the paper's) did not apply, or no property applied at all: the
        report then says what could not be checked and why (:attr:`unchecked`); "pass" otherwise."""
        if self.failures:
            return FAIL
        if self.unchecked_core or not any(r.status == HOLDS for r in self.results):
            return INCONCLUSIVE
        return PASS

    @property
    def passed(self) -> bool:
        """The verdict is "pass": nothing violated and every core property checked."""
        return self.verdict == PASS

    @property
    def unchecked(self) -> list[PropertyResult]:
        """The properties that did not apply (their ``diagnosis`` says why)."""
        return [r for r in self.results if r.status == NOT_APPLICABLE]

    @property
    def unchecked_core(self) -> list[PropertyResult]:
        return [r for r in self.unchecked if r.prop.core]

    def why_inconclusive(self) -> str:
        """One line per core property that could not be checked, with the reason ('' unless inconclusive)."""
        if self.verdict != INCONCLUSIVE:
            return ""
        missing = self.unchecked_core or self.unchecked
        if not missing:
            return "no property was run"
        return "\n".join(f"not checked: {r.prop.id} ({r.prop.statement}): {r.diagnosis}" for r in missing)

    @property
    def failures(self) -> list[PropertyResult]:
        return [r for r in self.results if r.status == VIOLATED]

    def table(self) -> str:
        rows = [(r.prop.id, r.status, _fmt(r.measured), _fmt(r.theory), str(r.examples), f"{r.seconds:.1f}",
                 r.diagnosis) for r in self.results]
        header = ("property", "status", "measured", "theory", "examples", "s", "diagnosis")
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
        line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
        return "\n".join([line(header), line(tuple("-" * w for w in widths)), *map(line, rows)]
                         + ([f"inconclusive: {self.why_inconclusive()}"] if self.verdict == INCONCLUSIVE else []))

    def as_dict(self) -> dict:
        return {"implementation": self.name, "family": self.family, "hyper": _plain(self.hyper),
                "passed": self.passed, "verdict": self.verdict,
                "not_checked": [{"property": r.prop.id, "core": r.prop.core, "why": r.diagnosis} for r in self.unchecked],
                "results": [r.as_dict() for r in self.results]}

    def markdown(self) -> str:
        lines = [f"# Conformance of `{self.name}` as {self.family}", "",
                 f"Hyperparameters: `{json.dumps(_plain(self.hyper))}`. Verdict: **{self.verdict}**.", "",
                 "| property | reference | status | measured | theory | diagnosis |", "|---|---|---|---|---|---|"]
        for r in self.results:
            lines.append(f"| `{r.prop.id}` | {r.prop.reference} | {r.status} | {_fmt(r.measured)} | "
                         f"{_fmt(r.theory)} | {r.diagnosis} |")
        if self.verdict == INCONCLUSIVE:
            lines += ["", "Inconclusive: nothing failed, but these core properties could not be checked:", ""]
            lines += [f"- {line}" for line in self.why_inconclusive().splitlines()]
        for r in self.failures:
            lines += ["", f"## `{r.prop.id}`", "", r.prop.statement, "", "Shrunk counterexample "
                      "(`Counterexample(**this).reproduce(impl)`):", "",
                      f"```json\n{json.dumps(r.counterexample.as_dict(), indent=1)}\n```"]
        return "\n".join(lines) + "\n"


def _num(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def _short(value: Any) -> str:
    """A case parameter for a sentence: numbers as they are, arrays by their shape."""
    if isinstance(value, (list, tuple)) and len(value) > 4:
        return f"[{len(value)} values]"
    return str(value)


def _describe(case: Mapping[str, Any]) -> str:
    """A case for a sentence (the ``instance`` of an :class:`Outcome`)."""
    return ", ".join(f"{k}={_short(v)}" for k, v in _plain(case).items())


def _fmt(x: float | None) -> str:
    return "-" if x is None or not np.isfinite(x) else f"{x:.3g}"


def _plain(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def _evaluate(prop: Property, impl: Any, case: Mapping[str, Any], hyper: Mapping[str, Any], rtol: float) -> Outcome:
    """Run one property on one case; an exception from the implementation is a failure with its message."""
    try:
        with np.errstate(all="ignore"):
            out = prop.check(impl, case, hyper, rtol)
        return replace(out, instance=_describe(case))
    except Exception as exc:  # noqa: BLE001 -- the implementation under test may raise anything
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return Outcome(VIOLATED, float("nan"), float("nan"),
                       f"raised {type(exc).__name__}: {exc} ({where.filename.rsplit('/', 1)[-1]}:{where.lineno})",
                       _describe(case))


class _Fail(AssertionError):
    pass


def _cases(prop: Property, hyper: Mapping[str, Any], min_clients: int):
    """The property's case strategy, with instances of at least ``min_clients`` clients where it draws the kit's
    plain instances (a property that draws its own population, as ``own_sampler``'s 2..5 clients, keeps it)."""
    if min_clients == 1:
        return prop.cases(hyper)
    try:
        return prop.cases(hyper, min_clients=min_clients)
    except TypeError:  # its factory takes no instance keywords: it fixes the population itself
        return prop.cases(hyper)


def _search(prop: Property, impl: Any, hyper: Mapping[str, Any], rtol: float, max_examples: int,
            shrink: bool = True, min_clients: int = 1) -> PropertyResult:
    # shrink=False is a zero shrinking budget, not a change of hypothesis phases (which would change the cases)
    # A property with its own case count is a statistical test: a smaller case is not a simpler counterexample.
    budget = SHRINK_BUDGET_S if shrink and not prop.examples else 0.0
    cache: dict[str, Outcome] = {}
    seen = {"worst": -np.inf, "theory": np.nan, "n": 0, "fail": None, "budget_hit": False}
    start = time.perf_counter()

    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None, print_blob=False,
              phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck))
    @seed(SEARCH_SEED)
    @given(_cases(prop, hyper, min_clients))
    def run(case):
        if "na" in seen:
            return  # not applicable to this implementation: nothing to search
        key = json.dumps(_plain(case), sort_keys=True)
        if key not in cache:
            if seen["fail"] is not None and time.perf_counter() - start > budget:
                seen["budget_hit"] = True
                return  # out of shrinking budget: do not run new cases
            cache[key] = _evaluate(prop, impl, case, hyper, rtol)
            seen["n"] += 1
        out = cache[key]
        if out.status == NOT_APPLICABLE:
            seen["na"] = out.details
            return
        if out.status == HOLDS:
            if out.details:  # a pass with a qualification (a sampler judged under its own declared law)
                seen["note"] = out.details
            if np.isfinite(out.measured) and out.measured > seen["worst"]:
                seen["worst"], seen["theory"] = out.measured, out.theory
            return
        seen["fail"] = (key, case, out)  # hypothesis replays the shrunk case last
        raise _Fail(out.details)

    try:
        run()
    except _Fail:
        _, case, out = seen["fail"]
        cx = Counterexample(prop.id, _plain(case), _plain(hyper), rtol)
        return PropertyResult(prop, VIOLATED, out.measured, out.theory, seen["n"], time.perf_counter() - start,
                              out.details, cx, seen["budget_hit"])
    if "na" in seen:
        return PropertyResult(prop, NOT_APPLICABLE, np.nan, np.nan, seen["n"], time.perf_counter() - start, seen["na"])
    return PropertyResult(prop, HOLDS, seen["worst"], seen["theory"], seen["n"], time.perf_counter() - start,
                          seen.get("note", ""))


def check(impl: Any, claims: str = "fedavg", *, name: str | None = None, rtol: float = IDENTITY_RTOL,
          max_examples: int | None = None, properties: list[str] | None = None, fail_fast: bool = False,
          shrink: bool = True, vary: bool = True, fixed: Sequence[str] = (), min_clients: int = 1,
          **hyper: Any) -> Report:
    """Check ``impl`` (see :mod:`fedtheory.conformance.contract`) against the properties of ``claims``.

    ``hyper`` overrides the family's defaults (:func:`fedtheory.conformance.families.default_hyper`);
    ``rtol`` is the identity tolerance (1e-8 for float64 code, about 1e-4 for float32 code);
    ``max_examples`` overrides the default hypothesis examples per property; ``properties`` selects by id;
    ``fail_fast`` stops at the first failing property and ``shrink=False`` reports the first failing case
    unshrunk (both for screening many implementations, e.g. the kit's power measurement). ``vary`` (default) also
    runs the core properties at :data:`~fedtheory.conformance.families.VARIATIONS` hyperparameter sets drawn in the
    paper's ranges (:func:`~fedtheory.conformance.families.varied_hyper`), reported as "<property> @ <what changed>";
    ``fixed`` names the hyperparameters the implementation does not take (kept at their value there);
    ``min_clients`` > 1 draws instances of at least that many clients (for a method defined only from there on, e.g.
    secure aggregation; a property's own subsets of the clients, as ``expected_sampling``'s, are unchanged).
    """
    props = properties_of(claims)
    if properties is not None:
        unknown = set(properties) - {p.id for p in props}
        if unknown:
            raise ValueError(f"properties not in family {claims!r}: {sorted(unknown)}")
        props = tuple(p for p in props if p.id in properties)
    defaults = default_hyper(claims)
    unknown = set(hyper) - set(defaults)
    if unknown:
        raise ValueError(f"hyperparameters for {claims} are {sorted(defaults)}; unknown: {sorted(unknown)}")
    if not (0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1), got {rtol}")
    if not (isinstance(min_clients, int) and 1 <= min_clients <= MAX_CLIENTS):
        raise ValueError(f"min_clients must be an integer in 1..{MAX_CLIENTS} (the kit's instances have at most "
                         f"{MAX_CLIENTS} clients), got {min_clients!r}")
    if set(fixed) - set(defaults):
        raise ValueError(f"fixed must name hyperparameters of {claims} ({sorted(defaults)}); unknown: "
                         f"{sorted(set(fixed) - set(defaults))}")
    full = {**defaults, **hyper}
    check_hyper(claims, full)
    report = Report(claims, name or getattr(impl, "__qualname__", type(impl).__name__), full)
    for prop in props:
        n = max_examples or DEFAULT_EXAMPLES[1 if prop.expensive else 0]
        n = min(n, prop.examples) if prop.examples else n
        report.results.append(_search(prop, impl, full, rtol, n, shrink, min_clients))
        if fail_fast and report.results[-1].status == VIOLATED:
            return report
    if not vary:
        return report
    # the core properties again at hyperparameters the kit draws in the paper's ranges (the same every run)
    for index in range(VARIATIONS):
        varied = varied_hyper(claims, full, index, fixed)
        if varied == full:
            break
        note = ", ".join(f"{k}={v}" for k, v in varied.items() if v != full[k])
        for prop in (p for p in props if p.core and not p.expensive):
            res = _search(replace(prop, id=f"{prop.id} @ {note}"), impl, varied, rtol,
                          min(max_examples or VARIED_EXAMPLES, VARIED_EXAMPLES), shrink, min_clients)
            report.results.append(res)
            if fail_fast and res.status == VIOLATED:
                return report
    return report
