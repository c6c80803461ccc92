"""DANE / DANE+ / FedRed(-GD/-SGD) and the batched local (fast) GD: updates, exact expectations, accounting.

Reference: Jiang, Rodomanov & Stich (2024), Algs. 1-3, Sections 3-4 and Appendix B.3.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.algorithms.dane import DANE, DANEDraw, DANEPlus
from fedtheory.algorithms.fedred import FedRed, FedRedDraw
from fedtheory.algorithms.gd import GradientDescent
from fedtheory.local.fgd import StopRule, local_descent, prox_linear_descent
from fedtheory.problems.quadratic import quadratic
from fedtheory.run import run
from fedtheory.strategies import quadratic_params


def _problem(seed=0, **kw):
    base = dict(n_clients=6, dim=5, mu=0.5, L=20.0, delta_A=1.0, zeta2=1.0, seed=seed)
    base.update(kw)
    return quadratic(**base)


def _dense(problem):
    A = problem.A
    return A if A.ndim == 3 else np.einsum("nd,de->nde", A, np.eye(problem.dim))


# ------------------------------------------------------------------------------------------------------
# DANE / DANE+
# ------------------------------------------------------------------------------------------------------

@given(quadratic_params(max_clients=6, max_dim=5, dissimilarity="delta_A"), st.floats(0.05, 10.0))
def test_dane_round_is_preconditioned_gradient_step(kw, lam):
    problem = quadratic(**kw)
    d = problem.dim
    M = np.tensordot(problem.weights, np.linalg.inv(_dense(problem) + lam * np.eye(d)), axes=1)
    x = np.random.default_rng(kw["seed"] % 1000).standard_normal(d)
    alg = DANE(lam=lam)
    new, log = alg.round(problem, alg.init(problem, x), np.random.default_rng(0))
    ref = x - M @ problem.grad(x)
    assert np.linalg.norm(new.x - ref) <= 1e-10 * max(1.0, np.linalg.norm(x), np.linalg.norm(ref))
    assert log.local_grad_evals == problem.n_clients  # only the control variate's gradients


@given(quadratic_params(max_clients=5, max_dim=4, dissimilarity="delta_A"), st.floats(0.1, 5.0))
def test_random_averaging_is_unbiased_for_standard_averaging(kw, lam):
    """E_xi[x_{xi,r+1}] = sum_i w_i x_{i,r+1}: enumerate every client exactly (no Monte Carlo)."""
    problem = quadratic(**kw)
    x = np.ones(problem.dim)
    std = DANEPlus(lam=lam)
    rnd = DANEPlus(lam=lam, averaging="random")
    target = std.round(problem, std.init(problem, x), np.random.default_rng(0))[0].x
    state = rnd.init(problem, x)
    expectation = sum(w * rnd.round_given(problem, state, DANEDraw(i))[0].x for i, w in enumerate(problem.weights))
    assert np.allclose(expectation, target, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(target).max()))


def test_single_client_round_only_that_client_solves_and_uploads_its_model():
    problem = _problem()
    n = problem.n_clients
    alg = DANEPlus(lam=1.0, averaging="fixed", schedule=(2, 4), solver="gd")
    state = alg.init(problem, np.zeros(problem.dim))
    X_all, _, _, _ = alg.local_models(problem, state)
    new, log = alg.round(problem, state, np.random.default_rng(0))
    assert np.array_equal(new.x, X_all[2])
    assert log.vectors_up == n + 1 and log.vectors_down == 2 * n
    new2, _ = alg.round(problem, new, np.random.default_rng(0))
    assert np.array_equal(new2.x, alg.local_models(problem, new)[0][4])  # schedule cycles


@pytest.mark.parametrize("solver", ["gd", "fgd"])
def test_inexact_daneplus_accounting_and_relative_rule(solver):
    problem = _problem(1)
    lam = 2 * problem.certificate.delta_A
    alg = DANEPlus(lam=lam, solver=solver, tol_floor=0.0, local_steps=100000)
    state = alg.init(problem, np.ones(problem.dim))
    for r in range(4):
        X, h, evals, extra = alg.local_models(problem, state)
        new, log = alg.round(problem, state, np.random.default_rng(0))
        # the returned local models satisfy Thm 4's rule with e_r = sqrt(2) lam/(r+1)
        gradF = problem.grads(X) + h + lam * (X - state.x)
        e_r = math.sqrt(2) * lam / (r + 1)
        assert np.all(np.linalg.norm(gradF, axis=1) <= e_r * np.linalg.norm(X - state.x, axis=1))
        # n control-variate gradients, then K_i further gradients per client (the first is shared)
        assert log.local_grad_evals == evals
        assert evals >= problem.n_clients + extra["local_steps_max"]
        state = new


def test_fgd_needs_fewer_local_steps_than_gd_on_ill_conditioned_subproblems():
    problem = quadratic(6, 8, mu=0.01, L=100.0, delta_A=0.05, zeta2=1.0, seed=3)
    runs = {s: run(DANEPlus(solver=s), problem, 5, x0=np.ones(8)) for s in ("gd", "fgd")}
    assert runs["fgd"].local_grad_evals.sum() < runs["gd"].local_grad_evals.sum() / 3


def test_absolute_rule_with_summable_tolerance_converges_and_constant_tolerance_plateaus():
    """Thm 3: summable e_r = e_0/(r+1)^2 converges; a constant tolerance stalls at a level ~ the tolerance."""
    problem = _problem(2)
    x0 = problem.certificate.x_star + np.ones(problem.dim)
    summable = run(DANEPlus(solver="gd", stopping="absolute", tol=1e-2, tol_decay=2.0), problem, 80, x0=x0)
    plateau = {tol: run(DANEPlus(solver="gd", stopping="absolute", tol=tol, tol_floor=0.0), problem, 80, x0=x0)
               for tol in (1e-1, 1e-3)}
    # summable tolerances: still decreasing (dist ~ e_r ~ 1/r^2, so dist2 drops ~16x from r=40 to 80)
    assert summable.dist2[80] <= summable.dist2[40] / 8
    assert summable.dist2[80] < plateau[1e-3].dist2[80]
    for tr in plateau.values():  # constant tolerance: x^r stops moving once ||grad f(x^r)|| <= tol
        # (averaging n copies of x^r moves it by ulps of ||x^r||, i.e. ~1e-12 of a 1e-4 distance)
        assert tr.dist2[80] > 0 and abs(tr.dist2[80] - tr.dist2[60]) <= 1e-9 * tr.dist2[60]
    # ... at a level growing with the tolerance (||x - x*|| ~ tol / mu, so dist2 ~ tol^2)
    assert plateau[1e-1].dist2[80] > 100 * plateau[1e-3].dist2[80]


def test_cor2_fixed_steps_return_min_gradient_iterate():
    rng = np.random.default_rng(0)
    m, d = 4, 3
    H = np.stack([np.diag(rng.uniform(1, 10, d)) for _ in range(m)])

    def grad(Y, rows):
        return np.einsum("nij,nj->ni", H[rows], Y) - 1.0

    X0 = rng.standard_normal((m, d))
    res = local_descent(grad, X0, np.full(m, 0.19), np.zeros(m), StopRule("steps"), 7)
    # recompute every GD iterate and pick the min-gradient one per row
    Y = X0.copy()
    path = [Y.copy()]
    for _ in range(7):
        Y = Y - 0.19 * grad(Y, np.arange(m))
        path.append(Y.copy())
    path = np.stack(path)  # (8, m, d)
    gn = np.stack([np.linalg.norm(grad(P, np.arange(m)), axis=1) for P in path])
    idx = gn.argmin(axis=0)
    assert np.array_equal(res.X, path[idx, np.arange(m)])
    assert np.all(res.steps == 7) and np.all(res.grad_evals == 8) and np.all(res.converged)


def test_local_gd_with_zero_momentum_is_plain_gd():
    problem = _problem(4)
    lin = np.random.default_rng(1).standard_normal((6, 5))
    center = np.zeros((6, 5))
    res = prox_linear_descent(problem, lin, center, 0.7, np.zeros((6, 5)), rule=StopRule("steps"), max_steps=5)
    Y = np.zeros((6, 5))
    s = 1.0 / (problem.certificate.L_i + 0.7)
    path = [Y]
    for _ in range(5):
        Y = Y - s[:, None] * (problem.grads(Y) + lin + 0.7 * (Y - center))
        path.append(Y)
    # the min-gradient iterate of a monotone GD on a strongly convex quadratic is the last one
    assert np.allclose(res.X, path[-1], rtol=1e-13, atol=1e-13)


def test_cv_b84_preserves_zero_sum_and_needs_standard_averaging():
    problem = _problem(5)
    alg = DANEPlus(lam=3.0, control_variate="scaffnew")
    tr = run(alg, problem, 30, x0=np.ones(problem.dim))
    assert np.abs(problem.weights @ tr.state.h).max() <= 1e-12 * max(1.0, np.abs(tr.state.h).max())
    assert tr.vectors_up[1] == problem.n_clients and tr.vectors_down[1] == problem.n_clients
    with pytest.raises(ValueError, match="control_variate"):
        DANEPlus(control_variate="scaffnew", averaging="random")


@pytest.mark.parametrize("kwargs,param", [({"lam": -1}, "lam"), ({"tol": -1.0}, "tol"), ({"local_steps": -2},
                                          "local_steps"), ({"solver": "newton"}, "solver"), ({"m": 0.0}, "m")])
def test_daneplus_validation_names_parameter(kwargs, param):
    with pytest.raises((ValueError, TypeError), match=param):
        DANEPlus(**kwargs)


def test_dane_refuses_daneplus_options():
    with pytest.raises(ValueError, match="solver"):
        DANE(solver="gd")


def test_exact_dane_does_not_refactorise(monkeypatch):
    """Exact rounds go through the cached eigendecomposition: no eigh/inv/solve per round."""
    problem = _problem(6)
    alg = DANE()
    state = alg.init(problem, np.ones(problem.dim))
    state, _ = alg.round(problem, state, np.random.default_rng(0))  # warm the cache
    calls = []
    for name in ("eigh", "inv", "solve", "cholesky"):
        orig = getattr(np.linalg, name)
        monkeypatch.setattr(np.linalg, name, lambda *a, _o=orig, _n=name, **k: (calls.append(_n), _o(*a, **k))[1])
    for _ in range(3):
        state, _ = alg.round(problem, state, np.random.default_rng(0))
    assert calls == []


# ------------------------------------------------------------------------------------------------------
# FedRed
# ------------------------------------------------------------------------------------------------------

@given(quadratic_params(max_clients=5, max_dim=4, dissimilarity="delta_A"), st.floats(0.0, 5.0),
       st.floats(0.05, 1.0))
def test_fedred_p1_is_gd_with_shrunk_step(kw, lam, eta_L):
    problem = quadratic(**kw)
    eta = eta_L / problem.certificate.L
    x0 = np.ones(problem.dim)
    tr = run(FedRed(lam=lam, eta=eta, p=1.0), problem, 8, x0=x0)
    gd = run(GradientDescent(step=eta / (1 + lam * eta)), problem, 8, x0=x0)
    assert np.linalg.norm(tr.x_final - gd.x_final) <= 1e-11 * max(1.0, np.linalg.norm(gd.x_final))


@given(quadratic_params(max_clients=5, max_dim=4, dissimilarity="delta_A"), st.floats(0.01, 1.0),
       st.booleans())
def test_fedred_expected_reference_point_exactly(kw, p, reset):
    """E_theta[x~_{k+1}] = p xbar_{k+1} + (1-p) x~_k, computed from both coin outcomes."""
    problem = quadratic(**kw)
    alg = FedRed(lam=1.0, eta=0.5 / problem.certificate.L, p=p, reset=reset)
    state = alg.init(problem, np.ones(problem.dim))
    state = alg.round_given(problem, state, FedRedDraw(False))[0]
    comm = alg.round_given(problem, state, FedRedDraw(True))[0]
    stay = alg.round_given(problem, state, FedRedDraw(False))[0]
    xbar = problem.weights @ stay.X
    assert np.allclose(comm.x, xbar, rtol=1e-12, atol=1e-13)
    assert np.array_equal(stay.x, state.x)
    if reset:
        assert np.array_equal(comm.X, np.broadcast_to(comm.x, comm.X.shape))
    else:
        assert np.array_equal(comm.X, stay.X)


def test_fedred_gd_accounting_one_gradient_per_client_per_iteration():
    problem = _problem(7)
    n = problem.n_clients
    K = 200
    tr = run(FedRed(p=0.1), problem, K, seed=3, x0=np.ones(problem.dim))
    assert tr.local_grad_evals[1:].sum() == n * K
    m = int(tr.communicated[1:].sum())
    assert 0 < m < K
    assert tr.vectors_up[1:].sum() == 2 * n * m and tr.vectors_down[1:].sum() == 2 * n * m
    # without the reset the control-variate gradients are extra
    tr2 = run(FedRed(p=0.1, reset=False), problem, K, seed=3, x0=np.ones(problem.dim))
    assert tr2.local_grad_evals[1:].sum() == n * K + n * int(tr2.communicated[1:].sum())


def test_fedred_exact_solver_p1_inf_eta_equals_dane():
    problem = _problem(8)
    x0 = np.ones(problem.dim)
    a = run(FedRed(lam=2.0, eta=math.inf, p=1.0, solver="exact"), problem, 6, x0=x0)
    b = run(DANE(lam=2.0), problem, 6, x0=x0)
    assert np.allclose(a.x_final, b.x_final, rtol=1e-12, atol=1e-14)


def test_fedred_sgd_draws_noise_at_the_top_and_is_reproducible():
    problem = _problem(9).with_noise(0.5)
    alg = FedRed(p=0.3, stochastic=True)
    state = alg.init(problem, np.ones(problem.dim))
    draw = alg.draw(problem, state, np.random.default_rng(4))
    assert draw.grads is not None and draw.grads.shape == (problem.n_clients, problem.dim)
    a = alg.round_given(problem, state, draw)[0]
    b = alg.round(problem, state, np.random.default_rng(4))[0]
    assert np.array_equal(a.x, b.x) and np.array_equal(a.X, b.X)
    assert run(alg, problem, 30, seed=1).same_numbers(run(alg, problem, 30, seed=1))


@pytest.mark.parametrize("kwargs,param", [({"p": 0.0}, "p"), ({"p": 2.0}, "p"), ({"eta": -1.0}, "eta"),
                                          ({"eta": math.inf}, "eta"), ({"lam": -0.5}, "lam"),
                                          ({"solver": "exact", "stochastic": True}, "stochastic"),
                                          ({"selection": "max"}, "selection")])
def test_fedred_validation_names_parameter(kwargs, param):
    with pytest.raises((ValueError, TypeError), match=param):
        FedRed(**kwargs)


def test_fedred_random_selection_enumerates_exactly():
    problem = _problem(10)
    alg = FedRed(p=0.5, selection="random", lam=1.0)
    state = alg.init(problem, np.ones(problem.dim))
    state = alg.round_given(problem, state, FedRedDraw(False))[0]
    outs = [alg.round_given(problem, state, FedRedDraw(True, i))[0].x for i in range(problem.n_clients)]
    std = FedRed(p=0.5, lam=1.0).round_given(problem, state, FedRedDraw(True))[0].x
    assert np.allclose(problem.weights @ np.stack(outs), std, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("solver", ["gd", "fgd"])
def test_fedred_inexact_local_solver_approaches_exact_and_counts_gradients(solver):
    """Alg. 2 with local (F)GD: with 1/eta = L the subproblem has condition number <= 2, so 60 steps solve it
    to rounding and the iterates match the exact solver's; each client is charged K + 1 gradients per
    iteration (the start gradient is the cached control-variate one after a reset)."""
    problem = _problem(11)
    n = problem.n_clients
    kw = dict(lam=1.0, eta=1.0 / problem.certificate.L, p=0.3)
    x0 = np.ones(problem.dim)
    exact = run(FedRed(solver="exact", **kw), problem, 15, x0=x0, seed=2)
    approx = run(FedRed(solver=solver, local_steps=60, **kw), problem, 15, x0=x0, seed=2)
    assert np.allclose(approx.x_final, exact.x_final, rtol=1e-9, atol=1e-10)
    assert approx.communicated.tolist() == exact.communicated.tolist()
    m = int(approx.communicated[1:].sum())
    assert approx.local_grad_evals[1:].sum() == n * 61 * 15
    assert exact.local_grad_evals[1:].sum() == n * m
    tol = run(FedRed(solver=solver, local_steps=1000, local_tol=1e-6, **kw), problem, 3, x0=x0, seed=2)
    assert tol.local_grad_evals[1:].sum() < n * 1001 * 3


def test_sample_client_is_inverse_cdf_of_the_weights():
    """xi = i exactly on [W_{i-1}, W_i) with W the cumulative weights, so P(xi = i) = w_i."""
    from fedtheory.algorithms.dane import sample_client

    w = np.array([0.1, 0.2, 0.3, 0.4])
    W = np.cumsum(w)

    class FixedU:
        def __init__(self, u):
            self.u = u

        def random(self):
            return self.u

    lows = np.concatenate([[0.0], W[:-1]])
    for i, (lo, hi) in enumerate(zip(lows, W)):
        assert sample_client(w, FixedU(lo)) == i
        assert sample_client(w, FixedU(np.nextafter(hi, 0.0))) == i
    assert sample_client(w, FixedU(np.nextafter(1.0, 0.0))) == 3
