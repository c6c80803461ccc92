"""The ledger's files: ``claims.json`` (every claim's record) and ``claims.md`` (the same, for reading).

Used by ``fedtheory verify``, by :func:`fedtheory.extend.write_report` and by the pytest plugin (which merges the
records of its pytest-xdist workers), so the three write the same format. Both files are rendered from the JSON
records, so a report can be rewritten from a claims.json alone.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..claims.registry import ClaimResult
from .ledger import FALSE_KIND_WORDS, certification_sentence, false_kind
from .symbols import symbols
from .table import fmt

__all__ = ["DEFAULT_OUT", "records_of", "write_reports", "write_records"]

#: The folder ``fedtheory verify`` writes its reports to unless given ``--out``.
DEFAULT_OUT = "fedtheory-claims"


def records_of(results: Sequence[ClaimResult], worst_case: Mapping[str, dict] | None = None) -> list[dict]:
    """The JSON records of ``results``; ``worst_case`` adds each searched claim's ``adversarial_tightness``,
    ``adversarial_instance``, ``pep_worst_case`` and the search's bookkeeping to its record."""
    return [{**r.as_dict(), **(worst_case or {}).get(r.claim.id, {})} for r in results]


def write_reports(results: Sequence[ClaimResult], out: Path, worst_case: Mapping[str, dict] | None = None) -> None:
    """claims.json and claims.md of ``results`` in ``out`` (created)."""
    write_records(records_of(results, worst_case), out)


def write_records(records: Sequence[Mapping[str, Any]], out: Path) -> None:
    """claims.json and claims.md of JSON ``records`` (as :func:`records_of` makes them) in ``out`` (created)."""
    out.mkdir(parents=True, exist_ok=True)
    # default=str: a detail a researcher's check put in (a Fraction, a path) must not lose the whole report
    (out / "claims.json").write_text(json.dumps(list(records), indent=2, default=str))
    (out / "claims.md").write_text(render_markdown(records))


def _cell(text: str) -> str:
    """Table-cell text: maths symbols, and a literal | escaped (a norm is ‖x‖ by then, never //x//)."""
    return symbols(text).replace("|", "\\|").replace("\n", " ")


def _num(value: Any) -> str:
    return fmt(value) if isinstance(value, (int, float)) or value is None else str(value)


def status_words(record: Mapping[str, Any]) -> str:
    """The claim's status, and for a claim recorded false what it finds false (its ``false_kind``): "false as
    printed", "false under a reading" or "fedtheory's own reading, false" (not a statement of the paper)."""
    if record["status"] == "violated-as-recorded" and false_kind(record):
        return f"{record['status']}: {FALSE_KIND_WORDS[false_kind(record)]}"
    return record["status"]


def render_markdown(records: Sequence[Mapping[str, Any]]) -> str:
    """claims.md: one row per claim (status, instances, worst tightness over the default instances, the
    adversarial worst case and the exact PEP worst case where the run searched for them), then the details of
    every claim that does not simply hold."""
    searched = any("adversarial_tightness" in r for r in records)
    header = "| claim | paper | reference | status | instances | tightness |"
    rule = "|---|---|---|---|---|---|"
    if searched:
        header += " worst case (search) | PEP worst case |"
        rule += "---|---|"
    intro = ("Tightness is measured / bound at the default instances (1: the bound is attained). A claim recorded "
             "false (violated-as-recorded) says what it finds false: a statement *false as printed*, one *false "
             "under a reading* (the reading is given below), or *fedtheory's own reading, false* (a reading or "
             "folklore of fedtheory's, not a statement of the paper).")
    if searched:
        intro += (" The worst case is the largest measured / bound the search found over the claim's instance "
                  "space; the PEP worst case is the worst case over the whole function class, as a fraction of the "
                  "bound (exact; for DANE and FedRed-GD an upper bound over the two-client relaxation).")
    lines = ["# fedtheory claims ledger", "", intro, "", header + " statement |", rule + "---|"]
    for r in records:
        row = (f"| `{r['id']}` | {r['paper']} | {_cell(r['reference'])} | {status_words(r)} | {len(r['evidence'])} | "
               f"{_num(r.get('worst_tightness'))} |")
        if searched:
            row += f" {_num(r.get('adversarial_tightness'))} | {_num(r.get('pep_worst_case'))} |"
        lines.append(row + f" {_cell(r['statement'])} |")
    flagged = [r for r in records if r.get("non_discriminating")]
    if flagged:
        lines += ["", "## Bound and rate claims that cannot bite", "",
                  "A correct run of these claims' algorithms stays well below the bound on every instance of the "
                  "statement's class (or the claim cannot reject a broken variant, "
                  "`benchmarks/mutation/discrimination.py`), so a slip that moves the measured value by a constant "
                  "factor can pass; the reason each says why:", ""]
        lines += [f"- `{r['id']}`: {symbols(r['non_discriminating'])}" for r in flagged]
    details = [r for r in records if r["status"] != "holds"]
    if details:
        lines += ["", "## Details of claims that do not simply hold", ""]
        for r in details:
            lines.append(f"### `{r['id']}`: {status_words(r)}")
            lines.append("")
            lines.append(symbols(r["statement"]))
            lines.append("")
            if r.get("reading") and false_kind(r) == "reading":
                lines += [f"Reading: {symbols(r['reading'])}", ""]
            if certification_sentence(r):
                lines += [certification_sentence(r) + ".", ""]
            if r.get("error"):
                lines.append(f"```\n{r['error']}\n```")
            for e in r["evidence"]:
                if not e["holds"] or r["expected"] != "holds":
                    details_text = f" {e['details']}" if e.get("details") else ""
                    lines.append(f"- {e['instance']}: measured {_num(e['measured'])}, bound or closed form "
                                 f"{_num(e['theory'])}, holds: {e['holds']}{details_text}")
            if r.get("adversarial_instance") is not None:
                lines.append(f"- worst point found by the search: {r['adversarial_instance']}")
            lines.append("")
    return "\n".join(lines) + "\n"
