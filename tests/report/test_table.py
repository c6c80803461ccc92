"""The console table of ``fedtheory verify``: at any width, references are wrapped on words (beside the row, or
under it when the terminal is narrow), never cut to an author's first name."""
from __future__ import annotations

import re

import pytest

from fedtheory.claims import load_all
from fedtheory.report.table import REFERENCE_LINES, REFERENCE_MIN_WIDTH, TABLE_HEADER, render_table, short_reference

REFERENCE = "McMahan et al. 2017, Alg. 1; Jiang, Rodomanov & Stich 2024, Section 2 (centralized GD)"
ROWS = [("classic.fedavg.k1_is_gd", "holds", "3", "-", REFERENCE),
        ("fedelasticnet.thm3_1.printed_C0_unsquared", "violated-as-recorded", "1", "13.4", "Theorem B.1")]


def _render(width: int) -> list[str]:
    return render_table(ROWS, TABLE_HEADER, width=width, cut_lines=REFERENCE_LINES,
                        cut_min=REFERENCE_MIN_WIDTH).splitlines()


@pytest.mark.parametrize("width", [60, 80, 100, 120, 200])
def test_the_table_fits_and_every_reference_is_there_in_full(width: int) -> None:
    lines = _render(width)
    assert max(len(line) for line in lines) <= width
    words = " ".join(lines).split()
    # every word of both references is on screen (the full text fits in REFERENCE_LINES lines at these widths)
    for reference in (REFERENCE, "Theorem B.1"):
        for word in reference.split():
            assert word in words, (width, word)
    assert "…" not in "".join(lines)


def test_at_80_columns_the_reference_goes_under_its_row_and_the_ids_stay_whole() -> None:
    lines = _render(80)
    assert lines[0].split() == ["claim", "status", "n", "tightness"] and lines[1].strip() == "reference"
    row = next(k for k, line in enumerate(lines) if line.startswith("classic.fedavg.k1_is_gd "))
    assert lines[row + 1].startswith("    McMahan et al. 2017")  # under its row, indented
    assert any(line.startswith("fedelasticnet.thm3_1.printed_C0_unsquared ") for line in lines)


def test_a_wide_terminal_keeps_the_reference_beside_its_row() -> None:
    lines = _render(200)
    assert lines[0].split() == list(TABLE_HEADER)
    assert lines[2].startswith("classic.fedavg.k1_is_gd") and lines[2].endswith(REFERENCE)


def test_what_does_not_fit_in_its_lines_is_cut_at_a_word() -> None:
    long = " ".join(f"word{k}" for k in range(60))
    lines = render_table([("a.b", "holds", "1", "-", long)], TABLE_HEADER, width=50, cut_lines=2,
                         cut_min=REFERENCE_MIN_WIDTH).splitlines()
    under = [line.strip() for line in lines[4:]]  # header, "reference", rule, the row
    assert len(under) == 2 and under[-1].endswith("…")
    assert all(re.fullmatch(r"(word\d+ ?)+…?", u) for u in under)  # whole words only


def test_the_short_reference_drops_the_authors_of_the_claims_own_paper_only() -> None:
    claims = load_all()
    lyapunov = claims["fedred.dane.lyapunov"]
    assert lyapunov.reference.startswith("Jiang, Rodomanov & Stich")
    assert short_reference(lyapunov).startswith("Corollary 21") and "Jiang" not in short_reference(lyapunov)
    for c in claims.values():  # every cited statement and the free-text source are kept
        short = short_reference(c)
        for x in c.citations:
            assert (x.label if x.paper == c.paper else f"{x.paper}:{x.label}") in short, c.id
        assert c.source in short, c.id
