"""The fl4health driver's translation layer (fedtheory/conformance/drivers/fl4health.py) on a stand-in with
fl4health 0.4.2's API shape (tests/conformance/standins/fl4health_standin.py) over Flower's real ``Parameters`` and
``FitRes``: CI does not install fl4health. The verdicts on fl4health's own code are in docs/frameworks.md and are
re-run by benchmarks/frameworks/run.py."""
from __future__ import annotations

import importlib
import logging
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("flwr")
pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402

from .standins import assert_stored_verdict, check_through_driver, fl4health_standin, framework_checks  # noqa: E402

DRIVER = "fedtheory.conformance.drivers.fl4health"
CHECKS = framework_checks("fl4health")
CHEAP = {"fedavg": ["fedavg.one_round", "fedavg.multi_round"], "fedprox": ["fedprox.one_round", "fedprox.multi_round"],
         "scaffold": ["scaffold.one_round", "scaffold.server_state", "scaffold.multi_round"],
         "server_optimizer": ["server_optimizer.first_round", "server_optimizer.from_state",
                              "server_optimizer.multi_round"]}
# The stand-in types the papers and switches fl4health's defects on as slips (its docstring): the checks whose
# stored verdict is a defect run with it on. SCAFFOLD as shipped needs none for its c step (fraction_fit's default
# 1.0 is the stand-in's too), but fl4health also has the late joiner
DEFECTS = {"scaffold": ("scaffold_new_client_starts_at_c",),
           "scaffold_fraction": ("scaffold_new_client_starts_at_c",),
           "dp_fedavgm": ("clipping_reference_aliases_model",)}


@pytest.fixture()
def driver():
    saved = {k: v for k, v in sys.modules.items() if k == "fl4health" or k.startswith("fl4health.")}
    flwr_level = logging.getLogger("flwr").level
    fl4health_standin.install()
    sys.modules.pop(DRIVER, None)
    dtype = torch.get_default_dtype()
    yield importlib.import_module(DRIVER)
    torch.set_default_dtype(dtype)  # the driver sets float64 as fl4health's worker does
    logging.getLogger("flwr").setLevel(flwr_level)
    for k in [k for k in sys.modules if k == "fl4health" or k.startswith("fl4health.")]:
        del sys.modules[k]
    sys.modules.update(saved)
    sys.modules.pop(DRIVER, None)


def test_fedavg_and_fedprox_pass_weighted_and_uniform(driver):
    # fl4health's BasicFedAvg and FedAvgWithAdaptiveConstraint have no server step: declared fixed
    assert conformance.check(driver.fedavg(), "fedavg", max_examples=4, fixed=["server_step"]).passed
    assert conformance.check(driver.fedavg_uniform(), "fedavg", weighting="uniform", max_examples=4,
                             fixed=["server_step"]).passed
    report = conformance.check(driver.fedprox(), "fedprox", max_examples=4, fixed=["server_step"],
                               properties=["fedprox.one_round", "fedprox.zero_prox"])
    assert report.passed, report.table()


SCAFFOLD_STATE = ["scaffold.one_round", "scaffold.fixed_point", "scaffold.server_state", "scaffold.multi_round"]


def test_scaffold_configured_as_the_paper_reads_the_state_back_by_client_id(driver):
    """fraction_fit = |S|/N: the paper's c update. The kit relabels client ids (10.., sparse): c_i must come back
    under the kit's ids, across rounds with clients joining late."""
    report = conformance.check(driver.scaffold_fraction(), "scaffold", max_examples=4, properties=SCAFFOLD_STATE)
    assert report.passed, report.table()
    assert all(r.status == "holds" for r in report.results)  # the state is read back, not opaque


def test_scaffold_as_shipped_moves_c_by_the_mean_at_partial_participation(driver):
    """As shipped, Scaffold's fraction_fit is its default 1.0: c moves by the participants' mean dc_i, not |S|/N
    times it (Alg. 1 line 17). The paper-inside stand-in with that default fails where fewer than N take part."""
    report = conformance.check(driver.scaffold(), "scaffold", max_examples=6, shrink=False,
                               properties=["scaffold.server_state", "scaffold.multi_round"])
    status = {r.prop.id: r.status for r in report.results}
    assert status["scaffold.multi_round"] == "violated", report.table()


def test_scaffold_late_joiner_starting_at_c_is_found_as_in_fl4health(driver, monkeypatch):
    """fl4health's ScaffoldClient starts a client's c_i at the server's c: one round from a full state is still
    the paper's, but a client joining after round 1 breaks c = (1/N) sum c_i (the verdict on fl4health 0.4.2)."""
    monkeypatch.setitem(fl4health_standin.SLIP, "scaffold_new_client_starts_at_c", True)
    report = conformance.check(driver.scaffold_fraction(), "scaffold", max_examples=4, properties=SCAFFOLD_STATE)
    status = {r.prop.id: r.status for r in report.results}
    assert status["scaffold.one_round"] == status["scaffold.fixed_point"] == "holds", report.table()
    assert status["scaffold.multi_round"] == "violated", report.table()


def test_a_slipped_standin_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(fl4health_standin.SLIP, "fedavg_unweighted", True)
    report = conformance.check(driver.fedavg(), "fedavg", max_examples=4, shrink=False, fixed=["server_step"],
                               properties=["fedavg.one_round"])
    assert not report.passed
    monkeypatch.setitem(fl4health_standin.SLIP, "scaffold_c_without_fraction", True)
    report = conformance.check(driver.scaffold_fraction(), "scaffold", max_examples=4, shrink=False,
                               properties=["scaffold.one_round"])
    assert not report.passed


def test_dp_fedavgm_without_noise_is_server_momentum_and_the_round_one_alias_is_found(driver, monkeypatch):
    """ClientLevelDPFedAvgM with no noise and no clipping is FedAvgM; with fl4health's own first-round reference
    weights (a view of the model's, fl4health/clients/clipping_client.py, set_parameters) every client sends a zero
    update in round 1 on CPU, and the kit names the first round."""
    properties = ["server_optimizer.first_round", "server_optimizer.from_state", "server_optimizer.multi_round"]
    report = conformance.check(driver.fedavgm(), "server_optimizer", optimizer="fedavgm", max_examples=4,
                               properties=properties)
    assert report.passed, report.table()
    assert all(r.status == "holds" for r in report.results)  # m is read back, not opaque
    monkeypatch.setitem(fl4health_standin.SLIP, "clipping_reference_aliases_model", True)
    report = conformance.check(driver.fedavgm(), "server_optimizer", optimizer="fedavgm", max_examples=4,
                               shrink=False, properties=properties)
    status = {r.prop.id: r.status for r in report.results}
    assert status == {"server_optimizer.first_round": "violated", "server_optimizer.from_state": "holds",
                      "server_optimizer.multi_round": "violated"}, report.table()


def test_own_sampler_runs_fl4healths_fraction_manager(driver):
    """Given the population and clients_per_round, fl4health's FixedSamplingByFractionClientManager draws (through
    the strategy's configure_fit): the paper-inside stand-in's rounds and draws pass, FedAvg's and SCAFFOLD's."""
    report = conformance.check(driver.fedavg(), "fedavg", max_examples=3, fixed=["server_step"],
                               properties=["fedavg.own_sampler"])
    assert [r.status for r in report.results] == ["holds"], report.table()
    report = conformance.check(driver.scaffold(), "scaffold", max_examples=3, properties=["scaffold.own_sampler"])
    assert [r.status for r in report.results] == ["holds"], report.table()


def test_own_sampler_rejects_a_first_clients_sampler_and_the_late_joiner(driver, monkeypatch):
    """The slips the own-sampler path must catch: a manager that always returns the first clients (the law), and
    fl4health 0.4.2's late joiner (a client first drawn after round 1 starts at c_i = c: the rounds)."""
    monkeypatch.setitem(fl4health_standin.SLIP, "sampler_first_clients", True)
    report = conformance.check(driver.fedavg(), "fedavg", max_examples=2, shrink=False, fixed=["server_step"],
                               properties=["fedavg.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    monkeypatch.setitem(fl4health_standin.SLIP, "sampler_first_clients", False)
    monkeypatch.setitem(fl4health_standin.SLIP, "scaffold_new_client_starts_at_c", True)
    report = conformance.check(driver.scaffold(), "scaffold", max_examples=2, shrink=False,
                               properties=["scaffold.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    assert "differs from the recursion" in report.table()


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_runpy_check_gives_its_stored_verdict(driver, monkeypatch, check):
    for slip in DEFECTS.get(check.name, ()):
        monkeypatch.setitem(fl4health_standin.SLIP, slip, True)
    assert_stored_verdict(check_through_driver(driver, check, CHEAP[check.family]), "fl4health", check)
