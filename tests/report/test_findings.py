"""What ``fedtheory verify`` prints after its table: every failing and every recorded-false claim with its
statement and why, and a closing line whose counts are this run's."""
from __future__ import annotations

from fedtheory.claims.registry import Claim, ClaimResult, Evidence
from fedtheory.report.findings import FALSE_KIND_WORDS, Verdict, closing_line, render_findings, summary_line


def _result(id: str, holds: list[bool], expected: str = "holds", false_kind: str = "", reading: str = "",
            error: str | None = None) -> ClaimResult:
    claim = Claim(id=id, paper="toy", source="", statement=f"the statement of {id}", kind="bound",
                  check=lambda x: None, instances=lambda thorough: [], expected=expected, false_kind=false_kind,
                  reading=reading, cites=("Lemma 1",) if false_kind == "printed" else ())
    evidence = [Evidence(f"x={k}", measured=5.0 if not h else 0.5, theory=1.0, holds=h) for k, h in enumerate(holds)]
    return ClaimResult(claim, evidence, error, 0.1)


RESULTS = [
    _result("toy.holds", [True, True]),
    _result("toy.measured", [True], expected="exploratory"),
    _result("toy.broken", [True, False, False]),
    _result("toy.crash", [], error="claim 'toy.crash': ValueError: bad mu\nTraceback (most recent call last): ..."),
    _result("toy.lost", [True], expected="violated", false_kind="printed"),
    _result("toy.printed.a", [False], expected="violated", false_kind="printed"),
    _result("toy.printed.b", [True, False], expected="violated", false_kind="printed"),
    _result("toy.reading", [False], expected="violated", false_kind="reading", reading="sign(0) = 0 as printed"),
    _result("toy.ours", [False], expected="violated", false_kind="ours"),
]


def test_every_failing_and_recorded_false_claim_is_shown_with_its_statement_and_why() -> None:
    text = render_findings(RESULTS, width=100)
    blocks = {}
    for line in text.splitlines():
        if line.startswith("  ") and not line.startswith("    "):
            current = line.split()[0]
            blocks[current] = [line]
        elif line.startswith("    "):
            blocks[current].append(line.strip())
    shown = {r.claim.id for r in RESULTS if r.failed or r.status == "violated-as-recorded"}
    assert set(blocks) == shown  # neither the claims that hold nor the measured ones
    for r in RESULTS:
        if r.claim.id in shown:
            block = " ".join(blocks[r.claim.id])
            assert r.status in block and r.claim.statement in block, block
    assert "violated at 2 of 3 instances: x=1: measured 5 against bound 1" in " ".join(blocks["toy.broken"])
    assert "error: claim 'toy.crash': ValueError: bad mu" in " ".join(blocks["toy.crash"])
    assert "Traceback" not in text  # the error's first line says what went wrong; claims.md has the rest
    assert "every instance holds" in " ".join(blocks["toy.lost"])
    assert FALSE_KIND_WORDS["printed"] in " ".join(blocks["toy.printed.b"])
    assert "counterexample at 1 of 2 instances: x=1: measured 5 against bound 1" in " ".join(blocks["toy.printed.b"])
    assert f"{FALSE_KIND_WORDS['reading']}: sign(0) = 0 as printed" in " ".join(blocks["toy.reading"])
    assert FALSE_KIND_WORDS["ours"] in " ".join(blocks["toy.ours"])
    assert max(len(line) for line in text.splitlines()) <= 100


def test_nothing_is_printed_when_every_claim_holds() -> None:
    assert render_findings(RESULTS[:2], width=80) == ""


def test_the_closing_line_of_a_passing_run_explains_exit_0_with_its_counts() -> None:
    passing = [r for r in RESULTS if not r.failed]
    verdicts = [Verdict.of(r) for r in passing]
    # counted by hand from RESULTS: printed.a and printed.b (false as printed; both cite Lemma 1, one statement),
    # reading, ours are violated-as-recorded; one claim is measured
    assert closing_line(verdicts, 0) == (
        "exit 0: every claim expected to hold holds; the 4 violated-as-recorded claims find, as recorded, false "
        "statements (listed above): 2 find 1 of the papers' statements false as printed, 1 finds statements false "
        "under a named reading, 1 finds fedtheory's own readings or folklore false; the 1 measured claim carries no "
        "verdict")
    assert closing_line([Verdict("holds")], 0) == "exit 0: every claim expected to hold holds"


def test_the_closing_line_of_a_failing_run_counts_its_failures_and_other_reasons() -> None:
    verdicts = [Verdict.of(r) for r in RESULTS]
    line = closing_line(verdicts, 1, ["2 verdict(s) differ from other.json"])
    assert line == ("exit 1: 3 claim(s) fail (1 VIOLATED, 1 COUNTEREXAMPLE-LOST, 1 ERROR; each is shown above with "
                    "its statement and why); 2 verdict(s) differ from other.json")
    assert "\n" not in line


def test_the_summary_line_counts_every_status() -> None:
    line = summary_line((r.status for r in RESULTS), "out")
    assert line == ("9 claims: 1 COUNTEREXAMPLE-LOST, 1 ERROR, 1 VIOLATED, 1 holds, 1 measured, "
                    "4 violated-as-recorded. Reports in out/claims.json and out/claims.md")


def test_a_recorded_false_claim_without_a_kind_is_still_counted_and_shown() -> None:
    # fedtheory.extend.claim lets a researcher record a false statement without saying which kind it is
    mine = _result("mine.false", [False], expected="violated")
    line = closing_line([Verdict.of(mine)], 0)
    assert line == ("exit 0: every claim expected to hold holds; the 1 violated-as-recorded claim finds, as recorded, "
                    "false statements (listed above): 1 finds statements false without a stated kind")
    assert "no kind of false statement stated" in render_findings([mine], width=100)
