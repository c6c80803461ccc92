"""Property tests for the exact quadratic generator and its certificate."""
import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY
from fedtheory.problems import QuadraticProblem, measure_dissimilarity, quadratic
from fedtheory.strategies import quadratic_params
from fedtheory.testing import assert_oracles_match_finite_differences

# the claims' checks (fedtheory/claims/foundation/), through the public registry
check_quadratic_constants = REGISTRY["foundation.quadratic.constants_exact"]


@given(quadratic_params())
def test_requested_constants_reproduced(kw):
    assert check_quadratic_constants(kw).holds


@given(quadratic_params())
def test_certificate_is_a_minimiser_and_sandwich_holds(kw):
    p = quadratic(**kw)
    c = p.certificate
    assert np.linalg.norm(p.grad(c.x_star)) <= 1e-10 * max(1.0, np.linalg.norm(p.b_bar))
    assert c.delta_A <= c.delta_B * (1 + 1e-12)
    assert c.delta_B <= np.sqrt(p.n_clients) * c.delta_A * (1 + 1e-12) + 1e-14


@given(quadratic_params(), st.integers(0, 2**31 - 1))
def test_delta_A_invariant_to_adding_a_common_function(kw, seed):
    p = quadratic(**kw)
    rng = np.random.default_rng(seed)
    C = rng.standard_normal((p.dim, p.dim))
    C = C @ C.T if p.hessians == "dense" else np.abs(rng.standard_normal(p.dim))
    shifted = QuadraticProblem(p.A + C, p.b + rng.standard_normal(p.dim), p.weights)
    assert shifted.certificate.delta_A == pytest.approx(p.certificate.delta_A, rel=1e-9, abs=1e-12)
    assert shifted.certificate.delta_B == pytest.approx(p.certificate.delta_B, rel=1e-9, abs=1e-12)


@given(quadratic_params(max_clients=5, max_dim=4))
def test_oracles_match_finite_differences(kw):
    p = quadratic(**kw)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((p.n_clients, p.dim))
    assert_oracles_match_finite_differences(p, X)
    x = X[0]
    np.testing.assert_allclose(p.grad(x), p.weights @ p.grads(p.broadcast(x)), rtol=1e-12, atol=1e-12)


@given(quadratic_params(max_clients=4, max_dim=4), st.floats(0.1, 10.0), st.floats(0.0, 1.0))
def test_solve_local_matches_cvxpy_and_kkt(kw, lam, l1):
    p = quadratic(**kw)
    rng = np.random.default_rng(1)
    lin = rng.standard_normal((p.n_clients, p.dim))
    center = rng.standard_normal((p.n_clients, p.dim))
    X = p.solve_local(lin, center, lam, l1=l1)
    for i in range(p.n_clients):
        x = cp.Variable(p.dim)
        Ai = p.A[i] if p.hessians == "dense" else np.diag(p.A[i])
        obj = 0.5 * cp.quad_form(x, cp.psd_wrap(Ai)) - p.b[i] @ x + lin[i] @ x \
            + lam / 2 * cp.sum_squares(x - center[i]) + l1 * cp.norm1(x - center[i])
        cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL)
        np.testing.assert_allclose(X[i], x.value, atol=1e-5 * (1 + np.abs(x.value).max()))
    # exact KKT: 0 in grad f_i + lin + lam (x - c) + l1 * subdiff |x - c|
    G = p.grads(X) + lin + lam * (X - center)
    Y = X - center
    res = np.where(Y != 0, np.abs(G + l1 * np.sign(Y)), np.maximum(np.abs(G) - l1, 0.0))
    assert res.max() <= 1e-9 * max(1.0, np.abs(p.b).max(), np.abs(lin).max(), lam * np.abs(center).max())


@pytest.mark.parametrize("kwargs, name", [
    (dict(mu=2.0, L=1.0), "L"),
    (dict(mu=-1.0, L=1.0), "mu"),
    (dict(mu=0.1, L=1.0, delta_B=2.0), "delta_B"),
    (dict(mu=0.1, L=1.0, delta_A=-0.1), "delta_A"),
    (dict(mu=0.1, L=1.0, zeta2=-1.0), "zeta2"),
    (dict(mu=1.0, L=1.0, delta_B=0.1), "delta_B"),
    (dict(mu=0.1, L=1.0, delta_A=0.1, delta_B=0.1), "delta_A"),
])
def test_infeasible_requests_raise_naming_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        quadratic(4, 3, seed=0, **kwargs)


def test_generator_is_deterministic():
    a = quadratic(6, 5, mu=0.1, L=3.0, delta_A=0.4, zeta2=2.0, seed=7)
    b = quadratic(6, 5, mu=0.1, L=3.0, delta_A=0.4, zeta2=2.0, seed=7)
    assert a.A.tobytes() == b.A.tobytes() and a.b.tobytes() == b.b.tobytes()


def test_measure_dissimilarity_matches_definition():
    rng = np.random.default_rng(3)
    n, d = 5, 4
    A = np.stack([(lambda M: M @ M.T)(rng.standard_normal((d, d))) for _ in range(n)])
    b = rng.standard_normal((n, d))
    dis = measure_dissimilarity(A, b)
    E = A - A.mean(axis=0)
    assert dis.delta_B == pytest.approx(max(np.linalg.norm(e, 2) for e in E), rel=1e-12)
    assert dis.delta_A == pytest.approx(np.sqrt(np.linalg.eigvalsh(np.mean(E @ E, axis=0))[-1]), rel=1e-12)
    x_star = np.linalg.solve(A.mean(0), b.mean(0))
    assert dis.zeta2 == pytest.approx(np.mean(np.sum((A @ x_star - b) ** 2, axis=1)), rel=1e-10)
