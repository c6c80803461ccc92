"""FedElasticNet, the experiments (fedtheory/claims/fedelasticnet/experiments.py): Table 1's shape and the binned
entropy of Figure 2."""
import numpy as np
import pytest

from fedtheory.claims import REGISTRY
from fedtheory.claims.fedelasticnet import binned_entropy_bits


def test_table1_shape_holds() -> None:
    claim = REGISTRY["fedelasticnet.statements.table1"]
    for inst in claim.instances(False):
        ev = claim.check(inst)
        assert ev.holds, ev.details


def test_binned_entropy_of_a_constant_is_zero_and_of_two_bins_is_one_bit() -> None:
    assert binned_entropy_bits(np.zeros(10)) == 0.0
    assert binned_entropy_bits(np.array([0.0, 0.5] * 5)) == pytest.approx(1.0)
