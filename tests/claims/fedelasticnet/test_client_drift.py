"""FedElasticNet, client drift (fedtheory/claims/fedelasticnet/client_drift.py): the closed-form limits of
FedProx and FedAvg on hypothesis-drawn quadratics (the first-order expansions of their bias are classic claims,
tested in tests/claims/classic/test_drawn_quadratics.py)."""
import numpy as np
from hypothesis import assume, given

from fedtheory.algorithms.fedavg import FedAvg
from fedtheory.algorithms.fedprox import FedProx
from fedtheory.claims import REGISTRY
from fedtheory.claims.fedelasticnet import iterate_to_limit
from fedtheory.problems.quadratic import quadratic
from fedtheory.strategies import quadratic_params
from fedtheory.theory.classic import fedavg_fixed_point, fedprox_fixed_point

params = quadratic_params(min_clients=2, max_clients=5, min_dim=2, max_dim=4, max_condition=30.0)


@given(kw=params)
def test_fedprox_and_fedavg_closed_form_limits(kw):
    problem = quadratic(**kw)
    assume(problem.certificate.mu > 0.05)
    beta = problem.certificate.L
    st, _ = iterate_to_limit(problem, FedProx(prox=beta, l1=0.0), max_rounds=20000)
    target = fedprox_fixed_point(problem, beta)
    assert np.linalg.norm(st.x - target) <= 1e-9 * max(1.0, np.linalg.norm(target))
    st, _ = iterate_to_limit(problem, FedAvg(local_steps=3, local_step=0.5 / beta), max_rounds=20000)
    target = fedavg_fixed_point(problem, 3, 0.5 / beta)
    assert np.linalg.norm(st.x - target) <= 1e-9 * max(1.0, np.linalg.norm(target))


def test_fedprox_limit_keys_its_details_by_the_input_ratio_not_by_a_computed_lambda2():
    # Two problems whose beta (hence lambda2 = ratio * beta) differ: the details keys must not change, as they
    # must not between two BLAS kernels that round beta differently (verify --compare checks the keys).
    from fedtheory.claims.fedelasticnet.instances import spec_problem
    from fedtheory.report.compare import detail_keys

    claim = REGISTRY["fedelasticnet.fedprox.limit"]
    problems = [spec_problem(m=5, d=4, seed=s) for s in (0, 1)]
    assert problems[0].certificate.L != problems[1].certificate.L
    keys = [set(detail_keys(claim.check(p).details)) for p in problems]
    assert keys[0] == keys[1]
    assert {"limit_errors/lambda2/beta=0.5", "limit_errors/lambda2/beta=2"} <= keys[0]
