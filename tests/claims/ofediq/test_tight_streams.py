"""OFedIQ, the streams on which Theorems 1-2 and Corollary 1 are nearly attained (fedtheory/claims/ofediq/
_shared.py: the static and the alternating stream): their constants computed here by hand, and the default points
built on them rejecting slips of the catalogue (benchmarks/mutation/slip_catalogue.py) that every earlier default
point of the same claim let through (measured once with ``evaluate(claim, instances=old_defaults)``)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from fedtheory.algorithms.ofediq import FedOGD
from fedtheory.claims import REGISTRY
from fedtheory.claims.ofediq._shared import ALTERNATING_OFFSET, alternating_stream, static_stream
from fedtheory.claims.registry import evaluate
from fedtheory.run import run

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks" / "mutation"))

from slip_catalogue import SLIPS  # noqa: E402
from slips import broken_function  # noqa: E402


def test_gradient_descent_on_the_static_stream_pays_a_geometric_sum():
    # L_t(w) = 1/2 (w_1 - 1)^2 for every client: w_{t+1} - 1 = (1 - a)(w_t - 1) from w_1 = 0, so the regret
    # after T steps is K sum_{t < T} (1 - a)^(2t) / 2, against the bound's K ||w*||^2/(2 eta) = K/(2a)
    K, T, a = 3, 40, 0.45
    problem = static_stream(K, T, 2)
    assert problem.beta == 1.0 and problem.sigma2_diff() == 0.0
    np.testing.assert_allclose(problem.comparator(), [1.0, 0.0], atol=1e-12)
    regret = run(FedOGD(eta=a), problem, T, seed=0).regret[-1]
    expected = K * sum((1 - a) ** (2 * t) for t in range(T)) / 2
    assert regret == pytest.approx(expected, rel=1e-10)
    assert expected / (K / (2 * a)) > 0.5  # 1/(2 - a) in the limit: above half the bound for every a


def test_the_alternating_stream_has_its_comparator_at_the_offset_and_unit_variance():
    problem = alternating_stream(2, 10, 3)
    np.testing.assert_allclose(problem.comparator(), [ALTERNATING_OFFSET, 0.0, 0.0], atol=1e-12)
    assert problem.sigma2_diff() == pytest.approx(1.0, rel=1e-12)  # grad at w*: -(-1)^t, squared 1


def _slip(name: str):
    return next(s for s in SLIPS if s.name == name)


def _point(cid: str, stream: str) -> dict:
    return next(pt for pt in REGISTRY[cid].space.defaults if pt.get("stream") == stream)


@pytest.mark.parametrize("cid, stream, slip", [
    ("ofediq.thm1.fedogd", "alternating", "ofediq_regret_off_by_one"),
    ("ofediq.thm1.ofedavg", "static", "ofediq_ipw_multiplied"),
    ("ofediq.thm2.L1", "static", "ofediq_ipw_multiplied"),
    ("ofediq.thm2.L_gt_1", "static", "ofediq_period_off_by_one"),
])
def test_the_nearly_attained_point_rejects_a_slip_the_other_defaults_pass(cid, stream, slip, monkeypatch):
    c, point = REGISTRY[cid], _point(cid, stream)
    faithful = evaluate(c, instances=[point], certify=False)
    assert faithful.status == "holds" and faithful.worst_tightness >= 0.5
    s = _slip(slip)
    monkeypatch.setattr(s.cls, s.method, broken_function(s))
    assert evaluate(c, instances=[point], certify=False).status == "VIOLATED"
