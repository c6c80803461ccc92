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


def test_table2s_accounting_fails_for_elastic_net_variants_that_do_not_sparsify() -> None:
    # Table 2 prints Algs. 1-3 *below* their baselines: variants that never send fewer non-zeros (lambda1 = 0, no
    # threshold: each is its baseline) must fail the claim, not only variants that send more.
    accounting = REGISTRY["fedelasticnet.communication.accounting"]
    check_accounting = accounting.check
    problem = next(iter(accounting.instances(False)))
    assert check_accounting(problem).holds
    dense = check_accounting(problem, l1=0.0, threshold=0.0)
    assert not dense.holds
    assert not any(v["elastic_net_fewer_over_the_run"] for v in dense.details.values() if isinstance(v, dict))
