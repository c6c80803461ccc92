"""FedElasticNet, Theorem B.6 every round (fedtheory/claims/fedelasticnet/theorem_b6.py) on hypothesis-drawn
quadratics beyond the claim's own space (fedtheory's test quadratic)."""
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY
from fedtheory.claims.fedelasticnet import algorithm3
from fedtheory.problems.quadratic import quadratic
from fedtheory.strategies import quadratic_params
from fedtheory.theory import fedelasticnet as th


@settings(max_examples=15)
@given(kw=quadratic_params(min_clients=2, max_clients=4, min_dim=2, max_dim=3, max_condition=30.0),
       excess=st.floats(1e-3, 200.0), lam1=st.sampled_from([0.0, 0.01, 0.3]), partial=st.booleans())
def test_theorem_b6_every_round(kw, excess, lam1, partial):
    problem = quadratic(**kw)
    assume(not partial or problem.n_clients > 2)
    r = th.kappa0_threshold() + excess
    P = problem.n_clients - 1 if partial else None
    ev = REGISTRY["fedelasticnet.thmB6.per_round"].check(
        (problem, algorithm3(r * problem.certificate.L, lam1, "kkt", P), 15))
    assert ev.holds, ev.details
