"""EFL (Ma et al.): the ST compressor, the algorithm's scenarios and options, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.algorithms.efl import EFL, EFLDraw
from fedtheory.claims.efl import efl_harness, weighted_optimum
from fedtheory.compressors.st import SparseTernary, st_bits
from fedtheory.problems.quadratic import quadratic
from fedtheory.run import run
from fedtheory.theory import efl as th

# ----- ST -------------------------------------------------------------------------------------------------

@given(st.integers(1, 40), st.floats(1e-3, 1.0), st.integers(0, 2**31 - 1), st.sampled_from(["normal", "cauchy", "int"]))
def test_st_projection_and_contraction(d, q, seed, kind):
    rng = np.random.default_rng(seed)
    T = {"normal": rng.standard_normal((5, d)), "cauchy": rng.standard_cauchy((5, d)),
         "int": rng.integers(-3, 4, (5, d)).astype(float)}[kind]  # integer rows have ties and zeros
    comp = SparseTernary(q)
    out, bits = comp.compress(T)
    k = comp.k(d)
    assert np.all(np.count_nonzero(out, axis=1) <= k)
    norm2 = np.sum(T * T, axis=1)
    res2 = np.sum((T - out) ** 2, axis=1)
    assert np.all(res2 <= (1 - comp.alpha(d)) * norm2 + 1e-12 * (1 + norm2))
    # Orthogonal projection onto span(sign on the support), <T - ST(T), ST(T)> = 0, when the k kept entries are
    # all non-zero (a kept zero still counts in mu's 1/k, e.g. T = (2, 0), q = 1).
    full_support = np.sort(np.abs(T), axis=1)[:, d - k] > 0
    assert np.all(np.abs(np.sum((T - out) * out, axis=1))[full_support] <= 1e-10 * (1 + norm2[full_support]))
    if kind != "int":
        assert np.all(full_support)
    # Values in {-mu, 0, mu}, one mu per row.
    for row in np.abs(out):
        nz = row[row > 0]
        assert nz.size == 0 or np.ptp(nz) <= 1e-12 * nz.max()
    assert np.all(bits == [st_bits(d, int(z)) for z in np.count_nonzero(out, axis=1)])


@given(st.integers(2, 30), st.floats(1e-3, 1.0), st.floats(0.01, 100.0), st.integers(0, 2**31 - 1))
def test_st_homogeneous_odd_deterministic(d, q, c, seed):
    T = np.random.default_rng(seed).standard_normal((3, d))
    comp = SparseTernary(q)
    out, _ = comp.compress(T)
    np.testing.assert_allclose(comp.compress(c * T)[0], c * out, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(comp.compress(-T)[0], -out)
    np.testing.assert_array_equal(comp.compress(T, np.random.default_rng(1))[0], out)


def test_st_ties_keep_exactly_k_and_q1_is_scaled_sign():
    # The printed mask |T| >= e would keep every tied entry and return n * 1_n for T = 1_n, k = 1.
    out, _ = SparseTernary(0.1).compress(np.ones(10))
    assert np.count_nonzero(out) == 1 and out.max() == 1.0
    T = np.array([3.0, -1.0, 2.0, -6.0])
    out, _ = SparseTernary(1.0).compress(T)
    np.testing.assert_allclose(out[0], 3.0 * np.sign(T))
    assert not SparseTernary.unbiased and SparseTernary.deterministic
    with pytest.raises(NotImplementedError):
        SparseTernary().omega(5)


@pytest.mark.parametrize("q", [0.0, -0.1, 1.5, float("nan")])
def test_st_bad_q(q):
    with pytest.raises(ValueError, match="q"):
        SparseTernary(q)


# ----- bad input -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    (dict(q=0.0), "q"), (dict(q=1.01), "q"), (dict(E=0), "E"), (dict(lam=-0.1), "lam"),
    (dict(s_min=0), "s_min"), (dict(E=3, s_max=4), "s_max"), (dict(E=3, s_min=3, s_max=2), "s_min"),
    (dict(participation=0.0), "participation"), (dict(participation=(1.0, 1.2)), "participation"),
    (dict(step=0.0), "step"), (dict(weighting="fedprox"), "weighting"), (dict(variant="x"), "variant"),
    (dict(departures={-1: 3}), "departures"), (dict(arrivals={0: -2}), "arrivals"),
])
def test_bad_hyperparameters(kwargs, name):
    with pytest.raises(ValueError, match=name):
        EFL(**kwargs)


def test_unknown_client_departure_and_bad_steps():
    problem = efl_harness(seed=0, n=3, d=2)
    with pytest.raises(ValueError, match="departures"):
        EFL(departures={3: 10}).init(problem, np.zeros(2))
    with pytest.raises(ValueError, match="arrivals"):
        EFL(arrivals={7: 10}).init(problem, np.zeros(2))
    alg = EFL(E=3)
    state = alg.init(problem, np.zeros(2))
    for bad in ([0, 4, 1], [-1, 1, 1]):
        with pytest.raises(ValueError, match="s \\(local steps"):
            alg.round_given(problem, state, EFLDraw(steps=np.array(bad)))
    with pytest.raises(ValueError, match="s_max"):
        EFL(E=3, s_max=(1, 2)).init(problem, np.zeros(2))
    with pytest.raises(ValueError, match="s \\(local steps"):
        th.efl_coefficients(np.array([0, 5]), np.array([0.5, 0.5]), 4)


def test_theory_bad_input():
    with pytest.raises(ValueError, match="n_a"):
        th.theorem2_departure_bound(1.0, 1.0, 5, 3, 1.0)
    with pytest.raises(ValueError, match="mu"):
        th.theorem1_gamma(2, 1.0, 1.0, 0.0, 2.0)
    with pytest.raises(ValueError, match="s_min"):
        th.assumption5_theta(3, 4)


# ----- algorithm -----------------------------------------------------------------------------------------

def test_same_seed_bitwise_and_round_is_round_given_of_draw():
    problem = efl_harness(seed=3).with_noise(0.5)
    alg = EFL(E=4, step=0.02, lam=0.05, q=0.34, s_min=1, s_max=4, participation=(1, .5, .7, .9, .3),
              departures={1: 5}, arrivals={2: 3})
    a = run(alg, problem, 12, seed=7)
    b = run(alg, problem, 12, seed=7)
    assert a.same_numbers(b)
    s0 = alg.init(problem, np.zeros(problem.dim))
    r1 = np.random.default_rng(5)
    r2 = np.random.default_rng(5)
    x1, _ = alg.round(problem, s0, r1)
    x2, _ = alg.round_given(problem, s0, alg.draw(problem, s0, r2))
    np.testing.assert_array_equal(x1.x, x2.x)


def test_departure_arrival_schedule_and_clock():
    problem = efl_harness(seed=1, n=4, d=3)
    alg = EFL(E=2, step=0.1, decay=5, departures={0: 2}, arrivals={3: 4}, restart_on_arrival=True, restarts=(7,))
    state = alg.init(problem, np.zeros(3))
    rng = np.random.default_rng(0)
    parts, clocks = [], []
    for _ in range(8):
        d = alg.draw(problem, state, rng)
        parts.append((d.steps > 0).astype(int).tolist())
        state, log = alg.round_given(problem, state, d)
        clocks.append(state.clock)
        assert log.participants == int((d.steps > 0).sum()) and log.local_grad_evals == int(d.steps.sum())
    assert parts[:2] == [[1, 1, 1, 0]] * 2 and parts[2:4] == [[0, 1, 1, 0]] * 2 and parts[4:] == [[0, 1, 1, 1]] * 4
    assert clocks == [1, 2, 3, 4, 1, 2, 1, 2]


def test_outcomes_matches_draw_frequencies():
    problem = efl_harness(seed=2, n=3, d=2)
    alg = EFL(E=3, s_min=(1, 2, 3), s_max=3, participation=(0.5, 0.8, 1.0))
    state = alg.init(problem, np.zeros(2))
    dist = {tuple(d.steps.tolist()): p for d, p in alg.outcomes(problem, state)}
    assert abs(sum(dist.values()) - 1) < 1e-14
    rng = np.random.default_rng(0)
    M = 20000
    counts: dict = {}
    for _ in range(M):
        key = tuple(alg.draw(problem, state, rng).steps.tolist())
        counts[key] = counts.get(key, 0) + 1
    assert set(counts) <= set(dist)
    for key, p in dist.items():
        z = abs(counts.get(key, 0) / M - p) / np.sqrt(p * (1 - p) / M)
        assert z < 5, (key, p, counts.get(key, 0) / M)


def test_no_compression_server_update_is_eq6():
    """Eq. (6) with the inner sum to s - 1: w^G+ = w^G + sum_k p_tau^k (w_end^k - w^G)."""
    problem = efl_harness(seed=4)
    for weighting in ("efl", "fedavg"):
        alg = EFL(E=5, step=0.03, weighting=weighting)
        state = alg.init(problem, np.ones(problem.dim))
        steps = np.array([0, 1, 3, 5, 2])
        new, _ = alg.round_given(problem, state, EFLDraw(steps=steps))
        coef = th.efl_coefficients(steps, problem.weights, 5, weighting)
        act = steps > 0
        expected = state.x + coef[act] @ (new.client_end[act] - state.x)
        np.testing.assert_allclose(new.x, expected, rtol=1e-13, atol=1e-14)
        # Each client's end model is s GD steps from the start on its own quadratic.
        for k in np.flatnonzero(act):
            w = state.x.copy()
            for _ in range(steps[k]):
                w = w - 0.03 * problem.grads(w[None], clients=np.array([k]))[0]
            np.testing.assert_allclose(new.client_end[k], w, rtol=1e-13, atol=1e-14)


def test_compression_bits_and_ipw_limit():
    problem = efl_harness(seed=0)
    d = problem.dim
    comp = run(EFL(E=2, step=0.02, q=0.34), problem, 3, seed=0)
    dense = run(EFL(E=2, step=0.02), problem, 3, seed=0)
    k = SparseTernary(0.34).k(d)
    assert comp.uplink_bits[1] <= problem.n_clients * st_bits(d, k)
    assert dense.uplink_bits[1] == problem.n_clients * 64 * d
    # EFL weighting under unequal Bernoulli inactivity drifts to argmin sum p^k pi^k f_k (claim
    # efl.theorem1.bias_plateau); the inverse-participation weighting (inferred extension) removes that bias.
    y = np.linspace(0, 0.8, problem.n_clients)
    xs = problem.certificate.x_star
    biased = weighted_optimum(problem, problem.weights * (1 - y))
    ipw = run(EFL(E=5, step=0.5, decay=20, s_min=5, participation=tuple(1 - y), weighting="efl_ipw"),
              problem, 3000, seed=1, record_every=3000).x_final
    assert np.linalg.norm(ipw - xs) < 0.1 * np.linalg.norm(biased - xs)


def test_client_side_scaling_fixes_compressed_random_s_limit():
    """Derived by fedtheory (the paper is silent): with ST and random s, server-side p_tau^k stalls; client-side
    pre-scaling converges."""
    problem = efl_harness(seed=0)
    xs = problem.certificate.x_star
    kw = dict(E=5, step=0.5, decay=20, s_min=1, s_max=(1, 2, 3, 4, 5), q=0.34)
    server = run(EFL(**kw), problem, 3000, seed=1, record_every=3000).x_final
    client = run(EFL(scaling="client", **kw), problem, 3000, seed=1, record_every=3000).x_final
    assert np.linalg.norm(client - xs) < 0.2 * np.linalg.norm(server - xs)


def test_general_problem_uses_finite_difference_fisher():
    """A problem without A uses the Hessian diagonal by central differences (exact for quadratics)."""
    from fedtheory.algorithms.efl import fisher_diagonal

    problem = quadratic(3, 4, mu=0.5, L=3.0, delta_B=0.5, zeta2=1.0, seed=0)

    class Opaque:
        n_clients, dim = problem.n_clients, problem.dim
        grads = staticmethod(problem.grads)

    X = np.random.default_rng(0).standard_normal((3, 4))
    np.testing.assert_allclose(fisher_diagonal(Opaque(), X, np.arange(3)),
                               np.diagonal(problem.A, axis1=1, axis2=2), rtol=1e-6)
