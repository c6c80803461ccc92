"""The claims ledger as a static HTML site: what a referee opens instead of reading claims.md.

``write_site(records, out)`` writes, from the records of a ``claims.json`` and the installed package's paper
inventories (:mod:`fedtheory.papers`) only, so that a ledger from another machine renders the same:

* ``index.html``: the verdicts, the coverage of every paper's numbered statements (as ``fedtheory coverage``),
  the claims recorded false by what they find false (``false_kind``: a statement false as printed, one false
  under a named reading, or fedtheory's own reading, each with its badge and count; the statements are counted
  as the coverage table counts them), and every claim with its status and worst tightness. The ledger of a
  selection says which papers ran and shows the others as "not run here" (:mod:`fedtheory.report.scope`);
* ``<paper>.html`` for each paper key of the ledger: every statement of the paper's inventory with its status,
  the claims citing it and the graph of its proof chain (:mod:`fedtheory.report.proofgraph`), then every claim
  with its statement, its figures (:mod:`fedtheory.report.figures`: measured against the bound per instance,
  the tightness, the counterexample of a claim recorded false, the series its details carry, the worst point
  of ``verify --worst-case``'s search and the PEP value) and its instances.

The pages are self-contained: inline CSS and SVG, no script, no web font, no request to anything outside the
folder (the notebooks of the repository are linked by relative path when they exist). Statuses are shown with
words and symbols as well as colours.
"""
from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..claims.registry import PAPERS, paper_short_citation
from ..coverage.statements import STATUSES, StatementCoverage, checked_share, qualified_summary
from ..papers import LEDGER, PAPER_KEYS, paper
from .figures import curves_figure, evidence_figure, number, series_figure
from .ledger import (
    FAILED_STATUSES,
    FALSE_KIND_WORDS,
    certification_sentence,
    false_kind,
    read_claims,
    recorded_coverage,
    verdict_key,
)
from .proofgraph import STATUS_WORDS, proof_chain_svg
from .scope import NOT_RUN, run_scope
from .symbols import pretty, pretty_inline

__all__ = ["SiteSummary", "write_site", "write_html_report", "NOTEBOOKS", "CLAIM_BADGES"]

#: The repository's notebooks that explore each paper key's claims (notebooks/ at the repository root).
NOTEBOOKS = {k.key: (k.notebook,) for k in LEDGER}
NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"  # present in a source checkout only

#: CSS class and words of each claim verdict (:func:`fedtheory.report.ledger.verdict_key`: the status, with a claim
#: recorded false split by what it finds false): the words carry the verdict, not the colour.
CLAIM_BADGES = {"holds": ("ok", "✓ holds"),
                "false-printed": ("recorded", "✗ false as printed (recorded)"),
                "false-reading": ("reading", "✗ false under a reading (recorded)"),
                "false-ours": ("ours", "◇ fedtheory's reading, false (recorded)"),
                "measured": ("measured", "● measured, no verdict"), "VIOLATED": ("bad", "✗ VIOLATED"),
                "COUNTEREXAMPLE-LOST": ("bad", "⚠ COUNTEREXAMPLE LOST"), "ERROR": ("bad", "⚠ ERROR"),
                "RUN-DIFFERS": ("bad", "⚠ RUN DIFFERS FROM THE PAPER'S ALGORITHM")}
STATEMENT_CLASS = {"checked": "ok", "checked-derived": "ok", "checked-narrower": "ok", "measured": "open",
                   "false": "recorded", "false-under-reading": "reading", "fails": "bad", "not-checkable": "na",
                   "open": "open", "not-run": "notrun"}

CSS = """
body{font-family:Georgia,'DejaVu Serif','Liberation Serif',serif;font-size:17px;line-height:1.5;color:#1a1a1a;
 max-width:64rem;margin:0 auto;padding:0 1.2rem 4rem;background:#fdfdfb}
h1,h2,h3,nav,table,.badge,.meta,figure figcaption{font-family:'DejaVu Sans','Liberation Sans',Helvetica,Arial,
 sans-serif}
h1{font-size:1.6rem;margin:1.2rem 0 .4rem}h2{font-size:1.3rem;margin-top:2.4rem;border-bottom:1px solid #ccc}
h3{font-size:1.05rem;margin:0 0 .3rem}code{font-size:.88em;background:#f1f1ec;padding:0 .2em;border-radius:3px}
nav{font-size:.9rem;padding:.6rem 0;border-bottom:1px solid #ddd;position:sticky;top:0;background:#fdfdfb;
 z-index:1}nav a{margin-right:.9rem}a{color:#1f4e8c}
table{border-collapse:collapse;font-size:.85rem;margin:.6rem 0;width:100%}
th,td{border-bottom:1px solid #e2e2dc;padding:.25rem .45rem;text-align:left;vertical-align:top}
th{background:#f1f1ec}td{overflow-wrap:break-word}td code{overflow-wrap:normal;word-break:normal}
.partial{background:#f4f4f0;border-left:4px solid #999;padding:.4rem .8rem}
td.notrun-cell{color:#555;font-style:italic;background:#f7f7f7}table.claims td:first-child{width:30%}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.verdict{white-space:nowrap}
.badge{display:inline-block;font-size:.78rem;font-weight:bold;padding:.05rem .45rem;border-radius:.7rem;
 border:1px solid;white-space:nowrap}
.ok{background:#e6f4e1;color:#1b5e20;border-color:#7cb87a}.recorded{background:#fde7d9;color:#8a3b00;
 border-color:#e29a66}.bad{background:#f8d0d0;color:#8b0000;border-color:#c62828}
.measured{background:#e3ecf8;color:#1f3f73;border-color:#8aa7d6}.reading{background:#fbe3f0;color:#7a1f4f;
 border-color:#d98cb3}.ours{background:#efe9f7;color:#4b2c7a;border-color:#a48cc9}.notrun{background:#f7f7f7;
 color:#555;border-color:#ccc;border-style:dashed}.na{background:#eeeeee;color:#444;
 border-color:#bbb}.open{background:#fff7c2;color:#5c4a00;border-color:#d6c25a}
section{scroll-margin-top:3rem}
.claim,.statement{border:1px solid #e0e0da;border-radius:6px;padding:.8rem 1rem;margin:1rem 0;background:#fff}
.claim.failed{border-left:6px solid #c62828}.claim.recorded-false{border-left:6px solid #e29a66}
.meta{font-size:.82rem;color:#555}.says{margin:.3rem 0 .5rem}
figure{margin:.6rem 0;overflow-x:auto}figure svg{max-width:100%;height:auto}
figcaption{font-size:.8rem;color:#555}tr.cx td{background:#fde7d9}
.worst{background:#f6f1e7;border-radius:4px;padding:.4rem .7rem;font-size:.88rem;margin:.5rem 0}
svg.chain text{font-family:'DejaVu Sans','Liberation Sans',Helvetica,Arial,sans-serif;fill:#1a1a1a}
pre{white-space:pre-wrap;font-size:.8rem;background:#f8f1f1;padding:.5rem}
details summary{cursor:pointer;font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;font-size:.85rem}
"""


@dataclass
class SiteSummary:
    """What :func:`write_site` wrote: its pages, and how many claims have at least one figure."""

    out: Path
    pages: list[Path] = field(default_factory=list)
    claims: int = 0
    claims_with_figure: int = 0
    figures: int = 0

    @property
    def bytes(self) -> int:
        return sum(p.stat().st_size for p in self.pages)


def _fmt(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, str):
        return html.escape(x)
    return f"{number(x):.4g}"


def _emphasis(text: str) -> str:
    """Markdown's *emphasis* (the coverage module writes for docs/coverage.md) as <em>."""
    return re.sub(r"(?<![\w*])\*([A-Za-z][^*]*?)\*(?![\w*])", r"<em>\1</em>", text)


def _badge(record: Mapping[str, Any]) -> str:
    """The claim's verdict badge, by :func:`verdict_key` (a claim recorded false says what it finds false)."""
    return _badge_of(verdict_key(record))


def _badge_of(key: str) -> str:
    cls, words = CLAIM_BADGES.get(key, ("na", key))
    return f'<span class="badge {cls}">{html.escape(words)}</span>'


def _statement_badge(status: str) -> str:
    return f'<span class="badge {STATEMENT_CLASS[status]}">{html.escape(STATUS_WORDS[status][1])}</span>'


def _page_name(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", key) + ".html"


def statement_anchor(label: str) -> str:
    """The id of a statement's section on its paper's page: ``Theorem 3.1`` -> ``s-theorem-3-1``."""
    return "s-" + re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


def claim_id_html(claim_id: str) -> str:
    """A claim id, escaped, with a line-break opportunity after each dot and underscore only: a long id in a
    narrow column wraps between its parts, never mid-word."""
    return re.sub(r"([._])", r"\1<wbr>", html.escape(claim_id))


def claim_anchor(claim_id: str) -> str:
    return "c-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", claim_id)


class _Site:
    """The records indexed for linking: which page each claim is on, which claims cite each statement."""

    def __init__(self, records: Sequence[Mapping[str, Any]], out: Path, notebook_dir: Path | None,
                 progress: Callable[[str], None] | None = None):
        self.records = list(records)
        self.progress = progress
        self.out = out
        self.notebook_dir = notebook_dir
        self.by_id = {r["id"]: r for r in self.records}
        present = {r["paper"] for r in self.records}
        self.keys = [k for k in PAPERS if k in present or k in PAPER_KEYS] + sorted(present - set(PAPERS))
        self.rows, self.unplaced = recorded_coverage(self.records)
        self.row = {(r.paper, r.statement.label): r for r in self.rows}
        self.scope = run_scope(self.records)

    def claim_href(self, claim_id: str, here: str) -> str:
        page = _page_name(self.by_id[claim_id]["paper"])
        return f"{'' if page == here else page}#{claim_anchor(claim_id)}"

    def claim_link(self, claim_id: str, here: str) -> str:
        if claim_id not in self.by_id:
            return f"<code>{claim_id_html(claim_id)}</code>"
        return f'<a href="{self.claim_href(claim_id, here)}"><code>{claim_id_html(claim_id)}</code></a>'

    def coverage_status(self, row: StatementCoverage) -> str:
        """The coverage status, or "not-run" (:mod:`fedtheory.report.scope`) where this ledger cannot know it:
        some installed claim citing the statement is not in the ledger (the status from the others may differ:
        a statement found false by a claim that did not run would read as checked), or its paper did not run at
        all and no claim of the ledger cites it. A not-checkable statement stays not checkable (the inventory's
        word, not the run's), one found false as printed stays false (the first status in the order of
        :mod:`fedtheory.coverage.statements`: no claim that did not run can change it), and one false under a
        reading stays so unless a claim that did not run finds it false as printed."""
        if row.status in ("not-checkable", "false"):  # false as printed outranks whatever did not run
            return row.status
        missing = self.scope.citing_missing(row.paper, row.statement.label)
        if row.status == "false-under-reading" and not set(missing) & self.scope.printed:
            return row.status  # only a claim finding it false as printed could outrank it
        if missing:
            return "not-run"
        if not row.claims and self.scope.papers[row.paper].state == "not run":
            return "not-run"
        return row.status

    def statement_status(self, row: StatementCoverage) -> str:
        """:meth:`coverage_status`, or "fails" when a claim citing the statement failed in this run."""
        if any(self.by_id[c]["status"] in FAILED_STATUSES for c in row.claims if c in self.by_id):
            return "fails"
        return self.coverage_status(row)

    def totals(self) -> dict[str, dict[str, int]]:
        """Per paper key of the inventories: the count of each coverage status (``not-run`` included), of the
        measured statements that do not reproduce, and the total: what the coverage table shows and the index's
        statement counters count."""
        out: dict[str, dict[str, int]] = {}
        for r in self.rows:
            t = out.setdefault(r.paper, {**{s: 0 for s in (*STATUSES, "not-run")}, "not reproduced": 0, "total": 0})
            status = self.coverage_status(r)
            t[status] += 1
            t["not reproduced"] += status == "measured" and r.reproduced is False
            t["total"] += 1
        return out

    def cite_link(self, cite: str, default_paper: str, here: str) -> str:
        key, _, label = cite.partition(":") if ":" in cite else (default_paper, "", cite)
        text = html.escape(label if key == default_paper else f"{key}: {label}")
        if (key, label) not in self.row:
            return text
        page = _page_name(key)
        return f'<a href="{"" if page == here else page}#{statement_anchor(label)}">{text}</a>'

    def notebooks(self, key: str) -> str:
        items = []
        for name in NOTEBOOKS.get(key, ()):
            path = self.notebook_dir / name if self.notebook_dir is not None else None
            if path is not None and path.exists():
                rel = os.path.relpath(path, self.out.resolve())
                items.append(f'<a href="{html.escape(rel)}"><code>notebooks/{name}</code></a>')
            else:
                items.append(f"<code>notebooks/{name}</code> (in the fedtheory repository)")
        return ", ".join(items)


def _page(site: _Site, title: str, here: str, body: str) -> str:
    nav = ['<a href="index.html">Overview</a>'] + [
        f'<a href="{_page_name(k)}">{html.escape(k)}</a>' for k in site.keys
        if any(r["paper"] == k for r in site.records) or k in PAPER_KEYS]
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{html.escape(title)}</title><link rel="icon" href="data:,"><style>{CSS}</style></head>'
            f'<body><nav>{" ".join(nav)}</nav>\n{body}\n</body></html>\n')


#: The coverage table's columns: heading, and the status counted (data-status, read by the browser test).
COVERAGE_COLUMNS = (("✓ checked", "checked"), ("checked, derived form", "checked-derived"),
                    ("checked, narrower form", "checked-narrower"), ("measured (not reproduced)", "measured"),
                    ("✗ false as printed", "false"), ("✗ false under a reading", "false-under-reading"),
                    ("not checkable", "not-checkable"), ("? open", "open"))


def _coverage_table(site: _Site) -> str:
    """The coverage of every inventoried paper; a paper this ledger did not run is one row "not run here", and
    a paper it ran in part has its unrun statements in a column of their own (shown only then)."""
    columns = list(COVERAGE_COLUMNS) + ([("not run here", "not-run")] if site.scope.partial else [])
    heads = [h for h, _ in columns] + ["total", "asserted of checkable"]
    out = ["<table class=coverage><tr><th>paper</th>" + "".join(f'<th class="num">{h}</th>' for h in heads)
           + "</tr>"]
    for key, x in site.totals().items():
        run = site.scope.papers[key]
        # the key and the authors (venue): the full citation is the paper page's title and the link's tooltip
        name = (f'<td><a href="{_page_name(key)}#statements" title="{html.escape(paper(key).citation)}">'
                f'{html.escape(key)}</a><br><span class=meta>{html.escape(paper_short_citation(key) or "")}</span>'
                "</td>")
        if run.state == "not run" and x["not-run"] + x["not-checkable"] == x["total"]:
            out.append(f'<tr data-paper="{key}" class=notrun-row>{name}<td colspan={len(heads)} class=notrun-cell>'
                       f"{NOT_RUN}: none of its {run.registered} claims is in this ledger</td></tr>")
            continue
        cells = [(s, f'{x["measured"]} ({x["not reproduced"]})' if s == "measured" else x[s]) for _, s in columns]
        share = f"{checked_share(x):.0%}" if not x["not-run"] else "–"
        out.append(f'<tr data-paper="{key}">{name}' + "".join(
            f'<td class="num" data-status="{s}">{c}</td>' for s, c in cells)
            + f'<td class="num">{x["total"]}</td><td class="num">{share}</td></tr>')
    return "".join(out) + "</table>"


def _run_note(site: _Site) -> str:
    """What a partial ledger ran, in one paragraph (empty for a complete one)."""
    if not site.scope.partial:
        return ""
    ran = [f"<a href=\"{_page_name(k)}\">{html.escape(k)}</a> ({site.scope.papers[k].words()})"
           for k in site.scope.ran()]
    others = [html.escape(k) for k, p in site.scope.papers.items() if p.state == "not run" and p.registered]
    return (f'<p class="partial" id="run">This ledger ran part of fedtheory\'s claims: '
            f"{', '.join(ran) if ran else 'none of the installed papers'}. "
            + (f"Not run here: {', '.join(others)}; their statements are shown as “{NOT_RUN}”, not as open. "
               if others else "")
            + f"A statement some of whose claims did not run is shown as “{NOT_RUN}” (unless a claim that ran "
            "finds it false). <code>fedtheory verify --html</code> runs them all.</p>")


def _verdict_counts(site: _Site) -> str:
    """The claims by verdict (:func:`verdict_key`), then the papers' statements found false, counted as the
    coverage table counts them (a statement found false by two claims counts once)."""
    counts: dict[str, int] = {}
    for r in site.records:
        counts[verdict_key(r)] = counts.get(verdict_key(r), 0) + 1
    order = {k: i for i, k in enumerate(CLAIM_BADGES)}
    claims = " ".join(f'<span class=count data-verdict="{k}">{_badge_of(k)}&nbsp;<b>{n}</b></span>'
                      for k, n in sorted(counts.items(), key=lambda x: order.get(x[0], len(order))))
    t = site.totals()
    false = sum(x["false"] for x in t.values())
    reading = sum(x["false-under-reading"] for x in t.values())
    ours = counts.get("false-ours", 0)
    whose = "the papers run here" if site.scope.partial else "the papers"
    return (f"<p>Claims: {claims}</p><p class=meta>Statements of {whose} (as counted in the coverage table "
            f'below): <b data-count="statements-false">{false}</b> false as printed and '
            f'<b data-count="statements-false-under-reading">{reading}</b> false under a named reading. '
            + (f"{ours} claim{'s' if ours != 1 else ''} find{'s' if ours == 1 else ''} fedtheory's own reading "
               "or folklore false: not a statement of any paper, so no statement's status."
               if ours else "") + "</p>")


def _false_section(site: _Site, here: str) -> str:
    """The claims recorded false, by what they find false (:data:`FALSE_KIND_WORDS`): the statements false as
    printed, those false under a reading (with the reading), and fedtheory's own readings."""
    t = site.totals()
    n_statements = {"printed": sum(x["false"] for x in t.values()),
                    "reading": sum(x["false-under-reading"] for x in t.values())}
    intro = {"printed": "The paper's statement fails as printed; the corrected statement is checked next to it.",
             "reading": "The paper's text is ambiguous; the statement fails under the reading named, and the "
                        "claim gives the verdict under the other one.",
             "ours": "Not a statement of the paper: a reading or a piece of folklore of fedtheory's own, found "
                     "false. It gives no statement of a paper a status."}
    headings = {"printed": "False as printed", "reading": "False under a reading",
                "ours": "fedtheory's own readings found false"}
    out = []
    for kind in FALSE_KIND_WORDS:
        claims = [r for r in site.records if r["expected"] == "violated" and false_kind(r) == kind]
        if not claims:
            continue
        counted = (f"{n_statements[kind]} statement{'s' if n_statements[kind] != 1 else ''}, by "
                   if kind in n_statements else "")
        out.append(f'<h3 id="false-{kind}">{headings[kind]}: {counted}{len(claims)} '
                   f"claim{'s' if len(claims) != 1 else ''}</h3><p class=meta>{intro[kind]}</p><ul>")
        for r in claims:
            reading = f"<br><span class=meta>Reading: {pretty(r['reading'])}</span>" if r.get("reading") else ""
            out.append(f"<li>{site.claim_link(r['id'], here)} {_badge(r)}: {pretty(r['statement'])}{reading}</li>")
        out.append("</ul>")
    if not out:
        return ""
    return ("<h2>Statements found false</h2><p>Each with its counterexample on the claim's page.</p>"
            + "".join(out))


def _index(site: _Site, source: str) -> str:
    here = "index.html"
    body = [f"<h1>fedtheory claims ledger</h1><p class=meta>Rendered from <code>{html.escape(source)}</code>: "
            f"{len(site.records)} claims. Each claim checks one statement numerically on its instances; "
            "see each paper's page for the statements, their proof chains and the figures.</p>",
            _run_note(site), _verdict_counts(site)]
    failed = [r for r in site.records if r["status"] in FAILED_STATUSES]
    if failed:
        body.append("<h2>Needs attention</h2><ul>" + "".join(
            f"<li>{site.claim_link(r['id'], here)} {_badge(r)}</li>" for r in failed) + "</ul>")
    body += ["<h2 id=\"coverage\">Coverage of the papers' numbered statements</h2>",
             "<p>Each statement has one status: <b>checked</b> as printed, checked in a <b>derived</b> form (the "
             "printed formula is not recoverable) or a <b>narrower</b> one (what is narrower is given), "
             "<b>measured</b> on a stand-in (reproduced or not; never counted as checked), <b>false</b> as printed "
             "or <b>under a reading</b> (a corrected statement is checked next to it), <b>not checkable</b> with "
             "the reason given, <b>open</b> otherwise"
             + (f", and <b>{NOT_RUN}</b> when this ledger did not run its claims" if site.scope.partial else "")
             + ".</p>", _coverage_table(site)]
    if not site.scope.partial:  # the sentence counts every inventoried statement: a full ledger's
        body.append(f"<p class=meta>{_emphasis(pretty(qualified_summary(site.rows)))}</p>")
    body.append(_false_section(site, here))
    body.append("<h2>Papers</h2><ul>")
    for key in site.keys:
        run = site.scope.papers.get(key)
        n = sum(r["paper"] == key for r in site.records)
        name = paper(key).citation if key in PAPER_KEYS else key
        nbs = site.notebooks(key)
        ran = run.words() if run is not None and run.registered else f"{n} claim{'s' if n != 1 else ''}"
        body.append(f'<li><a href="{_page_name(key)}">{html.escape(name)}</a>: {ran}'
                    f'{"; notebook " + nbs if nbs else ""}</li>')
    body.append("</ul><h2 id=claims>Every claim</h2><table class=claims><tr><th>claim</th><th>status</th>"
                "<th class=num>instances</th><th class=num>worst tightness</th><th>reference</th></tr>")
    for r in site.records:
        body.append(f"<tr><td>{site.claim_link(r['id'], here)}</td><td>{_badge(r)}</td>"
                    f"<td class=num>{len(r['evidence'])}</td><td class=num>{_fmt(r.get('worst_tightness'))}</td>"
                    f"<td>{html.escape(r.get('reference') or '')}</td></tr>")
    body.append("</table>")
    if site.unplaced:
        body.append("<h2>Citations the installed inventories cannot place</h2><ul>" + "".join(
            f"<li>{html.escape(u)}</li>" for u in site.unplaced) + "</ul>")
    return _page(site, "fedtheory claims ledger", here, "\n".join(body))


def _statement_section(site: _Site, key: str, row: StatementCoverage) -> str:
    here = _page_name(key)
    s = row.statement
    status = site.statement_status(row)
    out = [f'<section class="statement" id="{statement_anchor(s.label)}"><h3>{html.escape(s.label)} '
           f'{_statement_badge(status)}</h3><div class=meta>{html.escape(s.where)}</div>'
           f'<p class=says>{pretty(s.summary)}</p>']
    if row.claims:
        out.append("<p class=meta>Cited by: " + ", ".join(
            f"{site.claim_link(c, here)} {_badge(site.by_id[c])}" for c in row.claims) + "</p>")
    missing = site.scope.citing_missing(key, s.label)
    if missing:
        n = len(site.scope.citing.get((key, s.label), ()))
        out.append(f"<p class=meta>{NOT_RUN}: " + ", ".join(f"<code>{claim_id_html(c)}</code>" for c in missing)
                   + (" (the one installed claim citing it)" if n == 1 else
                      f" ({len(missing)} of the {n} installed claims citing it)") + ".</p>")
    elif s.reproduced_in:
        out.append(f"<p class=meta>Reproduced in {pretty(s.reproduced_in)}</p>")
    if row.note and status != "not-run":  # the note rests on the claims that ran: not the statement's status
        out.append(f"<p class=meta>{html.escape(row.status)}: {pretty(row.note)}</p>")
    if s.depends_on:
        p = paper(key)
        chain = [*p.proof_chain(s.label), s.label]
        statuses = {lbl: site.statement_status(site.row[(key, lbl)]) for lbl in chain}
        broken = {lbl for lbl, st in statuses.items() if st in ("fails", "false")}
        first = next((lbl for lbl in chain if lbl in broken), None)
        uses = ", ".join(site.cite_link(d, key, here) for d in s.depends_on)
        caption = (f"The first broken link in proof order is {html.escape(first)}." if first
                   else "No link of the chain is broken.")
        svg = proof_chain_svg(p, s.label, statuses, broken, lambda lbl: f"#{statement_anchor(lbl)}")
        out.append(f"<p class=meta>Its proof uses {uses}.</p><figure>{svg}<figcaption>Proof chain of "
                   f"{html.escape(s.label)}: each statement after those its proof uses; a thick red border marks "
                   f"a broken link. {caption}</figcaption></figure>")
    return "".join(out) + "</section>"


def _instances_table(r: Mapping[str, Any]) -> str:
    theory = "reference" if r["expected"] == "exploratory" else "theory"  # an experiment has no bound
    rows = ["<table><tr><th class=num>#</th><th>instance</th><th class=num>measured</th>"
            f"<th class=num>{theory}</th><th>verdict</th><th class=num>tightness</th><th>details</th></tr>"]
    for k, e in enumerate(r["evidence"], start=1):
        counterexample = not e.get("holds") and r["expected"] == "violated"
        if r["expected"] == "exploratory":  # an experiment's measurement: no verdict to show (CLAIM_BADGES)
            verdict = "● measured"
        elif e.get("holds"):
            verdict = "✓ holds"
        else:
            verdict = "✗ fails: the counterexample" if counterexample else "✗ fails"
        details = json.dumps(e.get("details") or {}, default=str)
        if len(details) > 400:
            details = details[:400] + " …"
        rows.append(f'<tr{" class=cx" if counterexample else ""}><td class=num>{k}</td>'
                    f"<td>{pretty_inline(str(e.get('instance', '')))}</td><td class=num>{_fmt(e.get('measured'))}"
                    f"</td><td class=num>{_fmt(e.get('theory'))}</td><td class=verdict>{verdict}</td>"
                    f"<td class=num>{_fmt(e.get('tightness'))}</td><td><code>{html.escape(details)}</code></td></tr>")
    rows.append("</table>")
    n = len(r["evidence"])
    return (f"<details{' open' if n <= 6 else ''}><summary>{n} instance{'s' if n != 1 else ''}</summary>"
            f"{''.join(rows)}</details>")


def _claim_section(site: _Site, r: Mapping[str, Any], summary: SiteSummary) -> str:
    here = _page_name(r["paper"])
    classes = "claim" + (" failed" if r["status"] in FAILED_STATUSES else "") + (
        " recorded-false" if r["status"] == "violated-as-recorded" else "")
    cites = ", ".join(site.cite_link(c, r["paper"], here) for c in r.get("cites") or ())
    facts = [f"kind: {html.escape(str(r.get('kind', '')))}", f"expected: {html.escape(str(r['expected']))}"]
    if false_kind(r):
        facts.append(f"found {FALSE_KIND_WORDS[false_kind(r)]}")
    if r.get("derived"):
        facts.append("derived by fedtheory")
    if cites:
        facts.append(f"cites {cites}")
    if r.get("seconds") is not None:
        facts.append(f"{number(r['seconds']):.2g} s")
    out = [f'<section class="{classes}" id="{claim_anchor(r["id"])}"><h3><code>{claim_id_html(r["id"])}</code> '
           f'{_badge(r)}</h3><div class=meta>{html.escape(r.get("reference") or "")}</div>'
           f'<p class=says>{pretty(r["statement"])}</p><div class=meta>{" · ".join(facts)}</div>']
    if r.get("reading"):
        out.append(f"<p class=meta>Reading: {pretty(r['reading'])}</p>")
    if false_kind(r) == "ours":
        out.append("<p class=meta>fedtheory's own reading or folklore, found false: not a statement of the paper."
                   "</p>")
    if r.get("notes"):
        out.append(f"<p class=meta>Notes: {pretty(r['notes'])}</p>")
    if certification_sentence(r):
        out.append(f"<p class=meta>{html.escape(certification_sentence(r))}.</p>")
    if r.get("error"):
        out.append(f"<pre>{html.escape(r['error'])}</pre>")
    if "adversarial_tightness" in r or "pep_worst_case" in r:
        point = r.get("adversarial_instance")
        point_text = pretty_inline(", ".join(f"{k}={v}" for k, v in point.items())) if isinstance(point, dict) \
            else pretty_inline(json.dumps(point))
        pep = r.get("pep_worst_case")
        out.append(f"<div class=worst><b>Worst case over the instance space</b>: the search found measured / "
                   f"bound = {_fmt(r.get('adversarial_tightness'))} at {point_text}"
                   + ("" if r.get("holds_at_adversarial_instance", True) else " (the check fails there)")
                   + f"; exact PEP worst case: {_fmt(pep) if pep is not None else 'no PEP formulation'}.</div>")
    figures = [f for f in (evidence_figure(r), series_figure(r)) if f is not None]
    captions = ["Left: what each instance measured against the theory's side; a cross marks an instance where "
                "the check fails. Right (when the claim reports it): measured / bound per instance.",
                "Series recorded in the evidence's details."]
    if r["expected"] == "exploratory":  # a measurement on a stand-in: no instance passes or fails
        captions[0] = ("What each instance measured, next to the claim's reference value (not a bound): an "
                       "experiment reported without a verdict.")
    curves = curves_figure(r)  # a neural experiment's curves with seed bands (fedtheory/experiments/)
    if curves is not None:
        figures.append(curves)
        captions.append("The experiment's test accuracy against rounds per method, over the held-out seeds; "
                        "the paper's reported numbers are in the instance's details (paper_numbers).")
    for svg, caption in zip(figures, captions):
        out.append(f"<figure>{svg}<figcaption>{caption}</figcaption></figure>")
    summary.figures += len(figures)
    summary.claims_with_figure += bool(figures)
    out.append(_instances_table(r))
    if site.progress is not None:
        site.progress(r["id"])
    return "".join(out) + "</section>"


def _paper_page(site: _Site, key: str, summary: SiteSummary) -> str:
    here = _page_name(key)
    claims = [r for r in site.records if r["paper"] == key]
    title = paper(key).citation if key in PAPER_KEYS else key
    body = [f"<h1>{html.escape(title)}</h1><p class=meta>Paper key <code>{html.escape(key)}</code>: "
            f"{len(claims)} claims in this ledger.</p>"]
    run = site.scope.papers.get(key)
    if run is not None and run.state != "complete" and run.registered:
        body.append(f'<p class="partial" id="run">{html.escape(run.words()[0].upper() + run.words()[1:])}'
                    f"{'' if run.state == 'not run' else ' here'}: this ledger has {run.ran} of the "
                    f"{run.registered} claims of <code>{html.escape(key)}</code>; a statement none of whose claims "
                    f"ran is shown as “{NOT_RUN}”. <code>fedtheory verify --paper {html.escape(key)} --html</code> "
                    "runs them.</p>")
    nbs = site.notebooks(key)
    if nbs:
        body.append(f"<p>Explored in the notebook {nbs}.</p>")
    if key in PAPER_KEYS:
        rows = [row for row in site.rows if row.paper == key]
        body.append(f'<h2 id="statements">Statements ({len(rows)})</h2><p>Every numbered statement of the paper, '
                    "as listed in its inventory (<code>fedtheory/papers/" f"{html.escape(key)}.py</code>).</p>")
        body += [_statement_section(site, key, row) for row in rows]
    body.append(f'<h2 id="claims">Claims ({len(claims)})</h2>')
    body += [_claim_section(site, r, summary) for r in claims]
    return _page(site, title, here, "\n".join(body))


def write_site(records: Sequence[Mapping[str, Any]], out: Path, source: str = "claims.json",
               notebook_dir: Path | None = NOTEBOOK_DIR,
               progress: Callable[[str], None] | None = None) -> SiteSummary:
    """Write the site for ``records`` (the list in a claims.json) into ``out``: ``index.html`` and one page per
    paper key (see the module docstring). ``source`` is the file named on the index page; ``notebook_dir`` is
    where the notebooks are linked from (default: the repository's, when fedtheory runs from a checkout);
    ``progress`` is called with each claim's id once its section (its figures: the site's time) is drawn."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    site = _Site(records, out, notebook_dir, progress)
    summary = SiteSummary(out, claims=len(site.records))
    pages = {"index.html": None, **{_page_name(k): k for k in site.keys}}
    for name, key in pages.items():
        if key is None:
            continue
        (out / name).write_text(_paper_page(site, key, summary), encoding="utf-8")
        summary.pages.append(out / name)
    (out / "index.html").write_text(_index(site, source), encoding="utf-8")
    summary.pages.insert(0, out / "index.html")
    return summary


def write_html_report(claims_json: Path, out: Path | None = None,
                      progress: Callable[[str], None] | None = None) -> SiteSummary:
    """Read ``claims_json`` (:func:`fedtheory.report.ledger.read_claims`) and write its site into ``out``
    (default: the folder of ``claims_json``, next to it); ``progress`` as in :func:`write_site`."""
    claims_json = Path(claims_json)
    return write_site(read_claims(claims_json), claims_json.parent if out is None else Path(out),
                      source=claims_json.name, progress=progress)
