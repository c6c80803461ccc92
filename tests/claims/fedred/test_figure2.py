"""FedRed Figure 2 on its stand-in (fedtheory/claims/fedred/figure2.py): measured, not asserted. What is tested is
the measurement: communications are counted at the first round the gap reaches the target (against a hand-made
trace), and the stand-in shows the ordering docs/fedred.md reports."""
import math
from types import SimpleNamespace

import numpy as np

from fedtheory.claims.fedred.figure2 import communications_to_target, figure2_table


def test_communications_are_counted_up_to_the_first_round_at_target():
    tr = SimpleNamespace(gap=np.array([1.0, 0.5, 0.09, 0.2, 0.01]), communicated=np.array([1, 0, 1, 1, 1]))
    assert communications_to_target(tr, 0.1) == 2.0
    assert communications_to_target(tr, 0.001) == math.inf


def test_seed_0_shows_what_docs_fedred_md_reports():
    """Scaffold fastest, DANE+-GD behind it, FedRed-GD and GD over budget (docs/fedred.md; counts within 10%)."""
    t = figure2_table(0)["communications"]
    assert min(t, key=t.get) == "Scaffold" and abs(t["Scaffold"] - 26) <= 3
    assert t["DANE+-GD"] > t["Scaffold"]
    assert math.isinf(t["FedRed-GD"]) and math.isinf(t["GD"])
