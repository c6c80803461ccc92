"""The HTML report without a browser: every claim of the claims.json is on its page with a figure, recorded
counterexamples and worst cases are shown, broken proof-chain links are marked, the maths has its symbols, the
site needs nothing outside its folder, and bad input to ``fedtheory report`` is refused in one line."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fedtheory.cli import main as cli_main
from fedtheory.papers import paper
from fedtheory.report.html import claim_anchor, statement_anchor, write_site
from fedtheory.report.symbols import pretty

ROOT = Path(__file__).resolve().parents[2]


def claim_sections(site: Path) -> dict[str, str]:
    """claim id -> the HTML of its section, from every page of the site."""
    out = {}
    for page in site.glob("*.html"):
        for m in re.finditer(r'<section class="claim[^"]*" id="c-([^"]+)">(.*?)</section>', page.read_text(),
                             re.S):
            out[m.group(1)] = m.group(2)
    return out


def test_verify_html_writes_the_site_next_to_claims_json(ledger_site) -> None:
    out, records = ledger_site
    assert (out / "index.html").exists() and (out / "claims.json").exists()
    for key in {r["paper"] for r in records}:
        assert (out / f"{key}.html").exists(), key


def test_every_claim_is_on_its_paper_page_and_in_the_index_with_a_figure(ledger_site) -> None:
    out, records = ledger_site
    sections = claim_sections(out)
    index = (out / "index.html").read_text()
    for r in records:
        assert claim_anchor(r["id"]) == f"c-{r['id']}"
        page = (out / f"{r['paper']}.html").read_text()
        assert f'id="c-{r["id"]}"' in page, r["id"]
        assert f'href="{r["paper"]}.html#c-{r["id"]}"' in index, r["id"]
    with_figure = [cid for cid, html in sections.items() if "<svg" in html]
    assert sorted(sections) == sorted(r["id"] for r in records)
    assert len(with_figure) >= len(records) / 2
    assert len(with_figure) == len(records)  # every claim with evidence has the measured-against-bound figure


def test_the_counterexample_and_the_worst_case_are_shown(ledger_site) -> None:
    out, records = ledger_site
    sections = claim_sections(out)
    by_id = {r["id"]: r for r in records}
    arrival = sections["efl.theorem2.arrival"]
    failing = [k for k, e in enumerate(by_id["efl.theorem2.arrival"]["evidence"], start=1) if not e["holds"]]
    assert failing, "the recorded counterexample of Theorem 2 (arrival) is in the ledger"
    assert arrival.count("<tr class=cx>") == len(failing)
    assert f"<tr class=cx><td class=num>{failing[0]}</td>" in arrival
    assert "counterexample" in arrival.split("<figure>")[1]  # annotated in the figure, not only in the table
    lyapunov, record = sections["fedred.dane.lyapunov"], by_id["fedred.dane.lyapunov"]
    assert record["pep_worst_case"] is not None
    assert f"exact PEP worst case: {record['pep_worst_case']:.4g}" in lyapunov
    assert f"bound = {record['adversarial_tightness']:.4g} at " in lyapunov
    assert f"PEP worst case ({record['pep_worst_case']:.3g})" in lyapunov  # the line in the tightness panel
    assert "instance 1: recorded series" in sections["fedred.dane.L_independence"]


def test_a_failing_lemma_is_marked_as_the_broken_link_of_its_theorems_chain(ledger_site, tmp_path: Path) -> None:
    _, records = ledger_site
    fedred = paper("fedred")
    theorem = next(s.label for s in fedred.statements if len(fedred.proof_chain(s.label)) >= 2)
    lemma = fedred.proof_chain(theorem)[0]
    failing = {**records[0], "id": "synthetic.lemma_fails", "paper": "fedred", "status": "VIOLATED",
               "expected": "holds", "cites": [f"fedred:{lemma}"],
               "evidence": [{**records[0]["evidence"][0], "holds": False}]}
    write_site([*records, failing], tmp_path)
    page = (tmp_path / "fedred.html").read_text()
    section = re.search(rf'<section class="statement" id="{statement_anchor(theorem)}">(.*?)</section>', page,
                        re.S).group(1)
    assert re.search(rf'<a href="#{statement_anchor(lemma)}"><rect [^>]*stroke="#b2182b"', section)
    assert f"The first broken link in proof order is {lemma}." in section
    assert "✗ VIOLATED" in (tmp_path / "index.html").read_text().split("Needs attention")[1].split("<h2>")[0]


def test_maths_is_shown_with_symbols() -> None:
    assert pretty("E||x^{r+1} - x*||^2 <= lam/(lam+mu) ||x^r-x*||^2") == \
        "E‖x<sup>r+1</sup> − x*‖<sup>2</sup> ≤ λ/(λ+μ) ‖x<sup>r</sup>-x*‖<sup>2</sup>"
    assert pretty("delta_A/mu with sign_at_zero and beta, not eta") == \
        "δ<sub>A</sub>/μ with sign_at_zero and β, not η"
    assert pretty("a < b & c") == "a &lt; b &amp; c"


def test_statement_text_on_the_page_has_norms_not_ascii(ledger_site) -> None:
    out, records = ledger_site
    lyapunov = claim_sections(out)["fedred.dane.lyapunov"]
    statement = re.search(r"<p class=says>(.*?)</p>", lyapunov).group(1)
    assert "‖" in statement and "||" not in statement and "//" not in statement


def test_the_site_needs_nothing_outside_its_folder(ledger_site) -> None:
    out, _ = ledger_site
    for page in out.glob("*.html"):
        text = page.read_text()
        assert not re.search(r'(?:href|src)="(?:https?:)?//', text), page.name
        assert "<script" not in text and "@import" not in text and "url(http" not in text, page.name


def test_report_without_out_writes_next_to_the_json(ledger_site, tmp_path: Path, capsys) -> None:
    out, records = ledger_site
    (tmp_path / "claims.json").write_text((out / "claims.json").read_text())
    assert cli_main(["report", str(tmp_path / "claims.json")]) == 0
    assert (tmp_path / "index.html").exists() and (tmp_path / "fedred.html").exists()
    assert f"{len(records)} claims, {len(records)} with a figure" in capsys.readouterr().out


def test_report_shows_verifys_progress_bar_unless_quiet(ledger_site, tmp_path: Path, capsys) -> None:
    out, records = ledger_site
    (tmp_path / "claims.json").write_text((out / "claims.json").read_text())
    assert cli_main(["report", str(tmp_path / "claims.json"), "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert f"{len(records)}/{len(records)}" in err and "claim" in err, err  # every claim drawn, counted
    assert cli_main(["report", str(tmp_path / "claims.json"), "--out", str(tmp_path / "b"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("content, what", [
    (None, "no such file"),
    ('[{"id": "a", "paper": "fedred", "evid', "not valid JSON"),
    ('{"claims": []}', "not a claims.json"),
    ("[1, 2, 3]", "not a claims.json"),
    ('[{"id": "a", "paper": "fedred"}]', "lacks statement, status, expected, evidence"),
])
def test_bad_input_is_refused_in_one_line_naming_the_file(tmp_path: Path, content, what) -> None:
    path = tmp_path / "claims.json"
    if content is not None:
        path.write_text(content)
    done = subprocess.run([sys.executable, "-m", "fedtheory", "report", str(path), "--out", str(tmp_path / "site")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done
    assert done.stdout == "" and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"fedtheory report: {path}: ") and what in lines[0], lines
    assert not (tmp_path / "site").exists()


def test_a_statement_some_of_whose_claims_did_not_run_is_not_run_here(tmp_path: Path) -> None:
    """EFL's Algorithm 1 is found false as printed by efl.sync.printed and also cited by efl.rounds.outcome_law:
    in a ledger of that claim alone it must not read as checked, and EFL's row counts its statements not run."""
    from fedtheory.claims import REGISTRY
    from fedtheory.report.html import write_site

    citing = [c.id for c in REGISTRY.values()
              if any((x.paper, x.label) == ("efl", "Algorithm 1") for x in c.citations)]
    assert "efl.sync.printed" in citing and "efl.rounds.outcome_law" in citing
    record = {"id": "efl.rounds.outcome_law", "paper": "efl", "reference": "", "statement": "s",
              "kind": "identity", "expected": "holds", "status": "holds",
              "cites": ["efl:Algorithm 1"],
              "evidence": [{"instance": "i", "measured": 0.0, "theory": 0.0, "holds": True, "details": {}}]}
    write_site([record], tmp_path, notebook_dir=None)
    page = (tmp_path / "efl.html").read_text()
    section = page[page.index('id="s-algorithm-1"'):].split("</section>")[0]
    assert "not run here" in section and "✓ checked" not in section
    assert "efl.<wbr>sync.<wbr>printed" in section  # the claim that did not run is named
    index = (tmp_path / "index.html").read_text()
    row = index[index.index('data-paper="efl"'):].split("</tr>")[0]
    assert 'data-status="not-run"' in row
