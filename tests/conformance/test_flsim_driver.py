"""The FLSim driver's translation layer (fedtheory/conformance/drivers/flsim.py) on a stand-in with FLSim 0.1.0's
API shape and arithmetic as read (tests/conformance/standins/flsim_standin.py): CI installs no flsim. Every check
of benchmarks/frameworks/run.py's FRAMEWORKS["flsim"] is run here on the stand-in with a few cheap properties, and
must give the verdict docs/frameworks.md records for FLSim 0.1.0, through the path the driver runs (the trainer's
``train`` loop, FLSim's ``Client`` on the data provider's users). The slips show that the kit rejects a client that
sends after - before, weighs by batches in place of examples or trains one epoch in place of K, a server that
loses the example counts (unit weights) or reads the delta with the wrong sign, a selector that always draws
the first users, a FedProx optimizer whose anchor follows the iterate, and a secure-aggregation server that applies
the fixed point's scaling twice."""
from __future__ import annotations

import pytest

pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402

from .standins import (  # noqa: E402
    assert_recorded_verdict,
    check_through_driver,
    flsim_standin,  # noqa: E402
    framework_checks,
    installed,
    load_run,
)

DRIVER = "fedtheory.conformance.drivers.flsim"
CHEAP = {"fedavg": ["fedavg.one_round", "fedavg.multi_round", "fedavg.own_sampler"],
         "fedprox": ["fedprox.one_round", "fedprox.multi_round", "fedprox.own_sampler"],
         "server_optimizer": ["server_optimizer.first_round", "server_optimizer.from_state",
                              "server_optimizer.multi_round", "server_optimizer.own_sampler"]}
# docs/frameworks.md's FLSim rows: the diagnosis each FAIL's first failure starts with
FAILS = {"fedprox": "aggregation weights by num_examples instead of uniformly",  # own_sampler: McMahan's sampling
         # num_bytes = 1: weighted deltas clamped to the 8-bit range, and a sum at its smallest value set to 0
         "fedavg_secagg": "the output is no weighting of the paper's local updates the kit knows",
         "fedadam": "Adam of Kingma & Ba with step count t = 1",
         "fedadam_no_decay": "Adam of Kingma & Ba with step count t = 1"}


CHECKS = framework_checks("flsim")


@pytest.fixture()
def driver():
    with installed(flsim_standin, DRIVER) as module:
        yield module


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_runpy_check_gives_the_recorded_verdict(driver, check):
    assert_recorded_verdict(check_through_driver(driver, check, CHEAP[check.family]), FAILS.get(check.name))


def test_fedavg_refuses_a_server_step_it_does_not_have(driver):
    with pytest.raises(ValueError, match="no server learning rate"):
        driver.fedavg()(None, [], server_step=0.5)


def test_unit_weights_in_place_of_example_counts_are_rejected(driver, monkeypatch):
    monkeypatch.setitem(flsim_standin.SLIP, "unit_weights", True)
    report = conformance.check(driver.fedavg(), "fedavg", max_examples=8, shrink=False, fixed=["server_step"],
                               properties=["fedavg.one_round"])
    assert not report.passed
    assert "aggregation weighted uniformly" in report.failures[0].diagnosis


def test_a_delta_of_the_wrong_sign_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(flsim_standin.SLIP, "delta_sign", True)
    report = conformance.check(driver.fedavgm(), "server_optimizer", optimizer="fedavgm", weighting="num_examples",
                               max_examples=8, shrink=False, properties=["server_optimizer.first_round"])
    assert not report.passed
    assert "wrong sign" in report.failures[0].diagnosis


@pytest.mark.parametrize("slip, diagnosis", [
    ("client_weight_batches", "aggregation weighted uniformly"),  # one batch per user: equal weights
    ("client_one_epoch", "local_steps ignored: a single gradient step"),  # the driver's epochs = K lost
])
def test_a_client_that_loses_the_example_counts_or_the_epochs_is_rejected(driver, monkeypatch, slip, diagnosis):
    monkeypatch.setitem(flsim_standin.SLIP, slip, True)
    report = conformance.check(driver.fedavg(), "fedavg", max_examples=8, shrink=False, fixed=["server_step"],
                               properties=["fedavg.one_round"])
    assert not report.passed
    assert diagnosis in report.failures[0].diagnosis, report.table()


def test_a_client_delta_of_the_wrong_sign_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(flsim_standin.SLIP, "client_delta_sign", True)
    report = conformance.check(driver.fedavgm(), "server_optimizer", optimizer="fedavgm", weighting="num_examples",
                               max_examples=8, shrink=False, properties=["server_optimizer.first_round"])
    assert not report.passed
    assert "wrong sign" in report.failures[0].diagnosis


@pytest.mark.parametrize("factory, family, hyper", [("fedavg", "fedavg", {}),
                                                    ("fedavgm", "server_optimizer", {"optimizer": "fedavgm"})])
def test_flsims_own_selector_runs_at_partial_participation(driver, factory, family, hyper):
    # the server's UniformlyRandomActiveUserSelector draws; the driver reports the drawn users
    report = conformance.check(getattr(driver, factory)(), family, fixed=["server_step"] if family == "fedavg" else [],
                               properties=[f"{family}.own_sampler"], weighting="num_examples", **hyper)
    assert [r.status for r in report.results] == ["holds"], report.table()


def test_a_selector_that_always_draws_the_first_users_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(flsim_standin.SLIP, "sample_first", True)
    report = conformance.check(driver.fedavg(), "fedavg", fixed=["server_step"], properties=["fedavg.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    assert "the sampler's law fails" in report.failures[0].diagnosis


def test_the_secure_aggregation_settings_are_the_ones_runpy_derives_its_tolerance_from(driver):
    assert driver.SECAGG == load_run().FLSIM_SECAGG


def test_a_fedprox_anchor_that_follows_the_iterate_is_rejected(driver, monkeypatch):
    # the anchor re-captured every step: mu (p - anchor) = 0, the round is plain FedAvg
    monkeypatch.setitem(flsim_standin.SLIP, "prox_anchor_follows", True)
    report = conformance.check(driver.fedprox(), "fedprox", max_examples=8, shrink=False, fixed=["server_step"],
                               properties=["fedprox.one_round"])
    assert not report.passed
    assert "proximal term missing" in report.failures[0].diagnosis, report.table()


def test_fixed_point_scaling_applied_twice_is_rejected_at_the_derived_tolerance(driver, monkeypatch):
    monkeypatch.setitem(flsim_standin.SLIP, "fixedpoint_scaled_twice", True)
    check = next(c for c in CHECKS if c.name == "fedavg_secagg_4bytes")
    report = check_through_driver(driver, check, ["fedavg.one_round"], max_examples=8)
    assert not report.passed, report.table()
