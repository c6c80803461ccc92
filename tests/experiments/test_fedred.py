"""FedRed Figure 2's experiment (fedtheory/experiments/fedred.py): the stand-in data, the same tuning budget
for every method, and the communications to the target counted against an independent GD loop."""
from __future__ import annotations

import numpy as np
import pytest

from fedtheory.experiments.fedred import (
    BUDGET,
    CURVE_END,
    CURVE_EVERY,
    DATASETS,
    GRID_SIZE,
    TARGET,
    load,
    measure,
    methods,
    problem,
)


@pytest.mark.parametrize("name", DATASETS)
def test_the_data_are_binary_with_unit_norm_rows_and_a_bias(name: str) -> None:
    x, y, classes = load(name)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0)
    assert set(np.unique(y)) == {-1.0, 1.0} and len(classes) == len(y) == len(x)
    assert np.unique(x[:, -1] * np.linalg.norm(x, axis=1)).size > 1  # the bias column, scaled with its row


def test_an_unknown_data_set_is_refused_with_the_valid_names() -> None:
    with pytest.raises(ValueError, match="name must be one of"):
        load("iris")


def test_every_method_gets_the_same_number_of_grid_points() -> None:
    prob = problem("wine")(10, 0)
    names = list(methods(prob))
    counts = {m: sum(n.split(" ", 1)[0] == m for n in names)
              for m in ("GD", "Scaffold", "Scaffnew", "FedProx", "DANE+-GD", "FedRed-GD")}
    assert set(counts.values()) == {GRID_SIZE} and sum(counts.values()) == len(names)


def test_the_seed_draws_the_split() -> None:
    a, b = problem("wine")(10, 0), problem("wine")(10, 1)
    assert list(a.sizes) != list(b.sizes)


def test_gd_communications_to_the_target_match_an_independent_loop() -> None:
    from fedtheory.algorithms.gd import GradientDescent

    prob = problem("breast_cancer")(10, 0)
    step = 2 / prob.certificate.L_f
    x = np.zeros(prob.dim)
    gap0 = prob.gap(x)
    expected, rel = None, [1.0]
    for r in range(1, BUDGET + 1):  # one communication per GD step
        x = x - step * prob.grad(x)
        rel.append(prob.gap(x) / gap0)
        if rel[-1] <= TARGET:
            expected = r
            break
    assert expected is not None
    out = measure(GradientDescent(step=step), prob, BUDGET, 0, np.zeros(prob.dim))
    assert out["final"]["communications"] == expected
    assert out["final"]["delta_A"] == prob.certificate.delta_A and out["final"]["L"] == prob.certificate.L
    curve = out["curve"]
    assert curve["round"] == list(range(0, CURVE_END + 1, CURVE_EVERY))
    # the independent loop's relative gap at every grid point, carried after the target (4 significant digits)
    assert curve["relative_gap"] == pytest.approx([rel[min(k, expected)] for k in curve["round"]], rel=1e-3)


def test_a_diverged_run_reaches_nothing_and_its_curve_ends() -> None:
    from fedtheory.algorithms.gd import GradientDescent

    prob = problem("wine")(10, 0)
    out = measure(GradientDescent(step=1e4 / prob.certificate.L_f), prob, 30, 0, np.zeros(prob.dim))
    assert out["final"]["status"] == "diverged" and out["final"]["communications"] is None
    assert out["curve"]["relative_gap"][0] == 1.0 and out["curve"]["relative_gap"][-1] is None


def test_a_method_that_misses_the_target_records_none() -> None:
    from fedtheory.algorithms.gd import GradientDescent

    prob = problem("wine")(10, 0)
    out = measure(GradientDescent(step=0.01 / prob.certificate.L_f), prob, 5, 0, np.zeros(prob.dim))
    assert out["final"]["communications"] is None and out["final"]["budget"] == 5


def test_the_protocol_runs_every_grid_point_through_measure() -> None:
    from dataclasses import replace

    from fedtheory.experiments import Scale, experiments, run_experiment

    exp = replace(experiments()["fedred.figure2.wine"], clients=4, rounds=4)
    record = run_experiment(exp, Scale("t", 1.0, 1.0, (100,), (0,)))
    assert len(record["methods"]) == 6 * GRID_SIZE
    for seeds in record["methods"].values():
        assert set(seeds) == {"100", "0"}
        for run in seeds.values():
            assert run["final"]["budget"] == 4 and run["curve"]["relative_gap"][0] == 1.0  # each curve starts at x0
