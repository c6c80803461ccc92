"""The coverage table of the papers' statements cannot drift: every numbered statement a paper prints has an
entry in its inventory, every citation of a claim resolves, and docs/coverage.md and the README's totals are
what ``fedtheory coverage`` computes now."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fedtheory.claims import Citation, load_all
from fedtheory.claims.registry import Claim, claim, declaration, with_check
from fedtheory.coverage.statements import (
    ASSERTED,
    STATUSES,
    checked_share,
    coverage,
    numbered_statements,
    render_json,
    render_markdown,
    shape_verdicts,
    totals,
)
from fedtheory.papers import PAPER_KEYS, Paper, Statement, all_papers, paper
from fedtheory.report.readme import blocks

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


def test_every_statement_has_exactly_one_status_from_the_stated_set() -> None:
    claims = list(load_all().values())
    rows = coverage(all_papers(), claims, shapes=shape_verdicts(claims, all_papers()))  # raises on a bad citation
    assert STATUSES == ("checked", "checked-derived", "checked-narrower", "measured", "false", "false-under-reading",
                        "not-checkable", "open")
    keys = [(r.paper, r.statement.label) for r in rows]
    assert len(keys) == len(set(keys)) == sum(len(p.statements) for p in all_papers())
    assert {r.status for r in rows} <= set(STATUSES)
    for r in rows:
        where = f"{r.paper}:{r.statement.label}"
        if r.status in ("checked-derived", "checked-narrower", "false", "false-under-reading", "not-checkable"):
            assert len(r.note) > 10, f"{where} is {r.status}: the note must say what it rests on"
        if r.status == "measured":
            assert r.reproduced is not None, f"{where}: every measured statement's shape test ran and gave a verdict"
            assert r.note.startswith(f"{'reproduced' if r.reproduced else 'not reproduced'} (the shape test of "), where
        else:
            assert r.reproduced is None, where


def test_the_json_records_are_one_per_statement() -> None:
    rows = coverage(all_papers(), load_all().values())
    records = json.loads(render_json(rows))["statements"]
    assert [set(r) for r in records] == [{"paper", "statement", "status", "claims", "note", "reproduced"}] * len(rows)
    assert [(r["paper"], r["statement"], r["status"]) for r in records] == \
        [(r.paper, r.statement.label, r.status) for r in rows]


def test_each_claims_derived_flag_is_consistent_with_its_statements_status() -> None:
    # Computed here from the claims' flags, independently of coverage(): a statement whose printed formula is
    # reconstructed is cited only by derived claims or by checks that say what they leave out; a statement
    # checked as printed has a claim that is neither derived nor narrower; one whose checks are all derived is
    # reconstructed or checked in a narrower form; a statement false as printed has a non-derived claim that
    # finds it false.
    claims = load_all()
    for r in coverage(all_papers(), claims.values()):
        where = f"{r.paper}:{r.statement.label}"
        holds = [claims[c] for c in r.claims if claims[c].expected == "holds"]
        if r.status == "checked-derived":
            assert r.statement.reconstruction and all(c.derived or c.narrower for c in holds), where
            assert any(c.derived for c in holds), where
        elif r.status == "checked":
            assert not r.statement.reconstruction, where
            assert any(not c.derived and not c.narrower for c in holds), where
        elif r.status == "checked-narrower":
            assert holds and all(c.derived or c.narrower for c in holds), where
        elif r.status in ("false", "false-under-reading"):
            kind = "printed" if r.status == "false" else "reading"
            assert any(not claims[c].derived and claims[c].false_kind == kind for c in r.claims), where
        else:
            assert not holds, f"{where} is {r.status} although {[c.id for c in holds]} check it"


def _claim(cid: str, **kw) -> Claim:
    """A claim of paper fedred built as the registry builds one, without registering it."""
    fields = dict(paper="fedred", reference="", statement="s", kind="identity", instances=lambda thorough: [0],
                  expected="holds", derived=False, notes="", space=None, cites=(), pep=None)
    return with_check(declaration(id=cid, **{**fields, **kw}), lambda x: None)


def test_a_claim_citing_a_statement_the_inventory_does_not_have_is_refused() -> None:
    ghost = _claim("test.ghost.thm7", cites=("Theorem 7",))  # FedRed has no Theorem 7
    with pytest.raises(ValueError, match="Theorem 7, which is not in that paper's inventory"):
        coverage(all_papers(), [*load_all().values(), ghost])


def test_flags_that_disagree_with_the_inventory_are_refused() -> None:
    reconstructed = Paper("fedred", "P", (Statement("Lemma 1", "", "", reconstruction="the formula is lost"),))
    plain = Paper("fedred", "P", (Statement("Lemma 1", "", ""),))
    experiment = Paper("fedred", "P", (Statement("Figure 1", "", ""),))
    make = _claim
    printed = make("test.flags.printed", cites=("Lemma 1",))
    derived = make("test.flags.derived", cites=("Lemma 1",), derived=True)
    measured = make("test.flags.measured", cites=("Figure 1",), expected="exploratory")
    with pytest.raises(ValueError, match="reconstructed .* cite it as printed"):
        coverage([reconstructed], [printed])
    with pytest.raises(ValueError, match="only by derived claims"):
        coverage([plain], [derived])
    with pytest.raises(ValueError, match="describe the stand-in"):
        coverage([experiment], [measured])
    assert coverage([reconstructed], [derived])[0].status == "checked-derived"
    with pytest.raises(ValueError, match="false_kind"):
        claim(id="test.flags.violated", paper="fedred", reference="r", statement="s", kind="identity",
              instances=lambda thorough: [0], expected="violated")
    with pytest.raises(ValueError, match="reading must name the reading"):
        claim(id="test.flags.reading", paper="fedred", reference="r", statement="s", kind="identity",
              instances=lambda thorough: [0], expected="violated", false_kind="reading")
    with pytest.raises(ValueError, match="false_kind"):
        claim(id="test.flags.ours", paper="fedred", reference="r", statement="s", kind="identity",
              instances=lambda thorough: [0], expected="violated", derived=True, false_kind="printed")


def test_measured_statements_are_never_counted_as_checked() -> None:
    rows = coverage(all_papers(), load_all().values())
    assert "measured" not in ASSERTED and "open" not in ASSERTED
    for t in totals(rows).values():
        checkable = t["total"] - t["not-checkable"]
        asserted = t["checked"] + t["checked-derived"] + t["checked-narrower"] + t["false"] + t["false-under-reading"]
        assert checked_share(t) == (asserted / checkable if checkable else 1.0)
        assert asserted + t["measured"] + t["open"] == checkable


def test_every_statement_recorded_false_has_a_corrected_claim_next_to_it() -> None:
    claims = load_all()
    for r in coverage(all_papers(), claims.values()):
        if r.status in ("false", "false-under-reading"):
            corrected = [c for c in r.claims if claims[c].derived and claims[c].expected == "holds"]
            assert corrected, f"{r.paper}:{r.statement.label} is recorded false with no corrected claim citing it"


def test_docs_coverage_page_is_up_to_date() -> None:
    papers = all_papers()
    claims = list(load_all().values())
    expected = render_markdown(papers, coverage(papers, claims, shapes=shape_verdicts(claims, papers)))
    assert (ROOT / "docs" / "coverage.md").read_text() == expected, \
        "docs/coverage.md is stale: run `fedtheory coverage --write docs/coverage.md`"


def test_readme_shows_the_per_paper_totals() -> None:
    readme = (ROOT / "README.md").read_text()
    block = "<!-- generated: coverage-totals -->\n" + blocks()["coverage-totals"] + "<!-- /generated -->"
    assert block in readme, "README's coverage block is stale: run `python -m fedtheory.report.readme README.md`"


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


def test_a_qualitative_claim_does_not_outrank_narrower_ones_unless_it_checks_the_statement_as_printed() -> None:
    # A statement is "checked" only if a claim checks it as printed (no narrower=); one unlabelled claim among
    # narrower ones makes the statement "checked", so a qualitative claim that checks less must say what.
    table = Paper("fedred", "P", (Statement("Table 1", "", "rates of six methods"),))
    rate = _claim("test.rank.rate", cites=("Table 1",), kind="rate", narrower="only the scaling in L")
    qualitative = _claim("test.rank.qualitative", cites=("Table 1",), kind="qualitative")
    assert coverage([table], [rate, qualitative])[0].status == "checked"
    labelled = _claim("test.rank.qualitative", cites=("Table 1",), kind="qualitative", narrower="one comparison")
    row = coverage([table], [rate, labelled])[0]
    assert row.status == "checked-narrower"
    assert "only the scaling in L (test.rank.rate)" in row.note and "one comparison (test.rank.qualitative)" in row.note


@pytest.mark.parametrize("key, label", [("fedelasticnet", "Table 2"), ("docofl", "Figure 2"), ("fedred", "Table 1")])
def test_statements_checked_on_a_weaker_form_say_so(key: str, label: str) -> None:
    # FedElasticNet Table 2 (counts on a quadratic), DoCoFL Figure 2 (uniform quantizers only), FedRed Table 1
    # (one qualitative comparison among four narrower claims): no claim citing them checks them as printed.
    claims = load_all()
    row = next(r for r in coverage(all_papers(), claims.values()) if (r.paper, r.statement.label) == (key, label))
    assert row.status == "checked-narrower"
    for cid in row.claims:
        if claims[cid].expected == "holds":
            assert claims[cid].narrower and f"({cid})" in row.note, cid


def test_reproduced_is_the_verdict_of_the_shape_tests_never_typed() -> None:
    # A measured statement is reproduced when every exploratory claim citing it passes its shape test in the run
    # given, not reproduced when one fails, and carries no such word when no verdict is given.
    experiment = Paper("fedred", "P", (Statement("Figure 1", "", "a plot", stand_in="a quadratic stand-in"),))
    a = _claim("test.shape.a", cites=("Figure 1",), expected="exploratory")
    b = _claim("test.shape.b", cites=("Figure 1",), expected="exploratory")
    for shapes, reproduced, start in (
            ({"test.shape.a": True, "test.shape.b": True}, True, "reproduced (the shape test of test.shape.a, "
                                                                 "test.shape.b passes): a quadratic stand-in"),
            ({"test.shape.a": True, "test.shape.b": False}, False, "not reproduced (the shape test of test.shape.b "
                                                                   "fails; the shape test of test.shape.a passes)"),
            ({"test.shape.a": True}, None, "shape not run here (`fedtheory verify --claim test.shape.b`"),
            (None, None, "shape not run here")):
        row = coverage([experiment], [a, b], shapes=shapes)[0]
        assert (row.status, row.reproduced) == ("measured", reproduced), shapes
        assert row.note.startswith(start), row.note
        assert totals([row])["fedred"]["not reproduced"] == (reproduced is False)
    with pytest.raises(ValueError, match="describe the stand-in"):
        coverage([Paper("fedred", "P", (Statement("Figure 1", "", ""),))], [a])


def test_the_papers_setting_decides_and_the_stand_ins_stay_as_narrower_checks() -> None:
    # An exploratory claim without narrower= (an experiment in the paper's setting) decides alone; the stand-ins
    # (narrower=) are named in the note, their verdict not counted; without a paper-setting claim they decide.
    experiment = Paper("fedred", "P", (Statement("Figure 1", "", "a plot", stand_in="a quadratic stand-in"),))
    paper_setting = _claim("test.shape.neural", cites=("Figure 1",), expected="exploratory")
    stand_in = _claim("test.shape.convex", cites=("Figure 1",), expected="exploratory", narrower="convex stand-in")
    for shapes, reproduced in (({"test.shape.neural": True, "test.shape.convex": False}, True),
                               ({"test.shape.neural": False, "test.shape.convex": True}, False)):
        row = coverage([experiment], [paper_setting, stand_in], shapes=shapes)[0]
        assert (row.status, row.reproduced) == ("measured", reproduced), shapes
        assert "test.shape.convex" in row.note and "narrower check, not deciding" in row.note, row.note
        assert "the shape test of test.shape.neural" in row.note and "of test.shape.convex" not in row.note
    alone = coverage([experiment], [stand_in], shapes={"test.shape.convex": False})[0]
    assert alone.reproduced is False and "not deciding" not in alone.note


def test_every_measured_statements_word_follows_its_claims_verdicts_in_a_run() -> None:
    # Recomputed here from evaluate() (the run verify makes), not from shape_verdicts' cache.
    from fedtheory.claims import evaluate

    claims = load_all()
    papers = all_papers()
    rows = [r for r in coverage(papers, claims.values(), shapes=shape_verdicts(claims.values(), papers))
            if r.status == "measured"]
    assert rows
    for r in rows:
        tests = [claims[c] for c in r.claims if claims[c].expected == "exploratory"]
        # the experiments in the paper's setting (no narrower=) decide when there are any; else the stand-ins
        tests = [c for c in tests if not c.narrower] or tests
        ran = [evaluate(c) for c in tests]
        assert all(not x.error and x.evidence for x in ran), r.claims
        assert r.reproduced == all(e.holds for x in ran for e in x.evidence), f"{r.paper}:{r.statement.label}"
