"""Unit tests of the classic algorithms' machinery: participation, local GD, accounting, options."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.algorithms import FedAvg, FedDyn, FedProx, Scaffnew, Scaffold
from fedtheory.algorithms.federated import threshold, vector_bits
from fedtheory.local.gd import local_gd, soft_threshold
from fedtheory.participation import Bernoulli, Full, UniformSubset
from fedtheory.problems.quadratic import quadratic
from fedtheory.run import run


def _examples(ci: int) -> int:
    """Expensive tests run ``ci`` examples in the default profile and 20x more under HYPOTHESIS_PROFILE=thorough."""
    return ci * 20 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else ci


@pytest.fixture(scope="module")
def problem():
    return quadratic(5, 4, mu=0.3, L=3.0, delta_B=0.8, zeta2=2.0, seed=11)


# ----- participation -----

@pytest.mark.parametrize("scheme", [Full(), UniformSubset(1), UniformSubset(3), UniformSubset(5), Bernoulli(0.3),
                                    Bernoulli((0.1, 0.5, 1.0, 0.7, 0.2))])
def test_enumeration_is_a_distribution_with_the_stated_marginals(scheme):
    n = 5
    total, marginal = 0.0, np.zeros(n)
    seen = set()
    for clients, prob in scheme.outcomes(n):
        assert np.all(np.diff(clients) > 0)  # sorted, no repeats
        key = tuple(clients.tolist())
        assert key not in seen
        seen.add(key)
        total += prob
        marginal[clients] += prob
    assert math.isclose(total, 1.0, rel_tol=1e-12)
    np.testing.assert_allclose(marginal, scheme.inclusion_probabilities(n), rtol=1e-12)
    if isinstance(scheme, UniformSubset):
        assert len(seen) == math.comb(n, scheme.size)


@pytest.mark.parametrize("scheme", [Full(), UniformSubset(2), Bernoulli(0.4)])
def test_draws_are_possible_outcomes(scheme):
    rng = np.random.default_rng(0)
    possible = {tuple(c.tolist()) for c, _ in scheme.outcomes(6)}
    for _ in range(50):
        assert tuple(scheme.draw(6, rng).tolist()) in possible


def test_participation_validation_names_the_parameter():
    with pytest.raises(ValueError, match="participation.size"):
        UniformSubset(0)
    with pytest.raises(ValueError, match="participation.size"):
        UniformSubset(7).validate(6)
    with pytest.raises(ValueError, match="participation.p"):
        Bernoulli(1.5)
    with pytest.raises(ValueError, match="participation.p"):
        Bernoulli(0.0)
    with pytest.raises(ValueError, match="participation.p"):
        Bernoulli((0.5, 0.5)).validate(3)
    with pytest.raises(TypeError, match="participation"):
        FedAvg(participation="half")


# ----- local GD -----

def _loop_reference(problem, X0, clients, steps, eta, lin, prox, center, l1, mode):
    """Per-client loop written independently of local_gd (one client and one step at a time)."""
    out = np.array(X0, dtype=float)
    for row, i in enumerate(clients):
        y = out[row].copy()
        for _ in range(steps):
            g = problem.grads(y[None, :], np.array([i]))[0] + lin[row] + prox * (y - center[row])
            if mode == "subgradient":
                g = g + l1 * np.sign(y - center[row])
                y = y - eta * g
            else:
                z = y - eta * g - center[row]
                y = center[row] + np.sign(z) * np.maximum(np.abs(z) - eta * l1, 0.0)
        out[row] = y
    return out


@pytest.mark.parametrize("mode", ["subgradient", "proximal"])
@pytest.mark.parametrize("clients", [np.arange(5), np.array([0, 2, 3])])
def test_local_gd_matches_a_per_client_loop(problem, mode, clients):
    rng = np.random.default_rng(1)
    m = clients.size
    X0 = rng.standard_normal((m, problem.dim))
    lin, center = rng.standard_normal((m, problem.dim)), rng.standard_normal((m, problem.dim))
    res = local_gd(problem, X0, steps=7, step_size=0.1, clients=clients, lin=lin, prox=0.7, center=center, l1=0.2,
                   l1_mode=mode)
    ref = _loop_reference(problem, X0, clients, 7, 0.1, lin, 0.7, center, 0.2, mode)
    np.testing.assert_allclose(res.X, ref, rtol=1e-13, atol=1e-13)
    assert res.grad_evals == 7 * m
    assert np.all(res.steps == 7)


def test_local_gd_stopping_rule_counts_evaluations(problem):
    X0 = np.tile(problem.certificate.x_star, (problem.n_clients, 1))
    # A huge tolerance stops every client at its first measurement: one evaluation each, no step taken.
    res = local_gd(problem, X0, steps=10, step_size=0.1, tol=1e6)
    assert res.grad_evals == problem.n_clients and np.all(res.steps == 0)
    np.testing.assert_array_equal(res.X, X0)
    # tol = 0 never stops early and reproduces the fast path.
    full = local_gd(problem, X0, steps=10, step_size=0.1)
    zero = local_gd(problem, X0, steps=10, step_size=0.1, tol=0.0)
    np.testing.assert_allclose(zero.X, full.X, rtol=0, atol=1e-15)
    # A moderate tolerance: clients stop once ||grad f_i(y)|| <= tol, and then it holds at their final point.
    tol = 1e-3
    res = local_gd(problem, X0, steps=5000, step_size=1.0 / problem.certificate.L, tol=tol)
    assert np.all(res.steps < 5000)
    assert res.grad_evals == int(res.steps.sum()) + problem.n_clients
    assert np.all(np.linalg.norm(problem.grads(res.X), axis=1) <= tol)


def test_proximal_local_gd_reaches_the_exact_elastic_net_solve(problem):
    lam, l1 = 1.0, 0.3
    x = np.full(problem.dim, 0.2)
    center = np.tile(x, (problem.n_clients, 1))
    exact = problem.solve_local(np.zeros_like(center), center, lam, l1=l1)
    res = local_gd(problem, center, steps=3000, step_size=1.0 / (problem.certificate.L + lam), prox=lam,
                   center=center, l1=l1, l1_mode="proximal")
    np.testing.assert_allclose(res.X, exact, atol=1e-10)


def test_soft_threshold():
    z = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    np.testing.assert_array_equal(soft_threshold(z, 1.0), [-1.0, 0.0, 0.0, 0.0, 1.0])


# ----- metamorphic relations between the options -----

def test_fedprox_without_regularisers_is_fedavg(problem):
    a = run(FedAvg(local_steps=4, local_step=0.1, participation=UniformSubset(3)), problem, 20, seed=5)
    b = run(FedProx(prox=0.0, l1=0.0, solver="gd", local_steps=4, local_step=0.1, participation=UniformSubset(3)),
            problem, 20, seed=5)
    np.testing.assert_array_equal(a.x_final, b.x_final)


def test_scaffold_server_step_and_zero_control_variates_first_round_is_fedavg(problem):
    # With c = c_i = 0 the first SCAFFOLD round is a FedAvg round (uniform weights).
    sc = Scaffold(local_steps=3, local_step=0.1, server_step=0.7)
    fa = FedAvg(local_steps=3, local_step=0.1, server_step=0.7)
    rng = np.random.default_rng(0)
    s1, _ = sc.round(problem, sc.init(problem, np.zeros(problem.dim)), rng)
    s2, _ = fa.round(problem, fa.init(problem, np.zeros(problem.dim)), rng)
    np.testing.assert_allclose(s1.x, s2.x, rtol=1e-14, atol=1e-15)


def test_feddyn_kkt_reading_stores_true_gradients(problem):
    alg = FedDyn(alpha=2.0, l1=0.2, sign_at_zero="kkt", participation=UniformSubset(3))
    state = alg.init(problem, np.zeros(problem.dim))
    rng = np.random.default_rng(3)
    touched = np.zeros(problem.n_clients, dtype=bool)
    for _ in range(6):
        new, _ = alg.round(problem, state, rng)
        S = new.last_clients
        touched[S] = True
        theta = new.x * 0 + state.x + new.last_upload  # theta_i = x^{t-1} + Delta_i
        np.testing.assert_allclose(new.G[S], problem.grads(theta, S), atol=1e-12)
        # The implied sub-gradient s lies in [-1, 1] and equals sign(Delta) where Delta != 0.
        s = (state.G[S] - new.G[S] - alg.alpha * new.last_upload) / alg.l1
        assert np.all(np.abs(s) <= 1 + 1e-9)
        nz = new.last_upload != 0
        np.testing.assert_allclose(s[nz], np.sign(new.last_upload[nz]), atol=1e-9)
        state = new
    assert touched.any()


def test_feddyn_printed_reading_uses_sign_with_sign_zero_zero(problem):
    alg = FedDyn(alpha=2.0, l1=0.5)
    state = alg.init(problem, np.zeros(problem.dim))
    new, _ = alg.round(problem, state, np.random.default_rng(0))
    expected = state.G - alg.alpha * new.last_upload - alg.l1 * np.sign(new.last_upload)
    np.testing.assert_allclose(new.G, expected, rtol=0, atol=1e-15)


# ----- threshold and communication accounting -----

def test_threshold_is_inclusive():
    v = np.array([[0.1, -0.1, 0.2, 0.0, -0.3]])
    np.testing.assert_array_equal(threshold(v, 0.1), [[0.0, 0.0, 0.2, 0.0, -0.3]])


def test_vector_bits_is_the_cheaper_encoding():
    d = 100  # index costs ceil(log2 100) = 7 bits
    assert vector_bits(100, d) == 64 * 100
    assert vector_bits(10, d) == 10 * (64 + 7)
    assert vector_bits(0, d) == 0


@pytest.mark.parametrize("make", [
    lambda eps: FedAvg(local_steps=3, local_step=0.1, threshold=eps),
    lambda eps: FedProx(prox=1.0, l1=0.05, threshold=eps),
    lambda eps: Scaffold(local_steps=3, local_step=0.1, threshold=eps),
    lambda eps: FedDyn(alpha=1.0, l1=0.05, threshold=eps),
])
def test_uplink_nnz_counts_the_sent_vectors_and_decreases_with_eps(problem, make):
    previous = None
    for eps in (0.0, 1e-3, 1e-2, 1e-1, 1e3):
        alg = make(eps)
        state = alg.init(problem, np.full(problem.dim, 0.5))
        new, log = alg.round(problem, state, np.random.default_rng(0))
        sent = new.last_upload
        assert np.all((sent == 0) | (np.abs(sent) > eps))
        expected = np.count_nonzero(sent)
        if isinstance(alg, Scaffold):
            dc = new.C[new.last_clients] - state.C[new.last_clients]
            expected += np.count_nonzero(dc)
            assert log.vectors_up == 2 * new.last_clients.size and log.vectors_down == 2 * new.last_clients.size
        else:
            assert log.vectors_up == new.last_clients.size
        assert log.uplink_nnz == expected
        nnz_delta = np.count_nonzero(sent)
        if previous is not None:
            assert nnz_delta <= previous
        previous = nnz_delta
    assert previous == 0  # eps = 1e3 zeroes every coordinate


def test_fedavg_with_everything_thresholded_does_not_move(problem):
    alg = FedAvg(local_steps=3, local_step=0.1, threshold=1e6)
    x0 = np.full(problem.dim, 0.3)
    new, log = alg.round(problem, alg.init(problem, x0), np.random.default_rng(0))
    np.testing.assert_array_equal(new.x, x0)
    assert log.uplink_nnz == 0 and log.uplink_bits == 0


def test_scaffnew_skipped_communication_is_free(problem):
    alg = Scaffnew(step=0.2, p=0.3)
    state = alg.init(problem, np.zeros(problem.dim))
    rng = np.random.default_rng(0)
    seen = {True: 0, False: 0}
    for _ in range(40):
        draw = alg.draw(problem, state, rng)
        state, log = alg.round_given(problem, state, draw)
        seen[draw.coin] += 1
        assert log.communicated == draw.coin
        assert log.local_grad_evals == problem.n_clients
        if draw.coin:
            assert log.vectors_up == problem.n_clients and log.uplink_bits == 64 * problem.dim * problem.n_clients
        else:
            assert log.uplink_bits == 0 and log.downlink_bits == 0 and log.vectors_up == 0
    assert seen[True] > 0 and seen[False] > 0
    probs = {d.coin: p for d, p in alg.outcomes(problem, state)}
    assert probs == {True: 0.3, False: pytest.approx(0.7)}


def test_empty_bernoulli_round_changes_nothing(problem):
    from fedtheory.algorithms import Draw

    for alg in (FedAvg(participation=Bernoulli(0.5)), Scaffold(participation=Bernoulli(0.5)),
                FedDyn(participation=Bernoulli(0.5))):
        state = alg.init(problem, np.ones(problem.dim))
        new, log = alg.round_given(problem, state, Draw(clients=np.zeros(0, dtype=np.int64)))
        np.testing.assert_array_equal(new.x, state.x)
        assert not log.communicated and log.uplink_bits == 0


def test_upload_metrics_hook_lands_in_the_trace(problem):
    alg = FedProx(prox=1.0, l1=0.05, upload_metrics=lambda U: {"upload_l1": float(np.abs(U).sum())})
    trace = run(alg, problem, 5, seed=0)
    assert np.all(np.isfinite(trace.extra["upload_l1"][1:]))
    state = alg.init(problem, np.zeros(problem.dim))
    new, log = alg.round(problem, state, np.random.default_rng(0))
    assert log.extra["upload_l1"] == pytest.approx(float(np.abs(new.last_upload).sum()))


def test_local_sgd_is_reproducible_from_the_draw(problem):
    noisy = problem.with_noise(0.5)
    alg = FedAvg(local_steps=3, local_step=0.1, stochastic=True, participation=UniformSubset(2))
    state = alg.init(noisy, np.zeros(noisy.dim))
    draw = alg.draw(noisy, state, np.random.default_rng(4))
    a, _ = alg.round_given(noisy, state, draw)
    b, _ = alg.round_given(noisy, state, draw)
    np.testing.assert_array_equal(a.x, b.x)
    with pytest.raises(ValueError, match="stochastic"):
        list(alg.outcomes(noisy, state))


@settings(max_examples=_examples(15))
@given(st.integers(2, 6), st.integers(1, 6), st.floats(0.05, 1.0))
def test_weighted_scaffold_keeps_c_equal_to_weighted_mean(n, size, p):
    size = min(size, n)
    w = np.linspace(1.0, 3.0, n)
    base = quadratic(n, 3, mu=0.2, L=2.0, delta_B=0.5, zeta2=1.0, weights=w, seed=n)
    for scheme in (UniformSubset(size), Bernoulli(p)):
        alg = Scaffold(local_steps=2, local_step=0.1, participation=scheme)
        state = alg.init(base, np.zeros(3))
        rng = np.random.default_rng(0)
        for _ in range(10):
            state, _ = alg.round(base, state, rng)
            np.testing.assert_allclose(state.c, base.weights @ state.C, atol=1e-13)


@pytest.mark.parametrize("block_bytes", [200, 300])  # 1 and 2 clients per block at d = 4 (128 bytes each)
@pytest.mark.parametrize("mode", ["subgradient", "proximal", "plain"])
def test_cache_blocked_local_gd_is_bitwise_the_stacked_schedule(problem, monkeypatch, block_bytes, mode):
    import fedtheory.local.gd as lgd

    rng = np.random.default_rng(2)
    X0 = rng.standard_normal((problem.n_clients, problem.dim))
    lin, center = rng.standard_normal(X0.shape), rng.standard_normal(X0.shape)
    if mode == "plain":  # FedAvg's local step: no linear, proximal or l1 term
        lin, center = np.zeros_like(X0), np.zeros_like(X0)
        kwargs = dict(steps=6, step_size=0.1)
    else:
        kwargs = dict(steps=6, step_size=0.1, lin=lin, prox=0.5, center=center, l1=0.1, l1_mode=mode)
    monkeypatch.setattr(lgd, "BLOCK_BYTES", 10**12)  # never blocked
    assert not lgd._blockable(problem, None, problem.n_clients)
    stacked = local_gd(problem, X0, **kwargs)
    monkeypatch.setattr(lgd, "BLOCK_BYTES", block_bytes)
    assert lgd._blockable(problem, None, problem.n_clients)
    blocked = local_gd(problem, X0, **kwargs)
    np.testing.assert_array_equal(blocked.X, stacked.X)
    assert blocked.grad_evals == stacked.grad_evals
    prox, l1 = (0.0, 0.0) if mode == "plain" else (0.5, 0.1)
    ref = _loop_reference(problem, X0, np.arange(problem.n_clients), 6, 0.1, lin, prox, center, l1,
                          "subgradient" if mode == "plain" else mode)
    np.testing.assert_allclose(blocked.X, ref, rtol=1e-13, atol=1e-13)


def _families():
    from fedtheory.problems.logistic import logistic
    from fedtheory.problems.nonconvex import nonconvex

    return {"quadratic_diagonal": quadratic(5, 4, mu=0.2, L=2.0, delta_B=0.5, zeta2=1.0, hessians="diagonal", seed=0),
            "logistic_minibatch": logistic("synthetic", 4, dim=5, reg=0.1, samples=[20] * 4, batch_size=5, seed=0),
            "nonconvex": nonconvex(4, 5, seed=0)}


@pytest.mark.parametrize("family", ["quadratic_diagonal", "logistic_minibatch", "nonconvex"])
def test_every_classic_algorithm_runs_on_every_problem_family(family):
    problem = _families()[family]
    L = problem.certificate.L
    algs = [FedAvg(local_steps=3, local_step=0.5 / L, participation=UniformSubset(2), stochastic=True),
            FedProx(prox=L, l1=0.01), FedProx(prox=L, l1=0.01, solver="gd", local_steps=3),
            Scaffold(local_steps=3, local_step=0.2 / L, participation=Bernoulli(0.5), stochastic=True),
            FedDyn(alpha=L, l1=0.01, sign_at_zero="kkt"), FedDyn(alpha=L, solver="gd", local_steps=3),
            Scaffnew(step=1.0 / L, p=0.5, stochastic=True)]
    for alg in algs:
        trace = run(alg, problem, 30, seed=0)
        assert trace.status == "completed", (alg, trace.status)
        assert np.all(np.isfinite(trace.x_final))
        # every one of these methods decreases the distance to x* from the start on these problems
        assert trace.dist2[-1] < trace.dist2[0], alg
