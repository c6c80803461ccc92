"""A small ledger run for the HTML report's tests: a few fast claims across papers, run by ``fedtheory verify
--html --worst-case`` (so the site is the one the command writes): four recorded false as printed (two of them
on one statement, FedElasticNet's Theorem 3.1), one false under a reading, one of fedtheory's own readings found
false, one measured without a verdict, three that declare an instance space (the search's worst point, two with
a PEP worst case) and one whose details carry a series (DANE's rounds against L). A partial ledger: OFedIQ does
not run."""
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
          "efl.theorem2.monotonicity",
          "fedelasticnet.thm3_1.printed_no_condition",   # recorded false as printed, with the next one
          "fedelasticnet.thm3_1.printed_C0_unsquared",   # on the same statement (two claims, one statement)
          "efl.statements.table1.tighter",   # recorded false under a reading
          "classic.fedavg.bias_monotone_in_K",   # fedtheory's own reading, recorded false
          "efl.statements.figure2")           # measured, no verdict


@pytest.fixture(scope="session")
def ledger_site(tmp_path_factory) -> tuple[Path, list[dict]]:
    """(the folder holding claims.json and the site, the claim records)."""
    out = tmp_path_factory.mktemp("ledger")
    args = ["verify", "--quiet", "--html", "--worst-case", "--evaluations", "20", "--out", str(out)]
    for c in CLAIMS:
        args += ["--claim", c]
    assert cli_main(args) == 0
    return out, json.loads((out / "claims.json").read_text())
