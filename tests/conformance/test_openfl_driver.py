"""The OpenFL driver's translation layer (fedtheory/conformance/drivers/openfl.py) on a stand-in with OpenFL 1.9's
API shape and arithmetic as read (tests/conformance/standins/openfl_standin.py): CI installs no openfl. Every check
of benchmarks/frameworks/run.py's FRAMEWORKS["openfl"] is run here on the stand-in with a few cheap properties, and
must give the verdict docs/frameworks.md records for OpenFL 1.9; the two slips show that the kit rejects a stale
base model in the adaptive aggregation and weights that are not the aggregator's n_k/n."""
from __future__ import annotations

import pytest

pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402

from .standins import (  # noqa: E402
    assert_recorded_verdict,
    check_through_driver,
    framework_checks,
    installed,
    openfl_standin,  # noqa: E402
)

DRIVER = "fedtheory.conformance.drivers.openfl"
CHEAP = {"fedavg": ["fedavg.one_round", "fedavg.multi_round"],
         "server_optimizer": ["server_optimizer.first_round", "server_optimizer.from_state",
                              "server_optimizer.multi_round"],
         "fedprox": ["fedprox.one_round", "fedprox.zero_prox", "fedprox.multi_round"]}
# docs/frameworks.md's OpenFL rows: the diagnosis each FAIL's first failure starts with
FAILS = {"fedadam": "Adam of Kingma & Ba with step count t = 1",
         "fedyogi": "raised TypeError: NumPyYogi.__init__() got an unexpected keyword argument 'epsilo'",
         "fedyogi_numpy": "the server update differs from Alg. 2"}


CHECKS = framework_checks("openfl")


@pytest.fixture()
def driver():
    with installed(openfl_standin, DRIVER) as module:
        yield module


def _needs_torch(check) -> None:
    if check.family == "fedprox":  # OpenFL's FedProxOptimizer is a torch optimizer (the stand-in's too)
        pytest.importorskip("torch", reason="OpenFL's FedProxOptimizer (and its stand-in) needs torch")


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_runpy_check_gives_the_recorded_verdict(driver, check):
    _needs_torch(check)
    assert_recorded_verdict(check_through_driver(driver, check, CHEAP[check.family]), FAILS.get(check.name))


def test_fedavg_refuses_a_server_step_it_does_not_have(driver):
    with pytest.raises(ValueError, match="no server learning rate"):
        driver.fedavg()(None, [], server_step=0.5)


def test_a_stale_base_model_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(openfl_standin.SLIP, "stale_base", True)
    report = conformance.check(driver.fedadagrad(), "server_optimizer", optimizer="fedadagrad", beta1=0.0,
                               initial_v=0.1, weighting="num_examples", max_examples=8, shrink=False,
                               properties=["server_optimizer.multi_round"])
    assert not report.passed
    assert "differs from Alg. 2" in report.failures[0].diagnosis
    assert "earlier rounds match" in report.failures[0].diagnosis


def test_weights_other_than_n_k_over_n_are_rejected(driver, monkeypatch):
    monkeypatch.setitem(openfl_standin.SLIP, "uniform_weights", True)
    report = conformance.check(driver.fedavg(), "fedavg", max_examples=8, shrink=False, fixed=["server_step"],
                               properties=["fedavg.one_round"])
    assert not report.passed
    assert "aggregation weighted uniformly" in report.failures[0].diagnosis


def test_fedprox_refuses_a_server_step_it_does_not_have(driver):
    with pytest.raises(ValueError, match="no server learning rate"):
        driver.fedprox()(None, [], server_step=0.5)


@pytest.mark.parametrize("slip, diagnosis", [("fedprox_no_old_weights", "proximal term missing"),
                                             ("fedprox_half_mu", "proximal coefficient halved")])
def test_a_fedprox_optimizer_without_w_old_or_with_half_mu_is_rejected(driver, monkeypatch, slip, diagnosis):
    # w_old not kept (the proximal term dropped: FedAvg's local steps) or mu/2 where Li et al.'s gradient has mu
    pytest.importorskip("torch", reason="OpenFL's FedProxOptimizer (and its stand-in) needs torch")
    monkeypatch.setitem(openfl_standin.SLIP, slip, True)
    report = conformance.check(driver.fedprox(), "fedprox", max_examples=8, shrink=False, fixed=["server_step"],
                               properties=["fedprox.one_round"])
    assert not report.passed, report.table()
    assert diagnosis in report.failures[0].diagnosis, report.failures[0].diagnosis
