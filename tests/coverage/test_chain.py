"""``fedtheory verify --explain`` and ``fedtheory coverage`` give every statement the same status: both come from
:func:`fedtheory.coverage.statements.statement_coverage`."""
from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from fedtheory.claims import load_all
from fedtheory.cli import main as cli_main
from fedtheory.coverage.statements import STATUSES, coverage, statement_coverage
from fedtheory.papers import all_papers

THEOREM_36 = "fedred.appendix.fedred_gd_convex.derived"  # its only claim; Theorem 9's proof uses Theorem 36


def test_statement_coverage_is_the_row_of_the_coverage_table_for_every_statement() -> None:
    claims = list(load_all().values())
    papers = all_papers()
    rows = {(r.paper, r.statement.label): r for r in coverage(papers, claims)}
    for p in papers:
        for s in p.statements:
            assert statement_coverage(p, s.label, claims) == rows[(p.key, s.label)], f"{p.key}:{s.label}"


def _explained_statuses(text: str) -> dict[tuple[str, str], str]:
    """{(paper, label): status} of every statement the rendered explanation names: the cited ones in its first
    line ("paper:label [status]") and every link of the proof chain ("  paper:label  status  claims")."""
    first, *rest = text.splitlines()
    out = {(k, lbl): st for k, lbl, st in re.findall(r"(\w+):([^,\[(]+?) \[([\w-]+)\]", first)}
    for line in rest:
        m = re.match(r"  (\w+):(.+?)\s{2,}(\S+)\s", line)
        if m:
            out[(m[1], m[2].strip())] = m[3]
    return out


@pytest.fixture(scope="module")
def recorded() -> dict[tuple[str, str], str]:
    """{(paper, label): status} as ``fedtheory coverage --json`` prints it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["coverage", "--json"]) == 0
    return {(r["paper"], r["statement"]): r["status"] for r in json.loads(out.getvalue())["statements"]}


# Theorem 36 of FedRed (cited by its only claim, and a link of Theorem 9's chain); DoCoFL's Theorem 1 (a chain
# with a statement false as printed, Lemma C.7, and checked ones)
@pytest.mark.parametrize("claim_id, must_show", [
    (THEOREM_36, {("fedred", "Theorem 36"), ("fedred", "Theorem 9"), ("fedred", "Lemma 35")}),
    ("docofl.theorem1", {("docofl", "Theorem 1"), ("docofl", "Lemma C.7"), ("docofl", "Lemma C.2")})])
def test_explain_and_coverage_json_agree_on_every_statement_shown(claim_id, must_show, recorded, capsys) -> None:
    assert cli_main(["verify", "--explain", claim_id]) == 0
    shown = _explained_statuses(capsys.readouterr().out)
    assert must_show <= set(shown)
    for key, status in shown.items():
        assert status in STATUSES, (key, status)  # no claim fails in this run, so no link reads FAILS
        assert status == recorded[key], f"{key}: --explain says {status}, coverage --json {recorded[key]}"
    if claim_id == THEOREM_36:
        assert recorded[("fedred", "Theorem 36")] == "checked-narrower"  # by THEOREM_36 itself, never "open"
    else:
        assert recorded[("docofl", "Lemma C.7")] == "false"
