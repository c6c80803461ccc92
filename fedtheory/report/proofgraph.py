"""A theorem's proof chain as an inline SVG graph: each statement its proof uses, left of the statements using it.

The chain is :meth:`fedtheory.papers.Paper.proof_chain` (the inventory's ``depends_on``, transitively). Each node
names the statement and its status in words (the coverage statuses, or FAILS) with a
colour; a broken link (a claim citing it failed in this run, or recorded the printed statement false) has a
thick red border and the word "broken". Nodes link to the statement on the paper's page. Drawn directly as
SVG (boxes, arrows and links), not by matplotlib: it is a diagram, not a plot of data.
"""
from __future__ import annotations

import html
from typing import Callable, Mapping

from ..papers import Paper

__all__ = ["proof_chain_svg", "STATUS_WORDS"]

#: Node fill and the words shown for each statement status of the report.
STATUS_WORDS = {"checked": ("#d9f0d3", "✓ checked"), "checked-derived": ("#e5f5e0", "✓ checked, derived form"),
                "checked-narrower": ("#e5f5e0", "✓ checked, narrower"), "measured": ("#deebf7", "~ measured"),
                "false": ("#fddbc7", "✗ false as printed"),
                "false-under-reading": ("#fde0ef", "✗ false under a reading"),
                "fails": ("#f4a582", "✗ FAILS in this run"), "not-checkable": ("#eeeeee", "– not checkable"),
                "open": ("#fff7bc", "? open"), "not-run": ("#f7f7f7", "· not run here")}
BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 150, 40, 46, 12, 6


def _levels(paper: Paper, labels: list[str]) -> dict[str, int]:
    """Column of each statement: 0 for one whose proof uses nothing in the chain, else one more than the
    highest column among the statements its proof uses (so every arrow points right)."""
    level: dict[str, int] = {}
    for label in labels:  # proof_chain's order puts every statement after its dependencies
        deps = [d for d in paper.statement(label).depends_on if d in level]
        level[label] = 1 + max((level[d] for d in deps), default=-1)
    return level


def proof_chain_svg(paper: Paper, label: str, status: Mapping[str, str], broken: set[str],
                    href: Callable[[str], str]) -> str:
    """The SVG graph of ``label``'s proof chain in ``paper``; ``status`` maps labels to a key of
    :data:`STATUS_WORDS`, ``broken`` names the broken links, ``href`` gives each node's link."""
    labels = [*paper.proof_chain(label), label]
    level = _levels(paper, labels)
    columns: dict[int, list[str]] = {}
    for lbl in labels:
        columns.setdefault(level[lbl], []).append(lbl)
    rows = max(len(c) for c in columns.values())
    width = len(columns) * (BOX_W + GAP_X) - GAP_X + 2 * PAD
    height = rows * (BOX_H + GAP_Y) - GAP_Y + 2 * PAD
    pos = {}
    for col, members in columns.items():
        top = PAD + (rows - len(members)) * (BOX_H + GAP_Y) / 2
        for k, lbl in enumerate(members):
            pos[lbl] = (PAD + col * (BOX_W + GAP_X), top + k * (BOX_H + GAP_Y))
    marker = "arrow-" + "".join(ch if ch.isalnum() else "-" for ch in f"{paper.key}-{label}")
    parts = [f'<svg class="chain" role="img" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}"><title>Proof chain of {html.escape(label)}</title>',
             f'<defs><marker id="{marker}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker>'
             '</defs>']
    for lbl in labels:
        x1, y1 = pos[lbl]
        for dep in paper.statement(lbl).depends_on:
            if dep in pos:
                x0, y0 = pos[dep]
                sx, sy, ex, ey = x0 + BOX_W, y0 + BOX_H / 2, x1, y1 + BOX_H / 2
                mid = (sx + ex) / 2
                parts.append(f'<path d="M {sx:.0f} {sy:.0f} C {mid:.0f} {sy:.0f}, {mid:.0f} {ey:.0f}, {ex:.0f} '
                             f'{ey:.0f}" fill="none" stroke="#777" stroke-width="1.2" '
                             f'marker-end="url(#{marker})"/>')
    for lbl in labels:
        x, y = pos[lbl]
        fill, words = STATUS_WORDS[status.get(lbl, "open")]
        is_broken = lbl in broken
        stroke = 'stroke="#b2182b" stroke-width="3.5"' if is_broken else 'stroke="#555" stroke-width="1"'
        if is_broken and "broken" not in words:
            words = f"{words} · broken"
        weight = ' font-weight="bold"' if lbl == label else ""
        parts.append(f'<a href="{html.escape(href(lbl))}"><rect x="{x:.0f}" y="{y:.0f}" width="{BOX_W}" '
                     f'height="{BOX_H}" rx="5" fill="{fill}" {stroke}/>'
                     f'<text x="{x + BOX_W / 2:.0f}" y="{y + 16:.0f}" text-anchor="middle" font-size="12"{weight}>'
                     f'{html.escape(lbl)}</text><text x="{x + BOX_W / 2:.0f}" y="{y + 32:.0f}" '
                     f'text-anchor="middle" font-size="10">{html.escape(words)}</text></a>')
    parts.append("</svg>")
    return "".join(parts)
