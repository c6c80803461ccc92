"""fedtheory's pytest plugin: claims declared in your test files are test items, with a ledger report.

Registered through the ``pytest11`` entry point, so it is active wherever fedtheory is installed. A
:class:`~fedtheory.claims.registry.Claim` defined at module level of a test file (``@fedtheory.extend.claim``)
is collected as up to three items:

* ``NAME[ledger]``: the claim on its default instances; fails when a claim expected to hold is violated, a
  claim expected to be false loses its counterexample, or the check errors (the message names the instance,
  the measured value and the bound);
* ``NAME[hypothesis]``: ``--fedtheory-examples`` points drawn from its space (default 10; 0 turns it off);
* ``NAME[worst-case]``: with ``--fedtheory-worst-case``, the adversarial search over its space (and the PEP
  worst case when the claim declares one); fails when the search finds a counterexample to a claim expected
  to hold.

At the end of the session ``claims.json`` and ``claims.md`` are written to ``--fedtheory-out`` (default
``fedtheory-claims``) for the claims that ran, as ``fedtheory verify`` writes them; under pytest-xdist
(``pytest -n 2``) the workers send their records to the controller, which writes the one merged report.
Without hypothesis (the ``test`` extra), the ``[hypothesis]`` items are skipped with the install line. ``--fedtheory-ledger`` adds
fedtheory's own ledger (every built-in claim, ``--fedtheory-paper KEY`` to select) as items of the same kind.
A claim of your own package imported into a test module is collected there too; fedtheory's built-in claims
imported into a test module are not (they are the ledger's, run by ``fedtheory verify``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import extend
from .claims import load_all, select
from .claims.registry import Claim, ClaimResult
from .optional import MissingExtra, require
from .report import records_of, write_records

_RESULTS = pytest.StashKey[dict]()
_WORST = pytest.StashKey[dict]()
_WRITTEN = pytest.StashKey[Path]()
#: Records sent back by pytest-xdist workers (controller side), in the order the workers finished.
_WORKER_RECORDS = pytest.StashKey[list]()
#: The key of the records in an xdist worker's ``workeroutput``.
WORKER_OUTPUT_KEY = "fedtheory_claim_records"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fedtheory", "fedtheory claims (theorems declared with fedtheory.extend.claim)")
    group.addoption("--fedtheory-worst-case", action="store_true",
                    help="also search each claim's instance space for its largest measured / bound")
    group.addoption("--fedtheory-evaluations", type=int, default=200,
                    help="check evaluations per claim of the worst-case search (default: %(default)s)")
    group.addoption("--fedtheory-examples", type=int, default=10,
                    help="hypothesis examples drawn from each claim's space (default: %(default)s; 0: none)")
    group.addoption("--fedtheory-out", default="fedtheory-claims",
                    help="folder for the session's claims.json and claims.md (default: %(default)s)")
    group.addoption("--fedtheory-ledger", action="store_true",
                    help="also run fedtheory's built-in ledger of the papers' claims as test items")
    group.addoption("--fedtheory-paper", action="append", default=None, metavar="KEY",
                    help="with --fedtheory-ledger: only this paper's claims (repeatable)")


def pytest_configure(config: pytest.Config) -> None:
    for name in ("fedtheory_evaluations", "fedtheory_examples"):
        if config.getoption(name) < 0:
            raise pytest.UsageError(f"--{name.replace('_', '-')} must be >= 0, got {config.getoption(name)}")
    config.stash[_RESULTS] = {}
    config.stash[_WORST] = {}
    config.stash[_WORKER_RECORDS] = []


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: Any) -> Any:
    if isinstance(obj, Claim):
        if load_all().get(obj.id) is not obj:  # fedtheory's own claims run in its ledger, not in your tests
            return ClaimCollector.from_parent(collector, name=name, claim=obj)
    return None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    if not config.getoption("fedtheory_ledger"):
        return

    try:
        claims = select(config.getoption("fedtheory_paper"))
    except ValueError as exc:
        raise pytest.UsageError(f"--fedtheory-paper: {exc}") from None
    items.extend(ClaimItem.from_parent(session, name=f"fedtheory-ledger::{c.id}", claim=c, mode="ledger")
                 for c in claims)


class ClaimCollector(pytest.Collector):
    """The items of one claim: its ledger run, hypothesis examples from its space, the worst-case search."""

    def __init__(self, *, claim: Claim, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.claim = claim

    def collect(self) -> list[pytest.Item]:
        modes = ["ledger"]
        if self.claim.space is not None:
            if self.config.getoption("fedtheory_examples") > 0:
                modes.append("hypothesis")
            if self.config.getoption("fedtheory_worst_case"):
                modes.append("worst-case")
        return [ClaimItem.from_parent(self, name=f"{self.name}[{m}]", claim=self.claim, mode=m) for m in modes]


class ClaimFailure(AssertionError):
    """A claim's verdict, in sentences (reported without a Python traceback)."""


class ClaimItem(pytest.Item):
    def __init__(self, *, claim: Claim, mode: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.claim = claim
        self.mode = mode

    def runtest(self) -> None:
        c = self.claim
        if self.mode == "ledger":
            result = extend.run(c)
            self.config.stash[_RESULTS][c.id] = result
            if result.failed:
                raise ClaimFailure(describe_failure(result))
        elif self.mode == "hypothesis":
            try:
                require("hypothesis", "the [hypothesis] items of fedtheory's pytest plugin")
            except MissingExtra as exc:
                pytest.skip(str(exc))
            extend.property_test(c, max_examples=self.config.getoption("fedtheory_examples"))
        else:
            search = extend.worst_case(c, evaluations=self.config.getoption("fedtheory_evaluations"))
            record = {**search.as_dict(), "pep_worst_case": extend.pep_worst_case(c)}
            record["counterexample_to_expected"] = c.expected == "holds" and search.counterexample
            self.config.stash[_WORST][c.id] = record
            if record["counterexample_to_expected"]:
                raise ClaimFailure(f"{c.id}: the worst-case search found a counterexample at {search.point}: "
                                   f"measured / bound = {search.ratio:.6g} and the claim's check fails there")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, (ClaimFailure, AssertionError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return self.path, None, f"claim {self.claim.id} [{self.mode}]"


def describe_failure(result: ClaimResult) -> str:
    """Why a claim's ledger item failed, as sentences: status, reference, and the failing instances."""
    c = result.claim
    lines = [f"{c.id} ({c.reference}): {result.status}. {c.statement}"]
    if result.error is not None:
        lines.append(result.error)
    elif result.differs is not None:
        lines.append(f"The verdict is not about the paper's algorithm: {result.differs}.")
    elif result.status == "COUNTEREXAMPLE-LOST":
        lines.append("The claim is recorded as false, but it holds on every default instance: the counterexample "
                     "is lost.")
    for e in result.evidence:
        if not e.holds and c.expected == "holds":
            lines.append(f"  fails on {e.instance}: measured {e.measured:.6g}, bound/closed form {e.theory:.6g}")
    return "\n".join(lines)


def _records(config: pytest.Config) -> list[dict]:
    return records_of(list(config.stash.get(_RESULTS, {}).values()), config.stash.get(_WORST, {}))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist, controller side: keep the records a worker sends back when it finishes."""
    records = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY)
    if records:
        node.config.stash[_WORKER_RECORDS].extend(records)


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller writes the one report
        workeroutput[WORKER_OUTPUT_KEY] = _records(config)
        return
    records = _records(config) + config.stash.get(_WORKER_RECORDS, [])
    if not records:
        return

    seen: dict[str, dict] = {}
    for record in records:  # a claim collected in two test modules ran twice: its last run is reported
        seen[record["id"]] = record
    out = Path(config.getoption("fedtheory_out"))
    write_records(sorted(seen.values(), key=lambda r: r["id"]), out)
    config.stash[_WRITTEN] = out


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    written = config.stash.get(_WRITTEN, None)
    if written is not None:
        terminalreporter.write_line(f"fedtheory: claims ledger report in {written}/claims.json and "
                                    f"{written}/claims.md")
