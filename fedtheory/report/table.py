"""Plain-text tables of ledger results: the table ``fedtheory verify`` prints, cut to the terminal's width."""
from __future__ import annotations

import json
import shutil

from ..claims.registry import ClaimResult

__all__ = ["TABLE_HEADER", "fmt", "table_rows", "terminal_width", "render_table", "render_worst_case"]


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


#: The ledger table's columns: the claim id names its paper (``fedred.dane.lyapunov``), so there is no paper
#: column; the reference is cut to what fits (the full one is in claims.md and ``--list``).
TABLE_HEADER = ("claim", "status", "n", "tightness", "reference")


def table_rows(results: list[ClaimResult]) -> list[tuple[str, ...]]:
    return [(r.claim.id, r.status, str(len(r.evidence)), fmt(r.worst_tightness), r.claim.reference)
            for r in results]


def terminal_width() -> int:
    """The terminal's width (COLUMNS, else the terminal, else 100 when the output is not a terminal)."""
    return shutil.get_terminal_size((100, 24)).columns


def render_table(rows: list[tuple[str, ...]], header: tuple[str, ...], width: int | None = None,
                 cut: int | None = None, wrap: int | None = 0) -> str:
    """A plain-text table at most ``width`` characters wide (default: unlimited).

    Column ``cut`` (default: the last) is shortened with an ellipsis, down to nothing, to fit; if the rest is
    still too wide, column ``wrap`` (default: the first, the claim ids) wraps after dots onto continuation lines
    rather than losing characters of an id.
    """
    ncol = len(header)
    cut = ncol - 1 if cut is None else cut
    widths = [max([len(header[i]), *(len(r[i]) for r in rows)]) for i in range(ncol)]
    if width is not None:
        others = sum(widths) - widths[cut] + 2 * (ncol - 1)
        widths[cut] = max(0, min(widths[cut], width - others))
        if wrap is not None and others + widths[cut] > width:
            widths[wrap] = max(12, widths[wrap] - (others + widths[cut] - width))

    def cells(row: tuple[str, ...]) -> list[list[str]]:
        out = []
        for i, text in enumerate(row):
            if i == cut and len(text) > widths[i]:
                text = text[:widths[i] - 1] + "…" if widths[i] > 1 else ""
            out.append(_wrap_at_dots(text, widths[i]) if i == wrap else [text])
        return out

    lines = []
    for row in [header, tuple("-" * w for w in widths), *rows]:
        parts = cells(row)
        for k in range(max(len(p) for p in parts)):
            lines.append("  ".join((p[k] if k < len(p) else "").ljust(w) for p, w in zip(parts, widths)).rstrip())
    return "\n".join(lines)


def _wrap_at_dots(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken after dots where possible (claim ids)."""
    lines: list[str] = []
    while len(text) > width:
        k = text.rfind(".", 0, width)
        k = width if k < 0 else k + 1
        lines.append(text[:k])
        text = "  " + text[k:]  # the continuation is indented so it reads as part of the same id
    return [*lines, text]


def render_worst_case(results: list[ClaimResult], worst: dict[str, dict], width: int | None = None) -> str:
    rows = []
    for r in results:
        w = worst.get(r.claim.id)
        if w is None:
            continue
        rows.append((r.claim.id, r.status, fmt(r.worst_tightness), fmt(w["adversarial_tightness"]),
                     fmt(w["pep_worst_case"]), json.dumps(w["adversarial_instance"])))
    header = ("claim", "status", "default tightness", "adversarial tightness", "PEP worst case",
              "instance attaining it")
    return "\nWorst case over each claim's instance space:\n" + render_table(rows, header, width=width)


