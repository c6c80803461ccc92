"""The FedML driver's single-process FedAvg, FedProx, FedOpt and FedDyn factories
(fedtheory/conformance/drivers/fedml.py) on a stand-in with FedML 0.9.6's API shape and the papers' arithmetic inside
(tests/conformance/standins/fedml_sp_standin.py): CI does not install FedML. Each of these checks of
benchmarks/frameworks/run.py's FRAMEWORKS["fedml"] passes here, so the FAILs docs/frameworks.md records for FedML's
own code are FedML's; FedML's two deviations, switched on in the stand-in, are rejected."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402

from .standins import (  # noqa: E402
    assert_recorded_verdict,
    assert_stored_verdict,
    check_through_driver,
    fedml_sp_standin,
    framework_checks,
    installed,
)

DRIVER = "fedtheory.conformance.drivers.fedml"
CHEAP = {"fedavg": ["fedavg.one_round", "fedavg.multi_round"], "fedprox": ["fedprox.one_round", "fedprox.multi_round"],
         "server_optimizer": ["server_optimizer.first_round", "server_optimizer.multi_round"],
         "feddyn": ["feddyn.one_round", "feddyn.server_state", "feddyn.multi_round"]}
SINGLE_PROCESS = ("fedavg", "fedprox", "fedopt_sgd", "fedopt_adam", "feddyn")
CHECKS = [c for c in framework_checks("fedml") if c.factory in SINGLE_PROCESS]


@pytest.fixture()
def driver():
    dtype = torch.get_default_dtype()
    try:
        with installed(fedml_sp_standin, DRIVER) as module:
            yield module
    finally:
        torch.set_default_dtype(dtype)  # the driver sets float64, as in FedML's worker


def test_the_runpy_entry_has_the_five_single_process_checks():
    assert sorted(c.factory for c in CHECKS) == ["fedavg", "feddyn", "fedopt_adam", "fedopt_sgd", "fedprox"]


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_single_process_check_passes_through_the_driver(driver, check):
    assert_recorded_verdict(check_through_driver(driver, check, CHEAP[check.family], max_examples=3), None)


# FedML's deviations, the stand-in's slips: with them on, each check gives the verdict of its stored report
DEFECTS = {"fedavg": ("chained_clients",), "fedprox": ("chained_clients",), "fedopt_sgd": ("chained_clients",),
           "fedopt_adam": ("chained_clients", "torch_adam"), "feddyn": ("dyn_penalty_on_data",)}


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_single_process_check_gives_its_stored_verdict_with_fedmls_deviations(driver, monkeypatch, check):
    for slip in DEFECTS[check.name]:
        monkeypatch.setitem(fedml_sp_standin.SLIP, slip, True)
    # FedDyn's server state (docs/frameworks/fedml.md, FedDyn deviations 2 and 3) is not re-typed: the stand-in's
    # server is Alg. 1's, so feddyn.server_state is left out here
    props = [p for p in CHEAP[check.family] if p != "feddyn.server_state"]
    assert_stored_verdict(check_through_driver(driver, check, props, max_examples=3), "fedml", check)


def test_the_targets_survive_fedmls_label_cast(driver):
    targets = torch.tensor([0.25, -1.5]).as_subclass(driver.Targets)
    assert torch.equal(targets.long(), targets)


def test_no_server_step_and_adam_at_torchs_defaults_only(driver):
    with pytest.raises(ValueError, match="no server learning rate"):
        driver.fedavg()(None, [], server_step=0.5)
    with pytest.raises(ValueError, match="torch's defaults"):
        driver.fedopt_adam()(None, [], beta1=0.5)


@pytest.mark.parametrize("factory, family, fixed", [("fedavg", "fedavg", ["server_step"]),
                                                    ("fedopt_sgd", "fedavg", [])])
def test_fedmls_chained_clients_are_rejected(driver, monkeypatch, factory, family, fixed):
    monkeypatch.setitem(fedml_sp_standin.SLIP, "chained_clients", True)
    report = conformance.check(getattr(driver, factory)(), family, max_examples=8, shrink=False, fixed=fixed,
                               properties=["fedavg.one_round"])
    assert not report.passed, report.table()


def test_fedmls_feddyn_penalty_without_gradient_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(fedml_sp_standin.SLIP, "dyn_penalty_on_data", True)
    report = conformance.check(driver.feddyn(), "feddyn", max_examples=4, shrink=False,
                               properties=["feddyn.one_round"])
    assert not report.passed, report.table()


def test_fedmls_torch_adam_is_kingma_and_bas(driver, monkeypatch):
    monkeypatch.setitem(fedml_sp_standin.SLIP, "torch_adam", True)
    check = next(c for c in CHECKS if c.factory == "fedopt_adam")
    report = conformance.check(driver.fedopt_adam(), check.family, max_examples=8, shrink=False,
                               fixed=list(check.fixed), properties=["server_optimizer.first_round"], **check.hyper)
    assert not report.passed
    assert "Adam of Kingma & Ba" in report.failures[0].diagnosis, report.table()
