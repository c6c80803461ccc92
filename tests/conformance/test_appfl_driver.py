"""The APPFL driver's translation layer (fedtheory/conformance/drivers/appfl.py) on a stand-in with APPFL
1.12.0's API shape (tests/conformance/standins/appfl_standin.py): CI installs neither appfl nor omegaconf. Every
check of benchmarks/frameworks/run.py's FRAMEWORKS["appfl"] is run here on the stand-in, with a few cheap
properties. The slips show that the kit rejects a lost sample-size weighting, a v not starting at the declared
tau^2, a proximal term without its 1/2, and APPFL's secure-aggregation first round (docs/frameworks.md, APPFL)."""
from __future__ import annotations

import gc

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402

from .standins import (  # noqa: E402
    appfl_standin,  # noqa: E402
    assert_recorded_verdict,
    assert_stored_verdict,
    check_through_driver,
    framework_checks,
    installed,
)

DRIVER = "fedtheory.conformance.drivers.appfl"
CHEAP = {"fedavg": ["fedavg.one_round", "fedavg.multi_round"], "fedprox": ["fedprox.one_round", "fedprox.multi_round"],
         "server_optimizer": ["server_optimizer.first_round", "server_optimizer.from_state",
                              "server_optimizer.multi_round"]}


CHECKS = framework_checks("appfl")


@pytest.fixture()
def driver():
    dtype = torch.get_default_dtype()
    try:
        with installed(appfl_standin, DRIVER) as module:
            yield module
    finally:
        gc.unfreeze()  # the driver freezes the heap at import, as in APPFL's worker
        torch.set_default_dtype(dtype)  # and sets float64


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_runpy_check_passes_through_the_driver(driver, check):
    assert_recorded_verdict(check_through_driver(driver, check, CHEAP[check.family]), None)


# APPFL's secure-aggregation defects, the stand-in's slips: with them on, each check gives its stored verdict
SECURE_F32 = ("secure_flats_float32",)  # APPFL's masked flats are float32: every secure-aggregation check
DEFECTS = {"fedavg_secure": ("secure_first_round_delta", *SECURE_F32), "fedavg_secure_later_rounds": SECURE_F32,
           "fedavg_secure_later_rounds_f64": SECURE_F32,
           "fedavg_secure_weighted": ("secure_weighted_mean", *SECURE_F32)}


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_runpy_check_gives_its_stored_verdict_with_appfls_defects(driver, monkeypatch, check):
    for slip in DEFECTS.get(check.name, ()):
        monkeypatch.setitem(appfl_standin.SLIP, slip, True)
    assert_stored_verdict(check_through_driver(driver, check, CHEAP[check.family]), "appfl", check)


def test_fedavg_refuses_a_server_step_it_does_not_have(driver):
    with pytest.raises(ValueError, match="no server learning rate"):
        driver.fedavg()(None, [], server_step=0.5)


def test_equal_weights_in_place_of_sample_sizes_are_rejected(driver, monkeypatch):
    monkeypatch.setitem(appfl_standin.SLIP, "sample_size_ids_missed", True)
    report = conformance.check(driver.fedavg(), "fedavg", max_examples=8, shrink=False, fixed=["server_step"],
                               properties=["fedavg.one_round"])
    assert not report.passed
    assert "aggregation weighted uniformly" in report.failures[0].diagnosis


def test_v_not_starting_at_the_declared_tau_squared_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(appfl_standin.SLIP, "v_starts_at_zero", True)
    report = conformance.check(driver.fedadam(), "server_optimizer", optimizer="fedadam", initial_v="tau^2",
                               max_examples=8, shrink=False, properties=["server_optimizer.first_round"])
    assert not report.passed
    assert report.failures[0].diagnosis.startswith("v_(-1) = 0 instead of initial_v")


def test_a_proximal_term_without_its_half_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(appfl_standin.SLIP, "prox_without_half", True)
    report = conformance.check(driver.fedprox(), "fedprox", weighting="uniform", max_examples=8, shrink=False,
                               fixed=["server_step"], properties=["fedprox.one_round"])
    assert not report.passed, report.table()


def test_fedprox_refuses_a_server_step_it_does_not_have(driver):
    with pytest.raises(ValueError, match="no server learning rate"):
        driver.fedprox()(None, [], server_step=0.5)


def test_secure_aggregation_on_a_new_aggregator_returning_the_delta_is_rejected(driver, monkeypatch):
    assert conformance.check(driver.fedavg_secure(), "fedavg", weighting="uniform", max_examples=4,
                             fixed=["server_step"], properties=["fedavg.one_round"]).passed  # masks cancel
    monkeypatch.setitem(appfl_standin.SLIP, "secure_first_round_delta", True)
    report = conformance.check(driver.fedavg_secure(), "fedavg", weighting="uniform", max_examples=8, shrink=False,
                               fixed=["server_step"], properties=["fedavg.one_round"])
    assert not report.passed, report.table()
    later = conformance.check(driver.fedavg_secure_later_rounds(), "fedavg", weighting="uniform", max_examples=4,
                              fixed=["server_step"], properties=["fedavg.one_round"])
    assert later.passed, later.table()  # the aggregator's global state set: the slip is a first-round one


def test_secure_aggregation_refuses_weights_its_masks_do_not_cancel_under(driver):
    with pytest.raises(ValueError, match="equal weights only"):
        driver.fedavg_secure()(None, [], weighting="num_examples")


def test_weighted_secure_aggregation_averaging_prescaled_deltas_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(appfl_standin.SLIP, "secure_weighted_mean", True)
    report = conformance.check(driver.fedavg_secure_weighted(), "fedavg", max_examples=8, shrink=False,
                               fixed=["server_step"], properties=["fedavg.one_round"])
    assert not report.passed, report.table()
