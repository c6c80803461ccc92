"""The FedML driver's MPI-simulator and cross-silo factories (fedtheory/conformance/drivers/fedml_distributed.py) on
a stand-in with FedML 0.9.6's API shape and the papers' arithmetic inside
(tests/conformance/standins/fedml_distributed_standin.py): CI does not install FedML or MPI. Each of these checks of
benchmarks/frameworks/run.py's FRAMEWORKS["fedml"] passes here, so the FAILs docs/frameworks.md records for FedML's
own code are FedML's; FedML's FedProx trainer default (no proximal term) and a sampler that always draws the first
clients, switched on in the stand-in, are rejected."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402

from .standins import (  # noqa: E402
    assert_recorded_verdict,
    check_through_driver,
    fedml_distributed_standin,
    framework_checks,
    installed,
)

DRIVER = "fedtheory.conformance.drivers.fedml_distributed"
CHEAP = {"fedavg": ["fedavg.one_round", "fedavg.multi_round"], "fedprox": ["fedprox.one_round", "fedprox.multi_round"],
         "server_optimizer": ["server_optimizer.first_round", "server_optimizer.multi_round"],
         "fednova": ["fednova.one_round", "fednova.multi_round"]}
CHECKS = [c for c in framework_checks("fedml") if c.driver == "fedml_distributed"]


@pytest.fixture()
def driver():
    dtype = torch.get_default_dtype()
    try:
        with installed(fedml_distributed_standin, DRIVER) as module:
            yield module
    finally:
        torch.set_default_dtype(dtype)  # the driver sets float64, as in FedML's worker


def test_the_runpy_entry_names_the_mpi_and_cross_silo_checks():
    assert sorted({c.factory for c in CHECKS}) == ["fedavg_cross_silo", "fedavg_mpi", "fedavgm_mpi",
                                                    "fednova_mpi", "fedprox_cross_silo", "fedprox_mpi"]
    assert {c.configuration for c in CHECKS} == {"MPI simulator", "MPI simulator, FedOpt", "cross-silo"}


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_distributed_check_passes_through_the_driver(driver, check):
    assert_recorded_verdict(check_through_driver(driver, check, CHEAP[check.family], max_examples=3), None)


@pytest.mark.parametrize("factory", ["fedavg_mpi", "fedavgm_mpi", "fednova_mpi"])
def test_fedmls_own_sampler_is_judged_and_first_clients_rejected(driver, monkeypatch, factory):
    check = next(c for c in CHECKS if c.factory == factory)
    prop = f"{check.family}.own_sampler"
    good = conformance.check(getattr(driver, factory)(), check.family, max_examples=1, shrink=False,
                             properties=[prop], fixed=list(check.fixed), **check.hyper)
    assert_recorded_verdict(good, None)
    monkeypatch.setitem(fedml_distributed_standin.SLIP, "first_clients", True)
    bad = conformance.check(getattr(driver, factory)(), check.family, max_examples=1, shrink=False,
                            properties=[prop], fixed=list(check.fixed), **check.hyper)
    assert not bad.passed, bad.table()
    assert "law" in bad.failures[0].diagnosis, bad.table()


@pytest.mark.parametrize("factory", ["fedprox_mpi", "fedprox_cross_silo"])
def test_fedmls_default_trainer_without_the_proximal_term_is_rejected(driver, monkeypatch, factory):
    monkeypatch.setitem(fedml_distributed_standin.SLIP, "no_prox", True)
    report = conformance.check(getattr(driver, factory)(), "fedprox", max_examples=4, shrink=False,
                               fixed=["server_step"], properties=["fedprox.one_round"])
    assert_recorded_verdict(report, "proximal term missing")


def test_fedmls_mpi_fednova_weights_over_the_federation_are_rejected_at_partial_participation(driver, monkeypatch):
    monkeypatch.setitem(fedml_distributed_standin.SLIP, "federation_weights", True)
    full = conformance.check(driver.fednova_mpi(), "fednova", max_examples=4, shrink=False,
                             properties=["fednova.one_round"])
    assert_recorded_verdict(full, None)  # every client takes part: n_i / n is the round's weight
    partial = conformance.check(driver.fednova_mpi(), "fednova", max_examples=1, shrink=False,
                                properties=["fednova.own_sampler"])
    assert not partial.passed, partial.table()
    assert "the sampler's law holds" in partial.failures[0].diagnosis, partial.table()


def test_no_server_step_where_fedml_has_none(driver):
    with pytest.raises(ValueError, match="no server learning rate"):
        driver.fedavg_mpi()(None, [], server_step=0.5)
    with pytest.raises(ValueError, match="no server learning rate"):
        driver.fedavg_cross_silo()(None, [], server_step=0.5)
