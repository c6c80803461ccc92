"""Plain-text tables of ledger results: the table ``fedtheory verify`` prints, fitted to the terminal's width."""
from __future__ import annotations

import json
import shutil
import textwrap

from ..claims.registry import Claim, ClaimResult

__all__ = ["TABLE_HEADER", "REFERENCE_MIN_WIDTH", "REFERENCE_LINES", "fmt", "short_reference", "table_rows",
           "terminal_width", "render_table", "render_worst_case"]


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


#: The ledger table's columns: the claim id names its paper (``fedred.dane.lyapunov``), so there is no paper
#: column, and the reference column names the statements cited without the paper's authors
#: (:func:`short_reference`; the full reference is in claims.md and ``--list``).
TABLE_HEADER = ("claim", "status", "n", "tightness", "reference")
#: The reference column keeps at least this many characters and wraps on words over up to
#: :data:`REFERENCE_LINES` lines before anything is cut: 24 characters hold the longest statement label
#: ("Theorem B.1 (full statement of Theorem 3.1)" in two lines) and the typical cited pair ("Corollary 21;
#: eq. (B.14)") in one; the claim ids wrap at dots to leave it that room.
REFERENCE_MIN_WIDTH = 24
REFERENCE_LINES = 3


def short_reference(claim: Claim) -> str:
    """What a claim checks, for the table: the statements it cites ("Corollary 21; eq. (B.14)", another paper's
    as "fedred:Lemma 10") and its free-text source, without the authors of its own paper (the claim id names the
    paper): ``"Jiang, Rodomanov & Stich (ICML 2024), Corollary 21"`` is shown as ``"Corollary 21"``."""
    labels = [c.label if c.paper == claim.paper else f"{c.paper}:{c.label}" for c in claim.citations]
    return " / ".join(part for part in ("; ".join(labels), claim.source) if part)


def table_rows(results: list[ClaimResult]) -> list[tuple[str, ...]]:
    return [(r.claim.id, r.status, str(len(r.evidence)), fmt(r.worst_tightness), short_reference(r.claim))
            for r in results]


def terminal_width() -> int:
    """The terminal's width (COLUMNS, else the terminal, else 100 when the output is not a terminal)."""
    return shutil.get_terminal_size((100, 24)).columns


def render_table(rows: list[tuple[str, ...]], header: tuple[str, ...], width: int | None = None,
                 cut: int | None = None, wrap: int | None = 0, cut_lines: int = 1, cut_min: int = 0) -> str:
    """A plain-text table at most ``width`` characters wide (default: unlimited).

    Column ``cut`` (default: the last) is narrowed to fit and its text wraps on words over at most
    ``cut_lines`` lines; only what does not fit in those lines is cut, at a word, with an ellipsis. When it
    would get fewer than ``cut_min`` characters beside the other columns, it moves instead to the line(s)
    under each row, indented, where it has the whole width. If the rest is still too wide, column ``wrap``
    (default: the first, the claim ids) wraps after dots onto continuation lines rather than losing
    characters of an id.
    """
    ncol = len(header)
    cut = ncol - 1 if cut is None else cut
    widths = [max([len(header[i]), *(len(r[i]) for r in rows)]) for i in range(ncol)]
    below = False
    if width is not None:
        others = sum(widths) - widths[cut] + 2 * (ncol - 1)
        below = width - others < min(widths[cut], cut_min)
        if below:  # the cut column goes under its row: the others share the width without it
            others -= 2
            widths[cut] = max(1, width - len(_INDENT))
        else:
            widths[cut] = min(widths[cut], max(1, width - others))
        if wrap is not None and others + (0 if below else widths[cut]) > width:
            widths[wrap] = max(12, widths[wrap] - (others + (0 if below else widths[cut]) - width))
            if not below:
                others = sum(widths) - widths[cut] + 2 * (ncol - 1)
                widths[cut] = max(1, min(widths[cut], width - others))

    def cells(row: tuple[str, ...]) -> list[list[str]]:
        return [_wrap_words(text, widths[i], cut_lines) if i == cut
                else _wrap_at_dots(text, widths[i]) if i == wrap else [text] for i, text in enumerate(row)]

    lines = []
    for row in [header, tuple("-" * w for w in widths), *rows]:
        parts = cells(row)
        if below:
            under, parts = parts[cut], parts[:cut] + parts[cut + 1:]
            kept = widths[:cut] + widths[cut + 1:]
        else:
            under, kept = [], widths
        for k in range(max(len(p) for p in parts)):
            lines.append("  ".join((p[k] if k < len(p) else "").ljust(w) for p, w in zip(parts, kept)).rstrip())
        if row[cut].strip("-"):  # not the rule under the header
            lines += [(_INDENT + text).rstrip() for text in under]
    return "\n".join(lines)


#: How far a column moved under its row is indented, so that it reads as part of the row above.
_INDENT = "    "


def _wrap_at_dots(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken after dots where possible (claim ids)."""
    lines: list[str] = []
    while len(text) > width:
        k = text.rfind(".", 0, width)
        k = width if k < 0 else k + 1
        lines.append(text[:k])
        text = "  " + text[k:]  # the continuation is indented so it reads as part of the same id
    return [*lines, text]


def _wrap_words(text: str, width: int, max_lines: int) -> list[str]:
    """``text`` wrapped on words in at most ``max_lines`` lines of ``width`` characters; what does not fit is
    cut at a word and ends with an ellipsis."""
    if len(text) <= width:
        return [text]
    if width < 2:
        return [""]
    if max_lines == 1:
        return [text[:width - 1] + "…"]
    return textwrap.wrap(text, width, max_lines=max_lines, placeholder=" …", break_on_hyphens=False)


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
