"""Cross-device scale: the structured family's certificate and oracles against dense linear algebra, the
persistent client table's semantics, and rounds whose cost is that of the participants (the claims at this scale:
tests/claims/classic/test_scale.py)."""
from __future__ import annotations

import math
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fedtheory.algorithms import Draw, FedAvg, FedDyn, FedProx, Scaffold
from fedtheory.algorithms.client_table import ClientTable, as_table
from fedtheory.participation import UniformSubset
from fedtheory.problems import SharedBasisQuadratic, quadratic, structured_quadratic
from fedtheory.problems import structured as structured_module

ROOT = Path(__file__).resolve().parents[2]


def dense_of(problem: SharedBasisQuadratic) -> tuple[np.ndarray, np.ndarray]:
    """A_i = Q diag(s_i) Q^T and b_i = Q c_i as dense arrays (small n only)."""
    Q = np.eye(problem.dim) if problem.Q is None else problem.Q
    A = np.einsum("jk,nk,lk->njl", Q, problem.s, Q)
    return 0.5 * (A + np.swapaxes(A, 1, 2)), problem.c @ Q.T


@pytest.mark.parametrize("basis", ["identity", "random"])
@pytest.mark.parametrize("request_kw", [{"delta_A": 0.5}, {"delta_B": 0.7}, {}])
def test_certificate_is_exact_against_dense_linear_algebra(basis, request_kw):
    n, d = 400, 6
    p = structured_quadratic(n, d, mu=0.3, L=3.0, zeta2=2.0, basis=basis, seed=3, **request_kw)
    A, b = dense_of(p)
    w = p.weights
    A_bar, b_bar = np.tensordot(w, A, axes=1), w @ b
    x_star = np.linalg.solve(A_bar, b_bar)
    E = A - A_bar
    ev = np.linalg.eigvalsh(A)
    delta_B = float(np.abs(np.linalg.eigvalsh(E)).max())
    delta_A = float(np.sqrt(np.linalg.eigvalsh(np.einsum("n,nij,njk->ik", w, E, E))[-1]))
    G = np.einsum("nij,j->ni", A, x_star) - b
    c = p.certificate
    tol = 1e-13
    assert abs(c.mu - ev.min()) <= tol and abs(c.L - ev.max()) <= tol
    assert c.mu == 0.3 and c.L == 3.0  # the requested extremes, hit exactly
    assert abs(c.delta_A - delta_A) <= tol and abs(c.delta_B - delta_B) <= tol
    assert abs(c.zeta2 - float(w @ np.sum(G * G, axis=1))) <= tol
    assert np.allclose(c.x_star, x_star, rtol=0, atol=1e-13)
    assert abs(c.f_star - float(0.5 * x_star @ A_bar @ x_star - b_bar @ x_star)) <= tol
    # the request itself
    assert c.zeta2 == pytest.approx(2.0, rel=1e-13)
    for name, value in request_kw.items():
        assert getattr(c, name) == pytest.approx(value, rel=1e-13)
    if not request_kw:
        assert c.delta_A == 0.0 and c.delta_B == 0.0
    assert np.linalg.norm(c.x_star) == pytest.approx(1.0, rel=1e-13)


@pytest.mark.parametrize("basis", ["identity", "random"])
def test_oracles_on_subsets_match_dense(basis):
    n, d = 300, 5
    p = structured_quadratic(n, d, mu=0.2, L=2.0, delta_A=0.4, zeta2=1.0, basis=basis, seed=1)
    A, b = dense_of(p)
    rng = np.random.default_rng(0)
    idx = np.array([0, 7, 299, 150])
    X = rng.standard_normal((idx.size, d))
    lin = rng.standard_normal((idx.size, d))
    ctr = rng.standard_normal((idx.size, d))
    Ai, bi = A[idx], b[idx]
    np.testing.assert_allclose(p.grads(X, idx), np.einsum("nij,nj->ni", Ai, X) - bi, atol=1e-13)
    np.testing.assert_allclose(p.hess_vec(X, idx), np.einsum("nij,nj->ni", Ai, X), atol=1e-13)
    np.testing.assert_allclose(p.fisher_diag(X, idx), np.diagonal(Ai, axis1=1, axis2=2), atol=1e-13)
    np.testing.assert_allclose(p.values(X, idx), 0.5 * np.einsum("ni,nij,nj->n", X, Ai, X) - np.sum(bi * X, 1),
                               atol=1e-13)
    for lam in (0.7, np.array([0.1, 1.0, 2.0, 5.0])):
        lam_col = np.reshape(lam, (-1, 1, 1)) if np.ndim(lam) else lam
        M = Ai + lam_col * np.eye(d)
        rhs = bi - lin + np.reshape(lam, (-1, 1)) * ctr
        np.testing.assert_allclose(p.solve_local(lin, ctr, lam, clients=idx),
                                   np.linalg.solve(M, rhs[..., None])[..., 0], atol=1e-12)
    # all clients, and the global oracles in O(d^2)
    Xall = rng.standard_normal((n, d))
    np.testing.assert_allclose(p.grads(Xall), np.einsum("nij,nj->ni", A, Xall) - b, atol=1e-12)
    x = rng.standard_normal(d)
    A_bar, b_bar = np.tensordot(p.weights, A, axes=1), p.weights @ b
    np.testing.assert_allclose(p.grad(x), A_bar @ x - b_bar, atol=1e-13)
    assert p.value(x) == pytest.approx(0.5 * x @ A_bar @ x - b_bar @ x, abs=1e-13)
    e = x - p.certificate.x_star
    assert p.gap(x) == pytest.approx(0.5 * e @ A_bar @ e, abs=1e-13)
    np.testing.assert_allclose(p.mean_hessian(), A_bar, atol=1e-13)


def test_exact_l1_solve_on_the_identity_basis_satisfies_its_optimality_conditions():
    p = structured_quadratic(50, 4, mu=0.5, L=2.0, delta_B=0.3, zeta2=1.0, basis="identity", seed=2)
    rng = np.random.default_rng(1)
    lin, ctr = rng.standard_normal((50, 4)), rng.standard_normal((50, 4))
    lam, l1 = 0.3, 0.4
    X = p.solve_local(lin, ctr, lam, l1=l1)
    # 0 in grad f_i(x) + lin + lam (x - ctr) + l1 d|x - ctr|: coordinate-wise subgradient condition
    g = p.grads(X) + lin + lam * (X - ctr)
    u = X - ctr
    moved = np.abs(u) > 1e-14
    np.testing.assert_allclose(g[moved], -l1 * np.sign(u[moved]), atol=1e-12)
    assert np.all(np.abs(g[~moved]) <= l1 + 1e-12)
    rotated = structured_quadratic(10, 3, mu=0.5, L=2.0, basis="random", seed=0)
    with pytest.raises(ValueError, match="axis-aligned"):
        rotated.solve_local(np.zeros((10, 3)), np.zeros((10, 3)), 1.0, l1=0.1)


def test_same_api_as_the_dense_generator_and_arrays_round_trip():
    p = quadratic(200, 5, mu=0.1, L=1.0, delta_A=0.2, zeta2=0.5, hessians="eigenbasis", seed=4)
    assert isinstance(p, SharedBasisQuadratic) and p.hessians == "eigenbasis"
    q = SharedBasisQuadratic.from_arrays({k: v.copy() for k, v in p.arrays().items()})
    assert q.certificate.delta_A == p.certificate.delta_A and np.array_equal(q.certificate.x_star, p.certificate.x_star)
    # the defining arrays are read-only: the certificate cannot go stale
    with pytest.raises(ValueError):
        p.s[0, 0] = 5.0


def test_generation_does_not_depend_on_the_number_of_threads(monkeypatch):
    monkeypatch.setattr(structured_module, "CHUNK_ROWS", 64)
    monkeypatch.setattr(structured_module, "THREADS", 1)
    one = structured_quadratic(1000, 6, mu=0.1, L=1.0, delta_A=0.2, zeta2=1.0, seed=5)
    monkeypatch.setattr(structured_module, "THREADS", 3)
    three = structured_quadratic(1000, 6, mu=0.1, L=1.0, delta_A=0.2, zeta2=1.0, seed=5)
    assert np.array_equal(one.s, three.s) and np.array_equal(one.c, three.c)
    assert one.certificate.zeta2 == three.certificate.zeta2 and one.certificate.delta_A == three.certificate.delta_A


def test_infeasible_and_oversized_requests_are_refused_before_allocating(monkeypatch):
    with pytest.raises(ValueError, match="delta_A"):
        structured_quadratic(100, 5, mu=0.1, L=1.0, delta_A=2.0)
    with pytest.raises(ValueError, match="basis"):
        structured_quadratic(100, 5, mu=0.1, L=1.0, basis="dense")
    import fedtheory.validation as validation

    monkeypatch.setattr(validation, "available_memory", lambda: 10**9)
    monkeypatch.setattr(structured_module, "available_memory", lambda: 10**9)
    with pytest.raises(ValueError, match="n_clients=10000000 is too large"):
        structured_quadratic(10**7, 100, mu=0.1, L=1.0)
    # a dense request that cannot fit names the structured alternative, before anything is allocated
    with pytest.raises(ValueError, match="hessians='eigenbasis'"):
        quadratic(10**6, 100, mu=0.1, L=1.0)


# ----- the persistent client table -----

def test_client_table_keeps_every_version_readable():
    rng = np.random.default_rng(0)
    base = rng.standard_normal((20, 3))
    t0 = ClientTable.from_array(base)
    versions, arrays = [t0], [base.copy()]
    for _k in range(30):  # a chain, with branches from old versions in between
        src = int(rng.integers(len(versions)))
        idx = np.sort(rng.choice(20, size=int(rng.integers(1, 6)), replace=False))
        vals = rng.standard_normal((idx.size, 3))
        versions.append(versions[src].with_rows(idx, vals))
        expected = arrays[src].copy()
        expected[idx] = vals
        arrays.append(expected)
    for _ in range(3):
        for v, a in zip(rng.permutation(len(versions)), rng.permutation(len(versions))):
            assert np.array_equal(np.asarray(versions[v]), arrays[v])
            assert np.array_equal(versions[a].rows(np.array([0, 5])), arrays[a][[0, 5]])
    # array-like behaviour used by analysis code, on a copy
    t = versions[-1]
    w = np.full(20, 0.05)
    assert np.array_equal(w @ t, w @ arrays[-1]) and np.array_equal(t - 1.0, arrays[-1] - 1.0)
    assert t.shape == (20, 3) and len(t) == 20 and float(t.max()) == float(arrays[-1].max())
    row = t[3]
    row[:] = 99.0  # a copy: the table is unchanged
    assert np.array_equal(np.asarray(t), arrays[-1])
    assert np.array_equal(np.asarray(pickle.loads(pickle.dumps(t))), arrays[-1])
    assert as_table(t) is t


def test_client_table_long_chain_rerooting_is_iterative():
    t = ClientTable.zeros(4, 2)
    first = t
    for k in range(5000):
        t = t.with_rows(np.array([k % 4]), np.full((1, 2), float(k)))
    assert np.array_equal(np.asarray(first), np.zeros((4, 2)))  # 5000 diffs back, no recursion limit
    assert np.asarray(t)[3, 0] == 4999.0


def _counting(problem):
    """Wrap the oracles to record how many client rows each call touched."""
    touched = []
    for name in ("grads", "solve_local", "values", "stochastic_grads"):
        orig = getattr(problem, name)

        def wrapper(*args, _orig=orig, **kwargs):
            clients = kwargs.get("clients", args[-1] if args and isinstance(args[-1], np.ndarray)
                                 and args[-1].dtype.kind == "i" else None)
            touched.append(problem.n_clients if clients is None else len(clients))
            return _orig(*args, **kwargs)
        setattr(problem, name, wrapper)
    return touched


@pytest.mark.parametrize("make", [
    lambda S: FedAvg(local_steps=3, local_step=0.5, participation=UniformSubset(S)),
    lambda S: FedProx(prox=1.0, participation=UniformSubset(S)),
    lambda S: Scaffold(local_steps=3, local_step=0.5, participation=UniformSubset(S)),
    lambda S: Scaffold(local_steps=3, local_step=0.5, option="I", participation=UniformSubset(S)),
    lambda S: FedDyn(alpha=1.0, participation=UniformSubset(S)),
    lambda S: FedDyn(alpha=1.0, solver="gd", local_steps=3, participation=UniformSubset(S)),
], ids=["fedavg", "fedprox", "scaffold-II", "scaffold-I", "feddyn", "feddyn-gd"])
def test_a_round_touches_only_its_participants(make, monkeypatch):
    n, S = 20000, 7
    problem = structured_quadratic(n, 4, mu=0.1, L=1.0, delta_A=0.2, zeta2=1.0, seed=0)
    alg = make(S)
    state = alg.init(problem, np.zeros(4))
    touched = _counting(problem)

    def refuse(self):
        raise AssertionError("a round materialised the whole (n, d) client table")
    monkeypatch.setattr(ClientTable, "to_array", refuse)
    rng = np.random.default_rng(0)
    for _ in range(5):
        state, log = alg.round(problem, state, rng)
        assert log.participants == S
    assert touched and max(touched) == S


def test_rounds_from_one_state_do_not_disturb_each_other():
    """outcomes() enumerates every subset from the same state: each branch sees the state it started from."""
    problem = structured_quadratic(6, 3, mu=0.2, L=1.0, delta_A=0.2, zeta2=1.0, seed=1)
    for alg in (Scaffold(local_steps=2, local_step=0.5, participation=UniformSubset(2)),
                FedDyn(alpha=1.0, participation=UniformSubset(2))):
        state = alg.init(problem, np.zeros(3))
        state, _ = alg.round_given(problem, state, Draw(np.array([1, 4])))
        table_name = "C" if isinstance(alg, Scaffold) else "G"
        before = np.asarray(getattr(state, table_name))
        branches = []
        for draw, _ in alg.outcomes(problem, state):
            new, _ = alg.round_given(problem, state, draw)
            branches.append((draw.clients, new, np.asarray(getattr(new, table_name))))
        # the parent is unchanged, and each child differs from it in its own rows only
        assert np.array_equal(np.asarray(getattr(state, table_name)), before)
        for clients, new, snapshot in branches:
            now = np.asarray(getattr(new, table_name))
            assert np.array_equal(now, snapshot)
            others = np.setdiff1d(np.arange(6), clients)
            assert np.array_equal(now[others], before[others])
        # the same state given as a plain ndarray (a caller's state) gives bitwise the same round
        plain = type(state)(**{**state.__dict__, table_name: before.copy()})
        a, _ = alg.round_given(problem, state, Draw(np.array([0, 2])))
        b, _ = alg.round_given(problem, plain, Draw(np.array([0, 2])))
        assert np.array_equal(a.x, b.x) and np.array_equal(np.asarray(getattr(a, table_name)),
                                                          np.asarray(getattr(b, table_name)))


def test_bench_scale_prints_the_scale_line():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_scale.py"), "--n", "20000", "--d", "10",
                          "--S", "50", "--rounds", "3"], capture_output=True, text=True, check=True, timeout=300)
    last = out.stdout.strip().splitlines()[-1]
    assert last.startswith("SCALE n=20000 d=10 generate_s=")
    fields = dict(kv.split("=") for kv in last.split()[1:])
    assert set(fields) == {"n", "d", "generate_s", "round_ms", "ratio_vs_reference", "peak_rss_gb"}
    assert all(float(v) > 0 for v in fields.values())


# ----- cross-device catalogue instances: generated from a seed, checked against a fingerprint -----

def test_cross_device_catalogue_instances_are_fingerprinted_not_shipped(tmp_path):
    import json
    import shutil

    from fedtheory import catalogue

    xdev = catalogue.names("xdev-*")
    assert len(xdev) >= 2
    for name in xdev:
        s = catalogue.spec(name)
        assert not s.ship_arrays and s.params["n_clients"] >= 10**5
        assert not (catalogue.CATALOGUE_DIR / f"{name}.npz").exists()
        record = catalogue.read_certificate(name)
        assert record["arrays_shipped"] is False and record["arrays_sha256"] is None
        assert set(record["fingerprint"]) == {"Q", "c", "s", "weights"} - ({"Q"} if s.params["basis"] == "identity"
                                                                           else set())
        c = record["constants"]
        scale = s.params["L"]
        assert abs(c["mu"] - s.params["mu"]) <= 1e-12 * scale and abs(c["L"] - s.params["L"]) <= 1e-12 * scale
        for key in ("delta_A", "delta_B"):
            if key in s.params:
                assert abs(c[key] - s.params[key]) <= 1e-12 * scale
        assert math.isclose(c["zeta2"], s.params["zeta2"], rel_tol=1e-12)
    # a drifted generator (one fingerprint entry moved by 1e-9 relative) is reported, and so is an edited spec
    name = "xdev-eigen-n100000-d20"
    root = tmp_path / "cat"
    root.mkdir()
    for suffix in (".json", ".cert.json"):
        shutil.copy(catalogue.CATALOGUE_DIR / f"{name}{suffix}", root / f"{name}{suffix}")
    assert catalogue.verify(name, root).ok
    assert isinstance(catalogue.load(name, root), SharedBasisQuadratic)
    cert = json.loads((root / f"{name}.cert.json").read_text())
    cert["fingerprint"]["s"]["values"][1][3] *= 1 + 1e-9
    (root / f"{name}.cert.json").write_text(json.dumps(cert))
    result = catalogue.verify(name, root)
    assert not result.ok and "s.values" in str(result)
    spec_data = json.loads((root / f"{name}.json").read_text())
    spec_data["seed"] += 1
    (root / f"{name}.json").write_text(json.dumps(spec_data))
    assert not catalogue.verify(name, root).spec_ok


def test_bernoulli_draw_at_scale_costs_what_participates_and_has_the_bernoulli_law():
    from fedtheory.participation import SPARSE_DRAW_MIN_CLIENTS, Bernoulli

    # below the threshold: the one-coin-per-client stream, bitwise as before
    small = Bernoulli(0.3)
    a = small.draw(100, np.random.default_rng(4))
    assert np.array_equal(a, np.flatnonzero(np.random.default_rng(4).random(100) < 0.3))
    # at scale: count ~ Binomial(n, p), members uniform (the Bernoulli product law), sorted and distinct
    n, p, draws = SPARSE_DRAW_MIN_CLIENTS, 0.01, 2000
    rng = np.random.default_rng(5)
    counts = np.empty(draws)
    hits = np.zeros(16)
    for k in range(draws):
        s = Bernoulli(p).draw(n, rng)
        assert np.all(np.diff(s) > 0) and (s.size == 0 or (s[0] >= 0 and s[-1] < n))
        counts[k] = s.size
        hits += np.bincount(s * 16 // n, minlength=16)
    mean, var = n * p, n * p * (1 - p)
    assert abs(counts.mean() - mean) <= 5 * np.sqrt(var / draws)
    assert 0.85 <= counts.var(ddof=1) / var <= 1.15
    expected = hits.sum() / 16
    chi2 = float(np.sum((hits - expected) ** 2 / expected))
    assert chi2 <= 45.0  # chi-square with 15 degrees of freedom: P(chi2 > 45) < 1e-4


def test_an_efl_round_touches_only_its_active_clients_rows(monkeypatch):
    """EFL (Ma et al., Alg. 1) keeps five (n, d) per-client arrays; a round updates the active clients' rows only
    (the Bernoulli draw of who is active is O(n) scalars, not O(n d))."""
    from fedtheory.algorithms.efl import EFL

    n = 20000
    problem = structured_quadratic(n, 4, mu=0.1, L=1.0, delta_A=0.2, zeta2=1.0, seed=0)
    alg = EFL(E=3, step=0.02, lam=0.05, q=0.5, s_min=1, s_max=3, participation=5.0 / n, uv_sum="reporters")
    state = alg.init(problem, np.zeros(4))
    touched = _counting(problem)

    def refuse(self):
        raise AssertionError("a round materialised a whole (n, d) client table")
    monkeypatch.setattr(ClientTable, "to_array", refuse)
    rng = np.random.default_rng(0)
    active = 0
    for _ in range(5):
        state, log = alg.round(problem, state, rng)
        active += log.participants
    assert active > 0 and max(touched, default=0) <= 20


@pytest.mark.parametrize("make", [
    lambda: quadratic(10**6, 100, mu=0.1, L=1.0),
    lambda: __import__("fedtheory.problems", fromlist=["x"]).general_convex_quadratic(10**6, 100, L=1.0),
    lambda: __import__("fedtheory.problems", fromlist=["x"]).outlier_quadratic(10**6, 100, mu=0.1, L=1.0,
                                                                                delta_B=0.1),
    lambda: __import__("fedtheory.problems", fromlist=["x"]).vary_delta_family(10**6, 100, mu=0.1, L=1.0,
                                                                                deltas=[0.1]),
    lambda: __import__("fedtheory.problems", fromlist=["x"]).nonconvex(10**6, 100),
    lambda: __import__("fedtheory.problems", fromlist=["x"]).logistic_perturbed(10**6, 100),
], ids=["quadratic", "general_convex", "outlier", "vary_delta_family", "nonconvex", "logistic_perturbed"])
def test_every_dense_generator_refuses_before_allocating_and_names_the_structured_family(make, monkeypatch):
    import tracemalloc

    import fedtheory.validation as validation

    monkeypatch.setattr(validation, "available_memory", lambda: 4 * 2**30)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"hessians='eigenbasis'") as info:
            make()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "n_clients" in str(info.value) and "dim" in str(info.value)
    assert peak < 50 * 2**20  # refused before any (n, d, d) array existed
