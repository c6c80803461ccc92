"""The classic claims' checks (fedtheory/claims/classic/) on hypothesis-drawn heterogeneous quadratics (the ledger
runs the defaults; these claims list default instances rather than declare a space, so the parametrised property
test does not reach them)."""
from __future__ import annotations

import os

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY
from fedtheory.claims.tolerances import EXACT_REL, IDENTITY_TOL
from fedtheory.problems.quadratic import quadratic
from fedtheory.theory.classic import (
    drift_vector,
    fedavg_fixed_point,
    fedavg_map,
    fedprox_fixed_point,
    proxskip_contraction,
)


def _examples(ci: int) -> int:
    """Expensive tests run ``ci`` examples in the default profile and 20x more under HYPOTHESIS_PROFILE=thorough."""
    return ci * 20 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else ci


@st.composite
def heterogeneous(draw, max_clients: int = 6, max_dim: int = 5, max_condition: float = 20.0, enumerable=False):
    """Quadratics with clearly heterogeneous Hessians and gradients (drift is present)."""
    n = draw(st.integers(2, 4 if enumerable else max_clients))
    d = draw(st.integers(2, max_dim))
    mu = draw(st.floats(0.05, 1.0))
    L = mu * draw(st.floats(2.0, max_condition))
    which = draw(st.sampled_from(["delta_A", "delta_B"]))
    # delta_A's feasible range for this generator is narrower with few clients (see fedtheory.strategies).
    frac = draw(st.floats(0.05, 0.4 if which == "delta_B" else 0.4 / n ** 0.5))
    return quadratic(n, d, mu=mu, L=L, zeta2=draw(st.floats(0.1, 5.0)), **{which: frac * (L - mu)},
                     hessians=draw(st.sampled_from(["dense", "diagonal"])), seed=draw(st.integers(0, 2**31 - 1)))


@given(heterogeneous())
def test_fedavg_k1_is_gd(problem):
    assert REGISTRY["classic.fedavg.k1_is_gd"](problem).holds


@given(heterogeneous())
def test_fedavg_and_fedprox_reach_their_closed_form_fixed_points(problem):
    # The checks also require the fixed point to be biased; the drift vector must then be non-negligible.
    assume(np.linalg.norm(drift_vector(problem)) > 1e-4)
    ev = REGISTRY["classic.fedavg.fixed_point"](problem)
    assert ev.measured <= IDENTITY_TOL, ev
    ev = REGISTRY["classic.fedprox.fixed_point"](problem)
    assert ev.measured <= IDENTITY_TOL, ev


@given(st.integers(2, 6), st.integers(2, 5), st.floats(0.05, 1.0), st.floats(1.0, 20.0), st.floats(0.1, 5.0),
       st.sampled_from(["dense", "diagonal"]), st.integers(0, 10**6))
def test_equal_hessians_give_unbiased_fixed_points(n, d, mu, kappa, zeta2, hessians, seed):
    problem = quadratic(n, d, mu=mu, L=mu * kappa, zeta2=zeta2, hessians=hessians, seed=seed)
    ev = REGISTRY["classic.drift.equal_hessians_unbiased"](problem)
    assert ev.holds, ev


@given(heterogeneous())
def test_fedavg_bias_first_order_in_K(problem):
    assume(np.linalg.norm(drift_vector(problem)) > 1e-4)
    ev = REGISTRY["classic.fedavg.bias_monotone_in_K.corrected"](problem)
    assert ev.holds, ev


@given(heterogeneous())
def test_fedprox_bias_inverse_lambda(problem):
    assume(np.linalg.norm(drift_vector(problem)) > 1e-4)
    ev = REGISTRY["classic.fedprox.bias_inverse_lambda.derived"](problem)
    assert ev.holds, ev


def test_bias_monotonicity_counterexample_is_found():
    claim = REGISTRY["classic.fedavg.bias_monotone_in_K"]
    instances = list(claim.instances(False))
    assert len(instances) == 2  # the classic reading's n = 2, d = 2 and FedElasticNet's m = 3, d = 1
    assert all(not claim(inst).holds for inst in instances)
    ev = claim(instances[0])
    bias = np.asarray(ev.details["bias_by_K"])
    assert bias[0] < EXACT_REL  # K = 1 is GD, unbiased
    assert bias.max() > bias[-1] + 0.1  # a drop of more than 0.1 after the peak


def test_closed_form_fixed_point_is_the_fixed_point_of_the_affine_map():
    problem = quadratic(4, 3, mu=0.2, L=2.0, delta_B=0.6, zeta2=1.0, seed=0)
    T, t = fedavg_map(problem, 4, 0.3)
    fp = fedavg_fixed_point(problem, 4, 0.3)
    np.testing.assert_allclose(T @ fp + t, fp, atol=1e-13)
    # K = 1 gives x* exactly (FedAvg with one step is GD)
    np.testing.assert_allclose(fedavg_fixed_point(problem, 1, 0.3), problem.certificate.x_star, atol=1e-12)
    # FedProx's limits: lambda -> 0 is the average of local optima, lambda -> inf is x*
    x_loc = np.linalg.solve(problem.A, problem.b[..., None])[..., 0]
    np.testing.assert_allclose(fedprox_fixed_point(problem, 1e-9), problem.weights @ x_loc, atol=1e-6)


@settings(max_examples=_examples(8))
@given(heterogeneous(max_clients=5, max_dim=4, max_condition=10.0))
def test_drift_corrected_methods_converge(problem):
    ev = REGISTRY["classic.drift_corrected.converge"](problem)
    assert ev.holds, ev.details


@settings(max_examples=_examples(10))
@given(heterogeneous(enumerable=True, max_dim=4))
def test_optimal_state_is_fixed_for_every_draw(problem):
    ev = REGISTRY["classic.drift_corrected.fixed_point_every_draw"](problem)
    assert ev.holds, ev.details


@settings(max_examples=_examples(8))
@given(heterogeneous(max_clients=5, max_dim=4))
def test_server_state_invariants(problem):
    ev = REGISTRY["classic.invariants.server_state_is_mean"](problem)
    assert ev.holds, ev.details


@settings(max_examples=_examples(15))
@given(heterogeneous(enumerable=True, max_dim=4))
def test_partial_participation_expectations(problem):
    ev = REGISTRY["classic.partial.expected_update"](problem)
    assert ev.holds, ev.details


@settings(max_examples=_examples(20))
@given(heterogeneous(enumerable=True, max_dim=4, max_condition=50.0), st.floats(0.05, 1.0), st.floats(0.05, 1.0),
       st.sampled_from(["zero", "gradient"]))
def test_scaffnew_expected_contraction(problem, step_fraction, p, h_init):
    gamma = step_fraction / problem.certificate.L
    ev = REGISTRY["classic.scaffnew.expected_contraction"]((problem, gamma, p, h_init))
    assert ev.holds, ev


def test_proxskip_contraction_validates_the_step():
    import pytest

    assert proxskip_contraction(0.1, 1.0, 1.0, 0.5) == 1.0 - min(0.1, 0.25)
    with pytest.raises(ValueError, match="step"):
        proxskip_contraction(0.1, 1.0, 1.5, 0.5)
    with pytest.raises(ValueError, match="p"):
        proxskip_contraction(0.1, 1.0, 0.5, 0.0)
