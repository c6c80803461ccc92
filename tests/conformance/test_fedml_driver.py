"""The FedML driver's translation layer (fedtheory/conformance/drivers/fedml.py) on a stand-in with FedML
0.9.6's API shape and Karimireddy et al.'s Alg. 1 inside (tests/conformance/standins/fedml_standin.py): CI does not
install FedML. The verdict on FedML's own code is in docs/frameworks.md and is re-run by
benchmarks/frameworks/run.py."""
from __future__ import annotations

import importlib
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402

from .standins import assert_stored_verdict, check_through_driver, fedml_standin, framework_checks  # noqa: E402

# run.py's FedML checks of this stand-in (the single-process ones are tests/conformance/test_fedml_sp_driver.py's)
CHECKS = [c for c in framework_checks("fedml") if c.factory in ("scaffold", "fednova")]
CHEAP = {"scaffold": ["scaffold.one_round", "scaffold.server_state", "scaffold.own_sampler"],
         "fednova": ["fednova.one_round", "fednova.fixed_point", "fednova.own_sampler"]}
# The stand-in has the papers inside and FedML's deviations as slips: the checks whose stored verdict is a defect
# run with it on
DEFECTS = {"scaffold": ("last_client_overwrites", "c_i_never_loaded"), "fednova": ("fednova_float32_weights",),
           "fednova_f32_weights": ("fednova_float32_weights",), "fednova_gmf": ("gmf_reset",)}
# what the stand-in cannot express: its FedNovaTrainer runs plain local SGD
CANNOT = {"fednova_momentum": "the stand-in's FedNovaTrainer has no local momentum (FedML's FedNova optimizer)",
          "fednova_prox_steps": "the stand-in's FedNovaTrainer has no proximal term (FedML's FedNova optimizer)"}


@pytest.fixture()
def driver():
    saved = {k: v for k, v in sys.modules.items() if k == "fedml" or k.startswith("fedml.")}
    fedml_standin.install()
    sys.modules.pop("fedtheory.conformance.drivers.fedml", None)
    dtype = torch.get_default_dtype()
    yield importlib.import_module("fedtheory.conformance.drivers.fedml")
    torch.set_default_dtype(dtype)  # the driver sets float64 as FedML's worker does
    for k in [k for k in sys.modules if k == "fedml" or k.startswith("fedml.")]:
        del sys.modules[k]
    sys.modules.update(saved)
    sys.modules.pop("fedtheory.conformance.drivers.fedml", None)


def test_scaffold_state_round_trips_through_the_driver_with_relabelled_ids(driver):
    # the kit draws client ids from 10 on and sparse ids: the driver maps them onto FedML's indices 0..N-1
    report = conformance.check(driver.scaffold(), "scaffold", max_examples=4,
                               properties=["scaffold.one_round", "scaffold.server_state", "scaffold.multi_round"])
    assert report.passed, report.table()
    assert all(r.status == "holds" for r in report.results)


def test_fedmls_last_client_overwrite_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(fedml_standin.SLIP, "last_client_overwrites", True)
    report = conformance.check(driver.scaffold(), "scaffold", max_examples=8, shrink=False,
                               properties=["scaffold.one_round", "scaffold.multi_round"])
    assert not report.passed


def test_fedmls_own_sampler_runs_at_partial_participation(driver):
    # FedML's _client_sampling draws (np.random.seed(round_idx), uniform without replacement); the driver passes the
    # run's round index and reports the draw
    report = conformance.check(driver.scaffold(), "scaffold", properties=["scaffold.own_sampler"])
    assert [r.status for r in report.results] == ["holds"], report.table()


def test_a_sampler_that_always_draws_the_first_clients_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(fedml_standin.SLIP, "sample_first", True)
    report = conformance.check(driver.scaffold(), "scaffold", properties=["scaffold.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    assert "the sampler's law fails" in report.failures[0].diagnosis


def test_fedmls_fednova_runs_its_own_sampler(driver):
    # FedNovaTrainer's client_sampling draws m of N at the run's round index; every client's tau_i comes from the kit
    report = conformance.check(driver.fednova(), "fednova", properties=["fednova.one_round", "fednova.own_sampler"])
    assert report.results and all(r.status == "holds" for r in report.results), report.table()
    assert "fednova.own_sampler" in {r.prop.id for r in report.results}


def test_fedmls_fednova_with_a_sampler_that_always_draws_the_first_clients_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(fedml_standin.SLIP, "sample_first", True)
    report = conformance.check(driver.fednova(), "fednova", properties=["fednova.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    assert "the sampler's law fails" in report.failures[0].diagnosis


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_runpy_check_gives_its_stored_verdict(driver, monkeypatch, check):
    if check.name in CANNOT:
        pytest.skip(CANNOT[check.name])
    for slip in DEFECTS.get(check.name, ()):
        monkeypatch.setitem(fedml_standin.SLIP, slip, True)
    assert_stored_verdict(check_through_driver(driver, check, CHEAP[check.family]), "fedml", check)


def test_fedmls_fednova_server_momentum_carries_through_the_kept_trainer(driver):
    # gmf > 0: the driver keeps FedML's trainer along a run, so its model and momentum buffer are the trainer's own
    report = conformance.check(driver.fednova(), "fednova", server_momentum=0.5, max_examples=6, shrink=False,
                               properties=["fednova.one_round", "fednova.multi_round", "fednova.own_sampler"])
    assert report.passed, report.table()
    assert all(r.status == "holds" for r in report.results), report.table()


def test_fedmls_fednova_momentum_buffer_reset_every_round_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(fedml_standin.SLIP, "gmf_reset", True)
    report = conformance.check(driver.fednova(), "fednova", server_momentum=0.5, max_examples=6, shrink=False,
                               properties=["fednova.multi_round"])
    assert not report.passed
    assert "server momentum (beta = 0.5) is dropped" in report.failures[0].diagnosis, report.table()
