"""The coverage table of the papers' statements cannot drift: every numbered statement a paper prints has an
entry in its inventory, every citation of a claim resolves, and docs/coverage.md and the README's totals are
what ``fedtheory coverage`` computes now."""
from __future__ import annotations

from pathlib import Path

import pytest

from fedtheory.claims import Citation, load_all
from fedtheory.papers import PAPER_KEYS, Paper, Statement, all_papers, paper
from fedtheory.papers.coverage import (coverage, numbered_statements, qualified_summary, render_markdown,
                                       render_totals)

ROOT = Path(__file__).resolve().parents[2]
#: The papers' text conversions sit beside the repository in the development and CI checkouts (they are not
#: redistributed with the package); the file prefix is the paper's position in PAPER_KEYS.
SEEDS = ROOT.parent / "shared" / "seeds"


def _seed_text(key: str) -> str:
    prefix = f"{PAPER_KEYS.index(key):03d}_"
    matches = sorted(SEEDS.glob(f"{prefix}*.txt"))
    if not matches:
        pytest.skip(f"the papers' texts are not beside this checkout ({SEEDS} has no {prefix}*.txt): the scan "
                    "runs in the development and CI checkouts only")
    return matches[0].read_text()


@pytest.mark.parametrize("key", PAPER_KEYS)
def test_every_numbered_statement_of_the_paper_has_an_entry(key: str) -> None:
    printed = numbered_statements(_seed_text(key))
    listed = {s.label for s in paper(key).statements}
    missing = sorted(printed - listed)
    assert not missing, f"{key}: the paper prints {missing} but fedtheory/papers/{key}.py has no entry for them"


def test_the_scanner_finds_headings_and_mentions_but_not_inline_citations() -> None:
    text = ("Lemma B.4.\nLet x be ...\nTheorem 3.1 (Convergence)\nas shown in Algorithm 2 and Fig. 7, "
            "by Theorem 9 of [12].\nCorollary 21.\n")
    assert numbered_statements(text) == {"Lemma B.4", "Theorem 3.1", "Algorithm 2", "Figure 7", "Corollary 21"}


def test_every_statement_is_covered_one_way_and_every_citation_resolves() -> None:
    rows = coverage(all_papers(), load_all().values())  # raises on a citation missing from an inventory
    assert {r.status for r in rows} <= {"checked", "false", "not checkable", "open"}
    for r in rows:
        if r.status == "not checkable":
            assert len(r.statement.not_checkable) > 10, f"{r.paper}:{r.statement.label}: give the reason"


def test_every_statement_recorded_false_has_a_corrected_claim_next_to_it() -> None:
    claims = load_all()
    for r in coverage(all_papers(), claims.values()):
        if r.status == "false":
            corrected = [c for c in r.claims if claims[c].derived and claims[c].expected == "holds"]
            assert corrected, f"{r.paper}:{r.statement.label} is recorded false with no corrected claim citing it"


def test_docs_coverage_page_is_up_to_date() -> None:
    papers = all_papers()
    expected = render_markdown(papers, coverage(papers, load_all().values()))
    assert (ROOT / "docs" / "coverage.md").read_text() == expected, \
        "docs/coverage.md is stale: run `fedtheory coverage --write docs/coverage.md`"


def test_readme_shows_the_per_paper_totals() -> None:
    papers = all_papers()
    table = render_totals(coverage(papers, load_all().values()), {p.key: p.key for p in papers})
    readme = (ROOT / "README.md").read_text()
    assert table in readme, "README's coverage table is stale: paste the table `fedtheory coverage` prints"
    assert qualified_summary(coverage(papers, load_all().values())) in readme, \
        "README's sentence on measured and reconstructed statements is stale"


def test_citation_parse_and_its_errors() -> None:
    assert Citation.parse("Lemma 10", "fedred") == Citation("fedred", "Lemma", "10")
    assert Citation.parse("docofl:Corollary 3.6", "fedred").label == "Corollary 3.6"
    assert Citation.parse("eq. (15)", "ofediq") == Citation("ofediq", "eq.", "(15)")
    for bad in ("Lema 10", "Lemma", "lemma 10", "fedred:Lemma10"):
        with pytest.raises(ValueError, match="cites entry"):
            Citation.parse(bad, "fedred")


def test_inventory_rejects_unknown_dependencies_repeats_and_cycles() -> None:
    with pytest.raises(ValueError, match="Lemma 9"):
        Paper("p", "P", (Statement("Theorem 1", "", "", depends_on=("Lemma 9",)),))
    with pytest.raises(ValueError, match="twice"):
        Paper("p", "P", (Statement("Lemma 1", "", ""), Statement("Lemma 1", "", "")))
    with pytest.raises(ValueError, match="Kind"):
        Statement("Thm 1", "", "")
    cyclic = Paper("p", "P", (Statement("Lemma 1", "", "", depends_on=("Lemma 2",)),
                              Statement("Lemma 2", "", "", depends_on=("Lemma 1",))))
    with pytest.raises(ValueError, match="circular"):
        cyclic.proof_chain("Lemma 1")


def test_proof_chain_lists_each_dependency_after_its_own() -> None:
    p = Paper("p", "P", (Statement("Lemma 1", "", ""), Statement("Lemma 2", "", "", depends_on=("Lemma 1",)),
                         Statement("Lemma 3", "", ""),
                         Statement("Theorem 4", "", "", depends_on=("Lemma 2", "Lemma 3", "Lemma 1"))))
    assert p.proof_chain("Theorem 4") == ["Lemma 1", "Lemma 2", "Lemma 3"]


def test_checked_statements_say_when_they_are_only_measured_or_reconstructed() -> None:
    # A statement whose every citing claim is exploratory is measured, not asserted; one whose every citing claim
    # is fedtheory's derived form is checked in that form. The coverage page must say so next to the claims.
    rows = coverage(all_papers(), load_all().values())
    claims = load_all()
    for r in rows:
        cs = [claims[c] for c in r.claims]
        if r.status != "checked" or not cs:
            assert r.qualifier == ""
        elif all(c.expected == "exploratory" for c in cs):
            assert r.qualifier == "measured" and r.detail.startswith("measured, not asserted")
        elif all(c.derived for c in cs):
            assert r.qualifier == "reconstructed" and r.detail.startswith("in a form derived by fedtheory")
        else:
            assert r.qualifier == "" and r.detail.startswith("`")
    assert any(r.qualifier == "measured" for r in rows) and any(r.qualifier == "reconstructed" for r in rows)
