"""FedAvg with server momentum, checked with fedtheory: its claims run as test items through fedtheory's pytest
plugin (imported below), the conformance kit checks its first round against FedAvg's paper, and it runs on the
benchmark catalogue."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from momentum_fedavg import FedAvgMomentum
from momentum_fedavg.claims import fixed_point, heavy_ball  # noqa: F401 - collected as claims by the plugin

from fedtheory import catalogue, conformance
from fedtheory.conformance.adapters.native import round_function
from fedtheory.run import run


def _kit_round(algorithm_class: type = FedAvgMomentum):
    # From zero momentum, FedAvgM's first round is a FedAvg round: the kit's FedAvg properties apply to it.
    return round_function(lambda local_steps, local_step, server_step, **_: algorithm_class(
        local_steps=local_steps, local_step=local_step, server_step=server_step, momentum=0.9))


def test_the_first_round_passes_the_fedavg_conformance_properties() -> None:
    report = conformance.check(_kit_round(), claims="fedavg", max_examples=10)
    assert report.passed, report.table()


@dataclass(frozen=True, kw_only=True)
class UnweightedMomentum(FedAvgMomentum):
    """A slip: the server averages the participants' updates without their weights (num_examples)."""

    def round_given(self, problem, state, draw):
        uniform = type(problem)(problem.A, problem.b, np.full(problem.n_clients, 1.0 / problem.n_clients))
        return super().round_given(uniform, state, draw)


def test_the_kit_catches_an_unweighted_average() -> None:
    report = conformance.check(_kit_round(UnweightedMomentum), claims="fedavg", max_examples=10,
                               properties=["fedavg.one_round"])
    assert not report.passed
    assert "fedavg.one_round" in str(report.failures[0])


def test_momentum_converges_faster_than_fedavg_on_a_catalogue_instance() -> None:
    problem = catalogue.load("quad-kappa10-delta1")
    eta = 1.0 / problem.certificate.L
    gaps = {beta: run(FedAvgMomentum(local_step=eta, momentum=beta), problem, rounds=60, seed=0).gap[-1]
            for beta in (0.0, 0.5)}
    assert gaps[0.5] < 1e-3 * gaps[0.0]


@pytest.mark.parametrize("kwargs, name", [({"momentum": 1.0}, "momentum"), ({"local_steps": 0}, "local_steps"),
                                          ({"local_step": -1.0}, "local_step")])
def test_bad_hyperparameters_are_refused_by_name(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        FedAvgMomentum(**kwargs)
