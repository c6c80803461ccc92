"""FedElasticNet, Theorem B.6 every round (fedtheory/claims/fedelasticnet/theorem_b6.py) on hypothesis-drawn
quadratics beyond the claim's own space (fedtheory's test quadratic)."""
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY
from fedtheory.claims.fedelasticnet import algorithm3
from fedtheory.problems.quadratic import QuadraticProblem, quadratic
from fedtheory.problems.smooth import SmoothProblem
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


def test_theorem_b6_bites_on_the_affine_logistic_defaults(monkeypatch):
    """On the logistic defaults (far in the affine region, 2 of 3 clients sampled) kappa0 times the gap is more
    than half the Lyapunov decrease (0.7-0.8; the quadratic defaults reach 0.38): a local solve with the prox
    weight 0.7 lambda2 (the server and the state updates keep lambda2) breaks B.6 there and on no quadratic
    default."""
    claim = REGISTRY["fedelasticnet.thmB6.per_round"]
    logistic = ["x0" in pt for pt in claim.space.defaults]
    insts = [claim.space.build(dict(pt)) for pt in claim.space.defaults]
    tight = [claim.check(inst).tightness for inst in insts]
    assert min(t for t, lg in zip(tight, logistic) if lg) > 0.5 > max(t for t, lg in zip(tight, logistic) if not lg)
    for cls in (SmoothProblem, QuadraticProblem):
        def slipped(self, lin, center, lam, l1=0.0, clients=None, _orig=cls.solve_local):
            return _orig(self, lin, center, 0.7 * np.asarray(lam), l1, clients)
        monkeypatch.setattr(cls, "solve_local", slipped)
    held = [claim.check(inst).holds for inst in insts]
    assert all(h for h, lg in zip(held, logistic) if not lg) and not all(held)
