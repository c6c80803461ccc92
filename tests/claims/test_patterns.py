"""The shared check shapes (fedtheory.claims.patterns) and the outcome laws they enumerate."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from fedtheory.algorithms.dane import DANEPlus
from fedtheory.algorithms.fedavg import FedAvg
from fedtheory.algorithms.fedred import FedRed, FedRedDraw
from fedtheory.algorithms.gd import GradientDescent
from fedtheory.claims.patterns import expectation, fixed_point_move, relative_error, trajectory
from fedtheory.participation import Bernoulli
from fedtheory.problems.quadratic import quadratic


@pytest.fixture(scope="module")
def problem():
    return quadratic(n_clients=3, dim=2, mu=0.5, L=2.0, delta_A=0.3, zeta2=1.0, weights=(0.2, 0.3, 0.5), seed=1)


def test_expectation_of_fedred_is_the_coin_mixture(problem):
    """p f(communicate) + (1 - p) f(skip), written out by hand."""
    alg = FedRed(lam=1.0, eta=0.2, p=0.3)
    state = alg.init(problem, np.array([1.0, -2.0]))
    by_hand = (0.3 * alg.round_given(problem, state, FedRedDraw(True))[0].x
               + 0.7 * alg.round_given(problem, state, FedRedDraw(False))[0].x)
    assert relative_error(expectation(alg, problem, state, lambda s: s.x), by_hand) <= 1e-15


def test_expectation_of_bernoulli_fedavg_matches_the_closed_form(problem):
    """FedAvg, Bernoulli(q) participation, normalize='all': E[x+] = x + q sum_i w_i Delta_i."""
    full = FedAvg(local_steps=2, local_step=0.1)
    part = FedAvg(local_steps=2, local_step=0.1, participation=Bernoulli(0.4), normalize="all")
    state = full.init(problem, np.array([1.0, 1.0]))
    delta = full.round(problem, state, np.random.default_rng(0))[0].x - state.x
    assert relative_error(expectation(part, problem, state, lambda s: s.x), state.x + 0.4 * delta) <= 1e-14


@pytest.mark.parametrize("alg", [FedRed(lam=1.0, p=0.4, selection="random"), DANEPlus(lam=1.0, averaging="random")])
def test_outcome_laws_match_draw_frequencies(problem, alg):
    """outcomes() is the exact law of draw(): 20000 draws land within 5 standard errors of it."""
    state = alg.init(problem, np.zeros(2))
    law = {(getattr(d, "communicate", True), d.client): p for d, p in alg.outcomes(problem, state)}
    assert sum(law.values()) == pytest.approx(1.0, abs=1e-15)
    rng = np.random.default_rng(3)
    n = 20000
    counts = Counter()
    for _ in range(n):
        d = alg.draw(problem, state, rng)
        counts[(getattr(d, "communicate", True), d.client)] += 1
    assert set(counts) <= set(law)
    for key, p in law.items():
        assert abs(counts[key] / n - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12


def test_outcomes_refuse_unenumerable_noise():
    with pytest.raises(ValueError, match="stochastic"):
        next(FedRed(lam=1.0, stochastic=True).outcomes(None, None))


def test_trajectory_stops_at_the_floor(problem):
    """GD contracts the gap geometrically: the run stops once the potential is below floor times its start."""
    alg = GradientDescent()
    gap = lambda s: problem.gap(s.x)  # noqa: E731
    start = alg.init(problem, np.array([3.0, -1.0]))
    states = list(trajectory(alg, problem, start, 10_000, np.random.default_rng(0), potential=gap, floor=1e-6))
    assert 1 < len(states) < 10_000
    assert all(gap(s) > 1e-6 * gap(start) for s in states)
    last = alg.round(problem, states[-1], np.random.default_rng(0))[0]
    assert gap(last) <= 1e-6 * gap(start)
    assert len(list(trajectory(alg, problem, start, 5, np.random.default_rng(0)))) == 5


def test_fixed_point_move(problem):
    xs = problem.certificate.x_star
    alg = FedRed(lam=1.0, p=0.5, selection="random")
    assert fixed_point_move(alg, problem, alg.init(problem, xs)) <= 1e-13
    assert fixed_point_move(alg, problem, alg.init(problem, xs + 1.0)) > 1e-3


def test_relative_error():
    assert relative_error(np.array([1.0, 2.0]), np.array([1.0, 2.5])) == pytest.approx(0.5 / 2.5)
    assert relative_error(np.array([1e-3]), np.array([0.0])) == pytest.approx(1e-3)  # small states: absolute


def test_run_failure_names_the_divergence_round_and_a_missed_target():
    """A run whose gradient step is 3/L diverges (|1 - 3| = 2 > 1 along the top eigenvector): the reason names
    the round the run stopped at; a converging run without a target has none, and with too few rounds to reach
    its tol it is a missed target."""
    from fedtheory.claims.patterns import run_failure
    from fedtheory.run import run

    GD = GradientDescent

    problem = quadratic(n_clients=2, dim=3, mu=1.0, L=10.0, seed=0)
    x0 = np.ones(problem.dim)
    diverged = run(GD(step=3.0 / problem.certificate.L), problem, 500, x0=x0)
    assert diverged.status == "diverged"
    assert run_failure(diverged, "GD") == f"GD diverged at round {diverged.stopped_at}"
    fine = run(GD(step=1.0 / problem.certificate.L), problem, 5, x0=x0)
    assert fine.status == "completed" and run_failure(fine, "GD") is None
    short = run(GD(step=1.0 / problem.certificate.L), problem, 5, x0=x0, tol=1e-30)
    assert run_failure(short, "GD", need_target=True) == "GD did not reach its target in 5 rounds"
