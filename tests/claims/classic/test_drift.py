"""Client drift of FedAvg and FedProx (fedtheory/claims/classic/drift.py): the first-order rate claims compare the
exact closed-form fixed points with their expansion in the drift vector v. Their reported tightness is the
second-order remainder over fedtheory's envelope (10 eta K L; 1e-2 and 1e-3), small on every default; what they
assert is the leading term, and a leading term off by 10% is rejected on every default."""
import numpy as np
import pytest

from fedtheory.claims import REGISTRY
from fedtheory.claims.classic import drift


@pytest.mark.parametrize("cid", ["classic.fedavg.bias_monotone_in_K.corrected",
                                 "classic.fedprox.bias_inverse_lambda.derived"])
def test_first_order_rates_reject_a_leading_term_off_by_ten_percent(monkeypatch, cid):
    claim = REGISTRY[cid]
    instances = list(claim.instances(False))
    assert all(claim.check(inst).holds for inst in instances)
    orig = drift.drift_vector
    monkeypatch.setattr(drift, "drift_vector", lambda problem: 1.1 * np.asarray(orig(problem)))
    assert not any(claim.check(inst).holds for inst in instances)


@pytest.mark.parametrize("cid, closed_form, scale", [
    ("classic.fedavg.bias_monotone_in_K.corrected", "fedavg_fixed_point", lambda c, K, eta: eta * (K - 1) / 2),
    ("classic.fedprox.bias_inverse_lambda.derived", "fedprox_fixed_point", lambda c, lam: 1.0 / lam)])
def test_first_order_rates_reject_a_remainder_that_does_not_shrink(monkeypatch, cid, closed_form, scale):
    """A leading term off by 0.05% of ||v||: inside both envelopes (1e-2 and 1e-3 of ||v||), but the remainder
    is then of order 0 (it does not shrink over the decade), which the first-order check rejects."""
    claim = REGISTRY[cid]
    orig = getattr(drift, closed_form)

    def off(problem, *args):
        return orig(problem, *args) + 5e-4 * scale(problem.certificate, *args) * np.asarray(drift.drift_vector(problem))

    monkeypatch.setattr(drift, closed_form, off)
    evidence = [claim.check(inst) for inst in claim.instances(False)]
    assert all(ev.tightness <= 1.0 for ev in evidence)
    assert not any(ev.holds for ev in evidence)
