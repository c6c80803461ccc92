"""The claims ledger: every checkable statement of a paper, with the check that tests it.

A :class:`Claim` names its paper, the theorem or equation, the statement, the kind of check (see docs/design.md's
verification conventions) and whether the paper's statement is expected to hold. Its ``check`` takes one
instance (a problem, or a dict of parameters) and returns :class:`Evidence`; ``instances(thorough)`` yields
the default instances that ``fedtheory verify`` runs. Tests call the same ``check`` on hypothesis-drawn
instances, so nothing is written twice.

Expectations:
  * ``"holds"``: the statement is believed true; a violated instance fails ``fedtheory verify``.
  * ``"violated"``: the paper's statement is false; the check must *find* the recorded counterexample, and
    a corrected statement is registered next to it under its own id. Losing the counterexample fails too.
  * ``"exploratory"``: measured and reported (e.g. a qualitative experiment), never a failure. Its Evidence's
    ``holds`` is its shape test (does the stand-in show the paper's shape?): it decides whether the statements it
    cites are *reproduced* (:func:`fedtheory.coverage.statements.shape_verdicts`), so it tests what ``statement`` says.
"""
from __future__ import annotations

import importlib
import math
import re
import time
import traceback
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, Mapping, Sequence

import numpy as np

from ..papers import LEDGER_KEYS
from ..papers.inventory import STATEMENT_KINDS
from .budget import CLAIM_BUDGET_SECONDS, THOROUGH_BUDGET_SECONDS, BudgetExceeded, wall_clock_budget
from .certify import Certification, RunCertifier, recording
from .space import InstanceSpace
from .tolerances import BOUND_CONSISTENCY_ATOL, BOUND_CONSISTENCY_RTOL

Kind = Literal["identity", "bound", "tightness", "rate", "metamorphic", "monotonicity", "fixed_point",
               "statistical", "counterexample", "invariant", "qualitative"]
Expectation = Literal["holds", "violated", "exploratory"]
Cost = Literal["fast", "slow"]
COSTS = ("fast", "slow")
#: What part of an algorithm a bound or rate claim is about (see :attr:`Claim.scope`).
SCOPES = ("run", "step", "local")
EXPECTATIONS = ("holds", "violated", "exploratory")
#: What kind of false statement a claim expected to be violated records: ``"printed"`` (the paper's statement as
#: printed), ``"reading"`` (the paper's statement under one reading of an ambiguous text, named in ``reading``
#: with the verdict under the other reading) or ``"ours"`` (fedtheory's own reading, or folklore, that the paper
#: does not state: its maths is checked, but it is not a statement of the paper).
FALSE_KINDS = ("printed", "reading", "ours")
#: The ledger's keys, in order (registered once, in fedtheory/papers/__init__.py).
PAPERS = LEDGER_KEYS
#: The statuses of a claim that fails ``fedtheory verify`` (exit 1).
FAILING_STATUSES = ("VIOLATED", "COUNTEREXAMPLE-LOST", "ERROR", "RUN-DIFFERS")
KINDS = ("identity", "bound", "tightness", "rate", "metamorphic", "monotonicity", "fixed_point", "statistical",
         "counterexample", "invariant", "qualitative")


@dataclass(frozen=True)
class Evidence:
    """The outcome of one check on one instance.

    ``measured`` and ``theory`` are the two numbers compared (PEPit style); ``tightness`` is
    measured / theory for bounds (1 means the bound is attained); ``holds`` is the verdict for this instance.

    What cannot be a verdict is refused here, with the field named: ``measured``, ``theory`` and ``tightness``
    must be real scalars (a Python number or a NumPy scalar / 0-d array), ``holds`` a single truth value, and a
    non-finite ``measured`` or ``theory`` can never hold (NaN compares false with everything, so a check that
    forgot to handle it would otherwise pass). :func:`verdict` builds the Evidence of a bound from measured and
    bound with these rules, so a check need not write them by hand.
    """

    instance: str
    measured: float
    theory: float
    holds: bool
    tightness: float | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.instance, str):
            object.__setattr__(self, "instance", str(self.instance))
        for name in ("measured", "theory", "tightness"):
            value = getattr(self, name)
            if value is None and name == "tightness":
                continue
            object.__setattr__(self, name, _real_scalar(name, value))
        object.__setattr__(self, "holds", _truth_value(self.holds))
        if not isinstance(self.details, Mapping):
            raise TypeError(f"Evidence.details must be a mapping (a dict of extra numbers), got "
                            f"{type(self.details).__name__}")
        if self.holds:
            for name in ("measured", "theory"):
                if not math.isfinite(getattr(self, name)):
                    raise ValueError(f"Evidence at {self.instance}: {name} is {getattr(self, name)} but holds=True; "
                                     "a non-finite value cannot be a verdict that holds (return holds=False, or "
                                     "use fedtheory.extend.verdict)")

    def as_dict(self) -> dict[str, Any]:
        return {"instance": self.instance, "measured": _num(self.measured), "theory": _num(self.theory),
                "holds": bool(self.holds), "tightness": _num(self.tightness),
                "details": {str(k): _jsonable(v) for k, v in self.details.items()}}


def _real_scalar(name: str, value: Any) -> float:
    """``value`` as a float, or TypeError naming the field: a bool, a complex number, a string or an array with
    more than one element is not a measured number."""
    if isinstance(value, (bool, str, bytes, complex)) or value is None:
        raise TypeError(f"Evidence.{name} must be a real number, got {type(value).__name__} {value!r}")
    shape = getattr(value, "shape", ())
    if shape not in ((), None):
        raise TypeError(f"Evidence.{name} must be a single real number, got an array of shape {tuple(shape)} "
                        "(reduce it first, e.g. its max, and put the array in details)")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"Evidence.{name} must be a real number, got {type(value).__name__} {value!r}") from None
    if getattr(value, "dtype", None) is not None and getattr(value.dtype, "kind", "f") == "c":
        raise TypeError(f"Evidence.{name} must be real, got a complex value {value!r}")
    return out


def _truth_value(value: Any) -> bool:
    """``holds`` as a bool, or TypeError: an array of verdicts is ambiguous (reduce it with all() or any())."""
    if isinstance(value, bool):
        return value
    shape = getattr(value, "shape", ())
    if shape not in ((), None):
        raise TypeError(f"Evidence.holds must be a single truth value, got an array of shape {tuple(shape)} "
                        "(reduce it with all() or any())")
    if type(value).__name__ in ("bool_", "bool") or isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise TypeError(f"Evidence.holds must be True or False, got {type(value).__name__} {value!r}")


def verdict(instance: Any, measured: float, bound: float, *, rtol: float = 0.0, atol: float = 0.0,
            details: Mapping[str, Any] | None = None) -> Evidence:
    """The Evidence of a bound ``measured <= bound`` at ``instance``: holds when measured <= bound (1 + rtol) +
    atol; the tightness is measured / bound (for a positive bound); a non-finite measured value or bound never
    holds (NaN is a failure, not a pass). ``rtol`` and ``atol`` are the rounding slack the comparison allows:
    state why in a comment where you pass them."""
    measured = _real_scalar("measured", measured)
    bound = _real_scalar("theory", bound)
    if not (math.isfinite(rtol) and rtol >= 0 and math.isfinite(atol) and atol >= 0):
        raise ValueError(f"verdict: rtol and atol must be finite and >= 0, got rtol={rtol}, atol={atol}")
    finite = math.isfinite(measured) and math.isfinite(bound)
    holds = finite and measured <= bound + rtol * abs(bound) + atol
    tightness = measured / bound if finite and bound > 0 else None
    return Evidence(str(instance), measured, bound, holds, tightness, dict(details or {}))


def _num(x: Any) -> Any:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else str(x)


def _jsonable(v: Any) -> Any:
    try:
        if isinstance(v, np.ndarray):
            return v.tolist()
        if isinstance(v, (np.floating, np.integer, np.bool_)):
            return v.item()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return v


_CITE = re.compile(r"^(?:(?P<paper>[a-z]+):)?(?P<kind>[A-Z][a-z]+|eq\.) (?P<number>\S+)$")


@dataclass(frozen=True)
class Citation:
    """A structured reference to one numbered statement: ``Citation("fedred", "Lemma", "10")``.

    ``label`` is the statement as printed in the paper ("Lemma 10", "eq. (15)"), the key of the paper's
    inventory in :mod:`fedtheory.papers`.
    """

    paper: str
    kind: str
    number: str

    @property
    def label(self) -> str:
        return f"{self.kind} {self.number}"

    @classmethod
    def parse(cls, text: str, default_paper: str) -> "Citation":
        """``"Lemma 10"`` (of ``default_paper``) or ``"fedred:Lemma 10"``; ValueError naming the text otherwise."""
        m = _CITE.match(text)
        if m is None or m["kind"] not in STATEMENT_KINDS:
            raise ValueError(f"cites entry {text!r}: expected '<Kind> <number>' or '<paper>:<Kind> <number>' "
                             f"with Kind one of {STATEMENT_KINDS}, e.g. 'Lemma 10', 'eq. (15)', 'fedred:Theorem 3'")
        return cls(m["paper"] or default_paper, m["kind"], m["number"])


def paper_short_citation(paper: str) -> str | None:
    """``"Jiang, Rodomanov & Stich (ICML 2024)"``: the authors and venue of a paper with an inventory in
    :mod:`fedtheory.papers` (the title left out), or None for a paper key without one (classic, foundation)."""
    try:
        citation = importlib.import_module(f"fedtheory.papers.{paper}").PAPER.citation
    except ModuleNotFoundError:
        return None
    m = re.match(r'^(?P<authors>[^"]*?),? *"[^"]*"(?: *\((?P<venue>[^)]*)\))?', citation)
    if m is None:
        return citation
    return f"{m['authors']} ({m['venue']})" if m["venue"] else m["authors"]


@dataclass(frozen=True)
class Claim:
    """One checkable statement: its check, its instances, and what it cites.

    ``source`` is free text naming where the statement comes from when it is not (only) a numbered statement of
    an inventoried paper (a textbook theorem, "derived by fedtheory"); the human-readable :attr:`reference` is
    derived from it and from :attr:`cites`, so the statement numbers are written once.
    """

    id: str
    paper: str
    source: str
    statement: str
    kind: Kind
    check: Callable[[Any], Evidence]
    instances: Callable[[bool], Iterable[Any]]
    expected: Expectation = "holds"
    derived: bool = False
    notes: str = ""
    #: The theorem's instance class (:class:`~fedtheory.claims.space.InstanceSpace`); None for claims that only
    #: list default instances. ``instances`` derives from it when it is given.
    space: Any = None
    #: The numbered statements of the paper this claim checks, as printed ("Lemma 10", "Theorem B.1",
    #: "eq. (15)", "Algorithm 2", "Table 1"); "fedred:Lemma 10" names another paper's. The coverage table
    #: (:mod:`fedtheory.papers`) and the proof chains of ``fedtheory verify --explain`` are built from them.
    cites: tuple[str, ...] = ()
    #: The worst case over the claim's whole function class (exact, or an upper bound over a relaxation such as
    #: the two-client one of DANE and FedRed-GD), where a performance-estimation formulation exists: instance -> (the PEP's worst value, the claim's bound at that instance), or None where it does
    #: not apply to that instance (see :mod:`fedtheory.pep`; ``verify --worst-case`` reports the ratio).
    pep: Callable[[Any], tuple[float, float] | None] | None = None
    #: "fast" or "slow": whether the parametrised property test of every claim with a space runs this claim's
    #: hypothesis examples in the default test run ("slow" claims run under ``pytest -m slow``). A claim is slow
    #: when one example takes more than about a second. ``fedtheory verify --jobs`` also starts slow claims first
    #: when it has no timings of an earlier run (:mod:`fedtheory.ledger`).
    cost: Cost = "fast"
    #: For a claim expected to be violated, which kind of false statement it records (one of
    #: :data:`FALSE_KINDS`); empty otherwise.
    false_kind: str = ""
    #: For ``false_kind="reading"``: the reading under which the statement is false, and the verdict under the
    #: other reading (e.g. "sign(0) = 0 as printed; under a sub-gradient, as eq. (11) needs, both hold").
    reading: str = ""
    #: What this check covers less than the statements it cites (participation, horizon, the proof's weaker
    #: form, a factor); empty when it checks them as printed. The coverage table reports a statement checked
    #: only this way as ``checked-narrower``, with this text.
    narrower: str = ""
    #: Why this bound or rate claim cannot bite (empty when it can): no instance of the statement's class brings a
    #: correct run within :data:`~fedtheory.claims.tolerances.BITE` of the bound (so a slip that moves the
    #: measured value by a constant factor can pass; :func:`fedtheory.report.ledger.loose_bounds` lists the
    #: claims below it that do not say why), or its default instances cannot reject the broken variants of
    #: ``benchmarks/mutation/discrimination.py`` (a server that does not learn, a sign flipped, a drift
    #: correction removed). claims.md and the coverage page show the reason.
    non_discriminating: str = ""
    #: What part of an algorithm a bound or rate claim is about (one of :data:`SCOPES`), which decides the broken
    #: variants ``benchmarks/mutation/discrimination.py`` requires it to reject: ``"run"`` (default: runs of the
    #: algorithm; a server that does not learn, ascent, a correction removed, a state not carried), ``"step"``
    #: (one round from whatever state it is given, as a per-round lemma: a state not carried is another state
    #: the algorithm can be in, so that variant does not apply), ``"local"`` (the clients' local computation from
    #: a given state: the variants that break the local step, such as its correction dropped or sign-flipped).
    scope: str = "run"
    #: The algorithms this claim runs, by their ``name`` (``("fedred_gd",)``): the ledger certifies every round
    #: of them it records against the paper's equations (:mod:`fedtheory.claims.certify`), and a claim that runs
    #: an algorithm it does not declare is an error (so a reader knows what each verdict is about).
    runs: tuple[str, ...] = ()

    @property
    def reference(self) -> str:
        """The paper and the statements cited, e.g. ``"Jiang, Rodomanov & Stich (ICML 2024), Corollary 21; eq.
        (B.14)"``, followed by :attr:`source` when the claim gives one."""
        parts: list[str] = []
        by_paper: dict[str, list[str]] = {}
        for c in self.citations:
            by_paper.setdefault(c.paper, []).append(c.label)
        for key, labels in by_paper.items():
            short = paper_short_citation(key)
            parts.append(f"{short}, {'; '.join(labels)}" if short else "; ".join(labels))
        if self.source:
            parts.append(self.source)
        return " / ".join(parts)

    @property
    def citations(self) -> tuple["Citation", ...]:
        """The structured form of :attr:`cites`: (paper key, statement kind, number) each."""
        return tuple(Citation.parse(c, self.paper) for c in self.cites)

    def __call__(self, instance: Any) -> Evidence:
        return self.check(instance)


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    evidence: Sequence[Evidence]
    error: str | None
    seconds: float
    #: The certification of the algorithm runs the check recorded (:mod:`fedtheory.claims.certify`); None when
    #: the claim was evaluated without it.
    certification: Certification | None = None

    @property
    def status(self) -> str:
        """holds | VIOLATED | violated-as-recorded | COUNTEREXAMPLE-LOST | measured | ERROR | RUN-DIFFERS (the
        run differs from the paper's algorithm: whatever the check found is not about the paper's algorithm)."""
        if self.error is not None:
            return "ERROR"
        if self.differs is not None:
            return "RUN-DIFFERS"
        all_hold = all(e.holds for e in self.evidence)
        if self.claim.expected == "holds":
            return "holds" if all_hold else "VIOLATED"
        if self.claim.expected == "violated":
            return "COUNTEREXAMPLE-LOST" if all_hold else "violated-as-recorded"
        return "measured"

    @property
    def differs(self) -> str | None:
        """"the run differs from the paper's algorithm (NAME) at round r by ..." or None."""
        return self.certification.differs if self.certification is not None else None

    @property
    def failed(self) -> bool:
        return self.status in FAILING_STATUSES

    @property
    def worst_tightness(self) -> float | None:
        values = [e.tightness for e in self.evidence if e.tightness is not None and math.isfinite(e.tightness)]
        return max(values) if values else None

    def as_dict(self) -> dict[str, Any]:
        c = self.claim
        return {"id": c.id, "paper": c.paper, "reference": c.reference, "statement": c.statement,
                "kind": c.kind, "expected": c.expected, "derived": c.derived, "notes": c.notes,
                "false_kind": c.false_kind, "reading": c.reading, "narrower": c.narrower,
                "non_discriminating": c.non_discriminating,
                "cites": [f"{x.paper}:{x.label}" for x in c.citations],
                "runs": list(c.runs),
                "certification": self.certification.as_dict() if self.certification is not None else None,
                "status": self.status, "worst_tightness": _num(self.worst_tightness), "error": self.error,
                "seconds": self.seconds, "evidence": [e.as_dict() for e in self.evidence]}


REGISTRY: dict[str, Claim] = {}


def declaration(*, id: str, paper: str, reference: str, statement: str, kind: Kind,
                instances: Callable[[bool], Iterable[Any]] | None, expected: Expectation, derived: bool,
                notes: str, space: Any, cites: Sequence[str],
                pep: Callable[[Any], tuple[float, float] | None] | None, cost: Cost = "fast",
                false_kind: str = "", reading: str = "", narrower: str = "",
                non_discriminating: str = "", scope: str = "run", runs: Sequence[str] = ()) -> dict[str, Any]:
    """The fields of a claim, checked (a bad one is named in the error), before its check function is known.

    Built-in claims go through :func:`claim`, which also registers them; a researcher's own claims through
    :func:`fedtheory.extend.claim`, which does not. Both build the claim with :func:`with_check`.
    """
    def bad(field_name: str, what: str) -> ValueError:
        return ValueError(f"claim {id!r}: {field_name} {what}")

    if not isinstance(id, str) or not id.strip():
        raise ValueError(f"claim id must be a non-empty string, got {id!r}")
    for name, value in (("paper", paper), ("reference", reference), ("statement", statement)):
        if not isinstance(value, str):
            raise TypeError(f"claim {id!r}: {name} must be a string, got {type(value).__name__}")
    if not reference.strip() and not cites:
        raise bad("reference/cites", "are both empty: cite the paper's numbered statements (cites=('Lemma 10',)) or "
                                     "name the source in reference=")
    if kind not in KINDS:
        raise bad("kind", f"must be one of {KINDS}, got {kind!r}")
    if expected not in EXPECTATIONS:
        raise bad("expected", f"must be one of {EXPECTATIONS}, got {expected!r}")
    if (instances is None) == (space is None):
        raise bad("instances/space", "give exactly one of instances= (default instances) and space= (an "
                                     "InstanceSpace)")
    if space is not None:
        if not isinstance(space, InstanceSpace):
            raise TypeError(f"claim {id!r}: space must be a fedtheory InstanceSpace, got {type(space).__name__}")
        if not space.params:
            raise bad("space.params", "is empty: declare each parameter of the theorem's class with its range, "
                                      "e.g. Param('mu', 1e-3, 1.0, log=True)")
        if not space.defaults:
            raise bad("space.defaults", "is empty: give at least one default point (a dict of the parameters)")
        instances = space.instances
    elif not callable(instances):
        raise TypeError(f"claim {id!r}: instances must be a function thorough -> iterable of instances")
    if isinstance(cites, str):
        raise TypeError(f"claim {id!r}: cites must be a sequence of labels such as ('Lemma 10',), not a string")
    for text in cites:
        Citation.parse(text, paper)
    if cost not in COSTS:
        raise bad("cost", f"must be one of {COSTS}, got {cost!r}")
    if pep is not None and not callable(pep):
        raise TypeError(f"claim {id!r}: pep must be a function instance -> (PEP worst value, bound), got {pep!r}")
    _check_false_kind(bad, expected=expected, derived=derived, false_kind=false_kind, reading=reading,
                      narrower=narrower)
    if not isinstance(non_discriminating, str):
        raise TypeError(f"claim {id!r}: non_discriminating must be a string (the reason), got "
                        f"{type(non_discriminating).__name__}")
    if non_discriminating.strip() and kind not in ("bound", "rate"):
        raise bad("non_discriminating", f"is for bound and rate claims (a claim whose algorithm a broken variant "
                                        f"could still satisfy), not kind={kind!r}")
    if isinstance(runs, str) or not all(isinstance(name, str) and name for name in runs):
        raise TypeError(f"claim {id!r}: runs must be a sequence of algorithm names such as ('fedavg',), got {runs!r}")
    if scope not in SCOPES:
        raise bad("scope", f"must be one of {SCOPES}, got {scope!r}")
    if scope != "run" and kind not in ("bound", "rate"):
        raise bad("scope", f"is for bound and rate claims (which broken variants they must reject), not kind={kind!r}")
    return dict(id=id, paper=paper, source=reference.strip(), statement=statement, kind=kind, instances=instances,
                expected=expected, derived=derived, notes=notes, space=space, cites=tuple(cites), pep=pep,
                cost=cost, false_kind=false_kind, reading=reading.strip(), narrower=narrower.strip(),
                non_discriminating=non_discriminating.strip(), scope=scope, runs=tuple(runs))


def _check_false_kind(bad: Callable[[str, str], ValueError], *, expected: str, derived: bool, false_kind: str,
                      reading: str, narrower: str) -> None:
    """Only a claim expected to be violated says which kind of false statement it records (and, for a reading,
    the reading and the other reading's verdict; :func:`claim` requires the kind of every built-in one); only a
    check of a statement that holds can be narrower than it."""
    for name, value in (("false_kind", false_kind), ("reading", reading), ("narrower", narrower)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    if false_kind not in ("",) + FALSE_KINDS:
        raise bad("false_kind", f"must be one of {FALSE_KINDS} (or empty), got {false_kind!r}")
    if false_kind and expected != "violated":
        raise bad("false_kind", f"is {false_kind!r} but expected={expected!r}: only a claim expected to be "
                                "violated records a false statement")
    if derived and false_kind in ("printed", "reading"):
        raise bad("false_kind", f"is {false_kind!r} but the claim is derived: a derived statement is not the "
                                "paper's, so it is false_kind='ours'")
    if (false_kind == "reading") != bool(reading.strip()):
        raise bad("reading", "must name the reading and the verdict under the other reading exactly when "
                             "false_kind='reading'")
    if narrower.strip() and expected == "violated":
        raise bad("narrower", "is for checks of statements that hold; a recorded counterexample is not narrower")


def with_check(fields: dict[str, Any], check: Callable[[Any], Evidence]) -> Claim:
    """The :class:`Claim` of checked ``fields`` (:func:`declaration`) and its check function."""
    if not callable(check):
        raise TypeError(f"claim {fields['id']!r}: the check must be a function instance -> Evidence, got {check!r}")
    notes = fields["notes"] or (getattr(check, "__doc__", None) or "").strip()
    return Claim(**{**fields, "notes": notes}, check=check)


def claim(*, id: str, paper: str, statement: str, kind: Kind, reference: str = "",
          instances: Callable[[bool], Iterable[Any]] | None = None, expected: Expectation = "holds",
          derived: bool = False, notes: str = "", space: Any = None, cites: Sequence[str] = (),
          pep: Callable[[Any], tuple[float, float] | None] | None = None, cost: Cost = "fast",
          false_kind: str = "", reading: str = "", narrower: str = "",
          non_discriminating: str = "", scope: str = "run", runs: Sequence[str] = ()
          ) -> Callable[[Callable[[Any], Evidence]], Claim]:
    """Decorator registering a check function as a built-in claim; returns the :class:`Claim` (callable like
    the check).

    Its keywords, by what they declare (only the first two groups are required):

    ========================  =========================================================================
    what                      keywords
    ========================  =========================================================================
    the statement             ``id``, ``paper``, ``statement``, ``kind``
    its source                ``cites`` (the paper's numbered statements) and/or ``reference`` (free text)
    where it is checked       ``instances`` or ``space`` (exactly one); ``cost``; ``pep`` (exact worst case)
    what is expected          ``expected``; for a recorded false statement ``false_kind`` and ``reading``;
                              ``derived`` (not the paper's own statement)
    what it covers            ``narrower`` (less than it cites), ``scope`` and ``runs`` (the algorithm under
                              test), ``non_discriminating`` (why a bound cannot reject broken variants)
    free text                 ``notes``
    ========================  =========================================================================

    Give either ``instances`` (default instances) or ``space`` (an :class:`~fedtheory.claims.space.InstanceSpace`
    declaring the theorem's class, from which the default instances and the worst-case search derive).
    ``reference`` is free text for what ``cites`` cannot say (a textbook, "derived by fedtheory"); leave it out
    when the cited statements say it all: :attr:`Claim.reference` is derived from both. ``derived=True`` marks
    statements that are not the paper's own (an inequality derived by fedtheory, or a
    corrected version of a false statement); put ``.derived`` or ``.corrected`` in their ids too. ``cites``
    names the paper's numbered statements the claim checks (see :attr:`Claim.cites`); ``pep`` is the exact
    worst case over the class, see :attr:`Claim.pep`. A claim with ``expected="violated"`` gives ``false_kind``
    (and ``reading`` for a statement false under one reading); ``narrower`` says what the check covers less than
    the statements it cites (see :attr:`Claim.narrower`). ``non_discriminating`` is the reason a bound or rate
    claim cannot reject broken variants of its algorithm (see :attr:`Claim.non_discriminating`); ``scope`` what
    part of the algorithm it is about (see :attr:`Claim.scope`); ``runs`` the algorithms it runs (see
    :attr:`Claim.runs`).
    """
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {PAPERS}, got {paper!r}")
    if expected == "violated" and not false_kind:
        raise ValueError(f"claim {id!r}: false_kind must be one of {FALSE_KINDS} for a claim expected to be violated "
                         "(the paper's printed statement, a reading of it, or fedtheory's own)")
    fields = declaration(id=id, paper=paper, reference=reference, statement=statement, kind=kind,
                         instances=instances, expected=expected, derived=derived, notes=notes, space=space,
                         cites=cites, pep=pep, cost=cost, false_kind=false_kind, reading=reading,
                         narrower=narrower, non_discriminating=non_discriminating, scope=scope, runs=runs)

    def wrap(fn: Callable[[Any], Evidence]) -> Claim:
        if id in REGISTRY:
            raise ValueError(f"claim id {id!r} registered twice")
        c = with_check(fields, fn)
        REGISTRY[id] = c
        return c

    return wrap


class NotAVerdict(ValueError):
    """A check returned Evidence that contradicts its own numbers (a bound claim that "holds" with measured above
    its bound): the claim's result is an error, wherever it is run (:func:`judged_evidence`)."""


def judged_evidence(c: Claim, value: Any) -> Evidence:
    """``value`` (what ``c``'s check returned) as the claim's Evidence, or refused: TypeError when it is not
    Evidence, :class:`NotAVerdict` when a bound claim says holds=True with measured above its bound (beyond the
    rounding slack ``BOUND_CONSISTENCY_*``).

    The one consistency check of a verdict: the ledger (:func:`evaluate`), the hypothesis property test
    (:func:`fedtheory.extend.property_test`, the pytest plugin's ``[hypothesis]`` items) and the worst-case search
    all judge a check's return value through it, so the three can never disagree on the same Evidence."""
    if not isinstance(value, Evidence):
        raise TypeError(f"claim {c.id!r}: its check must return fedtheory Evidence(instance, measured, theory, "
                        f"holds, tightness), got {type(value).__name__}")
    if c.kind == "bound" and value.holds:
        slack = BOUND_CONSISTENCY_RTOL * abs(value.theory) + BOUND_CONSISTENCY_ATOL
        if not value.measured <= value.theory + slack:
            raise NotAVerdict(f"claim {c.id!r} at {value.instance}: the check says holds=True, but measured "
                              f"{value.measured:.6g} > bound {value.theory:.6g} (a bound claim holds only when "
                              "measured <= bound; use fedtheory.extend.verdict)")
    return value


def evaluate(c: Claim, thorough: bool = False, instances: Iterable[Any] | None = None,
             budget: float | None = None, certify: bool = True) -> ClaimResult:
    """Run a claim on its default instances (or on ``instances``); an exception becomes an ERROR result, not a
    crash, and so does a check that runs past its wall-clock ``budget`` in seconds (default
    :data:`~fedtheory.claims.budget.CLAIM_BUDGET_SECONDS`, or ``THOROUGH_BUDGET_SECONDS`` with ``thorough``;
    ``math.inf``: no budget; where it is enforced: :mod:`fedtheory.claims.budget`).

    With ``certify`` (the default) every algorithm round the check runs is recorded and compared with the paper's
    equations (:mod:`fedtheory.claims.certify`): a difference makes the result ``RUN-DIFFERS``, and an algorithm
    the claim runs without declaring it in ``runs`` an ERROR. ``certify=False`` judges the check alone (the
    discrimination tool uses it to see whether a verdict bites by itself)."""
    if budget is None:
        budget = THOROUGH_BUDGET_SECONDS if thorough else CLAIM_BUDGET_SECONDS
    start = time.perf_counter()
    evidence: list[Evidence] = []
    certifier = RunCertifier() if certify else None
    try:
        with wall_clock_budget(budget, f"claim {c.id!r}"), _recording(certifier):
            for inst in (c.instances(thorough) if instances is None else instances):
                evidence.append(judged_evidence(c, c.check(inst)))
        error = None if evidence else "no instances"
    except BudgetExceeded as exc:
        error = (f"{exc} (fedtheory.claims.budget; a stalled check) after {len(evidence)} instance(s); "
                 f"stopped in:\n{traceback.format_exc(limit=-3)}")
    except Exception as exc:  # noqa: BLE001 - the ledger reports any failure of a check
        error = f"claim {c.id!r}: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"
    certification = certifier.result if certifier is not None else None
    if error is None and certification is not None:
        error = _undeclared(c, certification)
    return ClaimResult(c, evidence, error, time.perf_counter() - start, certification)


def _recording(certifier: RunCertifier | None) -> Any:
    return recording(certifier) if certifier is not None else nullcontext()


def _undeclared(c: Claim, certification: Certification) -> str | None:
    """An error for a built-in claim that runs an algorithm without declaring it in ``runs``, or whose run could
    not be certified (an algorithm or a configuration without a reference transcription); None otherwise. A
    researcher's own claims (not in the registry) are certified where a reference exists and never fail for it."""
    if c.id not in REGISTRY or REGISTRY[c.id] is not c or STRICT_RUNS is False:
        return None
    ran = {name.split(":")[0] for name in certification.algorithms}
    undeclared = sorted(ran - set(c.runs))
    if undeclared:
        return (f"claim {c.id!r} runs {undeclared} without declaring them: add "
                f"runs={tuple(sorted(ran | set(c.runs)))} to its @claim (the verdict is about the algorithms it runs)")
    if certification.uncertified:
        return (f"claim {c.id!r}: its run could not be certified against the paper's equations "
                f"({'; '.join(certification.uncertified)}): transcribe it in fedtheory/references/")
    return None


#: Whether a built-in claim must declare every algorithm it runs (``runs=``).
STRICT_RUNS = False
