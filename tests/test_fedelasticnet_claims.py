"""FedElasticNet claims on hypothesis-drawn quadratics (the ledger test runs the default instances)."""
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from fedtheory.claims import fedelasticnet as fen
from fedtheory.problems.quadratic import quadratic
from fedtheory.strategies import quadratic_params
from fedtheory.theory import fedelasticnet as th
from fedtheory.theory.classic import drift_vector, fedavg_fixed_point, fedprox_fixed_point

small = dict(min_clients=2, max_clients=5, min_dim=2, max_dim=4, max_condition=30.0)


def _problem(kw):
    return quadratic(**kw)


@given(kw=quadratic_params(**small), r=st.floats(0.1, 50.0), lam1=st.sampled_from([0.0, 0.01, 0.3, 2.0]),
       reading=st.sampled_from(["printed", "kkt"]), eps=st.sampled_from([0.0, 1e-3, 0.05]), data=st.data())
def test_lemma_b2_and_gamma_identity(kw, r, lam1, reading, eps, data):
    problem = _problem(kw)
    P = data.draw(st.one_of(st.none(), st.integers(1, problem.n_clients)))
    alg = fen._alg3(r * problem.certificate.L, lam1, reading, P, eps)
    ev = fen.check_h_invariant((problem, alg, 12))
    assert ev.holds, ev.details


@given(kw=quadratic_params(**small), r=st.floats(0.1, 50.0), lam1=st.sampled_from([0.01, 0.3, 2.0]),
       reading=st.sampled_from(["printed", "kkt"]))
def test_local_kkt_eq11(kw, r, lam1, reading):
    problem = _problem(kw)
    ev = fen.check_local_kkt((problem, fen._alg3(r * problem.certificate.L, lam1, reading, None), 8))
    assert ev.holds, ev.details


@given(kw=quadratic_params(min_clients=3, max_clients=5, min_dim=2, max_dim=4, max_condition=30.0),
       r=st.floats(0.2, 30.0), lam1=st.sampled_from([0.01, 0.3, 2.0]), reading=st.sampled_from(["printed", "kkt"]),
       data=st.data())
def test_lemma_b3_exact_by_enumeration(kw, r, lam1, reading, data):
    problem = _problem(kw)
    P = data.draw(st.integers(1, problem.n_clients - 1))
    res = fen.lemma_b3_errors(problem, fen._alg3(r * problem.certificate.L, lam1, reading, P), 6)
    assert res["kkt"] <= 1e-12, res


@settings(max_examples=15)
@given(kw=quadratic_params(min_clients=2, max_clients=4, min_dim=2, max_dim=3, max_condition=30.0),
       excess=st.floats(1e-3, 200.0), lam1=st.sampled_from([0.0, 0.01, 0.3]), partial=st.booleans())
def test_theorem_b6_every_round(kw, excess, lam1, partial):
    problem = _problem(kw)
    assume(not partial or problem.n_clients > 2)
    r = th.kappa0_threshold() + excess
    P = problem.n_clients - 1 if partial else None
    ev = fen.check_b6_per_round((problem, fen._alg3(r * problem.certificate.L, lam1, "kkt", P), 15))
    assert ev.holds, ev.details


@settings(max_examples=15)
@given(kw=quadratic_params(**small), excess=st.floats(1e-3, 200.0), lam1=st.sampled_from([0.0, 0.01, 0.3]))
def test_theorem_31_corrected_every_horizon(kw, excess, lam1):
    problem = _problem(kw)
    r = th.kappa0_threshold() + excess
    ev = fen.check_thm31_corrected((problem, fen._alg3(r * problem.certificate.L, lam1, "kkt"), 40))
    assert ev.holds, ev.details
    assert 0 <= ev.tightness <= 1


@given(c=st.floats(1e9, 1e12))
def test_printed_c0_counterexample_scales(c):
    """The printed (unsquared C0) bound fails at every gradient scale above the crossover ~5e7."""
    ev = fen.check_thm31_c0_unsquared((fen.scaled_two_client_problem(c), fen._alg3(27.0, 0.0, "kkt"), 10, c))
    assert not ev.holds and ev.details["corrected_tightness"] < 1


@given(kw=quadratic_params(**small), r=st.floats(0.1, 20.0), lam1=st.sampled_from([0.0, 0.1]),
       reading=st.sampled_from(["printed", "kkt"]), eps=st.sampled_from([0.0, 0.01]))
def test_fixed_point_invariance(kw, r, lam1, reading, eps):
    problem = _problem(kw)
    P = None if problem.n_clients == 2 else 2
    ev = fen.check_alg3_invariance((problem, fen._alg3(r * problem.certificate.L, lam1, reading, P, eps)))
    assert ev.holds, ev.details


@given(kw=quadratic_params(**small))
def test_sparsity_monotone(kw):
    ev = fen.check_sparsity_monotone(_problem(kw))
    assert ev.holds, ev.details


@settings(max_examples=12)
@given(kw=quadratic_params(min_clients=2, max_clients=5, min_dim=2, max_dim=4, max_condition=20.0,
                           hessians=("diagonal",)),
       r=st.floats(0.55, 5.0), lam1=st.sampled_from([0.0, 0.05, 0.3]))
def test_alg3_subgradient_converges_to_theta_star(kw, r, lam1):
    """The corrected fixed-point claim: lambda2 > L_f/2 (diagonal Hessians keep the exact solves cheap)."""
    problem = _problem(kw)
    ev = fen.check_alg3_fixed_point((problem, fen._alg3(r * problem.certificate.L_f, lam1, "kkt"), 3000))
    assert ev.holds, (ev.measured, ev.details)


def test_alg3_any_lambda2_counterexample_is_a_cycle():
    """lambda2 = beta/2: all updates vanish and theta alternates around theta* forever (h flips sign)."""
    problem, alg, _ = next(fen._any_lambda2_instances(False))
    state = alg.init(problem, np.zeros(1))
    rng = np.random.default_rng(0)
    xs = []
    for _ in range(50):
        state, _ = alg.round(problem, state, rng)
        xs.append(state.x[0])
    assert not np.any(state.last_upload)
    assert xs[-1] == pytest.approx(xs[-3], abs=1e-15) and abs(xs[-1] - 1.0) > 1e-3
    assert (xs[-1] - 1.0) == pytest.approx(-(xs[-2] - 1.0), abs=1e-15)


@pytest.mark.parametrize("reading", ["printed", "kkt"])
@pytest.mark.parametrize("participation", [None, 2])
def test_alg3_runs_through_run_and_logs_entropy(reading, participation):
    from fedtheory.metrics import EntropyMetrics, cumulative
    from fedtheory.run import run

    problem = fen.spec_problem(m=4, d=4, seed=3)
    alg = fen._alg3(problem.certificate.L, 0.1, reading, participation, 1e-3, upload_metrics=EntropyMetrics())
    t1, t2 = run(alg, problem, 30, seed=5), run(alg, problem, 30, seed=5)
    assert t1.same_numbers(t2)
    assert np.all(np.isfinite(t1.entropy[1:])) and np.all(t1.entropy[1:] >= 0)
    assert cumulative(t1.entropy)[-1] == pytest.approx(np.nansum(t1.entropy))
    assert np.all(t1.uplink_nnz[1:] <= problem.dim * t1.participants[1:])


@given(kw=quadratic_params(min_clients=2, max_clients=5, min_dim=2, max_dim=4, max_condition=30.0))
def test_drift_first_order_expansions(kw):
    problem = _problem(kw)
    assume(np.linalg.norm(drift_vector(problem)) > 1e-6 * max(1.0, problem.certificate.L))
    assert fen.check_prox_bias_asymptotic(problem).holds
    assert fen.check_fedavg_bias_asymptotic(problem).holds


@given(kw=quadratic_params(min_clients=2, max_clients=5, min_dim=2, max_dim=4, max_condition=30.0))
def test_fedprox_and_fedavg_closed_form_limits(kw):
    problem = _problem(kw)
    assume(problem.certificate.mu > 0.05)
    from fedtheory.algorithms.fedavg import FedAvg
    from fedtheory.algorithms.fedprox import FedProx

    beta = problem.certificate.L
    st, _ = fen._iterate_to_limit(problem, FedProx(prox=beta, l1=0.0), max_rounds=20000)
    target = fedprox_fixed_point(problem, beta)
    assert np.linalg.norm(st.x - target) <= 1e-9 * max(1.0, np.linalg.norm(target))
    st, _ = fen._iterate_to_limit(problem, FedAvg(local_steps=3, local_step=0.5 / beta), max_rounds=20000)
    target = fedavg_fixed_point(problem, 3, 0.5 / beta)
    assert np.linalg.norm(st.x - target) <= 1e-9 * max(1.0, np.linalg.norm(target))
