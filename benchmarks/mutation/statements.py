"""The discrimination results gathered per numbered statement, and the generated sections of the docs.

A (statement, variant) pair is *applicable* when the variant is live in at least one claim citing the statement
and some such claim judged it (cell X, E or .); it is *rejected by the own checks* when one of the statement's
claims rejects it with ``certify=False`` (X or E), *rejected with certification* when one rejects it either way
(own check, or ``certify=True``: the run differs from the paper's algorithm); *no reference* when it survives the
own checks and certification could not judge it. A pair where some claim's cell is ``?`` (the variant itself
raised) counts as a *variant error*, separately, and never as a rejection. Claims that cite no numbered statement
are gathered under "<paper> (uncited)".
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from slip_catalogue import FAMILIES, SLIPS

LIVE = ("X", "E", ".")
_BLOCK = re.compile(r"(<!-- generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.S)


def pair_outcomes(rows: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """(statement, variant) -> {"own": claims rejecting by their own check, "cert": claims rejecting with
    certification, "survive": claims running it live without rejecting, "noref": of those, claims whose
    certification had no reference, "errors": claims where the variant raised}."""
    out: dict[tuple[str, str], dict[str, Any]] = defaultdict(
        lambda: {"own": [], "cert": [], "survive": [], "noref": [], "errors": [], "role": "", "family": ""})
    for r in rows:
        for key, c in r.get("cells", {}).items():
            for st in r["cites"]:
                o = out[(st, key)]
                o["role"], o["family"] = c["role"], c.get("family", "")
                if c["cell"] in ("X", "E"):
                    o["own"].append(r["id"])
                elif c["cell"] == "?":
                    o["errors"].append(r["id"])
                elif c["cell"] == ".":
                    if c.get("cert") == "X":
                        o["cert"].append(r["id"])
                    else:
                        o["survive"].append(r["id"])
                        if c.get("cert") == "n":
                            o["noref"].append(r["id"])
    return out


def _outcome(o: dict[str, Any]) -> str:
    if o["own"]:
        return "own"
    if o["cert"]:
        return "cert"
    if o["survive"]:
        return "noref" if o["noref"] and len(o["noref"]) == len(o["survive"]) else "survived"
    return "error" if o["errors"] else "inert"


def per_statement(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per statement: claims, applicable pairs, rejected (own / with certification), no reference,
    survivors, variant errors, and the claims that reject, each with how many variants."""
    pairs = pair_outcomes(rows)
    claims: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        if r.get("cells"):
            for st in r["cites"]:
                claims[st].append(r["id"])
    out = []
    for st in sorted(claims):
        mine = {k: o for (s, k), o in pairs.items() if s == st}
        kinds = {k: _outcome(o) for k, o in mine.items()}
        by_claim: dict[str, int] = defaultdict(int)
        for o in mine.values():
            for cid in set(o["own"]) | set(o["cert"]):
                by_claim[cid] += 1
        applicable = [k for k, x in kinds.items() if x not in ("inert", "error")]
        out.append({"statement": st, "claims": sorted(claims[st]), "applicable": len(applicable),
                    "rejected_own": sum(x == "own" for x in kinds.values()),
                    "rejected_certified": sum(x in ("own", "cert") for x in kinds.values()),
                    "no_reference": sum(x == "noref" for x in kinds.values()),
                    "survivors": sorted(k for k, x in kinds.items() if x in ("survived", "noref")),
                    "variant_errors": sum(bool(o["errors"]) for o in mine.values()),
                    "by_claim": dict(sorted(by_claim.items(), key=lambda kv: (-kv[1], kv[0])))})
    return out


def catalogue_check(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per slip of the catalogue: the claims it applies to, where it is live, rejected, or raised."""
    out = []
    for s in SLIPS:
        cells = [(r["id"], r["cells"][s.name]) for r in rows if s.name in r.get("cells", {})]
        out.append({"name": s.name, "family": s.family, "category": s.category, "applies": len(cells),
                    "live": sum(c["cell"] in LIVE for _, c in cells),
                    "rejected_own": sum(c["cell"] in ("X", "E") for _, c in cells),
                    "rejected_certified": sum(c["cell"] in ("X", "E") or c.get("cert") == "X" for _, c in cells),
                    "errors": [f"{cid}: {c['bug']}" for cid, c in cells if c["cell"] == "?"]})
    return out


def summary(rows: list[dict[str, Any]], examined: int | None = None, selected: int | None = None) -> dict[str, Any]:
    """The totals the docs and the README quote; ``examined`` of the ``selected`` claims with a verdict were run
    (fewer when a run was stopped early and rendered from its partial results)."""
    st = per_statement(rows)
    cat = catalogue_check(rows)
    run = [r for r in rows if r.get("cells")]
    return {"statements": len(st), "claims": len(run), "kinds": sorted({r["kind"] for r in run}),
            "pairs": sum(s["applicable"] for s in st), "rejected_own": sum(s["rejected_own"] for s in st),
            "rejected_certified": sum(s["rejected_certified"] for s in st),
            "no_reference": sum(s["no_reference"] for s in st),
            "variant_errors": sum(s["variant_errors"] for s in st),
            "slips": len(SLIPS), "slips_run": sum(c["applies"] > 0 for c in cat),
            "slips_live": sum(c["live"] > 0 for c in cat),
            "slips_inert": sorted(c["name"] for c in cat if c["applies"] and not c["live"] and not c["errors"]),
            "slips_not_run": sorted(c["name"] for c in cat if not c["applies"]),
            "slip_errors": sorted(c["name"] for c in cat if c["errors"]),
            "examined": examined if examined is not None else len(rows),
            "selected": selected if selected is not None else len(rows)}


def summary_line(rows: list[dict[str, Any]]) -> str:
    s = summary(rows)
    return (f"STATEMENTS statements={s['statements']} pairs={s['pairs']} rejected_own={s['rejected_own']} "
            f"rejected_certified={s['rejected_certified']} no_reference={s['no_reference']} "
            f"variant_errors={s['variant_errors']} slips_live={s['slips_live']}/{s['slips']}")


def render_statements(rows: list[dict[str, Any]]) -> str:
    head = ("| statement | claims | variants applicable | rejected by the own checks | rejected with certification "
            "| no reference | not rejected | variant errors | rejected by (claim: variants) |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    for s in per_statement(rows):
        by = "; ".join(f"`{cid}`: {n}" for cid, n in list(s["by_claim"].items())[:4])
        more = len(s["by_claim"]) - 4
        by += f"; {more} more" if more > 0 else ""
        lines.append(f"| {s['statement']} | {len(s['claims'])} | {s['applicable']} | {s['rejected_own']} | "
                     f"{s['rejected_certified']} | {s['no_reference']} | {len(s['survivors'])} | "
                     f"{s['variant_errors']} | {by or '-'} |")
    return "\n".join(lines) + "\n"


def load_check(root: Path) -> dict[str, Any] | None:
    """The catalogue self-check (``catalogue_check.py``) committed next to the results, if any: name -> row."""
    path = root / "benchmarks" / "mutation" / "results" / "catalogue_check.json"
    if not path.is_file():
        return None
    return {r["name"]: r for r in json.loads(path.read_text())["slips"]}


def render_catalogue(rows: list[dict[str, Any]], check: dict[str, Any] | None = None) -> str:
    """Per family: the slips, how many the discrimination run ran, found live, saw rejected; with ``check`` (the
    catalogue self-check over the whole ledger) also how many are live on some ledger claim."""
    cat = catalogue_check(rows)
    extra = " | live on a ledger claim (self-check) |" if check else " |"
    lines = ["| family | slips | run by a claim | live | rejected by an own check | rejected with certification "
             "| variant errors" + extra, "|---|---|---|---|---|---|---|" + ("---|" if check else "")]
    for fam in FAMILIES:
        mine = [c for c in cat if c["family"] == fam]
        tail = f" {sum(bool(check.get(c['name'], {}).get('live_on')) for c in mine)} |" if check else ""
        lines.append(f"| {fam} | {len(mine)} | {sum(c['applies'] > 0 for c in mine)} | "
                     f"{sum(c['live'] > 0 for c in mine)} | {sum(c['rejected_own'] > 0 for c in mine)} | "
                     f"{sum(c['rejected_certified'] > 0 for c in mine)} | {sum(bool(c['errors']) for c in mine)} |"
                     + tail)
    s = summary(rows)
    lines += ["", f"Inert on every claim of this run that reaches them: "
              f"{', '.join(f'`{n}`' for n in s['slips_inert']) or 'none'}. "
              f"Run by no claim of this run: {', '.join(f'`{n}`' for n in s['slips_not_run']) or 'none'}. "
              f"Raised on their own: {', '.join(f'`{n}`' for n in s['slip_errors']) or 'none'}."]
    if check:
        dead = sorted(n for n, r in check.items() if not r.get("live_on"))
        lines += ["", f"Self-check over the whole ledger (`benchmarks/mutation/catalogue_check.py`): "
                  f"{len(check) - len(dead)} of {len(check)} slips change some claim's run; not live on any: "
                  f"{', '.join(f'`{n}`' for n in dead) or 'none'}."]
    return "\n".join(lines) + "\n"


def update_blocks(text: str, rendered: dict[str, str]) -> str:
    """``text`` with the generated blocks named in ``rendered`` replaced (the others left as they are)."""
    def replace(m: re.Match) -> str:
        if m["name"] not in rendered:
            return m.group(0)
        return m.group(1) + rendered[m["name"]] + m.group(4)

    return _BLOCK.sub(replace, text)


def write_docs(rows: list[dict[str, Any]], root: Path, totals: dict[str, Any]) -> None:
    """Regenerate docs/verification-power.md's discrimination tables from ``rows`` (``totals``: their summary)."""
    from fedtheory.report.discrimination import figure

    doc = root / "docs" / "verification-power.md"
    rendered = {"discrimination-figure": figure(totals) + "\n",
                "discrimination-statements": render_statements(rows),
                "discrimination-catalogue": render_catalogue(rows, load_check(root))}
    doc.write_text(update_blocks(doc.read_text(), rendered))
