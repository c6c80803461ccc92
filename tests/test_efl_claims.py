"""EFL claims on hypothesis-drawn instances (the default instances run in tests/test_claims_ledger.py)."""
from __future__ import annotations

import numpy as np
from hypothesis import find, given, settings, strategies as st

from fedtheory.algorithms.efl import EFL
from fedtheory.claims import efl as C
from fedtheory.problems.quadratic import QuadraticProblem
from fedtheory.run import run
from fedtheory.theory import efl as th


@given(st.integers(1, 60), st.floats(1e-3, 1.0), st.integers(0, 2**31 - 1))
def test_st_claims_on_drawn_rows(n, q, seed):
    inst = dict(n=n, q=q, seed=seed)
    assert C.check_st_format(inst).holds
    assert C.check_st_contraction(inst).holds


@given(st.integers(1, 8), st.integers(1, 8), st.floats(0.0, 5.0), st.integers(0, 2**31 - 1))
@settings(max_examples=10)
def test_elastic_algebra_on_drawn_instances(N, d, lam, seed):
    assert C.check_elastic_algebra(dict(N=N, d=d, lam=lam, seed=seed)).holds


@st.composite
def theorem2_instances(draw, max_clients=4, max_dim=3):
    n = draw(st.integers(2, max_clients))
    d = draw(st.integers(1, max_dim))
    counts = draw(st.lists(st.integers(1, 50), min_size=n, max_size=n))
    lo = draw(st.floats(0.05, 2.0))
    hi = lo * draw(st.floats(1.0, 20.0))
    return dict(seed=draw(st.integers(0, 2**31 - 1)), n=n, d=d, counts=counts, curv=(lo, hi),
                spread=draw(st.floats(0.1, 5.0)))


@given(theorem2_instances())
def test_theorem2_departure_holds(inst):
    assert C.check_t2_departure(inst).holds
    assert C.check_t2_departure_tight(inst).holds


@given(theorem2_instances())
def test_theorem2_arrival_corrected_holds(inst):
    assert C.check_t2_arrival_corrected(inst).holds


def test_theorem2_arrival_violation_is_found_by_search():
    """Property-based search for a violation of eq. (11); the shrunk example is the recorded kind (a newcomer
    with more data than the federation)."""
    found = find(theorem2_instances(max_clients=3, max_dim=2), lambda inst: not C.check_t2_arrival(inst).holds,
                 settings=settings(max_examples=2000, derandomize=True, database=None))
    m = C.theorem2_shift(found, "arrival")
    assert m["shift2"] > th.theorem2_arrival_bound(m["L"], m["mu"], m["n_a"], m["n"], m["D_hat"])
    # The recorded minimal counterexample violates (11) by the closed-form margin 4/9 vs 16/81.
    ev = C.check_t2_arrival(C.ARRIVAL_COUNTEREXAMPLE)
    assert not ev.holds
    np.testing.assert_allclose([ev.measured, ev.theory], [4 / 9, 16 / 81], rtol=1e-12)


@given(st.floats(0.1, 100.0), st.floats(0.1, 100.0), st.floats(1.0, 1000.0))
def test_corollary1_on_drawn_constants(Cc, J, gamma):
    assert C.check_corollary1(dict(C=Cc, J=J, gamma=gamma)).holds


@given(st.integers(1, 6), st.data())
@settings(max_examples=10)
def test_assumption5_on_drawn_instances(E, data):
    s_min = data.draw(st.integers(1, E))
    n = data.draw(st.integers(1, 3))
    assert C.check_assumption5(dict(E=E, s_min=s_min, n=n, seed=data.draw(st.integers(0, 100)))).holds


@given(st.integers(0, 10**6))
@settings(max_examples=3)
def test_first_order_reweighting_on_drawn_harness(seed):
    assert C.check_first_order(seed).holds


def test_exact_second_moments_match_monte_carlo():
    """The closed-form variance recursion behind efl.theorem1.* agrees with Monte Carlo runs of EFL (z < 5)."""
    rng = np.random.default_rng(0)
    A = rng.uniform(1.0, 2.0, (3, 2))
    c = rng.standard_normal((3, 2))
    problem = QuadraticProblem(A, A * c, rng.dirichlet(np.ones(3)), sigma2=0.5)
    alg = EFL(E=3, step=0.3, decay=4.0, s_min=(1, 2, 3), s_max=(1, 2, 3))
    R = 12
    exact = C.exact_second_moments(problem, alg, R, np.zeros(2))
    M = 1500
    samples = np.array([run(alg, problem, R, seed=s).dist2 for s in range(M)])
    mean, se = samples.mean(axis=0), samples.std(axis=0, ddof=1) / np.sqrt(M)
    z = np.abs(mean[1:] - exact[1:]) / se[1:]
    assert z.max() < 5, z
    # Without noise the recursion has no variance term: exact equals the algorithm's own distance.
    clean = QuadraticProblem(A, A * c, problem.weights)
    np.testing.assert_allclose(C.exact_second_moments(clean, alg, R, np.zeros(2)), run(alg, clean, R).dist2,
                               rtol=1e-14, atol=0)


def test_theorem1_quantities_are_consistent():
    """H = 0 under EFL weighting with fixed s; FedAvg weighting with unequal s gives r_t = 1."""
    p = np.array([0.2, 0.3, 0.5])
    s = np.array([1, 2, 3])
    efl = th.efl_coefficients(s, p, 3) * s
    avg = th.efl_coefficients(s, p, 3, "fedavg") * s
    assert th.theorem1_H_indicator(efl, p) == 0 and th.theorem1_H_indicator(avg, p) == 1
    coef = th.efl_coefficients(s, p, 3)
    lit = th.theorem1_B(coef, s, p, np.ones(3), np.ones(3), L=2.0, mu=1.0, theta=3.0, E=3, G2=1.0, reading="literal")
    con = th.theorem1_B(coef, s, p, np.ones(3), np.ones(3), L=2.0, mu=1.0, theta=3.0, E=3, G2=1.0)
    assert con >= lit  # the conservative reading of Theorem 1's B for theta >= 1 (fedtheory's, docs/efl.md)
    rows = th.table1_rounds(G2=1.0, mu=0.1, S=10, eps=1e-3, L=1.0)
    assert rows["EFL"] == 1.0 / (0.1 * 10 * 1e-3) + 1.0 / (0.1 * np.sqrt(1e-3))
