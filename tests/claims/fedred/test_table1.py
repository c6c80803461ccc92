"""Table 1's scaling claims (fedtheory/claims/fedred/table1.py): the tightness each reports is how close its
nearest part comes to the limit the claim allows, recomputed here from the run's own counts in the details."""
from __future__ import annotations

import numpy as np
import pytest

from fedtheory.claims import REGISTRY


def test_L_independence_reports_the_nearer_of_its_spread_and_its_slope_limit():
    claim = REGISTRY["fedred.dane.L_independence"]
    ev = claim.check(next(iter(claim.instances(False))))
    d = ev.details
    spread = max(d["dane_rounds"]) - min(d["dane_rounds"])
    slope = np.polyfit(np.log(d["L"]), np.log(d["gd_iterations"]), 1)[0]
    assert ev.holds and ev.tightness == pytest.approx(max(spread / 2, 0.8 / slope), rel=1e-12)


def test_L_scaling_reports_the_ratio_nearest_its_limit():
    claim = REGISTRY["fedred.nonconvex.L_scaling"]
    ev = claim.check(next(iter(claim.instances(False))))
    first, last = ev.details["runs"][0], ev.details["runs"][-1]
    half_L = last["L"] / first["L"] / 2
    comm = last["fedred_comms"] / first["fedred_comms"]
    rounds = last["daneplus_rounds"] / first["daneplus_rounds"]
    parts = (comm / 2, 0.5 / comm, half_L / (last["fedred_iterations"] / first["fedred_iterations"]), rounds / 2,
             0.5 / rounds, half_L / (last["daneplus_local_evals_per_client"] / first["daneplus_local_evals_per_client"]))
    assert ev.holds and ev.tightness == pytest.approx(max(parts), rel=1e-12) and 0.5 <= ev.tightness <= 1
