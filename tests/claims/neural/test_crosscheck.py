"""The metamorphic cross-check (torch backend == NumPy logistic problem) on hypothesis-drawn instances, and the
registration of the neural claims."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch extra not installed: pip install torch==2.13.0 'fedtheory[torch]'")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fedtheory.claims import REGISTRY, select  # noqa: E402
from fedtheory.claims.neural import crosscheck_algorithms, crosscheck_problems, iterate_deviation  # noqa: E402
from fedtheory.claims.tolerances import CROSSCHECK_TOL  # noqa: E402

torch.set_num_threads(1)

NAMES = sorted(crosscheck_algorithms(4))


@settings(max_examples=12)
@given(n=st.integers(2, 6), d=st.integers(1, 6), seed=st.integers(0, 2**16), name=st.sampled_from(NAMES))
def test_backends_agree_on_drawn_instances(n, d, seed, name):
    alg = crosscheck_algorithms(n)[name]
    ev = REGISTRY["neural.crosscheck.logistic"]({"label": name, "n_clients": n, "dim": d, "seed": seed,
                                                 "algorithm": alg, "rounds": 4})
    assert ev.holds, (ev.measured, ev.details)


def test_crosscheck_detects_a_different_problem():
    """The comparison is not vacuous: a torch problem with another regularisation disagrees far beyond 1e-8."""
    from fedtheory.torch import TorchProblem

    np_problem, t_problem = crosscheck_problems(4, 3, seed=1)
    other = TorchProblem(t_problem.model, *_unpadded(t_problem), reg=np_problem.reg * 1.001,
                         batch_size=t_problem.batch_size, certificate=np_problem.certificate)
    alg = crosscheck_algorithms(4)["FedAvg (local SGD)"]
    same = iterate_deviation(alg, np_problem, t_problem, 4)["max_relative_deviation"]
    diff = iterate_deviation(alg, np_problem, other, 4)["max_relative_deviation"]
    assert same <= CROSSCHECK_TOL < diff


def _unpadded(p):
    X, Y = p._X.cpu().numpy(), p._Y.cpu().numpy()
    return [X[i, :m] for i, m in enumerate(p.sizes)], [Y[i, :m] for i, m in enumerate(p.sizes)]


def test_neural_claims_are_registered():
    ids = {c.id for c in select(["neural"])}
    assert {"neural.crosscheck.logistic", "neural.fedelasticnet.sparsity", "neural.docofl.accuracy",
            "neural.efl.incomplete_inactive", "neural.fedred.fedprox_wins"} <= ids
    assert REGISTRY["neural.crosscheck.logistic"].expected == "holds"
    assert all(REGISTRY[i].expected == "exploratory" for i in ids if i != "neural.crosscheck.logistic")


def test_elasticnet_table_reports_the_paper_quantities():
    """The benchmark helper counts what the paper counts: nnz reductions are 1 - nnz(variant)/nnz(baseline)."""
    from fedtheory.claims.neural import digits_problem, elasticnet_table
    from fedtheory.participation import UniformSubset

    tab = elasticnet_table(digits_problem(hidden=4), UniformSubset(2), rounds=2, local_steps=2, local_step=0.1)
    rows, red = tab["rows"], tab["reductions"]
    assert set(rows) == {"FedProx", "Alg. 1", "SCAFFOLD", "Alg. 2", "FedDyn", "Alg. 3"}
    np.testing.assert_allclose(red["Alg. 3 vs FedDyn"]["nnz_reduction"],
                               1 - rows["Alg. 3"]["cumulative_nnz"] / rows["FedDyn"]["cumulative_nnz"])
    # SCAFFOLD uploads two vectors (Delta y dense, Delta c dense): at least 2 d per participant and round
    assert rows["SCAFFOLD"]["cumulative_nnz"] > rows["FedProx"]["cumulative_nnz"]


def test_dane_sgd_is_k_local_steps_on_the_dane_subproblem():
    """DANE+-SGD (the stochastic option added for the neural benchmarks) with a noise-free oracle on a quadratic:
    every client's model is the closed form of K GD steps on F_i(y) = f_i(y) + <h_i, y> + lam/2 ||y - x||^2,
    y_K = y* + (I - s(A_i + lam I))^K (x - y*), (A_i + lam I) y* = b_i - h_i + lam x."""
    from fedtheory.algorithms import DANEPlus
    from fedtheory.problems.quadratic import quadratic

    pb = quadratic(3, 4, mu=0.5, L=2.0, delta_B=0.5, zeta2=1.0, seed=0)
    lam, s, K = 0.3, 0.2, 6
    alg = DANEPlus(lam=lam, solver="gd", stopping="steps", local_steps=K, stochastic=True, local_step=s)
    x = np.arange(4.0) / 4
    state = alg.init(pb, x)
    new, log = alg.round(pb, state, np.random.default_rng(0))
    G = pb.grads(pb.broadcast(x))
    h = pb.weights @ G - G
    I = np.eye(4)
    ys = []
    for i in range(3):
        M = pb.A[i] + lam * I
        y_star = np.linalg.solve(M, pb.b[i] - h[i] + lam * x)
        ys.append(y_star + np.linalg.matrix_power(I - s * M, K) @ (x - y_star))
    np.testing.assert_allclose(new.x, pb.weights @ np.array(ys), rtol=1e-12, atol=1e-14)
    assert log.local_grad_evals == 3 + 3 * K  # control-variate gradients plus K per client
    with pytest.raises(ValueError, match="stochastic"):
        DANEPlus(stochastic=True)  # the exact solver has no SGD variant
    with pytest.raises(ValueError, match="local_step"):
        DANEPlus(solver="gd", stopping="steps", stochastic=True, local_step=0.0)


def test_without_torch_no_neural_claims_and_no_torch_import():
    """`fedtheory verify` must work without the extra: hide torch from find_spec in a fresh interpreter."""
    import subprocess
    import sys

    code = ("import importlib.util as u, sys; f = u.find_spec; "
            "u.find_spec = lambda n, *a, **k: None if n == 'torch' else f(n, *a, **k); "
            "import fedtheory.claims as c; "
            "print(sum(k.startswith('neural') for k in c.REGISTRY), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "False"]
