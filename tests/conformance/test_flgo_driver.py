"""The flgo driver's translation layer (fedtheory/conformance/drivers/flgo.py) on a stand-in with
flgo 0.4.4's API shape (tests/conformance/standins/flgo_standin.py): CI does not install flgo. The verdicts on
flgo's own code are in docs/frameworks.md and are re-run by benchmarks/frameworks/run.py."""
from __future__ import annotations

import importlib
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402

from .standins import assert_stored_verdict, check_through_driver, flgo_standin, framework_checks  # noqa: E402

CHECKS = framework_checks("flgo")
# a few cheap properties per family, own_sampler included: every flgo check runs flgo's own sampler
CHEAP = {"fedavg": ["fedavg.one_round", "fedavg.multi_round", "fedavg.own_sampler"],
         "fedprox": ["fedprox.one_round", "fedprox.multi_round", "fedprox.own_sampler"],
         "scaffold": ["scaffold.one_round", "scaffold.server_state", "scaffold.own_sampler"],
         "feddyn": ["feddyn.one_round", "feddyn.own_sampler"],  # 200 local steps a client: the slowest (~30 s)
         "server_optimizer": ["server_optimizer.first_round", "server_optimizer.from_state",
                              "server_optimizer.own_sampler"],
         "fednova": ["fednova.one_round", "fednova.fixed_point", "fednova.own_sampler"]}


@pytest.fixture()
def driver(monkeypatch):
    saved = {k: v for k, v in sys.modules.items() if k == "flgo" or k.startswith("flgo.")}
    flgo_standin.install()
    sys.modules.pop("fedtheory.conformance.drivers.flgo", None)
    dtype = torch.get_default_dtype()
    yield importlib.import_module("fedtheory.conformance.drivers.flgo")
    torch.set_default_dtype(dtype)  # the driver sets float64 as flgo's worker does
    for k in [k for k in sys.modules if k == "flgo" or k.startswith("flgo.")]:
        del sys.modules[k]
    sys.modules.update(saved)
    sys.modules.pop("fedtheory.conformance.drivers.flgo", None)


def test_fedavg_through_the_driver_passes(driver):
    # flgo's FedAvg server has no server step: declared fixed, so the kit does not draw one
    report = conformance.check(driver.fedavg(), "fedavg", max_examples=5, fixed=["server_step"])
    assert report.passed, report.table()


def test_scaffold_state_round_trips_through_the_driver(driver):
    report = conformance.check(driver.scaffold(), "scaffold", max_examples=4, fixed=["server_step"],
                               properties=["scaffold.one_round", "scaffold.server_state", "scaffold.multi_round"])
    assert report.passed, report.table()
    assert all(r.status == "holds" for r in report.results)  # the state is read back, not opaque


def test_a_slipped_standin_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(flgo_standin.SLIP, "scaffold_c_over_S", True)
    report = conformance.check(driver.scaffold(), "scaffold", max_examples=8, shrink=False,
                               properties=["scaffold.server_state", "scaffold.multi_round"])
    assert not report.passed


@pytest.mark.parametrize("factory, family", [("fedavg", "fedavg"), ("scaffold", "scaffold"), ("fednova", "fednova")])
def test_flgos_own_sampler_runs_at_partial_participation(driver, factory, family):
    # the driver leaves the draw to flgo's Server.sample ('uniform', proportion from clients_per_round) and reports it
    fixed = ["server_step"] if family != "fednova" else []  # FedNova's family has no server step
    report = conformance.check(getattr(driver, factory)(), family, fixed=fixed, properties=[f"{family}.own_sampler"])
    assert [r.status for r in report.results] == ["holds"], report.table()


def test_a_sampler_that_always_draws_the_first_members_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(flgo_standin.SLIP, "sample_first", True)
    report = conformance.check(driver.fedavg(), "fedavg", fixed=["server_step"], properties=["fedavg.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    assert "the sampler's law fails" in report.failures[0].diagnosis


def test_flgos_fedprox_draws_by_li_et_als_law_and_counts_a_repeated_client_twice(driver):
    # flgo's FedProx Server switches to 'md' below full participation; its communicate trains each distinct
    # selected client once and lists the reply once per draw, so the 1/K average counts a client drawn twice twice,
    # as Alg. 2 (docs/conformance.md, "A framework's own sampler")
    report = conformance.check(driver.fedprox(), "fedprox", fixed=["server_step"], weighting="uniform",
                               properties=["fedprox.own_sampler"])
    assert [r.status for r in report.results] == ["holds"], report.table()


def test_a_repeated_client_received_once_is_rejected_by_the_round(driver, monkeypatch):
    monkeypatch.setitem(flgo_standin.SLIP, "md_repeats_once", True)
    report = conformance.check(driver.fedprox(), "fedprox", fixed=["server_step"], weighting="uniform",
                               properties=["fedprox.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    diagnosis = report.failures[0].diagnosis
    assert "a client drawn twice counts once" in diagnosis and "the sampler's law holds" in diagnosis, diagnosis


def test_flgos_fedprox_at_the_kits_participants_passes(driver):
    report = conformance.check(driver.fedprox(), "fedprox", max_examples=3, fixed=["server_step"],
                               weighting="uniform", properties=["fedprox.one_round", "fedprox.multi_round"])
    assert report.passed, report.table()


def test_an_md_sampler_ignoring_the_data_volumes_is_rejected_in_law(driver, monkeypatch):
    monkeypatch.setitem(flgo_standin.SLIP, "md_ignores_datavol", True)
    report = conformance.check(driver.fedprox(), "fedprox", fixed=["server_step"], weighting="uniform",
                               properties=["fedprox.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    assert "the sampler's law fails" in report.failures[0].diagnosis, report.failures[0].diagnosis


NOVA_OPTIONS = ("fednova_weighted_scale", "fednova_weighted_com")


@pytest.mark.parametrize("factory", NOVA_OPTIONS)
def test_fednovas_unnormalised_options_are_eq_7_at_the_kits_participants(driver, factory):
    # the driver's federation is the round's participants (K = N): p_i = n_i / n sums to 1 and N/K = 1
    report = conformance.check(getattr(driver, factory)(), "fednova", max_examples=4, shrink=False,
                               properties=["fednova.one_round", "fednova.equal_steps"])
    assert report.passed, report.table()


@pytest.mark.parametrize("factory", NOVA_OPTIONS)
def test_fednovas_unnormalised_options_fail_under_flgos_own_sampler(driver, factory):
    # docs/frameworks.md's recorded FAIL: below full participation sum_S p_i < 1 scales tau_eff (and, for
    # 'weighted_com', Delta too), so a round is not eq. (7) for the drawn clients while the draws are uniform
    report = conformance.check(getattr(driver, factory)(), "fednova", properties=["fednova.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    assert "the sampler's law holds" in report.failures[0].diagnosis, report.failures[0].diagnosis


@pytest.mark.parametrize("factory", NOVA_OPTIONS)
def test_an_unweighted_tau_eff_in_the_unnormalised_options_is_rejected(driver, monkeypatch, factory):
    monkeypatch.setitem(flgo_standin.SLIP, "nova_tau_eff_unweighted", True)
    report = conformance.check(getattr(driver, factory)(), "fednova", max_examples=8, shrink=False,
                               properties=["fednova.one_round"])
    assert not report.passed, report.table()


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_runpy_check_gives_its_stored_verdict(driver, check):
    examples = 2 if check.family == "feddyn" else 4
    assert_stored_verdict(check_through_driver(driver, check, CHEAP[check.family], examples), "flgo", check)
