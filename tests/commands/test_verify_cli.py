"""``fedtheory verify`` as a user meets it: a table that fits the terminal, a one-line summary last, bad
output folders refused before any claim runs, and ``--explain`` naming the first broken link of a proof chain."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fedtheory.claims.registry import Claim, Evidence
from fedtheory.cli import main as cli_main
from fedtheory.coverage import chain as chain_module
from fedtheory.papers import Paper, Statement
from fedtheory.report import TABLE_HEADER, render_table

CHEAP = "classic.fedavg.k1_is_gd"


def test_table_fits_the_width_wrapping_references_on_words_and_ids_at_dots() -> None:
    rows = [("fedelasticnet.thm3_1.printed_C0_unsquared.with.a.very.long.tail", "violated-as-recorded", "12", "13.4",
             "Kim et al., Theorem B.1 (full statement of Theorem 3.1), with the constant C0 as printed")]
    for width in (60, 80, 120):
        lines = render_table(rows, TABLE_HEADER, width=width, cut_lines=3, cut_min=24).splitlines()
        assert max(len(line) for line in lines) <= width, (width, lines)
        assert " ".join(lines).split()[-4:] == ["constant", "C0", "as", "printed"]  # the reference ends whole
    wide = render_table(rows, TABLE_HEADER, width=200)
    assert rows[0][0] in wide and rows[0][4] in wide  # nothing cut when it fits
    narrow = render_table(rows, TABLE_HEADER, width=60, cut_lines=3, cut_min=24)
    # the rows after the header, its "reference" line and the rule: the id's lines, then the reference's (indented 4)
    ids = "".join(line.split()[0] for line in narrow.splitlines()[3:] if not line.startswith("    "))
    assert ids == rows[0][0]  # the id wraps, it is never cut


def test_the_last_two_lines_are_the_summary_and_what_the_exit_status_means(tmp_path: Path, capsys,
                                                                           monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert cli_main(["verify", "--claim", CHEAP, "--quiet", "--out", str(tmp_path / "r")]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-2].startswith("1 claims: 1 holds. Reports in ") and str(tmp_path / "r") in lines[-2]
    assert lines[-1] == "exit 0: every claim expected to hold holds"
    assert max(len(line) for line in lines[:-3]) <= 80
    assert (tmp_path / "r" / "claims.json").exists()


def test_a_recorded_false_claim_is_shown_with_its_statement_and_why_and_exit_0_is_explained(
        tmp_path: Path, capsys, monkeypatch) -> None:
    from fedtheory.claims import load_all

    monkeypatch.setenv("COLUMNS", "80")
    recorded = "docofl.appendix.lemma_c7"  # false as printed, two counterexamples
    claim = load_all()[recorded]
    assert cli_main(["verify", "--claim", CHEAP, "--claim", recorded, "--quiet", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    block = out.split(f"  {recorded}  violated-as-recorded", 1)[1].split("\n\n")[0]
    words = " ".join(block.split())
    assert " ".join(claim.statement.split()) in words
    assert "false as printed" in words and "counterexample at 2 of 2 instances" in words
    record = next(r for r in json.loads((tmp_path / "claims.json").read_text()) if r["id"] == recorded)
    first = next(e for e in record["evidence"] if not e["holds"])
    assert f"{first['instance']}: measured {first['measured']:.6g} against" in words
    assert out.strip().splitlines()[-1] == (
        "exit 0: every claim expected to hold holds; the 1 violated-as-recorded claim finds, as recorded, false "
        "statements (listed above): 1 finds 1 of the papers' statements false as printed")


def test_out_under_a_file_is_refused_before_any_claim_runs(tmp_path: Path, capsys, monkeypatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    ran = []
    monkeypatch.setattr("fedtheory.commands.verify.run_claims", lambda *a, **k: ran.append(a))
    assert cli_main(["verify", "--claim", CHEAP, "--quiet", "--out", str(blocker / "sub" / "dir")]) == 2
    err = capsys.readouterr().err
    assert f"{blocker} is a file, not a folder" in err and not ran


def test_unreadable_compare_file_is_refused_before_any_claim_runs(tmp_path: Path, capsys, monkeypatch) -> None:
    ran = []
    monkeypatch.setattr("fedtheory.commands.verify.run_claims", lambda *a, **k: ran.append(a))
    bad = tmp_path / "claims.json"
    bad.write_text('{"truncated": ')
    assert cli_main(["verify", "--claim", CHEAP, "--out", str(tmp_path / "o"), "--compare", str(bad)]) == 2
    assert "cannot read --compare" in capsys.readouterr().err and not ran


def _claim(id: str, cites: tuple[str, ...], holds: bool, space: object = None, expected: str = "holds") -> Claim:
    def check(x: float) -> Evidence:
        return Evidence(f"x={x}", measured=x, theory=1.0, holds=holds or x < 0.5)

    return Claim(id=id, paper="toy", source="", statement="", kind="bound", check=check,
                 instances=lambda thorough: [0.1], expected=expected, cites=cites, space=space)


def test_explain_names_the_first_failing_lemma_in_proof_order(monkeypatch) -> None:
    toy = Paper("toy", "Toy paper", (
        Statement("Lemma 1", "", "a base fact"),
        Statement("Lemma 2", "", "uses Lemma 1", depends_on=("Lemma 1",)),
        Statement("Lemma 3", "", "", not_checkable="an existence statement, no constant to compare"),
        Statement("Lemma 4", "", "open"),
        Statement("Theorem 5", "", "the result", depends_on=("Lemma 2", "Lemma 3", "Lemma 4"))))

    class Space:  # stands for an InstanceSpace: only its identity matters to explain()
        instances = None

    space = Space()
    theorem = Claim(id="toy.thm5", paper="toy", source="", statement="", kind="bound",
                    check=lambda x: Evidence(f"x={x}", x, 0.5, x <= 0.5), instances=lambda t: [0.9],
                    cites=("Theorem 5",), space=space)
    registry = {c.id: c for c in (
        theorem,
        _claim("toy.lemma1", ("Lemma 1",), holds=True),
        # holds on its own instance 0.1, fails on the theorem's 0.9 (same space): only explain sees it
        _claim("toy.lemma2", ("Lemma 2",), holds=False, space=space))}
    monkeypatch.setattr(chain_module, "load_all", lambda: registry)
    monkeypatch.setattr(chain_module, "paper", lambda key: toy)
    monkeypatch.setattr(chain_module, "PAPER_KEYS", ("toy",))
    explanation = chain_module.explain("toy.thm5")
    assert [link.label for link in explanation.links] == ["Lemma 1", "Lemma 2", "Lemma 3", "Lemma 4"]
    assert [link.status for link in explanation.links] == ["checked", "FAILS", "not-checkable", "open"]
    assert explanation.first_broken.label == "Lemma 2"
    assert explanation.links[1].on_theorem_instances == ("toy.lemma2",)
    text = explanation.render()
    assert "First broken link: toy:Lemma 2" in text and "x=0.9" in text
    with pytest.raises(ValueError, match="unknown claim id"):
        chain_module.explain("toy.nothing")
