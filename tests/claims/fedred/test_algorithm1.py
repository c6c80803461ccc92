"""The claims of fedtheory/claims/fedred/algorithm1.py on hypothesis-drawn instances (they declare default
instances only, so the parametrised property test does not draw them): the exact fixed points against FedProx's
bias and Scaffold's ill-posed subproblem."""
from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY
from fedtheory.strategies import quadratic_params


def _holds(claim_id: str, instance: dict) -> None:
    ev = REGISTRY[claim_id].check(instance)
    assert ev.holds, (ev.instance, ev.measured, ev.theory, dict(ev.details))


@given(quadratic_params(max_clients=6, max_dim=5, dissimilarity="delta_A"))
def test_fixed_points(kw):
    assume(kw["delta_A"] > 0)
    _holds("fedred.fixed_point", kw)


@given(st.integers(2, 8), st.integers(1, 6), st.integers(0, 10**6), st.floats(1e-3, 10.0))
def test_scaffold_subproblem_ill_posed(n, d, seed, lam):
    _holds("fedred.scaffold.ill_posed", dict(n_clients=n, dim=d, seed=seed, lam=lam))
