"""FedElasticNet, Algorithm 2 against its printed round (fedtheory/claims/fedelasticnet/algorithm2.py)."""
import numpy as np

from fedtheory.claims import REGISTRY
from fedtheory.claims.fedelasticnet import printed_algorithm2_round, spec_problem


def test_algorithm2_matches_printed_round() -> None:
    claim = REGISTRY["fedelasticnet.statements.algorithm2"]
    for inst in claim.instances(False):
        ev = claim.check(inst)
        assert ev.holds and ev.measured <= 1e-12, ev


def test_printed_algorithm2_detects_a_changed_server_step() -> None:
    """The printed reference is sensitive: a different eta_g moves theta^t."""
    problem = spec_problem(m=4, d=3, seed=0)
    S = np.array([0, 2])
    z, C = np.zeros(3), np.zeros((4, 3))
    a = printed_algorithm2_round(problem.A, problem.b, z, z, C, S, B=3, eta_l=0.1, eta_g=1.0, lam1=0.1,
                                 lam2=0.0, eps=0.0)[0]
    b = printed_algorithm2_round(problem.A, problem.b, z, z, C, S, B=3, eta_l=0.1, eta_g=0.5, lam1=0.1,
                                 lam2=0.0, eps=0.0)[0]
    assert np.allclose(b, 0.5 * a) and not np.allclose(a, b)
