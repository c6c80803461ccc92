"""FedElasticNet Algorithms 1-3 as options of FedProx, SCAFFOLD and FedDyn: bad input, readings, accounting, entropy
logging."""
import numpy as np
import pytest

from fedtheory.algorithms.feddyn import FedDyn
from fedtheory.algorithms.fedprox import FedProx
from fedtheory.algorithms.scaffold import Scaffold
from fedtheory.claims.fedelasticnet import algorithm3, spec_problem
from fedtheory.metrics import EntropyMetrics, cumulative
from fedtheory.run import run


@pytest.mark.parametrize("factory, kwargs, name", [
    (FedProx, {"l1": -1e-3}, "l1"), (FedProx, {"prox": -1.0}, "prox"), (FedProx, {"threshold": -1e-4}, "threshold"),
    (Scaffold, {"l1": -1e-3}, "l1"), (Scaffold, {"prox": -1.0}, "prox"), (Scaffold, {"threshold": -1e-4}, "threshold"),
    (FedDyn, {"l1": -1e-3}, "l1"), (FedDyn, {"alpha": 0.0}, "alpha"), (FedDyn, {"alpha": -1.0}, "alpha"),
    (FedDyn, {"threshold": -1e-4}, "threshold"), (FedDyn, {"sign_at_zero": "zero"}, "sign_at_zero"),
])
def test_bad_hyperparameters_name_the_parameter(factory, kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        factory(**kwargs)


def test_entropy_metrics_bad_input():
    with pytest.raises(ValueError, match="bin_size"):
        EntropyMetrics(bin_size=0.0)
    with pytest.raises(ValueError, match="mode"):
        EntropyMetrics(mode="ceil")


@pytest.mark.parametrize("alg", [
    FedProx(prox=1.0, l1=0.05, threshold=1e-3),
    FedProx(prox=1.0, l1=0.05, threshold=1e-3, solver="gd", local_steps=5, l1_mode="subgradient"),
    Scaffold(local_steps=5, local_step=0.05, l1=0.05, threshold=1e-3),
    FedDyn(alpha=1.0, l1=0.05, threshold=1e-3, sign_at_zero="printed"),
    FedDyn(alpha=1.0, l1=0.05, threshold=1e-3, sign_at_zero="kkt"),
    FedDyn(alpha=1.0, l1=0.05, solver="gd", local_steps=5),
], ids=["alg1-exact", "alg1-subgradient", "alg2", "alg3-printed", "alg3-kkt", "alg3-gd"])
def test_elastic_net_variants_run_sparsify_and_log_entropy(alg):
    from dataclasses import replace

    problem = spec_problem(m=4, d=5, seed=2)
    alg = replace(alg, upload_metrics=EntropyMetrics())
    trace = run(alg, problem, 40, seed=0)
    assert trace.status == "completed"
    assert np.all(trace.entropy[1:] >= 0)
    vectors = 2 if isinstance(alg, Scaffold) else 1
    assert np.all(trace.uplink_nnz[1:] <= vectors * problem.dim * trace.participants[1:])
    # every transmitted coordinate exceeds the threshold in modulus (T_eps is applied before sending)
    sent = trace.state.last_upload
    assert np.all((sent == 0) | (np.abs(sent) > alg.threshold))


def test_readings_coincide_without_l1_and_differ_with_it():
    problem = spec_problem(m=4, d=4, seed=0)
    beta = problem.certificate.L
    a = run(algorithm3(beta, 0.0, "printed"), problem, 20, seed=0)
    b = run(algorithm3(beta, 0.0, "kkt"), problem, 20, seed=0)
    assert a.same_numbers(b)
    a = run(algorithm3(beta, 0.5, "printed"), problem, 20, seed=0)
    b = run(algorithm3(beta, 0.5, "kkt"), problem, 20, seed=0)
    assert not np.array_equal(a.x_final, b.x_final)


@pytest.mark.parametrize("reading", ["printed", "kkt"])
@pytest.mark.parametrize("participation", [None, 2])
def test_alg3_runs_through_run_and_logs_entropy(reading, participation):
    problem = spec_problem(m=4, d=4, seed=3)
    alg = algorithm3(problem.certificate.L, 0.1, reading, participation, 1e-3, upload_metrics=EntropyMetrics())
    t1, t2 = run(alg, problem, 30, seed=5), run(alg, problem, 30, seed=5)
    assert t1.same_numbers(t2)
    assert np.all(np.isfinite(t1.entropy[1:])) and np.all(t1.entropy[1:] >= 0)
    assert cumulative(t1.entropy)[-1] == pytest.approx(np.nansum(t1.entropy))
    assert np.all(t1.uplink_nnz[1:] <= problem.dim * t1.participants[1:])
