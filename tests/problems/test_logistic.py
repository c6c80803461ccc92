"""Property tests for the federated logistic family (issue 2): certificates, oracles, local solver."""
import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY
from fedtheory.problems import LogisticProblem, logistic, logistic_perturbed
from fedtheory.prox_l1 import kkt_residual_l1
from fedtheory.strategies import logistic_params, logistic_perturbed_params
from fedtheory.testing import assert_oracles_match_finite_differences

# the claims' checks (fedtheory/claims/foundation/), through the public registry
check_logistic_perturbed = REGISTRY["foundation.logistic_perturbed.constants_exact"]
check_logistic_residual = REGISTRY["foundation.logistic.certificate_residual"]
check_logistic_smoothness = REGISTRY["foundation.logistic.smoothness_exact"]


@given(logistic_params())
def test_certificate_residual_and_smoothness(kw):
    assert check_logistic_residual(kw).holds
    assert check_logistic_smoothness(kw).holds


@given(logistic_params(min_clients=2))
def test_delta_estimates_are_labelled_and_sandwiched(kw):
    c = logistic(**kw).certificate
    assert c.exact["delta_A"] is False and c.exact["delta_B"] is False and c.exact["mu"] is True
    n = len(c.weights)
    # each sampled point satisfies the sandwich, hence so do the maxima over points (weights may be non-uniform:
    # max_i ||E_i|| <= sqrt(1 / min_i w_i) delta_A)
    assert c.delta_A <= c.delta_B * (1 + 1e-12) + 1e-15
    assert c.delta_B <= np.sqrt(1.0 / c.weights.min()) * c.delta_A * (1 + 1e-12) + 1e-15
    if kw["weights"] == "uniform":
        assert c.delta_B <= np.sqrt(n) * c.delta_A * (1 + 1e-12) + 1e-15


@given(logistic_perturbed_params())
def test_perturbed_construction_constants_exact(kw):
    assert check_logistic_perturbed(kw).holds


def _fd_check(p, X):
    assert_oracles_match_finite_differences(p, X, check_hessians=True)


@given(logistic_params(max_clients=4, max_dim=4), st.integers(0, 100))
def test_oracles_match_finite_differences(kw, seed):
    p = logistic(**kw)
    X = np.random.default_rng(seed).standard_normal((p.n_clients, p.dim))
    _fd_check(p, X)
    x = X[0]
    np.testing.assert_allclose(p.grad(x), p.weights @ p.grads(p.broadcast(x)), rtol=1e-12, atol=1e-14)


@given(logistic_perturbed_params(max_clients=4, max_dim=4))
def test_perturbed_oracles_match_finite_differences(kw):
    p = logistic_perturbed(**kw)
    _fd_check(p, np.random.default_rng(0).standard_normal((p.n_clients, p.dim)))


def test_batched_oracles_equal_a_per_client_loop():
    p = logistic("digits", 7, partition="lognormal", sigma=1.5, reg=1e-2, seed=3)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((p.n_clients, p.dim))
    G = p.grads(X)
    V = p.values(X)
    for i in range(p.n_clients):
        Zi = p._Z[i, : p.sizes[i]]
        z = Zi @ X[i]
        v = np.mean(np.logaddexp(0, -z)) + 0.5 * p.reg * X[i] @ X[i]
        g = -(Zi.T @ (1 / (1 + np.exp(z)))) / p.sizes[i] + p.reg * X[i]
        assert V[i] == pytest.approx(v, rel=1e-13)
        np.testing.assert_allclose(G[i], g, rtol=1e-11, atol=1e-14)
        # a client subset gives the same rows
    sub = np.array([4, 1])
    np.testing.assert_array_equal(p.grads(X[sub], sub), G[sub])


def _cvxpy_local(p, i, lin, center, lam, l1):
    Zi = p._Z[i, : p.sizes[i]] if not p.shared else p._Z
    m = len(Zi)
    x = cp.Variable(p.dim)
    obj = cp.sum(cp.logistic(-Zi @ x)) / m + p.reg / 2 * cp.sum_squares(x) + lin @ x \
        + lam / 2 * cp.sum_squares(x - center) + l1 * cp.norm1(x - center)
    if p.E is not None:
        obj = obj + 0.5 * cp.quad_form(x, cp.psd_wrap(p.E[i] + 1e-300 * np.eye(p.dim))) + p.c[i] @ x
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL)
    return x.value, prob.value


def _phi(p, X, lin, center, lam, l1):
    D = X - center
    return p.values(X) + np.sum(lin * X, 1) + lam / 2 * np.sum(D * D, 1) + l1 * np.abs(D).sum(1)


@settings(max_examples=8)
@given(logistic_params(max_clients=3, max_dim=3, max_samples=12), st.floats(0.05, 5.0),
       st.sampled_from([0.0, 0.0, 0.02, 0.3]), st.integers(0, 100))
def test_solve_local_matches_cvxpy_and_kkt(kw, lam, l1, seed):
    p = logistic(**kw)
    rng = np.random.default_rng(seed)
    lin = rng.standard_normal((p.n_clients, p.dim))
    center = rng.standard_normal((p.n_clients, p.dim))
    X = p.solve_local(lin, center, lam, l1=l1)
    G = p.grads(X) + lin + lam * (X - center)
    if l1 == 0:
        assert np.linalg.norm(G, axis=1).max() <= 1e-12 * max(1.0, np.abs(lin).sum() + lam * np.abs(center).sum()
                                                              + np.abs(p.grads(center)).sum())
    else:
        scale = max(1.0, np.abs(G).max(), l1, np.abs(lin).max(), lam * np.abs(center).max(),
                    np.abs(p.grads(center) + lin).max())
        assert kkt_residual_l1(G, X - center, l1).max() <= 1e-12 * scale
    ours = _phi(p, X, lin, center, lam, l1)
    for i in range(p.n_clients):
        xc, val = _cvxpy_local(p, i, lin[i], center[i], lam, l1)
        # ours is the exact minimiser: never worse than the interior-point answer beyond its accuracy
        assert ours[i] <= val + 1e-7 * max(1.0, abs(val))
        np.testing.assert_allclose(X[i], xc, atol=1e-4 * (1 + np.abs(xc).max()))


def test_solve_local_perturbed_weakly_convex_clients():
    p = logistic_perturbed(4, 3, reg=0.05, delta_B=0.5, zeta2=1.0, seed=2)
    assert p.certificate.mu < 0  # clients are only weakly convex
    rng = np.random.default_rng(0)
    lin, center = rng.standard_normal((2, 4, 3))
    with pytest.raises(ValueError, match="lam"):
        p.solve_local(lin, center, 0.5 * -p.certificate.mu)
    lam = 1.0 - p.certificate.mu
    X = p.solve_local(lin, center, lam)
    assert np.abs(p.grads(X) + lin + lam * (X - center)).max() <= 1e-11


def test_minibatch_expectation_by_enumeration():
    """batch_size=1: averaging over every sample index (a stub generator enumerates them) is exactly grad f_i."""
    p = logistic("synthetic", 3, dim=4, samples=7, reg=0.1, seed=1).with_minibatch(1)
    X = np.random.default_rng(0).standard_normal((3, 4))
    m = int(p.sizes[0])

    class Enumerate:
        def __init__(self, j):
            self.j = j

        def random(self, shape):
            return np.full(shape, (self.j + 0.5) / m)

    mean = np.mean([p.stochastic_grads(X, Enumerate(j)) for j in range(m)], axis=0)
    np.testing.assert_allclose(mean, p.grads(X), rtol=1e-12, atol=1e-14)
    second = np.mean([np.sum((p.stochastic_grads(X, Enumerate(j)) - p.grads(X)) ** 2, 1) for j in range(m)], 0)
    np.testing.assert_allclose(second, p.minibatch_variance(X), rtol=1e-10, atol=1e-15)


def test_determinism_under_seed():
    a = logistic("breast_cancer", 6, partition="dirichlet", dirichlet_alpha=0.3, seed=5)
    b = logistic("breast_cancer", 6, partition="dirichlet", dirichlet_alpha=0.3, seed=5)
    np.testing.assert_array_equal(a.certificate.x_star, b.certificate.x_star)
    np.testing.assert_array_equal(a._Z, b._Z)
    pa, pb = a.with_minibatch(4), b.with_minibatch(4)
    X = np.zeros((6, a.dim))
    np.testing.assert_array_equal(pa.stochastic_grads(X, np.random.default_rng(1)),
                                  pb.stochastic_grads(X, np.random.default_rng(1)))
    c = logistic_perturbed(5, 3, delta_A=0.2, zeta2=1.0, seed=9)
    d = logistic_perturbed(5, 3, delta_A=0.2, zeta2=1.0, seed=9)
    np.testing.assert_array_equal(c.E, d.E)
    np.testing.assert_array_equal(c.certificate.x_star, d.certificate.x_star)


@pytest.mark.parametrize("call, name", [
    (lambda: logistic("synthetic", 3, reg=0.0, samples=5), "reg"),
    (lambda: logistic("synthetic", 0, samples=5), "n_clients"),
    (lambda: logistic("mnist", 3), "source"),
    (lambda: logistic("digits", 3, partition="natural"), "partition"),
    (lambda: logistic("digits", 3, partition="dirichlet", dirichlet_alpha=-1.0), "alpha"),
    (lambda: logistic("synthetic", 3, samples=5, weights="sizes"), "weights"),
    (lambda: logistic("digits", 3, digits="two_class", positive=2, negative=2), "negative"),
    (lambda: logistic("synthetic", 3, samples=5, batch_size=0), "batch_size"),
    (lambda: logistic_perturbed(3, 2, delta_A=0.1, delta_B=0.1), "delta_A and delta_B"),
    (lambda: logistic_perturbed(3, 2, delta_B=-1.0), "delta_B"),
    (lambda: LogisticProblem([np.ones((2, 2))], [np.array([1.0, 0.0])], reg=1.0), "labels"),
    (lambda: logistic("synthetic", 2, samples=5).solve_local(np.zeros((2, 60)), np.zeros((2, 60)), -1.0), "lam"),
    (lambda: logistic("synthetic", 2, samples=5).solve_local(np.zeros((2, 60)), np.zeros((2, 60)), 1.0, l1=-1),
     "l1"),
])
def test_invalid_parameters_raise_naming_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


@given(logistic_perturbed_params(), st.floats(1e-2, 2.0), st.integers(0, 1000))
def test_delta_invariant_to_the_common_logistic_part(kw, reg, seed):
    """delta depends only on E (h_i = f - f_i is quadratic): swapping the shared data and reg leaves it."""
    p = logistic_perturbed(**kw)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((15, p.dim))
    y = np.where(rng.random(15) < 0.5, -1.0, 1.0)
    q = LogisticProblem(a, y, reg=reg, n_clients=p.n_clients, weights=p.weights, E=p.E, c=p.c)
    assert q.certificate.delta_A == pytest.approx(p.certificate.delta_A, rel=1e-12, abs=1e-15)
    assert q.certificate.delta_B == pytest.approx(p.certificate.delta_B, rel=1e-12, abs=1e-15)
    assert q.certificate.kkt_residual <= 1e-12
