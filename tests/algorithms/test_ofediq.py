"""Online problems (fedtheory.problems.online) and the online algorithms (FedOGD, OFedAvg, OFedIQ)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.algorithms.ofediq import FedOGD, OFedAvg, OFedIQ, OnlineDraw
from fedtheory.compressors.sb_quantizer import SBQuantizer
from fedtheory.problems.online import OnlineProblem, online_from_dataset, online_logistic, online_ridge
from fedtheory.problems.quadratic import quadratic
from fedtheory.run import run


def _direct_min(problem: OnlineProblem, h: int) -> tuple[np.ndarray, float]:
    """Independent hindsight minimiser of a prefix by scipy (BFGS on the summed losses)."""
    from scipy.optimize import minimize

    def f(w):
        return float(problem.sample_losses(w, h).sum()), problem.sample_grads(w, h).sum(axis=(0, 1))

    res = minimize(f, np.zeros(problem.dim), jac=True, method="BFGS", options={"gtol": 1e-10, "maxiter": 1000})
    return res.x, float(res.fun)


@given(K=st.integers(1, 6), T=st.integers(1, 30), D=st.integers(1, 5), het=st.floats(0, 3), drift=st.floats(0, 2),
       seed=st.integers(0, 10**6), loss=st.sampled_from(["ridge", "logistic"]))
def test_prefix_comparators_are_minimisers(K, T, D, het, drift, seed, loss):
    maker = online_ridge if loss == "ridge" else online_logistic
    problem = maker(K, T, D, heterogeneity=het, drift=drift, seed=seed)
    W = problem.prefix_minimizers
    for h in sorted({1, (T + 1) // 2, T}):
        G = problem.sample_grads(W[h - 1], h).sum(axis=(0, 1))
        scale = max(1.0, float(np.abs(problem.sample_grads(np.zeros(D), h)).sum()))
        assert np.linalg.norm(G) <= 1e-9 * scale
        # hindsight value and Definition 1 agree with direct evaluation at the comparator
        direct = float(problem.sample_losses(W[h - 1], h).sum())
        assert problem.prefix_min_values[h - 1] == pytest.approx(direct, rel=1e-10, abs=1e-12)
        assert problem.sigma2_diff(h) == pytest.approx(problem.sigma2_diff(h, W[h - 1]), rel=1e-8, abs=1e-12)
        # no other point does better (strong convexity through lam > 0)
        _, fun = _direct_min(problem, h)
        assert direct <= fun + 1e-9 * max(1.0, abs(fun))


def test_ridge_closed_form_minimum_matches_direct_sum():
    problem = online_ridge(4, 60, 3, heterogeneity=1.0, seed=3)
    assert np.allclose(problem._prefix[1], problem._ridge_min_values_direct, rtol=1e-10)


def test_hindsight_static_view_and_metrics():
    problem = online_ridge(5, 40, 4, heterogeneity=1.0, seed=1)
    x = np.random.default_rng(0).standard_normal(4)
    m = problem.metrics(x)
    assert m["gap"] == pytest.approx(problem.value(x) - problem.certificate.f_star, rel=1e-9)
    assert m["grad_norm2"] == pytest.approx(float(problem.grad(x) @ problem.grad(x)), rel=1e-9)
    assert np.allclose(problem.certificate.x_star, problem.comparator(), atol=1e-12)
    # f_k = (1/T) sum_t L_{k,t}
    W = np.random.default_rng(1).standard_normal((5, 4))
    manual = np.mean([problem.losses_at(t, W) for t in range(40)], axis=0)
    assert np.allclose(problem.values(W), manual, rtol=1e-12)


@pytest.mark.parametrize("name", ["breast_cancer", "digits"])
@pytest.mark.parametrize("loss", ["ridge", "logistic"])
def test_datasets_stream_and_smoothness(name, loss):
    problem = online_from_dataset(name, 4, 15, loss=loss, heterogeneity=0.7, drift=0.5, seed=2)
    assert problem.features.shape[:2] == (15, 4)
    assert problem.beta <= (1.0 if loss == "ridge" else 0.25) + problem.lam + 1e-12
    again = online_from_dataset(name, 4, 15, loss=loss, heterogeneity=0.7, drift=0.5, seed=2)
    assert again.features.tobytes() == problem.features.tobytes()
    if loss == "logistic":
        assert set(np.unique(problem.labels)) <= {-1.0, 1.0}


def test_heterogeneity_raises_sigma2_diff():
    s = [online_ridge(10, 100, 4, heterogeneity=h, noise=0.0, seed=5).sigma2_diff() for h in (0.0, 3.0)]
    assert s[1] > s[0]


@pytest.mark.parametrize("bad", [
    dict(features=np.zeros((3, 2)), labels=np.zeros((3, 2))),
    dict(features=np.zeros((3, 2, 2)), labels=np.zeros((3, 1))),
    dict(features=np.zeros((3, 2, 2)), labels=np.zeros((3, 2)), loss="hinge"),
    dict(features=np.zeros((3, 2, 2)), labels=np.ones((3, 2)), loss="logistic", lam=0.0),
    dict(features=np.zeros((3, 2, 2)), labels=np.full((3, 2), 0.5), loss="logistic", lam=0.1),
    dict(features=np.zeros((3, 2, 2)), labels=np.zeros((3, 2)), lam=-1.0),
])
def test_bad_problem_input(bad):
    with pytest.raises((ValueError, TypeError)):
        OnlineProblem(**bad)


def test_time_index_out_of_range():
    problem = online_ridge(2, 5, 2, seed=0)
    with pytest.raises(ValueError, match="t must be"):
        problem.grads_at(5, np.zeros(2))
    # more rounds than the stream has steps: the error names the argument the user gave (rounds), not t
    with pytest.raises(ValueError, match=r"rounds must be in \[0, 5\].*T = 5 steps.*got rounds=6"):
        run(FedOGD(eta=0.01), problem, 6)


# ----------------------------------------------------------------------------------------------- algorithms
def test_regret_in_trace_matches_independent_accounting():
    problem = online_ridge(4, 50, 3, heterogeneity=1.0, seed=4)
    alg = OFedIQ(eta=0.05, p=0.5, period=2, s=2, b=2)
    tr = run(alg, problem, 50, seed=3)
    losses = np.diff(np.concatenate([[0.0], tr.cum_loss[1:]]))
    assert np.allclose(tr.regret[1:], problem.regret(losses), rtol=1e-12, atol=1e-12)
    assert tr.time[-1] == 50


def test_same_seed_same_numbers_and_different_seeds_differ():
    problem = online_logistic(5, 30, 3, heterogeneity=1.0, seed=1)
    alg = OFedIQ(p=(0.2, 0.4, 0.6, 0.8, 1.0), s=3, b=3)
    a, b, c = (run(alg, problem, 30, seed=s) for s in (1, 1, 2))
    assert a.same_numbers(b) and not a.same_numbers(c)


def test_static_problem_is_a_constant_stream():
    problem = quadratic(4, 3, mu=0.5, L=2.0, delta_B=0.3, zeta2=1.0, seed=0)
    tr = run(FedOGD(eta=0.2), problem, 200, seed=0)
    assert tr.gap[-1] < 1e-10 * tr.gap[0]
    # regret against x* is the running sum of n (f(w_t) - f*)
    assert tr.regret[1] == pytest.approx(problem.n_clients * tr.gap[0], rel=1e-10)


def test_special_cases_share_the_implementation():
    problem = online_ridge(3, 20, 2, seed=2)
    a = run(OFedAvg(eta=0.05, p=0.4), problem, 20, seed=5)
    b = run(OFedIQ(eta=0.05, p=0.4), problem, 20, seed=5)
    assert a.x_final.tobytes() == b.x_final.tobytes()
    assert OFedAvg(p=0.4).p == 0.4


def test_round_given_enumeration_of_coins():
    problem = online_ridge(3, 4, 2, seed=0)
    alg = OFedIQ(eta=0.1, p=(0.5, 0.5, 1.0))
    state = alg.init(problem, np.zeros(2))
    s_none, log = alg.round_given(problem, state, OnlineDraw(np.array([False, False, False]), None))
    assert np.array_equal(s_none.x, state.x) and log.uplink_bits == 0 and log.participants == 0
    s_all, log = alg.round_given(problem, state, OnlineDraw(np.array([True, True, True]), None))
    assert log.uplink_bits == 3 * 32 * 2
    # full participation with importance weights 1/p_k: w - eta/K sum_k grad_k / p_k
    g = problem.grads_at(0, np.zeros((3, 2)))
    assert np.allclose(s_all.x, -0.1 / 3 * (g / np.array([0.5, 0.5, 1.0])[:, None]).sum(axis=0), atol=1e-15)


@pytest.mark.parametrize("kwargs, param", [
    (dict(eta=0.0), "eta"), (dict(eta=-1.0), "eta"), (dict(p=0.0), "p"), (dict(p=1.5), "p"),
    (dict(p=(0.5, 1.2)), "p[1]"), (dict(period=0), "period"), (dict(s=0), "s"), (dict(s=2, b=0), "b"),
    (dict(b=2), "b"), (dict(p=()), "p"),
])
def test_bad_hyperparameters(kwargs, param):
    with pytest.raises((ValueError, TypeError), match=param.replace("[", r"\[").replace("]", r"\]")):
        OFedIQ(**kwargs)


def test_bad_hyperparameters_needing_the_problem():
    problem = online_ridge(3, 5, 4, seed=0)
    with pytest.raises(ValueError, match="b must be in"):
        OFedIQ(s=2, b=5).init(problem, np.zeros(4))
    with pytest.raises(ValueError, match="p has 2 entries"):
        OFedIQ(p=(0.5, 0.5)).init(problem, np.zeros(4))
    with pytest.raises(ValueError, match="eta"):
        FedOGD(eta=-0.1)
    with pytest.raises(ValueError, match="p"):
        OFedAvg(p=0.0)


# ----------------------------------------------------------------------------------------------- quantizer
@pytest.mark.parametrize("kwargs, param", [(dict(s=0), "s"), (dict(b=0), "b"), (dict(s=1.5), "s")])
def test_quantizer_bad_parameters(kwargs, param):
    with pytest.raises((ValueError, TypeError), match=param):
        SBQuantizer(**kwargs)


def test_quantizer_b_larger_than_D():
    with pytest.raises(ValueError, match=r"b must be in \[1, D\]"):
        SBQuantizer(s=2, b=4).compress(np.ones((2, 3)), np.random.default_rng(0))
    with pytest.raises(ValueError, match="b must be in"):
        SBQuantizer(s=2, b=4).omega(3)


@given(D=st.integers(1, 40), s=st.integers(1, 20), data=st.data())
def test_quantizer_exact_expectation_and_variance_by_enumeration(D, s, data):
    """Exact E[Q(u)] and E||Q(u)-u||^2 from the two-point law, against the implementation's apply()."""
    b = data.draw(st.integers(1, D))
    u = np.array(data.draw(st.lists(st.floats(-1e3, 1e3), min_size=D, max_size=D)))
    q = SBQuantizer(s, b)
    norms, r, m, p_up = q.decompose(u)
    lo = q.apply(u, np.ones((1, D)))   # U = 1: never round up
    hi = q.apply(u, np.zeros((1, D)))  # U = 0: round up wherever p_up > 0
    mean = (1 - p_up) * lo + p_up * hi
    assert np.allclose(mean[0], u, rtol=1e-12, atol=1e-12 * (1 + np.abs(u).max()))
    var = float(np.sum((1 - p_up) * (lo - u) ** 2 + p_up * (hi - u) ** 2))
    assert var == pytest.approx(float(q.variance(u)[0]), rel=1e-9, abs=1e-9 * float(u @ u) + 1e-300)
    assert var <= q.omega(D) * float(u @ u) * (1 + 1e-12) + 1e-300
