"""A small ledger run for the HTML report's tests: a few fast claims across papers, run by ``fedtheory verify
--html --worst-case`` (so the site is the one the command writes): two recorded false as printed, three that
declare an instance space (the search's worst point, two with a PEP worst case) and one whose details carry a
series (DANE's rounds against L)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fedtheory.cli import main as cli_main

CLAIMS = ("classic.gd.contraction",        # space, PEP
          "efl.theorem2.arrival",          # recorded false, space
          "fedred.dane.lyapunov",          # space, PEP, cites Corollary 21 (a proof chain)
          "fedred.dane.L_independence",    # a series against L in its details
          "docofl.appendix.lemma_c7",      # recorded false
          "efl.theorem2.monotonicity")


@pytest.fixture(scope="session")
def ledger_site(tmp_path_factory) -> tuple[Path, list[dict]]:
    """(the folder holding claims.json and the site, the claim records)."""
    out = tmp_path_factory.mktemp("ledger")
    args = ["verify", "--quiet", "--html", "--worst-case", "--evaluations", "20", "--out", str(out)]
    for c in CLAIMS:
        args += ["--claim", c]
    assert cli_main(args) == 0
    return out, json.loads((out / "claims.json").read_text())
