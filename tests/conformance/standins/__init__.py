"""Stand-ins with the API shape of third-party frameworks, so CI tests the drivers in
fedtheory/conformance/drivers/ without installing the frameworks (docs/frameworks.md)."""
from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

RUN = Path(__file__).resolve().parents[3] / "benchmarks" / "frameworks" / "run.py"


def load_run() -> ModuleType:
    """``benchmarks/frameworks/run.py`` as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("_frameworks_run", RUN)
    run = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = run  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(run)
    finally:
        del sys.modules[spec.name]
    return run


def framework_checks(key: str) -> tuple[Any, ...]:
    """The checks ``benchmarks/frameworks/run.py`` runs for framework ``key`` (its ``FRAMEWORKS[key].checks``)."""
    return load_run().FRAMEWORKS[key].checks


@contextmanager
def installed(standin: ModuleType, driver: str) -> Iterator[ModuleType]:
    """The driver module ``driver`` imported against ``standin`` (its fake packages in ``sys.modules``) for the
    block only; whatever those names and the driver were before comes back."""
    def ours(name: str) -> bool:
        return any(name == p or name.startswith(p + ".") for p in standin.NAMES)

    saved = {k: v for k, v in sys.modules.items() if ours(k)}
    standin.install()
    sys.modules.pop(driver, None)
    try:
        yield importlib.import_module(driver)
    finally:
        for k in [k for k in sys.modules if ours(k)]:
            del sys.modules[k]
        sys.modules.update(saved)
        sys.modules.pop(driver, None)



def check_through_driver(driver: ModuleType, check: Any, properties: list[str], max_examples: int = 4) -> Any:
    """The kit's report on one ``run.py`` check (``check``: its factory, family, rtol, fixed hyperparameters and
    hyperparameters) run through ``driver`` against its stand-in, on the cheap ``properties`` only."""
    from fedtheory import conformance  # needs hypothesis: the driver tests skip without it before importing this

    return conformance.check(getattr(driver, check.factory)(), check.family, rtol=check.rtol,
                             max_examples=max_examples, shrink=False, properties=properties,
                             fixed=list(check.fixed), min_clients=getattr(check, "min_clients", 1), **check.hyper)


def assert_recorded_verdict(report: Any, diagnosis_if_failing: str | None = None) -> None:
    """The verdict docs/frameworks.md records: a FAIL whose first failure's diagnosis contains
    ``diagnosis_if_failing``, or (None) a pass in which every property holds (none inconclusive or not applicable,
    so the state a driver keeps or reads back was exercised)."""
    if diagnosis_if_failing is not None:
        assert not report.passed, report.table()
        assert diagnosis_if_failing in report.failures[0].diagnosis, report.table()
    else:
        assert report.passed, report.table()
        assert all(r.status == "holds" for r in report.results), report.table()


RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "frameworks" / "results"


def stored_report(key: str, check: Any) -> dict:
    """The stored report of ``run.py``'s ``check`` of framework ``key`` (benchmarks/frameworks/results/KEY/NAME.json),
    the verdict docs/frameworks.md records for it."""
    import json

    return json.loads((RESULTS / key / f"{check.name}.json").read_text())


def assert_stored_verdict(report: Any, key: str, check: Any) -> None:
    """The stand-in gives ``check`` the verdict of its stored report (a run on the framework's own code), and each
    property it ran the status it had there (holds, violated, not applicable); drawn hyperparameter sets
    (``... @ ...``) are compared only where both ran them."""
    stored = stored_report(key, check)
    assert report.verdict == stored["verdict"], f"stored {stored['verdict']}:\n{report.table()}"
    statuses = {r["property"]: r["status"] for r in stored["results"]}
    ran = {r.prop.id: r.status for r in report.results}
    missing = [p for p in ran if p not in statuses and " @ " not in p]
    assert not missing, f"properties the stored report did not run: {missing}"
    differ = {p: (s, statuses[p]) for p, s in ran.items() if p in statuses and s != statuses[p]}
    assert not differ, f"(stand-in, stored) statuses differ: {differ}\n{report.table()}"
