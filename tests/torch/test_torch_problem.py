"""The torch backend: oracles, vectorised vs looped execution, dtypes, determinism, bad input."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch extra not installed: pip install torch==2.13.0 'fedtheory[torch]'")

from fedtheory.algorithms import EFL, DANEPlus, DoCoFL, FedAvg, FedDyn, FedProx, FedRed, Scaffnew, Scaffold  # noqa: E402
from fedtheory.participation import UniformSubset  # noqa: E402
from fedtheory.problems.datasets import FederatedData, synthetic_fedprox  # noqa: E402
from fedtheory.problems.logistic import LogisticProblem  # noqa: E402
from fedtheory.run import run  # noqa: E402
from fedtheory.torch import TorchProblem, cnn_digits, digits_federated, logistic_regression, mlp, synthetic_multinomial  # noqa: E402

# small kernels on a shared machine: one thread is faster and keeps timings stable
torch.set_num_threads(1)


def _multiclass_data(n=3, d=6, C=4, seed=0, sizes=(5, 9, 3)):
    data = synthetic_fedprox(1.0, 1.0, n, dim=d, n_classes=C, sizes=np.array(sizes[:n]), seed=seed)
    return data


@pytest.fixture(scope="module")
def smooth_mlp():
    """A tanh MLP (smooth, so finite differences apply) on 3 clients of unequal sizes."""
    return TorchProblem(mlp(6, 4, hidden=5, activation="tanh"), _multiclass_data(), reg=1e-2, batch_size=4)


@pytest.fixture(scope="module")
def smooth_cnn():
    rng = np.random.default_rng(0)
    feats = [rng.random((m, 64)) for m in (4, 2)]
    labs = [rng.integers(0, 10, m) for m in (4, 2)]
    return TorchProblem(cnn_digits(channels=(2, 3), activation="softplus"), feats, labs, reg=1e-3, batch_size=3)


def _fd_directional(problem, X, V, h=1e-5):
    return (problem.values(X + h * V) - problem.values(X - h * V)) / (2 * h)


@pytest.mark.parametrize("which", ["smooth_mlp", "smooth_cnn"])
def test_grads_match_finite_differences(which, request):
    problem = request.getfixturevalue(which)
    rng = np.random.default_rng(1)
    X = np.stack([problem.initial_point(s) for s in range(problem.n_clients)])
    V = rng.standard_normal(X.shape)
    G = problem.grads(X)
    fd = _fd_directional(problem, X, V)
    exact = np.einsum("kd,kd->k", G, V)
    # central differences in float64: truncation O(h^2) ~ 1e-10 times third derivatives
    np.testing.assert_allclose(fd, exact, rtol=1e-6, atol=1e-8)


def test_values_and_grads_of_logistic_model_equal_numpy_problem():
    data = synthetic_fedprox(1.0, 1.0, 4, dim=5, n_classes=2, sizes=np.array([3, 7, 4, 10]), seed=2)
    ref = LogisticProblem(data.features, data.labels, reg=0.05)
    tp = TorchProblem(logistic_regression(5, 2), data, reg=0.05)
    X = np.random.default_rng(0).standard_normal((4, 5))
    np.testing.assert_allclose(tp.values(X), ref.values(X), rtol=1e-13)
    np.testing.assert_allclose(tp.grads(X), ref.grads(X), rtol=1e-12, atol=1e-15)
    rows = np.array([3, 1])
    np.testing.assert_allclose(tp.grads(X[rows], rows), ref.grads(X[rows], rows), rtol=1e-12, atol=1e-15)
    # the true Fisher diagonal of the binary model is the Hessian diagonal (EFL uses it)
    np.testing.assert_allclose(tp.fisher_diag(X), np.diagonal(ref.hessians(X), axis1=1, axis2=2), rtol=1e-12)


def test_minibatch_draws_match_numpy_problem_bitwise_draws():
    data = synthetic_fedprox(1.0, 1.0, 3, dim=4, n_classes=2, sizes=np.array([6, 2, 9]), seed=3)
    ref = LogisticProblem(data.features, data.labels, reg=0.1, batch_size=5)
    tp = TorchProblem(logistic_regression(4, 2), data, reg=0.1, batch_size=5)
    X = np.random.default_rng(1).standard_normal((3, 4))
    r1, r2 = np.random.default_rng(7), np.random.default_rng(7)
    np.testing.assert_allclose(tp.stochastic_grads(X, r1), ref.stochastic_grads(X, r2), rtol=1e-12, atol=1e-15)
    assert r1.random() == r2.random()  # both consumed the generator identically


def test_stochastic_grads_are_minibatch_gradients(smooth_mlp):
    """g_i equals the full gradient of the client's drawn minibatch (indices floor(U m_i), U ~ rng.random)."""
    p = smooth_mlp
    X = np.stack([p.initial_point(s) for s in range(3)])
    G = p.stochastic_grads(X, np.random.default_rng(5))
    U = np.random.default_rng(5).random((3, p.batch_size))
    pick = np.floor(U * p.sizes[:, None]).astype(int)
    data = _multiclass_data()
    batch = FederatedData([data.features[i][pick[i]] for i in range(3)], [data.labels[i][pick[i]] for i in range(3)])
    on_batch = TorchProblem(p.model, batch, reg=p.reg)
    np.testing.assert_allclose(G, on_batch.grads(X), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("which", ["smooth_mlp", "smooth_cnn"])
def test_vmap_equals_per_client_loop(which, request):
    p = request.getfixturevalue(which)
    loop = TorchProblem(p.model, *_data_of(p), reg=p.reg, batch_size=p.batch_size, vectorize=False)
    X = np.stack([p.initial_point(s) for s in range(p.n_clients)])
    np.testing.assert_allclose(p.values(X), loop.values(X), rtol=1e-13)
    np.testing.assert_allclose(p.grads(X), loop.grads(X), rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(p.stochastic_grads(X, np.random.default_rng(3)),
                               loop.stochastic_grads(X, np.random.default_rng(3)), rtol=1e-11, atol=1e-14)
    rows = np.array([p.n_clients - 1])
    np.testing.assert_allclose(p.grads(X[rows], rows), loop.grads(X[rows], rows), rtol=1e-11, atol=1e-14)


def _data_of(p):
    """Unpadded per-client (features, labels) of a TorchProblem (for rebuilding it with other options)."""
    X, Y = p._X.cpu().numpy(), p._Y.cpu().numpy()
    return ([X[i, :m] for i, m in enumerate(p.sizes)], [Y[i, :m] for i, m in enumerate(p.sizes)])


def test_float32_agrees_with_float64_and_returns_float64(smooth_mlp):
    p = smooth_mlp
    p32 = TorchProblem(p.model, *_data_of(p), reg=p.reg, dtype="float32")
    X = np.stack([p.initial_point(s) for s in range(3)])
    G32 = p32.grads(X)
    assert G32.dtype == np.float64 and p32._X.dtype == torch.float32
    np.testing.assert_allclose(G32, p.grads(X), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(p32.values(X), p.values(X), rtol=1e-5)
    assert not np.array_equal(G32, p.grads(X))  # really computed in single precision


def test_runs_are_bitwise_reproducible(smooth_mlp):
    x0 = smooth_mlp.initial_point()
    alg = FedAvg(local_steps=3, local_step=0.1, stochastic=True, participation=UniformSubset(2))
    a = run(alg, smooth_mlp, 4, seed=11, x0=x0)
    b = run(alg, smooth_mlp, 4, seed=11, x0=x0)
    c = run(alg, smooth_mlp, 4, seed=12, x0=x0)
    assert a.same_numbers(b)
    assert not np.array_equal(a.x_final, c.x_final)


def test_initial_point_is_seeded_and_leaves_global_rng_alone():
    model = mlp(6, 4, hidden=5)
    state = torch.get_rng_state()
    a, b, c = model.init_params(3), model.init_params(3), model.init_params(4)
    assert torch.equal(state, torch.get_rng_state())
    assert a.tobytes() == b.tobytes() and not np.array_equal(a, c)
    assert a.shape == (model.n_params,) == (6 * 5 + 5 + 5 * 4 + 4,)


def test_metrics_columns_in_trace(smooth_mlp):
    p = TorchProblem(smooth_mlp.model, *_data_of(smooth_mlp), batch_size=4,
                     test=(np.ones((3, 6)), np.array([0, 1, 3])))
    tr = run(FedProx(prox=0.1, solver="gd", local_steps=2, local_step=0.1), p, 3, seed=0, x0=p.initial_point())
    assert np.all(np.isnan(tr.dist2))
    np.testing.assert_array_equal(tr.gap, tr.loss)  # f_star = 0: the gap column is the training loss
    assert np.all((tr.accuracy >= 0) & (tr.accuracy <= 1)) and tr.test_accuracy.shape == (4,)
    assert tr.loss[-1] < tr.loss[0]
    assert p._certificate is None  # explicit steps: the L estimate was never needed


def test_estimated_smoothness_matches_exact_hessian_on_logistic_model():
    data = synthetic_fedprox(1.0, 1.0, 3, dim=4, n_classes=2, sizes=np.array([8, 5, 6]), seed=4)
    ref = LogisticProblem(data.features, data.labels, reg=0.01)
    tp = TorchProblem(logistic_regression(4, 2), data, reg=0.01, power_iters=300)
    H = ref.hessians(np.tile(tp.initial_point(), (3, 1)))
    top = np.linalg.eigvalsh(H)[:, -1]
    np.testing.assert_allclose(tp.certificate.L_i, top, rtol=1e-6)
    H_f = np.einsum("k,kij->ij", ref.weights, H)
    np.testing.assert_allclose(tp.certificate.L_f, np.linalg.eigvalsh(H_f)[-1], rtol=1e-6)
    c = tp.certificate
    assert np.all(np.isnan(c.x_star)) and c.f_star == 0.0 and not c.exact["L"]


def test_all_algorithms_run_on_a_neural_model():
    data, test = digits_federated(4, partition="lognormal", sigma=0.5, test_fraction=0.5, seed=1)
    p = TorchProblem(mlp(64, 10, hidden=4), data, batch_size=8, test=test)
    algs = [FedAvg(local_steps=2, local_step=0.1, stochastic=True),
            FedProx(prox=0.1, solver="gd", local_steps=2, local_step=0.1, stochastic=True),
            FedProx(prox=0.1, l1=1e-4, threshold=1e-4, solver="gd", local_steps=2, local_step=0.1),
            Scaffold(local_steps=2, local_step=0.1, stochastic=True),
            Scaffold(local_steps=2, local_step=0.1, l1=1e-4, threshold=1e-4),
            FedDyn(alpha=0.1, solver="gd", local_steps=2, local_step=0.1, stochastic=True),
            FedDyn(alpha=0.1, l1=1e-4, threshold=1e-4, solver="gd", local_steps=2, local_step=0.1),
            Scaffnew(step=0.1, p=0.5, stochastic=True),
            DANEPlus(lam=0.1, solver="gd", stopping="steps", local_steps=2),
            DANEPlus(lam=0.1, solver="gd", stopping="steps", local_steps=2, stochastic=True, local_step=0.1),
            FedRed(lam=0.1, eta=0.1, p=0.5, stochastic=True),
            DoCoFL(step=0.1, period=2, queue_size=2),
            EFL(E=2, step=0.1, lam=1e-3, s_min=1, participation=0.7)]
    for alg in algs:
        tr = run(alg, p, 2, seed=0, x0=p.initial_point())
        assert tr.status == "completed" and np.all(np.isfinite(tr.x_final)), alg.name


def test_exact_local_solves_raise_a_clear_error(smooth_mlp):
    with pytest.raises(NotImplementedError, match="solver='gd'"):
        smooth_mlp.solve_local(np.zeros((3, smooth_mlp.dim)), np.zeros((3, smooth_mlp.dim)), 1.0)
    with pytest.raises(NotImplementedError, match="not available for neural models"):
        run(FedProx(prox=0.1), smooth_mlp, 1, seed=0, x0=smooth_mlp.initial_point())


def test_partitions_and_datasets():
    for kind in ("iid", "dirichlet", "lognormal"):
        data, (tx, ty) = digits_federated(5, partition=kind, seed=0)
        assert data.n_clients == 5 and data.sizes.min() >= 1
        assert data.sizes.sum() + len(ty) == 1797
        assert all(set(np.unique(y)) <= set(range(10)) for y in data.labels)
    # stratified: every class keeps about 20% in the test set
    _, (_, ty) = digits_federated(5, seed=0)
    assert np.all(np.abs(np.bincount(ty, minlength=10) / len(ty) - 0.1) < 0.01)
    data, (tx, ty) = synthetic_multinomial(1.0, 1.0, 4, sizes=10, seed=0)
    assert tx.shape[1] == 60 and np.all(data.sizes == 8) and ty.max() <= 9


@pytest.mark.parametrize("kwargs, match", [
    ({"dtype": "float16"}, "dtype"),
    ({"loss": "hinge"}, "loss"),
    ({"loss": "logistic"}, "one-output"),
    ({"reg": -1.0}, "reg"),
    ({"batch_size": 0}, "batch_size"),
    ({"weights": "sizes"}, "weights"),
    ({"power_iters": -1}, "power_iters"),
])
def test_bad_options(kwargs, match):
    data = _multiclass_data()
    with pytest.raises(ValueError, match=match):
        TorchProblem(mlp(6, 4, hidden=3), data, **kwargs)


def test_bad_data_and_calls(smooth_mlp):
    model = mlp(6, 4, hidden=3)
    good = _multiclass_data()
    with pytest.raises(ValueError, match="in_features=6"):
        TorchProblem(model, [np.ones((3, 5))], [np.zeros(3, dtype=int)])
    with pytest.raises(ValueError, match=r"integers in \[0, 3\]"):
        TorchProblem(model, [np.ones((3, 6))], [np.array([0, 4, 1])])
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        TorchProblem(logistic_regression(6, 2), [np.ones((2, 6))], [np.array([0.0, 1.0])])
    with pytest.raises(ValueError, match="finite"):
        TorchProblem(model, [np.full((2, 6), np.nan)], [np.array([0, 1])])
    with pytest.raises(ValueError, match="non-empty"):
        TorchProblem(model, [], [])
    with pytest.raises(TypeError, match="FlatModel"):
        TorchProblem(torch.nn.Linear(6, 4), good)
    with pytest.raises(ValueError, match="shape"):
        smooth_mlp.grads(np.zeros((2, smooth_mlp.dim)))
    with pytest.raises(ValueError, match="clients"):
        smooth_mlp.grads(np.zeros((1, smooth_mlp.dim)), np.array([7]))
    with pytest.raises(ValueError, match="kind"):
        smooth_mlp.fisher_diag(np.zeros((3, smooth_mlp.dim)), kind="observed")
    with pytest.raises(ValueError, match="activation"):
        mlp(6, 4, hidden=3, activation="gelu")
    with pytest.raises(ValueError, match="channels"):
        cnn_digits(channels=(4,))


def test_origin_shifts_coordinates_only(smooth_mlp):
    p = smooth_mlp
    shifted = TorchProblem(p.model, *_data_of(p), reg=p.reg, batch_size=p.batch_size, origin="init")
    np.testing.assert_array_equal(shifted.initial_point(), np.zeros(p.dim))
    X = np.random.default_rng(2).standard_normal((3, p.dim)) * 0.1
    theta = X + p.initial_point()
    np.testing.assert_allclose(shifted.grads(X), p.grads(theta), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(shifted.values(X), p.values(theta), rtol=1e-13)
    assert shifted.metrics(X[0])["loss"] == pytest.approx(p.metrics(theta[0])["loss"], rel=1e-13)
    with pytest.raises(ValueError, match="origin"):
        TorchProblem(p.model, *_data_of(p), origin="zero")
    with pytest.raises(ValueError, match="origin"):
        TorchProblem(p.model, *_data_of(p), origin=np.zeros(3))


@pytest.mark.parametrize("source, model", [("digits", "logistic"), ("digits", "cnn"), ("synthetic", "mlp")])
def test_neural_problem_generator(source, model):
    from fedtheory.torch import neural_problem

    p = neural_problem(source, model, 3, hidden=4, samples=12, seed=1, power_iters=2)
    assert p.n_clients == 3 and p.model.in_features == (64 if source == "digits" else 60)
    m = p.metrics(np.zeros(p.dim))
    assert np.isfinite(m["loss"]) and 0 <= m["test_accuracy"] <= 1
    assert neural_problem(source, model, 3, hidden=4, samples=12, seed=1).origin.tobytes() == p.origin.tobytes()
    with pytest.raises(ValueError, match="model"):
        neural_problem(source, "resnet", 3)


def test_neural_instance_runs_through_fedtheory_bench(tmp_path):
    """A catalogue spec naming fedtheory.torch.neural_problem is benchmarked by `fedtheory bench` sweeps, and the
    neural metrics arrive as extra.* columns."""
    import json

    pytest.importorskip("pandas", reason="fedtheory bench needs the bench extra (pandas)")
    from fedtheory.bench import SweepSpec, read_results, sweep

    root = tmp_path / "cat"
    root.mkdir()
    (root / "digits-mlp4.json").write_text(json.dumps(
        {"name": "digits-mlp4", "version": 1, "generator": "fedtheory.torch.neural_problem",
         "params": {"n_clients": 4, "hidden": 4, "batch_size": 8, "power_iters": 2}, "seed": 0}))
    spec = SweepSpec.from_dict({"problems": ["digits-mlp4"], "catalogue_root": str(root), "rounds": 3,
                                "stop_at_eps": False, "algorithms": [
                                    {"name": "fedprox", "grid": {"solver": "gd", "prox": 0.01, "local_steps": 2,
                                                                 "local_step": 0.1, "stochastic": True}}]})
    res = sweep(spec, tmp_path / "out", progress=False, report=False, fmt="csv")
    assert res.statuses == {"completed": 1}
    df = read_results(tmp_path / "out")
    assert len(df) == 4 and df["extra.accuracy"].between(0, 1).all() and df["gap"].iloc[-1] < df["gap"].iloc[0]


def test_fisher_chunks_and_kinds_agree(smooth_mlp, monkeypatch):
    import fedtheory.torch.problem as tp

    X = np.stack([smooth_mlp.initial_point(s) for s in range(3)])
    whole = smooth_mlp.fisher_diag(X)
    monkeypatch.setattr(tp, "FISHER_CHUNK_BYTES", 1)  # one client per chunk
    np.testing.assert_allclose(smooth_mlp.fisher_diag(X), whole, rtol=1e-13)
    emp = smooth_mlp.fisher_diag(X, kind="empirical")
    assert np.all(emp >= smooth_mlp.reg) and not np.allclose(emp, whole)
    p_emp = TorchProblem(smooth_mlp.model, *_data_of(smooth_mlp), reg=smooth_mlp.reg, fisher="empirical")
    np.testing.assert_allclose(p_emp.fisher_diag(X), emp, rtol=1e-13)
    with pytest.raises(ValueError, match="fisher"):
        TorchProblem(smooth_mlp.model, *_data_of(smooth_mlp), fisher="observed")


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=15)
@given(n=st.integers(1, 3), hidden=st.integers(1, 4), C=st.integers(2, 4), reg=st.sampled_from([0.0, 0.1]),
       seed=st.integers(0, 2**16))
def test_grads_match_finite_differences_on_drawn_mlps(n, hidden, C, reg, seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, n)
    feats = [rng.standard_normal((m, 3)) for m in sizes]
    labs = [rng.integers(0, C, m) for m in sizes]
    p = TorchProblem(mlp(3, C, hidden=hidden, activation="tanh"), feats, labs, reg=reg)
    X = np.stack([p.initial_point(seed + i) for i in range(n)])
    V = rng.standard_normal(X.shape)
    exact = np.einsum("kd,kd->k", p.grads(X), V)
    np.testing.assert_allclose(_fd_directional(p, X, V), exact, rtol=1e-6, atol=1e-8)
    loop = TorchProblem(p.model, feats, labs, reg=reg, vectorize=False)
    np.testing.assert_allclose(loop.grads(X), p.grads(X), rtol=1e-11, atol=1e-14)
