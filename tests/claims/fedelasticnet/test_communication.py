"""FedElasticNet, sparsity of the local updates (fedtheory/claims/fedelasticnet/communication.py) on
hypothesis-drawn quadratics beyond the claim's own instances."""
from hypothesis import given

from fedtheory.claims import REGISTRY
from fedtheory.problems.quadratic import quadratic
from fedtheory.strategies import quadratic_params


@given(kw=quadratic_params(min_clients=2, max_clients=5, min_dim=2, max_dim=4, max_condition=30.0))
def test_sparsity_monotone(kw):
    ev = REGISTRY["fedelasticnet.sparsity.monotone"].check(quadratic(**kw))
    assert ev.holds, ev.details
