"""The framework x algorithm verdict table of the README, built from the stored verdicts, none typed twice.

docs/frameworks.md declares each third-party framework with a marker line before its table::

    <!-- framework: KEY | DISPLAY NAME | SOURCE -->

``SOURCE`` is ``results``: the verdicts are the conformance reports ``benchmarks/frameworks/results/KEY/*.json``
written by ``benchmarks/frameworks/run.py`` (the algorithm comes from the report's family, or its
``optimizer`` for the ``server_optimizer`` family; the report's ``verdict``, or ``passed`` in reports older than
the inconclusive verdict). Or ``table``: the framework was checked in process (Flower, pfl; docs/conformance.md) and its verdicts are the markdown table right after the marker (first column the
algorithm, an optional qualifier in parentheses; third column the verdict). So each framework has exactly one
source, and :func:`verdict_table` renders the block ``framework-verdicts`` that :mod:`fedtheory.report.readme`
puts in the README. Standard library only: the README generator runs on a bare install.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ALGORITHMS", "Verdict", "declared_frameworks", "load_verdicts", "verdict_table"]

#: The table's columns, in order: the algorithms the kit checks in third-party frameworks.
ALGORITHMS: tuple[str, ...] = ("FedAvg", "FedProx", "SCAFFOLD", "FedDyn", "FedAvgM", "FedAdam", "FedYogi",
                               "FedAdagrad", "FedNova")
_FAMILY = {"fedavg": "FedAvg", "fedprox": "FedProx", "scaffold": "SCAFFOLD", "feddyn": "FedDyn", "fednova": "FedNova"}
_OPTIMIZER = {"fedavgm": "FedAvgM", "fedadam": "FedAdam", "fedyogi": "FedYogi", "fedadagrad": "FedAdagrad"}
_WEIGHTING = {"uniform": "uniform", "num_examples": "n_k/n"}
_MARKER = re.compile(r"^<!-- framework: (?P<key>[\w-]+) \| (?P<name>[^|]+?) \| (?P<source>results|table) -->$", re.M)


@dataclass(frozen=True)
class Verdict:
    """One checked configuration: ``algorithm`` (a column of :data:`ALGORITHMS`), ``qualifier`` (e.g. the
    weighting, ``""`` when there is one configuration) and ``verdict`` (``pass``, ``FAIL`` or ``inconclusive``)."""

    algorithm: str
    qualifier: str
    verdict: str


def _normalise(text: str) -> str:
    """``pass`` / ``FAIL`` / ``inconclusive`` from a report's verdict or a table cell (``**FAIL**: ...``)."""
    word = text.replace("*", "").strip().lower()
    for prefix, verdict in (("pass", "pass"), ("fail", "FAIL"), ("inconclusive", "inconclusive")):
        if word.startswith(prefix):
            return verdict
    raise ValueError(f"not a verdict: {text!r}")


def _from_report(report: dict) -> tuple[str, str, str, str]:
    """(algorithm, weighting, configuration, verdict) of one conformance report (``Report.as_dict()``); the
    configuration is what benchmarks/frameworks/run.py records ("as shipped", "as the paper"), if anything."""
    family, hyper = report["family"], report.get("hyper", {})
    algorithm = _OPTIMIZER[hyper["optimizer"]] if family == "server_optimizer" else _FAMILY[family]
    verdict = report.get("verdict") or ("pass" if report["passed"] else "fail")
    qualifier = _WEIGHTING.get(hyper.get("weighting", ""), "")
    if hyper.get("momentum"):  # FedNova's local solver: another a_i, so another configuration
        qualifier += f", momentum {hyper['momentum']:g}"
    if hyper.get("prox") and family == "fednova":
        qualifier += f", prox {hyper['prox']:g}"
    # the identity tolerance a check ran at: one_round's theory (docs/conformance.md: rtol 1e-8 unless declared)
    rtol = next((r.get("theory") for r in report.get("results", []) if r.get("property") == f"{family}.one_round"),
                None)
    if rtol is not None and rtol != 1e-8:
        qualifier += f", rtol {rtol:g}"
    return algorithm, qualifier, report.get("configuration", ""), _normalise(verdict)


def _results(folder: Path) -> list[Verdict]:
    """The verdicts of ``folder/*.json``. Where an algorithm was checked more than once, each verdict is qualified
    by what tells its checks apart: the weighting, the configuration, or both."""
    rows = [_from_report(json.loads(p.read_text())) for p in sorted(folder.glob("*.json"))]
    out = []
    for algorithm, weighting, configuration, verdict in rows:
        same = [r for r in rows if r[0] == algorithm]
        parts = [part for i, part in ((1, weighting), (2, configuration))
                 if len(same) > 1 and len({r[i] for r in same}) > 1 and part]
        out.append(Verdict(algorithm, ", ".join(parts), verdict))
    return out


def _table_after(text: str, start: int) -> list[Verdict]:
    """The verdicts of the markdown table that follows position ``start`` (header and rule skipped)."""
    lines = text[start:].lstrip("\n").split("\n")
    rows = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"(?P<alg>[\w-]+)(?: \((?P<q>[^)]*)\))?", cells[0].replace("`", ""))
        if m is None or m["alg"] not in ALGORITHMS:
            raise ValueError(f"docs/frameworks.md: {cells[0]!r} is not one of {ALGORITHMS} (qualifier in parentheses)")
        rows.append(Verdict(m["alg"], m["q"] or "", _normalise(cells[2])))
    return rows


def declared_frameworks(doc: str) -> list[tuple[str, str, str, int]]:
    """(key, display name, source, end of the marker) of every framework marker in docs/frameworks.md's text."""
    return [(m["key"], m["name"].strip(), m["source"], m.end()) for m in _MARKER.finditer(doc)]


def load_verdicts(root: Path, results: Path | None = None) -> list[tuple[str, list[Verdict]]]:
    """(display name, verdicts) per framework, in the order of docs/frameworks.md under the checkout ``root``; the
    reports are read from ``results/KEY/`` (default ``root/benchmarks/frameworks/results``)."""
    doc = (root / "docs" / "frameworks.md").read_text()
    results = root / "benchmarks" / "frameworks" / "results" if results is None else results
    out = []
    for key, name, source, end in declared_frameworks(doc):
        verdicts = (_results(results / key) if source == "results"
                    else _table_after(doc, end))
        out.append((name, verdicts))
    return out


def _cell(verdicts: list[Verdict]) -> str:
    def one(v: Verdict) -> str:
        word = f"**{v.verdict}**" if v.verdict == "FAIL" else v.verdict
        return f"{word} ({v.qualifier})" if v.qualifier else word
    return "; ".join(one(v) for v in verdicts) or "-"


def verdict_table(root: Path, results: Path | None = None) -> str:
    """The README block ``framework-verdicts``: one row per framework, one column per algorithm of
    :data:`ALGORITHMS`; ``-`` where the framework has no such algorithm or it was not checked. ``results`` as in
    :func:`load_verdicts` (benchmarks/frameworks/run.py passes its ``--out``)."""
    out = ["| framework | " + " | ".join(ALGORITHMS) + " |", "|---" * (len(ALGORITHMS) + 1) + "|"]
    for name, verdicts in load_verdicts(root, results):
        out.append(f"| {name} | " + " | ".join(_cell([v for v in verdicts if v.algorithm == a])
                                              for a in ALGORITHMS) + " |")
    return "\n".join(out) + "\n"
