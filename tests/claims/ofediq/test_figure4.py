"""OFedIQ Figure 4 on its stand-in (fedtheory/claims/ofediq/experiments.py, ofediq.parity99): the gap to FedOGD
shrinks with T on the mean over data seeds, and an OFedIQ whose aggregate misses the 1/p_k of eq. (8) is
rejected (its steps are p times too short: the gap grows with T instead)."""
from fedtheory.algorithms.ofediq import OFedIQ
from fedtheory.claims.ofediq.experiments import PARITY_SHRINK, _parity_asserted_instances, check_parity_asserted


def test_the_gap_shrinks_and_a_missing_inverse_p_is_rejected():
    inst = next(_parity_asserted_instances(False))
    ev = check_parity_asserted.check(inst)
    assert ev.holds and ev.measured <= PARITY_SHRINK
    # without 1/p_k the sampled aggregate is p times FedOGD's: the same as OFedIQ with eta p
    broken = check_parity_asserted.check(inst, lambda eta, p, s, b: OFedIQ(eta=eta * p, p=p, s=s, b=b))
    assert not broken.holds and broken.measured > 1.0
