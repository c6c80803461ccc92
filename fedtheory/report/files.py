"""The ledger's files: ``claims.json`` (every claim's record) and ``claims.md`` (the same, for reading).

Used by ``fedtheory verify``, by :func:`fedtheory.extend.write_report` and by the pytest plugin, so the three write
the same format.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..claims.registry import ClaimResult
from .table import fmt

__all__ = ["write_reports"]


def write_reports(results: list[ClaimResult], out: Path, worst_case: dict[str, dict] | None = None) -> None:
    """claims.json and claims.md; ``worst_case`` adds each searched claim's ``adversarial_tightness``,
    ``adversarial_instance`` and ``pep_worst_case`` to its JSON record."""
    out.mkdir(parents=True, exist_ok=True)
    records = [{**r.as_dict(), **(worst_case or {}).get(r.claim.id, {})} for r in results]
    (out / "claims.json").write_text(json.dumps(records, indent=2))
    lines = ["# fedtheory claims ledger", "",
             "| claim | paper | reference | status | instances | worst tightness | statement |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        c = r.claim
        lines.append(f"| `{c.id}` | {c.paper} | {c.reference} | {r.status} | {len(r.evidence)} | "
                     f"{fmt(r.worst_tightness)} | {c.statement.replace('|', '/')} |")
    failures = [r for r in results if r.status != "holds"]
    if failures:
        lines += ["", "## Details of claims that do not simply hold", ""]
        for r in failures:
            lines.append(f"### `{r.claim.id}`: {r.status}")
            if r.error:
                lines.append(f"```\n{r.error}\n```")
            for e in r.evidence:
                if not e.holds or r.claim.expected != "holds":
                    lines.append(f"- {e.instance}: measured {fmt(e.measured)}, theory {fmt(e.theory)}, "
                                 f"holds={e.holds} {dict(e.details) if e.details else ''}")
            lines.append("")
    (out / "claims.md").write_text("\n".join(lines) + "\n")


