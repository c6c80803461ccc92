"""The kit's machine-readable reports: JSON with the kit's provenance, and JUnit XML for CI systems.

``fedtheory conform ... --json FILE`` writes :func:`report_json` (the report's verdicts and counterexamples, and
which fedtheory produced them: version, git commit where the package is a git checkout or was installed by pip
from git); ``--junit-xml FILE`` writes :func:`junit_xml`, the JUnit format that GitHub Actions test reporters,
GitLab, Jenkins and Azure Pipelines read: one ``<testcase>`` per property, a violated property as ``<failure>``
whose message carries the diagnosis and whose text the shrunk counterexample, a property that does not apply as
``<skipped>`` -- except a *core* one, which makes the verdict inconclusive (docs/conformance.md, "Verdicts"): it
is an ``<error>``, so a CI job goes red on "inconclusive" as ``fedtheory conform`` exits non-zero on it, and a
pass is never a pass on nothing.
"""
from __future__ import annotations

import json
import platform
import subprocess
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy

from .search import Report

__all__ = ["SCHEMA", "provenance", "report_json", "junit_xml"]

#: The version of the JSON layout (bumped when a key changes meaning).
SCHEMA = "fedtheory-conformance/1"
_PACKAGE = Path(__file__).resolve().parents[1]


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(_PACKAGE), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _installed_commit() -> str | None:
    """The commit an installed fedtheory was built from, where pip recorded it: PEP 610's ``direct_url.json`` of
    a VCS install (``pip install "fedtheory @ git+URL@COMMIT"``, as docs/ci/conformance-workflow.yml does) holds
    ``vcs_info.commit_id``, the commit pip resolved. None for an install from an index, a wheel or a directory
    (no ``vcs_info``), and when the distribution's metadata describes another copy of the package than this one
    (an editable install elsewhere, or ``PYTHONPATH`` pointing at a copy of the sources)."""
    try:
        dist = metadata.distribution("fedtheory")
        text = dist.read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text or Path(str(dist.locate_file("fedtheory"))).resolve() != _PACKAGE:
        return None
    try:
        vcs = json.loads(text).get("vcs_info")
    except (ValueError, AttributeError):  # not JSON, or not a JSON object: no commit to read
        return None
    commit = vcs.get("commit_id") if isinstance(vcs, dict) else None
    return commit if isinstance(commit, str) and commit else None


def provenance() -> dict[str, Any]:
    """Which kit produced a report: fedtheory's version, its git commit and whether the package's files differ from
    it. Where the package is not a git checkout (rather than the commit of some other repository the installation
    sits in), the commit is the one pip recorded for a VCS install (:func:`_installed_commit`) with ``dirty`` None
    (an installed copy is not compared with its commit), or None for both; and Python and NumPy."""
    try:
        version = metadata.version("fedtheory")
    except metadata.PackageNotFoundError:
        version = "0+unknown"
    top = _git("rev-parse", "--show-toplevel")
    ours = top is not None and Path(top).resolve() / _PACKAGE.name == _PACKAGE
    commit = _git("rev-parse", "HEAD") if ours else None
    dirty = None
    if commit is not None:
        status = _git("status", "--porcelain", "--untracked-files=no", "--", str(_PACKAGE))
        dirty = None if status is None else bool(status)
    else:
        commit = _installed_commit()
    return {"fedtheory": version, "commit": commit, "dirty": dirty, "python": platform.python_version(),
            "numpy": numpy.__version__}


def report_json(report: Report) -> dict[str, Any]:
    """The report (:meth:`Report.as_dict`: verdict, every property's result, counterexamples) with ``schema`` and
    the kit's ``provenance``."""
    return {"schema": SCHEMA, "kit": provenance(), **report.as_dict()}


def _number(x: float | None) -> str:
    return "-" if x is None or x != x else f"{x:.3g}"


def _suite_name(report: Report) -> str:
    return f"fedtheory.conformance.{report.family}"


def junit_xml(report: Report) -> str:
    """The report as a JUnit XML document (a ``<testsuites>`` root with one ``<testsuite>``)."""
    kit = provenance()
    failures = len(report.failures)
    # what made the verdict inconclusive: the core properties not checked, or every property when none applied
    inconclusive = (report.unchecked_core or report.unchecked) if report.verdict == "inconclusive" else []
    errors = len(inconclusive)
    skipped = len(report.unchecked) - errors
    seconds = sum(r.seconds for r in report.results)
    counts = {"tests": str(len(report.results)), "failures": str(failures), "errors": str(errors),
              "skipped": str(skipped), "time": f"{seconds:.3f}"}
    root = ET.Element("testsuites", name=f"fedtheory conform {report.name}", **counts)
    suite = ET.SubElement(root, "testsuite", name=_suite_name(report),
                          timestamp=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"), **counts)
    props = ET.SubElement(suite, "properties")
    for name, value in (("implementation", report.name), ("family", report.family), ("verdict", report.verdict),
                        ("hyper", json.dumps(report.as_dict()["hyper"], sort_keys=True)),
                        *((f"kit.{k}", "" if v is None else str(v)) for k, v in kit.items())):
        ET.SubElement(props, "property", name=name, value=str(value))
    core_errors = {id(r) for r in inconclusive}
    for r in report.results:
        case = ET.SubElement(suite, "testcase", classname=_suite_name(report), name=r.prop.id,
                             time=f"{r.seconds:.3f}")
        if r.status == "violated":
            message = f"measured {_number(r.measured)} against {_number(r.theory)}" + (
                f"; {r.diagnosis}" if r.diagnosis else "")
            failure = ET.SubElement(case, "failure", message=message, type="violated")
            text = [str(r)]
            if r.counterexample is not None:
                text += ["", "Shrunk counterexample (Counterexample(**this).reproduce(impl)):",
                         json.dumps(r.counterexample.as_dict(), indent=1)]
            failure.text = "\n".join(text)
        elif id(r) in core_errors:
            ET.SubElement(case, "error", type="inconclusive",
                          message=f"not checked, so the verdict is inconclusive: {r.diagnosis}")
        elif r.status == "not applicable":
            ET.SubElement(case, "skipped", message=f"not applicable: {r.diagnosis}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
