"""The FedLab driver's translation layer (fedtheory/conformance/drivers/fedlab.py) on a stand-in with
FedLab 1.3.0's API shape (tests/conformance/standins/fedlab_standin.py): CI does not install FedLab. The checks are
benchmarks/frameworks/run.py's FedLab entry (docs/frameworks.md's FedLab table): its passes pass here, and its two
FAILs -- uniform FedAvg checked as n_k/n, FedDyn's two deviations as the stand-in's SLIP -- are rejected. FedLab's
own sampler (``SyncServerHandler.sample_clients``) runs the ``own_sampler`` properties, with a first-m sampler as
its slip."""
from __future__ import annotations

import importlib
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402

from .standins import fedlab_standin  # noqa: E402

DRIVER = "fedtheory.conformance.drivers.fedlab"


def _fedlab(name: str) -> bool:
    return name == "fedlab" or name.startswith("fedlab.")


@pytest.fixture()
def driver():
    saved = {k: v for k, v in sys.modules.items() if _fedlab(k)}
    fedlab_standin.install()
    sys.modules.pop(DRIVER, None)
    dtype = torch.get_default_dtype()
    yield importlib.import_module(DRIVER)
    torch.set_default_dtype(dtype)  # the driver sets float64
    for k in [k for k in sys.modules if _fedlab(k)]:
        del sys.modules[k]
    sys.modules.update(saved)
    sys.modules.pop(DRIVER, None)


# FedLab's SyncServerHandler has no server step (declared fixed); its ScaffoldServerHandler has one
PASSES = [
    ("fedavg", "fedavg", {"weighting": "uniform"}, ("server_step",),
     ["fedavg.one_round", "fedavg.permutation", "fedavg.multi_round"]),
    ("fedprox", "fedprox", {"weighting": "uniform"}, ("server_step",), ["fedprox.one_round", "fedprox.zero_prox"]),
    ("scaffold", "scaffold", {}, (), ["scaffold.one_round", "scaffold.server_state", "scaffold.multi_round"]),
    ("feddyn", "feddyn", {}, (), ["feddyn.one_round", "feddyn.server_state", "feddyn.multi_round"]),
    ("fednova", "fednova", {"weighting": "uniform"}, (), ["fednova.one_round", "fednova.multi_round"]),
    ("fednova_uniform", "fednova", {"weighting": "uniform"}, (), ["fednova.one_round", "fednova.multi_round"]),
]


@pytest.mark.parametrize("factory, family, hyper, fixed, props", PASSES, ids=[p[0] for p in PASSES])
def test_the_paper_passes_through_the_driver_with_relabelled_ids(driver, factory, family, hyper, fixed, props):
    # the kit draws client ids from 10 on and sparse: the driver maps them onto FedLab's slots 0..len-1
    report = conformance.check(getattr(driver, factory)(), family, max_examples=4, properties=props,
                               fixed=list(fixed), **hyper)
    assert report.passed, report.table()
    assert all(r.status == "holds" for r in report.results), report.table()  # the state is read back


def test_fedlabs_uniform_fedavg_fails_as_mcmahans_weighting(driver):
    report = conformance.check(driver.fedavg(), "fedavg", max_examples=8, fixed=["server_step"],
                               properties=["fedavg.one_round", "fedavg.num_examples"])
    assert not report.passed
    diagnoses = {r.prop.id: r.diagnosis for r in report.failures}
    # docs/frameworks.md; the diagnosis is measured: the output equals the uniform closed form
    assert diagnoses["fedavg.one_round"].startswith("aggregation weighted uniformly (1/n each) where the paper "
                                                    "weights by num_examples")


@pytest.mark.parametrize("slips", [("feddyn_detached_terms",), ("feddyn_h_subtracts_x_once",),
                                   ("feddyn_detached_terms", "feddyn_h_subtracts_x_once")])
def test_fedlabs_feddyn_deviations_are_rejected(driver, monkeypatch, slips):
    for slip in slips:
        monkeypatch.setitem(fedlab_standin.SLIP, slip, True)
    report = conformance.check(driver.feddyn(), "feddyn", max_examples=4, shrink=False,
                               properties=["feddyn.one_round"])
    assert not report.passed


# FedLab's own sampler (docs/frameworks.md, FedLab): the handler's sample_clients draws m of the N clients
@pytest.mark.parametrize("factory, family, hyper, fixed", [
    ("fedavg", "fedavg", {"weighting": "uniform"}, ["server_step"]),
    ("scaffold", "scaffold", {}, [])], ids=["fedavg", "scaffold"])
def test_fedlabs_own_sampler_runs_at_partial_participation(driver, factory, family, hyper, fixed):
    report = conformance.check(getattr(driver, factory)(), family, fixed=fixed, properties=[f"{family}.own_sampler"],
                               **hyper)
    assert [r.status for r in report.results] == ["holds"], report.table()


def test_fedlabs_feddyn_deviations_fail_under_its_own_sampler_by_the_round(driver, monkeypatch):
    # the detached terms (FedLab's deviation (1)): its h+ slip (2) is invisible at m = 1 of 2 or 3 clients
    monkeypatch.setitem(fedlab_standin.SLIP, "feddyn_detached_terms", True)
    report = conformance.check(driver.feddyn(), "feddyn", properties=["feddyn.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    assert "the sampler's law holds" in report.failures[0].diagnosis, report.failures[0].diagnosis


def test_a_sampler_that_always_returns_the_first_ids_is_rejected_in_law(driver, monkeypatch):
    monkeypatch.setitem(fedlab_standin.SLIP, "sample_first", True)
    report = conformance.check(driver.fedavg(), "fedavg", weighting="uniform", fixed=["server_step"],
                               properties=["fedavg.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    assert "the sampler's law fails" in report.failures[0].diagnosis, report.failures[0].diagnosis


def test_fedprox_is_not_offered_the_sampling_protocol(driver):
    report = conformance.check(driver.fedprox(), "fedprox", weighting="uniform", fixed=["server_step"],
                               properties=["fedprox.own_sampler"])
    assert [r.status for r in report.results] == ["not applicable"], report.table()


def test_fedlabs_fednova_default_scales_the_step_by_n_over_s(driver, monkeypatch):
    """FedLab 1.3.0's default option 'weighted_scale' sets p_i = 1/m and multiplies the step by N/|S| again: right
    at full participation (one_round), N/|S| times eq. (7) when fewer take part (multi_round), and named so."""
    monkeypatch.setitem(fedlab_standin.SLIP, "fednova_population_scale", True)
    report = conformance.check(driver.fednova(), "fednova", weighting="uniform", max_examples=6, shrink=False,
                               properties=["fednova.one_round", "fednova.multi_round"])
    status = {r.prop.id: r.status for r in report.results if "@" not in r.prop.id}  # not the re-runs at drawn hyper
    assert status == {"fednova.one_round": "holds", "fednova.multi_round": "violated"}, report.table()
    assert "the step is scaled by N/|S|" in report.failures[0].diagnosis
    # the 'uniform' option has no N/|S| factor: it passes with the same slip switched on
    report = conformance.check(driver.fednova_uniform(), "fednova", weighting="uniform", max_examples=4,
                               properties=["fednova.one_round", "fednova.multi_round"])
    assert report.passed, report.table()
