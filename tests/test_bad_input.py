"""Bad input gets a clear error naming the parameter (issue 14), at every public entry point.

The tables below hold one *valid* call per entry point. The spoiling tests replace one argument at a time by
a value that no parameter of its kind accepts -- NaN for a real number, 2.5 or a string for an integer count,
a string for a real number, an array holding a NaN for an array, an unknown name for a choice -- and require
the stated exception type with the parameter's name (as a whole word) in the message. The valid calls are
run as they are too, so that a table entry cannot rot into a call that fails for some other reason (which
would make its spoiled variants pass vacuously).

Also here: the three cases of issue 14 as reported, the shared seed validator, the oracle entry checks
(shapes, client indices, NaN), ``run``, algorithm and compressor hyperparameters, and the CLI.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fedtheory import cli
from fedtheory.algorithms import ALGORITHMS, FedAvg, FedProx, GradientDescent, Scaffold
from fedtheory.compressors import COMPRESSORS
from fedtheory.problems import (
    NonFiniteInputError,
    QuadraticProblem,
    dirichlet_partition,
    general_convex_quadratic,
    iid_partition,
    logistic,
    logistic_perturbed,
    lognormal_partition,
    measure_dissimilarity,
    nonconvex,
    outlier_quadratic,
    partition,
    quadratic,
    shard_partition,
    synthetic_fedprox,
    vary_delta,
    vary_delta_family,
    vary_L,
)
from fedtheory.problems.logistic import LogisticProblem
from fedtheory.problems.nonconvex import NonconvexProblem
from fedtheory.problems.online import OnlineProblem, online_from_dataset, online_logistic, online_ridge
from fedtheory.run import run
from fedtheory.theory import classic, docofl, efl, fedelasticnet, fedred, gd, ofediq


def names(param: str) -> str:
    """Regex: the parameter's name as a whole word (so that 'N' does not match inside 'NaN')."""
    return rf"(?<![\w.]){re.escape(param)}(?!\w)"


def _spoilers(value):
    """(bad value, expected exception type) pairs for one argument, from the kind of its valid value."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, np.integer)):
        return [(2.5, TypeError), ("3", TypeError)]
    if isinstance(value, (float, np.floating)):
        return [(math.nan, ValueError), ("x", TypeError)]
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf" and value.size:
        bad = value.astype(np.float64)
        bad.flat[0] = math.nan
        return [(bad, ValueError)]
    if isinstance(value, str):
        return [("no-such-choice", ValueError)]
    return []


#: Known gaps, each with its reason; strict, so the mark fails (and must go) once the gap is closed.
KNOWN_GAPS: dict[tuple[str, str, str], str] = {}


def _spoiled_cases(table):
    """Flatten (id, function, valid kwargs) into (id, function, kwargs, parameter, bad value, exception)."""
    out = []
    for case_id, fn, kwargs in table:
        for param, value in kwargs.items():
            for bad, exc in _spoilers(value):
                reason = KNOWN_GAPS.get((case_id, param, repr(bad)))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                out.append(pytest.param(fn, kwargs, param, bad, exc, id=f"{case_id}-{param}={bad!r:.12}",
                                        marks=marks))
    return out


# ---------------------------------------------------------------------------------------------------------
# The three cases of issue 14, as reported
# ---------------------------------------------------------------------------------------------------------

def test_issue14_alpha_zero_with_dirichlet_split_is_refused():
    # alpha is Synthetic(alpha, beta)'s parameter; the Dirichlet concentration is dirichlet_alpha
    with pytest.raises(ValueError, match=r"alpha.*applies only to source='synthetic'.*dirichlet_alpha.*\(0, inf\)"):
        logistic("breast_cancer", 5, partition="dirichlet", alpha=0.0)
    with pytest.raises(ValueError, match=r"dirichlet_alpha must be in \(0.0, inf\]"):
        logistic("breast_cancer", 5, partition="dirichlet", dirichlet_alpha=0.0)


def test_issue14_string_seed_names_seed():
    with pytest.raises(TypeError, match=r"seed must be an integer >= 0, got str 'abc'"):
        quadratic(4, 3, mu=0.1, L=1.0, seed="abc")


def test_issue14_wrong_number_of_columns_names_X_and_the_shape():
    p = quadratic(4, 3, mu=0.1, L=1.0, seed=0)
    with pytest.raises(ValueError, match=re.escape("X must have shape (m, d) = (4, 3)") + r".*got shape \(4, 2\)"):
        p.grads(np.zeros((4, 2)))


# ---------------------------------------------------------------------------------------------------------
# Generators: problems, constructions, data, partitions, streams
# ---------------------------------------------------------------------------------------------------------

_LABELS = np.repeat([0, 1, 2], 8)


@functools.lru_cache(maxsize=None)
def _quad() -> QuadraticProblem:
    return quadratic(3, 2, mu=0.5, L=2.0, delta_A=0.1, zeta2=0.5, seed=0)


GENERATORS = [
    ("quadratic", quadratic, dict(n_clients=3, dim=2, mu=0.5, L=2.0, delta_A=0.1, zeta2=0.5, hessians="dense",
                                  x_star_norm=1.0, seed=0)),
    ("quadratic-deltaB", quadratic, dict(n_clients=3, dim=2, mu=0.5, L=2.0, delta_B=0.1, seed=0)),
    ("general_convex_quadratic", general_convex_quadratic, dict(n_clients=3, dim=3, L=2.0, mu_range=0.1,
                                                                delta_A=0.1, zeta2=0.5, null_dim=1, seed=0)),
    ("vary_delta_family", vary_delta_family, dict(n_clients=3, dim=2, mu=0.5, L=2.0, deltas=[0.1],
                                                  which="delta_A", zeta2=0.5, seed=0)),
    ("outlier_quadratic", outlier_quadratic, dict(n_clients=3, dim=2, mu=0.5, L=2.0, delta_A=0.1, zeta2=0.5,
                                                  x_star_norm=1.0, seed=0)),
    ("vary_L", lambda **kw: vary_L(_quad(), **kw), dict(L=3.0)),
    ("vary_delta", lambda **kw: vary_delta(_quad(), **kw), dict(scale=0.5)),
    ("measure_dissimilarity", measure_dissimilarity, dict(A=np.ones((3, 2)), b=np.ones((3, 2)))),
    ("QuadraticProblem", QuadraticProblem, dict(A=np.ones((3, 2)), b=np.ones((3, 2)), sigma2=0.0)),
    ("NonconvexProblem", NonconvexProblem, dict(E=np.zeros((3, 2, 2)), lin=np.ones((3, 2)), curvature=1.0, nu=0.1,
                                                sigma2=0.0, multistart=2, seed=0)),
    ("LogisticProblem", LogisticProblem, dict(features=np.ones((5, 2)), labels=np.array([1.0, -1.0, 1.0, -1.0, 1.0]),
                                              reg=0.1, n_clients=3, batch_size=2, sigma2=0.0)),
    ("logistic-synthetic", logistic, dict(source="synthetic", n_clients=3, reg=0.1, alpha=1.0, beta=1.0, dim=3,
                                          samples=10, weights="size", seed=0)),
    ("logistic-breast-cancer", logistic, dict(source="breast_cancer", n_clients=3, reg=0.1, partition="dirichlet",
                                              dirichlet_alpha=0.5, sigma=1.0, shards_per_client=2, seed=0)),
    ("logistic-digits", logistic, dict(source="digits", n_clients=3, reg=0.1, partition="shards",
                                       digits="two_class", positive=3, negative=5, batch_size=4, seed=0)),
    ("logistic_perturbed", logistic_perturbed, dict(n_clients=3, dim=3, reg=0.1, delta_A=0.5, zeta2=0.5,
                                                    samples=20, seed=0)),
    ("nonconvex", nonconvex, dict(n_clients=3, dim=2, curvature=1.0, nu=0.1, delta_B=0.5, zeta2=0.5,
                                  mean_linear=1.0, seed=0)),
    ("synthetic_fedprox", synthetic_fedprox, dict(alpha=1.0, beta=1.0, n_clients=3, dim=3, n_classes=2, sizes=10,
                                                  seed=0)),
    ("online_ridge", online_ridge, dict(n_clients=3, horizon=5, dim=2, heterogeneity=0.5, drift=0.1, noise=0.1,
                                        lam=0.01, seed=0)),
    ("online_logistic", online_logistic, dict(n_clients=3, horizon=5, dim=2, heterogeneity=0.5, drift=0.1,
                                              noise=0.5, lam=0.01, seed=0)),
    ("online_from_dataset", online_from_dataset, dict(name="breast_cancer", n_clients=3, horizon=5, loss="ridge",
                                                      heterogeneity=0.5, drift=0.5, lam=0.01, seed=0)),
    ("OnlineProblem", OnlineProblem, dict(features=np.ones((4, 2, 3)), labels=np.ones((4, 2)), loss="logistic",
                                          lam=0.1)),
    ("iid_partition", iid_partition, dict(n_samples=20, n_clients=3, seed=0)),
    ("lognormal_partition", lognormal_partition, dict(n_samples=20, n_clients=3, sigma=1.0, seed=0)),
    ("dirichlet_partition", dirichlet_partition, dict(labels=_LABELS, n_clients=3, alpha=1.0, seed=0)),
    ("shard_partition", shard_partition, dict(labels=_LABELS, n_clients=3, shards_per_client=2, seed=0)),
    ("partition", partition, dict(kind="shards", labels=_LABELS, n_clients=3, seed=0, alpha=0.5, sigma=1.0,
                                  shards_per_client=2)),
    ("with_noise", lambda **kw: _quad().with_noise(**kw), dict(sigma2=0.5)),
    ("with_minibatch", lambda **kw: logistic("synthetic", 2, dim=2, samples=5).with_minibatch(**kw),
     dict(batch_size=2)),
]


# Out-of-range values (the spoilers above only break the kind of a value) and cross-parameter rules.
@pytest.mark.parametrize("call, exc, param, valid_range", [
    (lambda: quadratic(3, 2, mu=-0.1, L=1.0), ValueError, "mu", r"\[0.0, inf\]"),
    (lambda: quadratic(3, 2, mu=1.0, L=0.5), ValueError, "L", r"\[1.0, inf\]"),
    (lambda: quadratic(3, 2, mu=0.5, L=2.0, delta_A=2.0), ValueError, "delta_A", r"\[0, L - mu\]"),
    (lambda: quadratic(3, 2, mu=0.5, L=2.0, hessians="sparse"), ValueError, "hessians", "'dense' or 'diagonal'"),
    (lambda: quadratic(3, 2, mu=0.5, L=2.0, weights=[1.0, 0.0, 1.0]), ValueError, "weights", "strictly positive"),
    (lambda: quadratic(3, 2, mu=0.5, L=2.0, weights="abc"), TypeError, "weights", "real array"),
    (lambda: logistic("breast_cancer", 3, beta=0.5), ValueError, "beta", "source='synthetic'"),
    (lambda: logistic("digits", 3, dim=8), ValueError, "dim", "source='synthetic'"),
    (lambda: logistic("digits", 3, samples=8), ValueError, "samples", "source='synthetic'"),
    (lambda: logistic("digits", 3, sigma=-1.0), ValueError, "sigma", r"\[0.0, inf\]"),
    (lambda: logistic("digits", 3, shards_per_client=0), ValueError, "shards_per_client", ">= 1"),
    (lambda: logistic("synthetic", 3, samples=5, partition="random"), ValueError, "partition", "'iid'"),
    (lambda: general_convex_quadratic(3, 3, L=1.0, null_dim=2), ValueError, "null_dim", "<= 1"),
    (lambda: vary_L("not a problem", 3.0), TypeError, "problem", "QuadraticProblem"),
    (lambda: vary_delta(_quad(), 1.5), ValueError, "scale", r"\[0.0, 1.0\]"),
    (lambda: iid_partition(3, 5), ValueError, "n_clients", r"\[1, n_samples\]"),
    (lambda: dirichlet_partition(np.zeros((2, 3)), 2, alpha=1.0), ValueError, "labels", "one-dimensional"),
    (lambda: online_from_dataset("mnist", 3, 5), ValueError, "name", "'breast_cancer' or 'digits'"),
    (lambda: online_ridge(3, 5, 2, heterogeneity=-1.0), ValueError, "heterogeneity", r"\[0.0, inf\]"),
])
def test_generator_out_of_range_names_parameter_and_range(call, exc, param, valid_range):
    with pytest.raises(exc, match=names(param)) as info:
        call()
    assert re.search(valid_range, str(info.value)), str(info.value)


# ---------------------------------------------------------------------------------------------------------
# The shared seed validator: every generator and run() accept int >= 0 and nothing else
# ---------------------------------------------------------------------------------------------------------

SEEDED = [(case_id, fn, kw) for case_id, fn, kw in GENERATORS if "seed" in kw] + [
    ("run", lambda **kw: run(GradientDescent(), _quad(), 1, **kw), dict(seed=0))]


@pytest.mark.parametrize("bad, exc, message", [
    ("abc", TypeError, "seed must be an integer >= 0"), (1.5, TypeError, "seed must be an integer >= 0"),
    (None, TypeError, "seed must be an integer >= 0"), (True, TypeError, "seed must be an integer >= 0"),
    (-1, ValueError, re.escape("seed must be an integer in [0, inf), got -1")),
    (np.random.SeedSequence(1), TypeError, "seed must be an integer >= 0")])
@pytest.mark.parametrize("fn, kwargs", [pytest.param(fn, kw, id=i) for i, fn, kw in SEEDED])
def test_every_seeded_entry_point_validates_the_seed(fn, kwargs, bad, exc, message):
    with pytest.raises(exc, match=message):
        fn(**{**kwargs, "seed": bad})


def test_numpy_integer_seed_is_the_same_seed():
    a = quadratic(3, 2, mu=0.5, L=2.0, delta_A=0.1, seed=np.int64(7))
    b = quadratic(3, 2, mu=0.5, L=2.0, delta_A=0.1, seed=7)
    assert np.array_equal(a.A, b.A) and np.array_equal(a.b, b.b)  # same generator, same machine: same bits


def test_run_accepts_a_generator_as_its_stream():
    a = run(GradientDescent(), _quad(), 3, seed=np.random.default_rng(5))
    b = run(GradientDescent(), _quad(), 3, seed=5)
    assert a.same_numbers(b)


# ---------------------------------------------------------------------------------------------------------
# Oracles: shapes, client indices, NaN
# ---------------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _problem(kind: str):
    return {
        "quadratic-dense": lambda: quadratic(4, 3, mu=0.5, L=2.0, delta_A=0.2, zeta2=0.5, seed=0),
        "quadratic-diagonal": lambda: quadratic(4, 3, mu=0.5, L=2.0, delta_A=0.2, hessians="diagonal", seed=0),
        "logistic": lambda: logistic("synthetic", 4, dim=3, samples=6, reg=0.1, seed=0),
        "logistic-minibatch": lambda: logistic("synthetic", 4, dim=3, samples=6, reg=0.1, batch_size=2, seed=0),
        "logistic-shared": lambda: logistic_perturbed(4, 3, reg=0.1, delta_A=0.2, samples=10, seed=0),
        "nonconvex": lambda: nonconvex(4, 3, delta_A=0.2, seed=0),
        "online-ridge": lambda: online_ridge(4, 5, 3, seed=0),
    }[kind]()


PROBLEMS = ["quadratic-dense", "quadratic-diagonal", "logistic", "logistic-minibatch", "logistic-shared",
            "nonconvex", "online-ridge"]
_RNG = np.random.default_rng(0)
ZERO, LAM = np.zeros((4, 3)), 1.0
ORACLE_CALLS = {  # name: (call(problem, *bad), bad arguments, exception, parameter)
    "grads-columns": (lambda p: p.grads(np.zeros((4, 2))), ValueError, "X"),
    "grads-rows": (lambda p: p.grads(np.zeros((3, 3))), ValueError, "X"),
    "grads-vector": (lambda p: p.grads(np.zeros(3)), ValueError, "X"),
    "values-columns": (lambda p: p.values(np.zeros((4, 4))), ValueError, "X"),
    "grads-clients-rows": (lambda p: p.grads(ZERO, clients=np.array([0, 1])), ValueError, "X"),
    "grads-clients-range": (lambda p: p.grads(np.zeros((1, 3)), clients=np.array([4])), ValueError, "clients"),
    "grads-clients-negative": (lambda p: p.grads(np.zeros((1, 3)), clients=np.array([-1])), ValueError, "clients"),
    "grads-clients-float": (lambda p: p.grads(np.zeros((1, 3)), clients=np.array([0.0])), ValueError, "clients"),
    "grads-clients-2d": (lambda p: p.grads(np.zeros((1, 3)), clients=np.array([[0]])), ValueError, "clients"),
    "values-clients-range": (lambda p: p.values(np.zeros((2, 3)), clients=[0, 9]), ValueError, "clients"),
    "stochastic_grads": (lambda p: p.stochastic_grads(np.zeros((4, 2)), _RNG), ValueError, "X"),
    "stochastic_grads-clients": (lambda p: p.stochastic_grads(np.zeros((1, 3)), _RNG, clients=[7]), ValueError,
                                 "clients"),
    "grad": (lambda p: p.grad(np.zeros(2)), ValueError, "x"),
    "grad-stacked": (lambda p: p.grad(ZERO), ValueError, "x"),
    "value": (lambda p: p.value(np.zeros(4)), ValueError, "x"),
    "gap": (lambda p: p.gap(np.zeros(2)), ValueError, "x"),
    "metrics": (lambda p: p.metrics(np.zeros(2)), ValueError, "x"),
    "solve_local-lin": (lambda p: p.solve_local(np.zeros((4, 2)), ZERO, LAM), ValueError, "lin"),
    "solve_local-center": (lambda p: p.solve_local(ZERO, np.zeros(3), LAM), ValueError, "center"),
    "solve_local-clients": (lambda p: p.solve_local(ZERO[:1], ZERO[:1], LAM, clients=[4]), ValueError, "clients"),
    "solve_local-lam-shape": (lambda p: p.solve_local(ZERO, ZERO, np.ones(3)), ValueError, "lam"),
    "solve_local-lam-nan": (lambda p: p.solve_local(ZERO, ZERO, math.nan), ValueError, "lam"),
    "solve_local-lam-negative": (lambda p: p.solve_local(ZERO, ZERO, -1.0), ValueError, "lam"),
    "solve_local-lam-string": (lambda p: p.solve_local(ZERO, ZERO, "big"), TypeError, "lam"),
}


@pytest.mark.parametrize("call", sorted(ORACLE_CALLS))
@pytest.mark.parametrize("kind", PROBLEMS)
def test_oracle_entry_check_names_the_argument(kind, call):
    fn, exc, param = ORACLE_CALLS[call]
    with pytest.raises(exc, match=names(param)):
        fn(_problem(kind))


@pytest.mark.parametrize("kind", ["logistic", "logistic-shared", "nonconvex"])
def test_smooth_hessians_check_their_input(kind):
    p = _problem(kind)
    with pytest.raises(ValueError, match=names("X")):
        p.hessians(np.zeros((4, 2)))
    with pytest.raises(ValueError, match=names("x")):
        p.hessian(np.zeros(2))


def test_online_stream_oracles_check_W_and_w():
    p = _problem("online-ridge")
    for call in (lambda: p.grads_at(0, np.zeros((3, 3))), lambda: p.losses_at(0, np.zeros(2))):
        with pytest.raises(ValueError, match=names("W")):
            call()
    with pytest.raises(ValueError, match=names("w")):
        p.sample_losses(np.zeros(2))
    with pytest.raises(ValueError, match=r"t must be in \[0, T-1\]"):
        p.grads_at(5, np.zeros(3))


NONFINITE_CALLS = {  # name: (call(problem, bad point (4, 3)), parameter it is passed as)
    "grads": (lambda p, B: p.grads(B), "X"),
    "values": (lambda p, B: p.values(B), "X"),
    "stochastic_grads": (lambda p, B: p.stochastic_grads(B, np.random.default_rng(1)), "X"),
    "grads-listed": (lambda p, B: p.grads(B[[0]], clients=[0]), "X"),
    "solve_local-lin": (lambda p, B: p.solve_local(B, ZERO, LAM), "lin"),
    "solve_local-center": (lambda p, B: p.solve_local(ZERO, B, LAM), "center"),
}


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("call", sorted(NONFINITE_CALLS))
@pytest.mark.parametrize("kind", PROBLEMS)
def test_nonfinite_point_is_refused_naming_the_argument_and_client(kind, call, value):
    """A batched oracle given NaN or inf raises (it used to return NaN-filled output silently), naming the
    argument and the client whose row is bad; NonFiniteInputError is a ValueError."""
    fn, param = NONFINITE_CALLS[call]
    p = _problem(kind)
    bad = np.full((4, 3), 0.5)
    bad[0, 1] = value
    with pytest.raises(NonFiniteInputError, match=names(param) + r" must be finite.*client\(s\) \[0\]"):
        fn(p, bad)
    assert issubclass(NonFiniteInputError, ValueError)


@pytest.mark.parametrize("oracle", ["value", "grad", "gap", "metrics"])
@pytest.mark.parametrize("kind", PROBLEMS)
def test_global_oracles_refuse_a_nonfinite_point_naming_x(kind, oracle):
    x = np.zeros(3)
    x[2] = math.nan
    with pytest.raises(NonFiniteInputError, match=names("x") + " must be finite"):
        getattr(_problem(kind), oracle)(x)


@pytest.mark.parametrize("kind", ["logistic", "logistic-shared", "nonconvex"])
def test_hessians_refuse_a_nonfinite_point(kind):
    bad = np.zeros((4, 3))
    bad[3, 0] = math.inf
    with pytest.raises(NonFiniteInputError, match=names("X") + r".*client\(s\) \[3\]"):
        _problem(kind).hessians(bad)


def test_online_stream_oracles_refuse_nonfinite_W_and_w():
    p = _problem("online-ridge")
    bad = np.zeros((4, 3))
    bad[1, 1] = math.nan
    for call in (lambda: p.grads_at(0, bad), lambda: p.losses_at(0, bad), lambda: p.grads_at(0, bad[1])):
        with pytest.raises(NonFiniteInputError, match=names("W")):
            call()
    with pytest.raises(NonFiniteInputError, match=names("w")):
        p.sample_losses(bad[1])


def test_a_broadcast_server_model_is_checked_on_its_one_row():
    p = _problem("quadratic-dense")
    x = np.zeros(3)
    x[1] = math.nan
    with pytest.raises(NonFiniteInputError, match=names("X") + r".*client\(s\) \[0, 1, 2, 3\]"):
        p.grads(p.broadcast(x))


@pytest.mark.parametrize("algorithm", [
    pytest.param(lambda: FedAvg(local_steps=200, local_step=50.0), id="fedavg-local-overflow"),
    pytest.param(lambda: Scaffold(local_steps=200, local_step=50.0), id="scaffold-local-overflow"),
    pytest.param(lambda: FedProx(prox=1.0, solver="gd", local_steps=200, local_step=50.0), id="fedprox-gd")])
def test_a_run_diverging_inside_a_round_still_ends_diverged(algorithm):
    """Local steps that overflow within one round reach the next oracle call with inf: the oracle refuses the
    point, and run() reports the run as diverged (not as a crash, and not with NaN-filled records)."""
    alg, p = algorithm(), _quad_run()
    state = alg.init(p, np.zeros(p.dim))
    with np.errstate(over="ignore", invalid="ignore"), pytest.raises(NonFiniteInputError):
        alg.round(p, state, np.random.default_rng(0))  # the path run() must turn into status "diverged"
    with np.errstate(over="ignore", invalid="ignore"):
        trace = run(alg, p, 50, seed=0)
    assert trace.status == "diverged" and trace.stopped_at == 1
    assert np.all(np.isfinite(trace.gap)) and np.all(np.isfinite(trace.x_final))


def test_a_run_diverging_between_rounds_still_ends_diverged():
    with np.errstate(over="ignore", invalid="ignore"):
        trace = run(GradientDescent(step=5.0), _quad_run(), 10_000, seed=0)
    assert trace.status == "diverged" and trace.stopped_at is not None and trace.stopped_at < 10_000
    assert np.all(np.isfinite(trace.gap))


@functools.lru_cache(maxsize=None)
def _quad_run() -> QuadraticProblem:
    return quadratic(5, 4, mu=0.1, L=1.0, delta_B=0.2, zeta2=1.0, seed=0)


def test_listed_clients_accept_integer_lists_and_empty_selections():
    p = _problem("quadratic-dense")
    X = np.ones((2, 3))
    assert np.array_equal(p.grads(X, clients=[1, 3]), p.grads(np.ones((4, 3)))[[1, 3]])
    assert p.grads(np.zeros((0, 3)), clients=np.zeros(0, dtype=np.int64)).shape == (0, 3)


# ---------------------------------------------------------------------------------------------------------
# run()
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, exc, param", [
    (dict(rounds="10"), TypeError, "rounds"), (dict(rounds=2.5), TypeError, "rounds"),
    (dict(rounds=-1), ValueError, "rounds"), (dict(record_every=0), ValueError, "record_every"),
    (dict(tol=math.nan), ValueError, "tol"), (dict(x0=np.zeros(5)), ValueError, "x0"),
    (dict(x0=np.array([0.0, math.nan])), ValueError, "x0"), (dict(x0="origin"), TypeError, "x0"),
    (dict(algorithm="gd"), TypeError, "algorithm"), (dict(algorithm=GradientDescent), TypeError, "algorithm"),
    (dict(problem="quad-kappa10-delta1"), TypeError, "problem"),
])
def test_run_rejects_bad_arguments_naming_them(kwargs, exc, param):
    call = {"algorithm": GradientDescent(), "problem": _quad(), "rounds": 2, **kwargs}
    with pytest.raises(exc, match=names(param)):
        run(**call)


# ---------------------------------------------------------------------------------------------------------
# Algorithm and compressor hyperparameters (every registered class, derived from its example())
# ---------------------------------------------------------------------------------------------------------

def _field_cases(registry):
    out = []
    for name in sorted(registry):
        example = registry[name].example()
        for f in dataclasses.fields(example):
            if not f.init:
                continue
            value = getattr(example, f.name)
            spoilers = [("yes", TypeError)] if isinstance(value, (bool, np.bool_)) else _spoilers(value)
            if value is None:  # an optional setting (None = a default derived from the problem): spoil by its type
                kind = str(f.type)
                spoilers = ([(2.5, TypeError)] if re.search(r"\bint\b", kind)
                            else [(math.nan, ValueError)] if re.search(r"\bfloat\b", kind) else [])
            for bad, exc in spoilers:
                out.append(pytest.param(registry[name], f.name, bad, exc, id=f"{name}-{f.name}={bad!r:.10}"))
    return out


@pytest.mark.parametrize("cls, field, bad, exc", _field_cases(ALGORITHMS))
def test_algorithm_hyperparameter_of_wrong_kind_is_refused(cls, field, bad, exc):
    with pytest.raises(exc, match=names(field)):
        dataclasses.replace(cls.example(), **{field: bad})


@pytest.mark.parametrize("cls, field, bad, exc", _field_cases(COMPRESSORS))
def test_compressor_parameter_of_wrong_kind_is_refused(cls, field, bad, exc):
    with pytest.raises(exc, match=names(field)):
        dataclasses.replace(cls.example(), **{field: bad})


@pytest.mark.parametrize("X, exc, pattern", [
    (np.zeros((0, 3)), ValueError, "X must be non-empty"), (np.zeros((2, 2, 2)), ValueError, r"X must have shape"),
    (np.array([[1.0, math.nan]]), ValueError, "X must be finite"), ([["a", "b"]], TypeError, "X must be a real array"),
])
@pytest.mark.parametrize("name", sorted(COMPRESSORS))
def test_compress_input_is_checked_naming_X(name, X, exc, pattern):
    with pytest.raises(exc, match=pattern):
        COMPRESSORS[name].example().compress(X, np.random.default_rng(0))


@pytest.mark.parametrize("rng", [None, 0, "seed"])
@pytest.mark.parametrize("name", sorted(n for n in COMPRESSORS if not COMPRESSORS[n].deterministic))
def test_randomised_compressor_names_rng(name, rng):
    with pytest.raises(ValueError, match=names("rng")):
        COMPRESSORS[name].example().compress(np.ones((2, 4)), rng)


def _declared_constants():
    out = []
    for name in sorted(COMPRESSORS):
        for method in ("omega", "alpha"):
            try:
                getattr(COMPRESSORS[name].example(), method)(8)
            except NotImplementedError:  # biased compressors have no omega, unbiased ones no alpha
                continue
            out.append(pytest.param(name, method, id=f"{name}.{method}"))
    return out


@pytest.mark.parametrize("bad, exc", [("8", TypeError), (2.5, TypeError), (0, ValueError), (-3, ValueError)])
@pytest.mark.parametrize("name, method", _declared_constants())
def test_compressor_constants_name_d(name, method, bad, exc):
    with pytest.raises(exc, match=names("d")):
        getattr(COMPRESSORS[name].example(), method)(bad)


# ---------------------------------------------------------------------------------------------------------
# Theory functions (fedtheory/theory/*.py)
# ---------------------------------------------------------------------------------------------------------

_V3, _P3 = np.array([1.0, 2.0, 3.0]), np.array([0.2, 0.3, 0.5])
THEORY = [(f"{fn.__module__.rsplit('.', 1)[1]}.{fn.__name__}", fn, kw) for fn, kw in [
    (classic.proxskip_contraction, dict(mu=0.5, L=2.0, step=0.1, p=0.5)),
    (classic.proxskip_lyapunov, dict(X=np.ones((3, 2)), H=np.ones((3, 2)), x_star=np.zeros(2), H_star=np.zeros((3, 2)),
                                     step=0.1, p=0.5, weights=_P3)),
    (classic.fedavg_map, dict(problem=_quad(), local_steps=3, local_step=0.1, server_step=1.0)),
    (classic.fedavg_fixed_point, dict(problem=_quad(), local_steps=3, local_step=0.1)),
    (classic.fedavg_bias, dict(problem=_quad(), local_steps=3, local_step=0.1)),
    (classic.fedprox_map, dict(problem=_quad(), prox=1.0, server_step=1.0)),
    (classic.fedprox_fixed_point, dict(problem=_quad(), prox=1.0)),
    (classic.fedprox_bias, dict(problem=_quad(), prox=1.0)),
    (docofl.appendix_a_limit, dict(scale=0.5)),
    (docofl.appendix_a_mean, dict(t=3, eta=0.1, scale=0.5, w0=1.0)),
    (docofl.bandwidth_reduction, dict(b_w=8.0, b_c=8.0, b_g=8.0, baseline_bits=32.0)),
    (docofl.bias_bound, dict(beta=1.0, mean_estimation_error=0.1)),
    (docofl.descent_noise_term, dict(eta=0.1, beta=1.0, sigma_tilde2=1.0, n_sampled=2, rounds=10, nmse=0.1,
                                     staleness=1)),
    (docofl.effective_noise, dict(sigma2=1.0, G2=1.0, n_sampled=2, n_clients=4)),
    (docofl.heterogeneity_factor, dict(B2=1.0, n_sampled=2, n_clients=4)),
    (docofl.lemma_c1_bound, dict(sigma2=1.0, G2=1.0, B2=1.0, n_sampled=2, n_clients=4, grad_norm2=1.0, beta=1.0,
                                 mean_estimation_error=0.1)),
    (docofl.lemma_c5, dict(U=np.ones((3, 2)))),
    (docofl.lemma_c6, dict(x=np.ones(5), t=4, tau=1)),
    (docofl.lemma_c7, dict(a=0.5, terms=100)),
    (docofl.lemma_c8, dict(x=np.ones(4), a=0.5, staleness=2)),
    (docofl.lemma_c9, dict(eta=0.01, gamma=1.5, beta=1.0, theta_=1.5)),
    (docofl.lemma_c10, dict(A=1.0, B=1.0, C=1.0, eta1=0.1, eta2=0.1, eta3=0.1)),
    (docofl.naive_second_moment, dict(rounds=10, a=0.5, eta=0.1, nmse=0.1, w_star=1.0, w0=1.0)),
    (docofl.naive_variance_floor, dict(a=0.5, eta=0.1, nmse=0.1, w_star=1.0)),
    (docofl.one_direction_bytes, dict(params=100.0, clients_per_round=10.0, rounds=10.0, bits=32.0)),
    (docofl.pretuning_bound, dict(eta=0.01, M=1.0, beta=1.0, sigma_tilde2=1.0, n_sampled=2, rounds=10, nmse=0.1,
                                  staleness=1, gamma=1.0)),
    (docofl.recursion_constants, dict(eta=0.1, beta=1.0, nmse=0.1, staleness=1, gamma=1.0)),
    (docofl.stale_second_moments, dict(rounds=5, a=0.5, eta=0.1, nmse=0.1, sigma2=1.0, staleness=1, u0=1.0)),
    (docofl.theorem1_bound, dict(M=1.0, beta=1.0, sigma_tilde2=1.0, n_sampled=2, rounds=10, nmse=0.1, staleness=1)),
    (docofl.theorem1_step, dict(M=1.0, beta=1.0, sigma_tilde2=1.0, n_sampled=2, rounds=10, nmse=0.1, staleness=1)),
    (docofl.theta, dict(nmse=0.1, staleness=1)),
    (efl.assumption5_theta, dict(E=4, s_min=1)),
    (efl.corollary1_f1, dict(T=10, E=4, C=1.0, gamma=0.5, tau0=0)),
    (efl.corollary1_threshold, dict(T=10, E=4, C=1.0, J=1.0, gamma=0.5)),
    (efl.corollary1_threshold_scaling, dict(T=10, E=4, C=1.0, J=1.0)),
    (efl.efl_coefficients, dict(steps=np.array([1, 2, 4]), p=_P3, E=4, weighting="efl")),
    (efl.table1_rounds, dict(G2=1.0, mu=0.5, S=4.0, eps=0.01, L=2.0, delta=0.1, G=1.0, N=2.0, sigma2=1.0)),
    (efl.theorem1_B, dict(coef=_V3, steps=_V3, p=_P3, sigma2=_V3, D=_V3, L=2.0, mu=0.5, theta=2.0, E=4, G2=1.0,
                          reading="literal")),
    (efl.theorem1_C, dict(gamma=1.0, dist0_sq=1.0, E=4, mu=0.5, expected_B=_V3, expected_ps=_V3)),
    (efl.theorem1_J, dict(E=4, expected_ps_per_client=_V3, D=_V3, mu=0.5)),
    (efl.theorem1_H_indicator, dict(expected_ps_per_client=_V3, p=_P3, rtol=1e-12)),
    (efl.theorem1_bound, dict(tau=np.arange(1, 4), E=4, gamma=1.0, C_tau=_V3, H_tau=_V3, J=1.0)),
    (efl.theorem1_gamma, dict(E=4, theta=0.5, L=2.0, mu=0.5, min_expected_ps=0.5)),
    (efl.theorem1_schedule, dict(mu=0.5, E=4, gamma=0.5, expected_ps=0.5)),
    (efl.theorem1_step, dict(tau=2, E=4, mu=0.5, gamma=0.5, expected_ps=0.5)),
    (efl.theorem2_arrival_bound, dict(L=2.0, mu=0.5, n_a=2.0, n=10.0, D_hat_a=1.0, constant=8.0)),
    (efl.theorem2_arrival_corrected_bound, dict(L=2.0, mu=0.5, n_a=2.0, n=10.0, D_hat_a=1.0, constant=8.0)),
    (efl.theorem2_departure_bound, dict(L=2.0, mu=0.5, n_a=2.0, n=10.0, D_hat_a=1.0, constant=8.0)),
    (efl.theorem2_tight_bound, dict(L=2.0, mu=0.5, n_a=2.0, n=10.0, D_hat_a=1.0)),
    (fedelasticnet.C0_printed, dict(grads0=np.zeros((3, 2)), grads_star=np.ones((3, 2)))),
    (fedelasticnet.C0_corrected, dict(grads0=np.zeros((3, 2)), grads_star=np.ones((3, 2)))),
    (fedelasticnet.bound28_rhs, dict(C_prev=1.0, eps_t=0.1, gap_prev=1.0, beta=1.0, m=10, P=2)),
    (fedelasticnet.floor_corrected, dict(lambda1=0.1, lambda2=30.0, beta=1.0, d=3)),
    (fedelasticnet.hoeffding_bound, dict(m=10, delta=0.1)),
    (fedelasticnet.kappa, dict(lambda2=30.0, beta=1.0, m=10, P=2)),
    (fedelasticnet.kappa0, dict(lambda2=30.0, beta=1.0)),
    (fedelasticnet.kappa_prime, dict(lambda2=30.0, beta=1.0)),
    (fedelasticnet.lambda2_ratio_valid, dict(lambda2=30.0, beta=1.0)),
    (fedelasticnet.lemma_b4_rhs, dict(dist_prev_sq=1.0, gap_prev=1.0, eps_t=0.1, step_sq=0.01, lambda1=0.1,
                                      lambda2=30.0, beta=1.0, sign_inner=0.1)),
    (fedelasticnet.lemma_b5_rhs, dict(C_prev=1.0, gap_prev=1.0, lambda1=0.1, lambda2=30.0, beta=1.0, d=3)),
    (fedelasticnet.theorem31_rhs_corrected, dict(T=10, dist0_sq=1.0, C0=1.0, lambda1=0.1, lambda2=30.0, beta=1.0,
                                                 m=10, P=2, d=3, sign_sum=0.0)),
    (fedelasticnet.theorem31_rhs_printed, dict(T=10, dist0_sq=1.0, C0=1.0, lambda1=0.1, lambda2=30.0, beta=1.0,
                                               m=10, P=2, d=3, sign_sum=0.0)),
    (fedelasticnet.theorem_b6_rhs, dict(V_prev=1.0, V_next=0.5, lambda1=0.1, lambda2=30.0, beta=1.0, d=3,
                                        sign_inner=0.1, m=10, P=2)),
    (fedred.dane_contraction, dict(mu=0.5, lam=1.0)),
    (fedred.dane_gap_bound, dict(mu=0.5, lam=1.0, D=1.0, R=5)),
    (fedred.dane_fgd_local_steps, dict(mu=0.5, L=2.0, lam=1.0, r=2, c=1.0)),
    (fedred.dane_gd_local_steps, dict(mu=0.5, L=2.0, lam=1.0, r=2, c=1.0)),
    (fedred.dane_rounds_to_eps, dict(mu=0.5, lam=1.0, D=1.0, eps=0.01)),
    (fedred.expected_communications, dict(p=0.5, K=4)),
    (fedred.fedred_balanced_p, dict(mu=0.5, lam=1.0, eta=0.1)),
    (fedred.fedred_convex_average_bound, dict(D=1.0, K=4, lam=1.0, eta=0.1, p=0.5)),
    (fedred.fedred_exact_contraction, dict(mu=0.5, lam=1.0, eta=0.1, p=0.5)),
    (fedred.fedred_gd_coefficients, dict(lam=1.0, eta=0.1)),
    (fedred.fedred_gd_contraction, dict(mu=0.5, lam=1.0, eta=0.1, p=0.5)),
    (fedred.fedred_lyapunov, dict(A=1.0, B=1.0, mu=0.5, lam=1.0, eta=0.1, p=0.5)),
    (fedred.gd_rounds, dict(mu=0.5, L=2.0, D=1.0, eps=0.01)),
    (fedred.nonconvex_descent_coefficient, dict(lam=1.0, delta_B=0.5)),
    (fedred.nonconvex_stationarity_bound, dict(delta_B=0.5, F0=1.0, R=5, errors=np.array([0.1, 0.2]))),
    (fedred.relative_tolerance, dict(lam=1.0, r=2, c=1.0)),
    (fedred.subproblem_condition_number, dict(mu=0.5, L=2.0, lam=1.0, inv_eta=0.5)),
    (fedred.table1, dict(method="dane", setting="strongly_convex", mu=0.5, L=2.0, delta_A=0.5, delta_B=0.5, D=1.0,
                         F0=1.0, eps=0.01)),
    (gd.gd_contraction, dict(mu=0.5, L=2.0, step=0.1)),
    (gd.gd_rounds_to_eps, dict(mu=0.5, L=2.0, eps=0.01, dist0_sq=1.0)),
    (ofediq.algorithm3, dict(gamma=0.1, D=100, s_max=2000)),
    (ofediq.algorithm3_corrected, dict(gamma=0.1, D=100, s_max=2000)),
    (ofediq.algorithm3_raw, dict(gamma=0.1, D=100, s_max=2000)),
    (ofediq.algorithm3_objective, dict(s=3, gamma=0.5)),
    (ofediq.alpha_ofediq_factor2, dict(p=0.5, D=10, s=3, b=2, K=4)),
    (ofediq.ccr, dict(gamma=0.5)),
    (ofediq.corollary1_ofedavg, dict(p=0.5, w2=1.0, sigma2=1.0, T=10)),
    (ofediq.corollary1_ofediq, dict(p=0.5, L=2, M=1.0, w2=1.0, sigma2=1.0, T=10)),
    (ofediq.corollary_m, dict(p=0.5, L=2, D=10, s=3, b=2, K=4)),
    (ofediq.eq15_alpha, dict(p=0.5, K=4)),
    (ofediq.lemma1_rhs, dict(vi=_V3, vj=_V3, a=0.5)),
    (ofediq.lemma2_sides, dict(g_w=np.ones((2, 3)), g_star=np.ones((2, 3)), loss_w=np.ones(2), loss_star=np.ones(2),
                               w=_V3, w_star=np.zeros(3), beta=1.0)),
    (ofediq.lemma3_proof_rhs, dict(eta=0.1, L=2, grad_sq_sum=1.0)),
    (ofediq.lemma3_stated_rhs, dict(beta=1.0, eta=0.1, L=2, grad_sq_sum=1.0)),
    (ofediq.lemma4_sides, dict(drift_sq=1.0, grad_sq=_V3, L=3, eta=0.1)),
    (ofediq.ofediq_gamma, dict(p=0.5, s=3, b=2, D=10, L=1)),
    (ofediq.periodic_vs_subsampling, dict(L=2, p=0.5, D=10, s=3, b=2, K=4)),
    (ofediq.psi, dict(t=3, L=2)),
    (ofediq.quantizer_sigma2, dict(D=10, s=3, b=2)),
    (ofediq.r_factor, dict(sigma_q2=0.5, p=0.5, n_clients=4)),
    (ofediq.step_bound, dict(beta=1.0, p=0.5, sigma_q2=0.5, period=1, n_clients=4)),
    (ofediq.table1_alpha, dict(method="ofediq", p=0.5, L=2, D=10, s=3, b=2, K=4)),
    (ofediq.table1_bits, dict(method="ofediq", K=4, D=10, p=0.5, L=2, s=3, b=2)),
    (ofediq.theorem1_bound, dict(K=4, w2=1.0, eta=0.1, T=10, sigma2=1.0, p_min=0.5)),
    (ofediq.theorem2_bound, dict(K=4, w2=1.0, eta=0.1, T=10, sigma2=1.0, p=0.5, sigma_q2=0.5, L=2, beta=1.0,
                                 factor=2.0)),
    (ofediq.transmission_times, dict(T=10, L=2)),
]]


def test_every_public_theory_function_is_in_the_table():
    listed = {case_id for case_id, _, _ in THEORY}
    for module in (classic, docofl, efl, fedelasticnet, fedred, gd, ofediq):
        short = module.__name__.rsplit(".", 1)[1]
        public = {n for n in getattr(module, "__all__", dir(module))
                  if callable(getattr(module, n)) and not isinstance(getattr(module, n), type)
                  and getattr(getattr(module, n), "__module__", "") == module.__name__ and not n.startswith("_")}
        # no scalar or array argument to spoil: r0 is a constant; the two helpers only take a problem (checked below)
        exempt = {"kappa0_threshold", "kappa0_threshold_symbolic", "dense_hessians", "drift_vector"}
        missing = {f"{short}.{n}" for n in public - exempt} - listed
        assert not missing, f"add a valid call for {sorted(missing)} to THEORY"


@pytest.mark.parametrize("fn, kwargs", [pytest.param(fn, kw, id=i) for i, fn, kw in GENERATORS + THEORY])
def test_table_calls_are_valid(fn, kwargs):
    fn(**kwargs)


@pytest.mark.parametrize("fn, kwargs, param, bad, exc", _spoiled_cases(GENERATORS + THEORY))
def test_a_spoiled_argument_is_refused_naming_it(fn, kwargs, param, bad, exc):
    with pytest.raises(exc, match=names(param)):
        fn(**{**kwargs, param: bad})


#: Constants that are non-negative (or positive) by definition wherever they appear in fedtheory.theory.
NONNEGATIVE = {"L", "lam", "beta", "eta", "step", "sigma2", "sigma_tilde2", "G2", "B2", "nmse", "eps", "w2", "D",
               "dist0_sq", "sigma_q2", "staleness", "rounds", "n_sampled", "n_clients", "K", "T", "E", "gamma", "C",
               "J", "delta", "delta_A", "delta_B", "lambda1", "lambda2", "F0", "M", "p", "p_min", "grad_sq_sum",
               "drift_sq", "mean_estimation_error", "grad_norm2", "a", "scale", "theta", "theta_", "expected_ps",
               "min_expected_ps", "n", "n_a", "D_hat_a", "constant", "factor", "m", "P", "d", "s", "b", "tau", "t",
               "local_steps", "local_step", "server_step", "prox", "inv_eta", "r", "c", "R", "S", "N", "params",
               "clients_per_round", "bits", "b_w", "b_c", "b_g", "baseline_bits", "rtol", "terms", "eta1", "eta2",
               "eta3", "A", "B", "period", "s_min", "s_max", "tau0", "C0"}


def _negative_cases():
    out = []
    for case_id, fn, kwargs in THEORY:
        for param, value in kwargs.items():
            if param in NONNEGATIVE and isinstance(value, (int, float)) and not isinstance(value, bool):
                bad = -1 if isinstance(value, int) else -1.0
                out.append(pytest.param(fn, kwargs, param, bad, id=f"{case_id}-{param}"))
    return out


@pytest.mark.parametrize("fn, kwargs, param, bad", _negative_cases())
def test_theory_rejects_a_negative_constant_naming_it(fn, kwargs, param, bad):
    with pytest.raises(ValueError, match=names(param)):
        fn(**{**kwargs, param: bad})


@pytest.mark.parametrize("fn", [classic.dense_hessians, classic.drift_vector])
def test_quadratic_only_theory_names_problem(fn):
    with pytest.raises(TypeError, match=r"problem must be a QuadraticProblem"):
        fn(_problem("logistic"))


# ---------------------------------------------------------------------------------------------------------
# Sizes that cannot fit in memory: refused before anything is allocated
# ---------------------------------------------------------------------------------------------------------

DENSE_GENERATORS = [  # (id, call with n_clients=4000, dim=1000): each would need >= 96 GB
    ("quadratic", lambda: quadratic(4000, 1000, mu=0.1, L=1.0, seed=0)),
    ("general_convex_quadratic", lambda: general_convex_quadratic(4000, 1000, L=1.0, seed=0)),
    ("outlier_quadratic", lambda: outlier_quadratic(4000, 1000, mu=0.1, L=1.0, seed=0)),
    ("vary_delta_family", lambda: vary_delta_family(4000, 1000, mu=0.1, L=1.0, deltas=[0.1, 0.2], seed=0)),
    ("logistic_perturbed", lambda: logistic_perturbed(4000, 1000, seed=0)),
    ("nonconvex", lambda: nonconvex(4000, 1000, seed=0)),
    ("LogisticProblem", lambda: LogisticProblem(np.ones((2, 1000)), np.array([1.0, -1.0]), reg=0.1, n_clients=4000)),
]


@pytest.mark.parametrize("call", [pytest.param(c, id=i) for i, c in DENSE_GENERATORS])
def test_a_dense_generator_too_large_for_memory_names_the_size_and_the_memory(call, monkeypatch):
    """quadratic(4000, 1000) used to try to allocate 32 GB arrays and die with a raw MemoryError; the estimate
    (arrays of n*d^2 float64) is compared with the available memory (fixed here at 16 GB) before allocating."""
    import tracemalloc

    from fedtheory import validation

    monkeypatch.setattr(validation, "available_memory", lambda: 16 * 10**9)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as info:
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert re.search(names("dim") + r"=1000 is too large for " + names("n_clients") + "=4000", message), message
    assert re.search(r"\d+\.\d GB in all, and 16\.0 GB of memory is available", message), message
    assert re.search(names("dim") + r" must be <= \d+ with n_clients=4000", message), message
    assert peak < 10**8, f"allocated {peak} bytes before refusing"  # refused before the (n, d, d) arrays


def test_the_memory_estimate_lets_a_request_that_fits_through(monkeypatch):
    from fedtheory import validation

    monkeypatch.setattr(validation, "available_memory", lambda: 16 * 10**9)
    assert quadratic(20, 10, mu=0.1, L=1.0, seed=0).A.shape == (20, 10, 10)
    # diagonal Hessians store n*d numbers: no n*d^2 estimate applies
    assert quadratic(4000, 1000, mu=0.1, L=1.0, hessians="diagonal", seed=0).A.shape == (4000, 1000)
    monkeypatch.setattr(validation, "available_memory", lambda: 10**4)  # 20 * 10^2 * 8 * 4 = 64 kB needed
    with pytest.raises(ValueError, match=names("dim") + r"=10 is too large for n_clients=20.*dim must be <= 3 "):
        quadratic(20, 10, mu=0.1, L=1.0, seed=0)


def test_available_memory_is_a_positive_byte_count_or_unknown():
    from fedtheory.validation import available_memory

    found = available_memory()
    assert found is None or (isinstance(found, int) and found > 0)


# ---------------------------------------------------------------------------------------------------------
# Catalogue files: an edited spec, a truncated file
# ---------------------------------------------------------------------------------------------------------

CATALOGUE_INSTANCE = "quad-kappa10-delta1"


@pytest.fixture
def catalogue_copy(tmp_path):
    from fedtheory import catalogue

    for path in catalogue.CATALOGUE_DIR.glob(f"{CATALOGUE_INSTANCE}.*"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    return tmp_path


def test_load_refuses_a_spec_edited_after_its_certificate(catalogue_copy):
    """load used to return the recorded arrays for an edited spec (only `problems verify` noticed); it now makes
    the same test (catalogue.spec_matches_record) and refuses, naming the file and what to do."""
    import json

    from fedtheory import catalogue

    assert catalogue.load(CATALOGUE_INSTANCE, root=catalogue_copy).n_clients == 10  # first load: cached
    spec_path = catalogue_copy / f"{CATALOGUE_INSTANCE}.json"
    data = json.loads(spec_path.read_text())
    data["params"]["zeta2"] = 2 * data["params"].get("zeta2", 1.0)
    spec_path.write_text(json.dumps(data, indent=1))
    with pytest.raises(ValueError, match=re.escape(str(spec_path)) + r" was edited after its certificate "
                                         r".*fedtheory problems certify " + CATALOGUE_INSTANCE):
        catalogue.load(CATALOGUE_INSTANCE, root=catalogue_copy)  # noticed despite the cached first load
    result = catalogue.verify(CATALOGUE_INSTANCE, root=catalogue_copy)  # verify reports it, once
    assert not result.ok and not result.spec_ok and result.stored_ok
    assert str(result).count("spec changed since the certificate was recorded") == 1


def test_a_description_edit_is_not_a_spec_change(catalogue_copy):
    import json

    from fedtheory import catalogue

    spec_path = catalogue_copy / f"{CATALOGUE_INSTANCE}.json"
    data = json.loads(spec_path.read_text())
    data["description"] = "reworded"  # not part of what determines the arrays
    spec_path.write_text(json.dumps(data, indent=1))
    assert catalogue.load(CATALOGUE_INSTANCE, root=catalogue_copy).n_clients == 10


@pytest.mark.parametrize("suffix", [".json", ".cert.json"])
def test_a_truncated_catalogue_file_is_named(catalogue_copy, suffix, capsys):
    from fedtheory import catalogue

    path = catalogue_copy / f"{CATALOGUE_INSTANCE}{suffix}"
    path.write_text(path.read_text()[:-40])
    with pytest.raises(ValueError, match=re.escape(str(path)) + r" is not valid JSON \(.*line \d+ column \d+"):
        catalogue.load(CATALOGUE_INSTANCE, root=catalogue_copy)
    status = cli.main(["problems", "--root", str(catalogue_copy), "show" if suffix == ".json" else "verify",
                       CATALOGUE_INSTANCE])
    err = capsys.readouterr().err
    assert status == 2 and str(path) in err and "Traceback" not in err, err


def test_a_truncated_sweep_spec_is_named(tmp_path):
    from fedtheory import bench

    path = tmp_path / "sweep.json"
    path.write_text('{"name": "x", "problems": ["quad-kappa10-delta1"')
    with pytest.raises(ValueError, match=re.escape(str(path)) + " is not valid JSON"):
        bench.load_spec(path)


# ---------------------------------------------------------------------------------------------------------
# FedProx's exact local solve on a problem that is not strongly convex
# ---------------------------------------------------------------------------------------------------------

def test_fedprox_prox_zero_on_a_merely_convex_problem_names_the_client_and_the_fix():
    p = general_convex_quadratic(4, 5, L=1.0, seed=0)  # mu_i = 0 for every client
    with pytest.raises(ValueError, match=names("prox") + r"=0 with solver='exact'.*not strongly convex.*"
                                         r"client 0 \(mu_i = 0\).*set prox > 0.*or use solver='gd'"):
        FedProx(prox=0.0).init(p, np.zeros(5))
    FedProx(prox=0.0, solver="gd").init(p, np.zeros(5))  # the inexact solver needs no strong convexity
    FedProx(prox=0.5).init(p, np.zeros(5))


def test_fedprox_prox_below_weak_convexity_names_the_needed_prox():
    p = nonconvex(4, 3, nu=0.1, curvature=1.0, delta_A=0.5, seed=0)  # weakly convex clients, mu_i < 0
    need = -float(p.certificate.mu_i.min())
    worst = int(np.argmin(p.certificate.mu_i))
    with pytest.raises(ValueError, match=names("prox") + rf"=0.1 .*client {worst} .*set prox > {need:g}"):
        FedProx(prox=0.1).init(p, np.zeros(3))
    FedProx(prox=1.01 * need).init(p, np.zeros(3))


def test_exact_local_solve_names_the_merely_convex_client():
    p = general_convex_quadratic(4, 5, L=1.0, seed=0)
    with pytest.raises(ValueError, match=names("lam") + r" must be > 0 here.*client\(s\) \[1, 3\]"):
        p.solve_local(np.zeros((2, 5)), np.zeros((2, 5)), 0.0, clients=[1, 3])


# ---------------------------------------------------------------------------------------------------------
# CLI: a clear message, a non-zero exit status, no traceback
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, pattern", [
    (["verify", "--claim", "no.such.claim", "--list"], r"unknown claim id\(s\) \['no.such.claim'\]"),
    (["verify", "--paper", "nosuch", "--list"], r"argument --paper: invalid choice: 'nosuch'"),
    (["problems", "show", "no-such-instance"], r"no catalogue instance 'no-such-instance'"),
    (["problems", "verify", "no-such-*"], r"no catalogue instance matches 'no-such-\*'"),
    (["problems", "export", "no-such-instance"], r"no catalogue instance 'no-such-instance'"),
    (["problems", "--root", "/nonexistent-catalogue", "list"], r"catalogue folder /nonexistent-catalogue"),
    (["bench", "--problems", "no-such-instance", "--algorithm", "gd", "--rounds", "3"],
     r"^fedtheory bench: no catalogue instance 'no-such-instance'"),
    (["bench", "--problems", "quad-kappa10-delta1", "--algorithm", "nosuch", "--rounds", "3"],
     r"unknown algorithm 'nosuch'"),
    (["nosuch"], r"invalid choice: 'nosuch'"),
])
def test_cli_bad_input_exits_nonzero_with_a_clear_message(argv, pattern, capsys, tmp_path):
    if argv[0] == "bench":
        argv = [*argv, "--out", str(tmp_path / "bench")]
    try:
        status = cli.main(argv)
    except SystemExit as exc:  # argparse's own errors
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2
    assert re.search(pattern, err, re.MULTILINE), err
    assert "Traceback" not in err


def test_cli_bad_input_has_no_traceback_in_a_real_process():
    repo = Path(__file__).resolve().parents[1]  # run this checkout's package, as the in-process tests do
    proc = subprocess.run([sys.executable, "-m", "fedtheory", "verify", "--claim", "no.such.claim"],
                          capture_output=True, text=True, cwd=repo, timeout=120)
    assert proc.returncode == 2
    assert "unknown claim id" in proc.stderr and "Traceback" not in proc.stderr


def test_torch_problem_oracles_share_the_client_check():
    torch_mod = pytest.importorskip("torch", reason="torch extra not installed: pip install torch==2.13.0 "
                                                   "'fedtheory[torch]'")
    assert torch_mod is not None
    from fedtheory.torch import TorchProblem, logistic_regression

    p = TorchProblem(logistic_regression(3, 2), synthetic_fedprox(1.0, 1.0, 3, dim=3, n_classes=2, sizes=5, seed=0),
                     reg=0.1)
    with pytest.raises(ValueError, match=names("X")):
        p.grads(np.zeros((3, 2)))
    for bad in (np.array([0.7]), np.array([-1]), np.array([3])):  # 0.7 used to be truncated to client 0
        with pytest.raises(ValueError, match=names("clients")):
            p.grads(np.zeros((1, p.dim)), clients=bad)


@pytest.mark.parametrize("kwargs, exc, param", [
    (dict(seed="abc"), TypeError, "seed"), (dict(seed=-2), ValueError, "seed"),
    (dict(dirichlet_alpha=0.0, partition="dirichlet"), ValueError, "dirichlet_alpha")])
def test_torch_data_generators_name_their_parameters(kwargs, exc, param):
    pytest.importorskip("torch", reason="torch extra not installed: pip install torch==2.13.0 'fedtheory[torch]'")
    from fedtheory.torch import digits_federated

    with pytest.raises(exc, match=names(param)):
        digits_federated(3, **kwargs)
