"""The NVFlare driver's translation layer (fedtheory/conformance/drivers/nvflare.py) on a stand-in with
NVFlare 2.9.0's API shape (tests/conformance/standins/nvflare_standin.py): CI does not install NVFlare. The
verdicts on NVFlare's own code are in docs/frameworks.md and are re-run by benchmarks/frameworks/run.py."""
from __future__ import annotations

import importlib
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402

from .standins import assert_stored_verdict, check_through_driver, framework_checks, nvflare_standin  # noqa: E402

DRIVER = "fedtheory.conformance.drivers.nvflare"
#: The controller checks this stand-in re-types; FedOptRecipe's, aggregation_weights' and the HE FedAvg's run on
#: their own stand-ins (tests/conformance/test_nvflare_recipe_driver.py)
RECIPE_AND_HE = ("fedavg_aggregation_weights", "fedopt_recipe_sgdm", "fedopt_recipe_adam", "fedopt_recipe_adagrad",
                 "fedopt_recipe_sgdm_checkpoint", "fedavg_he")
CHECKS = [c for c in framework_checks("nvflare") if c.name not in RECIPE_AND_HE]
CHEAP = {"fedavg": ["fedavg.k1_is_gd", "fedavg.one_round", "fedavg.multi_round"],
         "fedprox": ["fedprox.one_round", "fedprox.multi_round"],
         "scaffold": ["scaffold.one_round", "scaffold.fixed_point", "scaffold.server_state"],
         "server_optimizer": ["server_optimizer.first_round", "server_optimizer.from_state",
                              "server_optimizer.multi_round"]}


@pytest.fixture()
def driver():
    saved = {k: v for k, v in sys.modules.items() if k == "nvflare" or k.startswith("nvflare.")}
    nvflare_standin.install()
    sys.modules.pop(DRIVER, None)
    dtype = torch.get_default_dtype()
    yield importlib.import_module(DRIVER)
    torch.set_default_dtype(dtype)
    for k in [k for k in sys.modules if k == "nvflare" or k.startswith("nvflare.")]:
        del sys.modules[k]
    sys.modules.update(saved)
    sys.modules.pop(DRIVER, None)


def test_fedavg_and_fedprox_pass_uniformly_weighted(driver):
    # NVFlare's FedAvg controller has no server step: declared fixed, so the kit does not draw one
    assert conformance.check(driver.fedavg(), "fedavg", weighting="uniform", max_examples=4,
                             fixed=["server_step"]).passed
    assert conformance.check(driver.fedprox(), "fedprox", weighting="uniform", max_examples=4, fixed=["server_step"],
                             properties=["fedprox.one_round", "fedprox.zero_prox"]).passed


def test_scaffold_state_is_read_back_and_the_server_average_over_participants_is_found(driver):
    """NVFlare's Scaffold controller adds the participants' weighted mean of dc_i to c (the paper: 1/N sum): the
    same under full participation, different under partial participation."""
    report = conformance.check(driver.scaffold(), "scaffold", max_examples=4,
                               properties=["scaffold.fixed_point", "scaffold.one_round"])
    status = {r.prop.id: r.status for r in report.results}
    assert status["scaffold.fixed_point"] == "holds", report.table()  # readable state, full participation
    assert status["scaffold.one_round"] == "violated"
    assert report.failures[0].diagnosis == "the update of c differs from the paper's"


def test_fedopt_keeps_the_server_optimizer_across_rounds(driver):
    report = conformance.check(driver.fedavgm(), "server_optimizer", optimizer="fedavgm", max_examples=4,
                               properties=["server_optimizer.first_round", "server_optimizer.multi_round"])
    assert report.passed, report.table()


def test_fedopt_as_shipped_changes_the_server_step_after_round_one(driver):
    """FedOpt's default schedule (cosine annealing to 0.9 over 3 rounds) moves the server learning rate away from
    eta after the first round: Alg. 2's single eta holds in round 1 and not in the rounds after it."""
    report = conformance.check(driver.fedavgm_shipped(), "server_optimizer", optimizer="fedavgm", max_examples=4,
                               shrink=False, properties=["server_optimizer.first_round",
                                                         "server_optimizer.multi_round"])
    status = {r.prop.id: r.status for r in report.results}
    assert status == {"server_optimizer.first_round": "holds", "server_optimizer.multi_round": "violated"}, \
        report.table()


def test_a_slipped_standin_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(nvflare_standin.SLIP, "scaffold_correction_sign", True)
    report = conformance.check(driver.scaffold(), "scaffold", max_examples=4, shrink=False,
                               properties=["scaffold.fixed_point"])
    assert not report.passed


def test_fedopt_from_an_initial_checkpoint_steps_the_source_models_weights(driver):
    """FedOpt's optimizer steps ``source_model``'s parameters, not the checkpoint the round started from: round 1
    leaves the checkpoint (the server update is applied to the model object's own weights), and from then on the
    source model holds the global model, so a round from the state the controller left holds."""
    report = conformance.check(driver.fedavgm_checkpoint(), "server_optimizer", optimizer="fedavgm", max_examples=4,
                               shrink=False, properties=["server_optimizer.first_round",
                                                         "server_optimizer.multi_round"])
    status = {r.prop.id: r.status for r in report.results}
    assert status == {"server_optimizer.first_round": "violated", "server_optimizer.multi_round": "violated"}, \
        report.table()
    multi = next(r for r in report.results if r.prop.id == "server_optimizer.multi_round")
    assert "round 1 of" in multi.diagnosis, report.table()


def test_the_controllers_own_sampler_runs_at_partial_participation(driver):
    # FedAvg(num_clients=m) over the population's connected sites: sample_clients draws, the driver reports the
    # sites the task went to; uniform weights (NUM_STEPS_CURRENT_ROUND = K on every site)
    report = conformance.check(driver.fedavg(), "fedavg", weighting="uniform", fixed=["server_step"],
                               properties=["fedavg.own_sampler"])
    assert [r.status for r in report.results] == ["holds"], report.table()


def test_scaffold_under_its_own_sampler_fails_by_the_round_and_keeps_the_law(driver):
    # the stand-in keeps NVFlare's c + mean over the participants of dc_i (the paper: (1/N) sum): at partial
    # participation drawn by Scaffold's own sample_clients the round differs, the draws are uniform
    report = conformance.check(driver.scaffold(), "scaffold", fixed=["server_step"],
                               properties=["scaffold.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    assert "the sampler's law holds" in report.failures[0].diagnosis, report.failures[0].diagnosis


def test_a_sampler_that_keeps_the_first_sites_is_rejected_in_law(driver, monkeypatch):
    monkeypatch.setitem(nvflare_standin.SLIP, "sample_first", True)
    report = conformance.check(driver.fedavg(), "fedavg", weighting="uniform", fixed=["server_step"],
                               properties=["fedavg.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    assert "the sampler's law fails" in report.failures[0].diagnosis, report.failures[0].diagnosis


def test_fedprox_is_not_offered_the_sampling_protocol(driver):
    # NVFlare's FedProx samples as FedAvg (uniformly, without replacement); fedprox.own_sampler judges Li et al.'s
    # law (by n_k/n, with replacement), so the driver keeps the kit's participants and the property does not apply
    report = conformance.check(driver.fedprox(), "fedprox", weighting="uniform", fixed=["server_step"],
                               properties=["fedprox.own_sampler"])
    assert [r.status for r in report.results] == ["not applicable"], report.table()


def test_fedopt_runs_its_own_sampler_through_fedavg_run(driver):
    # FedOpt (a FedAvg subclass) samples num_clients = m sites per round; its torch optimizer lives for the run
    report = conformance.check(driver.fedavgm(), "server_optimizer", optimizer="fedavgm",
                               properties=["server_optimizer.own_sampler"])
    assert [r.status for r in report.results] == ["holds"], report.table()


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_runpy_check_gives_its_stored_verdict(driver, check):
    assert_stored_verdict(check_through_driver(driver, check, CHEAP[check.family]), "nvflare", check)


def test_the_checks_left_to_the_recipe_stand_ins_are_run_pys():
    # a renamed recipe or HE check must not drop out of both test files unnoticed
    assert set(RECIPE_AND_HE) <= {c.name for c in framework_checks("nvflare")}
