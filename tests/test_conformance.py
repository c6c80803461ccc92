"""The generic conformance suite: every registered algorithm gets these checks for free (scikit-learn style).

For each class in ``fedtheory.algorithms.ALGORITHMS`` we use its ``example()`` instance on its
``example_problem()`` (a classmethod an algorithm may define when it needs a special problem family; a
well-posed strongly convex heterogeneous quadratic otherwise) and check:

* determinism: the same seed gives a bitwise identical trace (``Trace.same_numbers``);
* ``round(problem, state, rng) == round_given(problem, state, draw(problem, state, rng))`` where offered;
* finite outputs and correct shapes;
* bad hyperparameters raise ValueError/TypeError naming the parameter -- at construction, or at ``init`` for
  settings that need the problem (e.g. sampling more clients than exist). An algorithm declares its invalid
  settings with a classmethod ``invalid_examples() -> [(kwargs, parameter_name), ...]``; without one, the
  suite derives them from the hyperparameter names whose invalid values are unambiguous (negative step sizes,
  a probability p = 1.5, a negative threshold) -- whether K = 0 is invalid depends on the algorithm (DANE+
  allows 0 local steps with exact solves), so that case must be declared;
* communication counters consistent with what was sent (non-negative, non-zeros at most d per vector,
  participants at most n, nothing counted in rounds that do not communicate, at least the non-zeros of the
  transmitted matrix when the state exposes it as ``last_upload``).
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from fedtheory.algorithms import ALGORITHMS
from fedtheory.problems.quadratic import quadratic
from fedtheory.run import run

NAMES = sorted(ALGORITHMS)

#: Hyperparameter names the suite knows how to break, with an invalid value each (used without invalid_examples()).
_GENERIC_INVALID = {
    "step": -0.1, "local_step": -0.1, "server_step": -0.1, "eta": -0.1, "lr": -0.1, "gamma": -0.1,
    "step_size": -0.1, "p": 1.5, "threshold": -1.0,
}


def _problem(cls):
    maker = getattr(cls, "example_problem", None)
    if callable(maker):
        return maker()
    return quadratic(5, 4, mu=0.5, L=2.0, delta_B=0.3, zeta2=1.0, seed=0)


def _invalid_examples(cls) -> list[tuple[dict, str]]:
    declared = getattr(cls, "invalid_examples", None)
    if callable(declared):
        return list(declared())
    example = cls.example()
    if not dataclasses.is_dataclass(example):
        return []
    out = []
    for f in dataclasses.fields(example):
        if f.name in _GENERIC_INVALID and f.init:
            current = getattr(example, f.name)
            if current is None or isinstance(current, (int, float, np.integer, np.floating)):
                out.append(({f.name: _GENERIC_INVALID[f.name]}, f.name))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_numbers(name):
    cls = ALGORITHMS[name]
    problem = _problem(cls)
    a = run(cls.example(), problem, 12, seed=7)
    b = run(cls.example(), problem, 12, seed=7)
    assert a.same_numbers(b)


@pytest.mark.parametrize("name", NAMES)
def test_round_equals_round_given_of_draw(name):
    cls = ALGORITHMS[name]
    alg = cls.example()
    if not (hasattr(alg, "draw") and hasattr(alg, "round_given")):
        pytest.skip(f"{name} does not offer the draw/round_given split")
    problem = _problem(cls)
    state = alg.init(problem, np.zeros(problem.dim))
    for seed in range(3):
        s1, log1 = alg.round(problem, state, np.random.default_rng(seed))
        s2, log2 = alg.round_given(problem, state, alg.draw(problem, state, np.random.default_rng(seed)))
        assert s1.x.tobytes() == s2.x.tobytes()
        assert log1.uplink_bits == log2.uplink_bits and log1.participants == log2.participants
        state = s1


@pytest.mark.parametrize("name", NAMES)
def test_finite_outputs_and_shapes(name):
    cls = ALGORITHMS[name]
    problem = _problem(cls)
    trace = run(cls.example(), problem, 25, seed=1)
    assert trace.status != "diverged"
    assert trace.x_final.shape == (problem.dim,)
    assert np.all(np.isfinite(trace.x_final))
    for column in ("gap", "dist2", "uplink_bits", "downlink_bits", "local_grad_evals"):
        assert np.all(np.isfinite(getattr(trace, column))), column
    state = trace.state
    assert state.x.shape == (problem.dim,)
    for f in dataclasses.fields(state):
        value = getattr(state, f.name)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            assert np.all(np.isfinite(value)), f.name
            if value.ndim == 2 and value.shape[0] == problem.n_clients and f.name != "last_upload":
                assert value.shape[1] == problem.dim, f.name


@pytest.mark.parametrize("name", NAMES)
def test_bad_hyperparameters_raise_naming_the_parameter(name):
    cls = ALGORITHMS[name]
    cases = _invalid_examples(cls)
    if not cases:
        pytest.skip(f"{name} declares no invalid_examples() and has no hyperparameter the suite recognises")
    problem = _problem(cls)
    example = cls.example()
    for kwargs, param in cases:
        with pytest.raises((ValueError, TypeError)) as info:
            alg = dataclasses.replace(example, **kwargs)
            alg.init(problem, np.zeros(problem.dim))  # settings that need the problem fail here
        message = str(info.value)
        assert re.search(re.escape(param), message), f"{name}{kwargs}: message {message!r} does not name {param!r}"


@pytest.mark.parametrize("name", NAMES)
def test_communication_counters_consistent(name):
    cls = ALGORITHMS[name]
    problem = _problem(cls)
    alg = cls.example()
    rng = np.random.default_rng(2)
    state = alg.init(problem, np.zeros(problem.dim))
    d, n = problem.dim, problem.n_clients
    for _ in range(15):
        state, log = alg.round(problem, state, rng)
        for field in ("uplink_bits", "downlink_bits", "uplink_nnz", "downlink_nnz", "vectors_up", "vectors_down",
                      "local_grad_evals", "participants"):
            assert getattr(log, field) >= 0, field
        assert log.uplink_nnz <= log.vectors_up * d + 1e-9
        assert log.downlink_nnz <= log.vectors_down * d + 1e-9
        assert log.participants <= n
        if not log.communicated:
            assert log.uplink_bits == 0 and log.downlink_bits == 0
            assert log.vectors_up == 0 and log.vectors_down == 0
        upload = getattr(state, "last_upload", None)
        if isinstance(upload, np.ndarray) and upload.size:
            assert log.uplink_nnz >= np.count_nonzero(upload)
            assert log.vectors_up >= upload.shape[0]


def test_registry_holds_every_algorithm_of_the_papers():
    """A class that silently drops out of the registry would drop out of every test above: the registry is
    pinned to the fourteen algorithms (and their names) the papers define."""
    assert set(ALGORITHMS) == {"fedavg", "fedprox", "scaffold", "feddyn", "scaffnew", "dane", "dane+", "fedred",
                               "docofl", "fedogd", "ofedavg", "ofediq", "efl", "gd"}
