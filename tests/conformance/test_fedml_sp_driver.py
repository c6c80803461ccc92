"""The FedML driver's single-process FedAvg, FedProx, FedOpt (server SGD, Adam, Adagrad) and FedDyn factories, and
FedAvg's and FedProx's "from round 2" factories that run FedML's own loop for two rounds
(fedtheory/conformance/drivers/fedml.py), on a stand-in with FedML 0.9.6's API shape and the papers' arithmetic inside
(tests/conformance/standins/fedml_sp_standin.py): CI does not install FedML. Each of these checks of
benchmarks/frameworks/run.py's FRAMEWORKS["fedml"] passes here, so the FAILs docs/frameworks.md records for FedML's
own code are FedML's; FedML's deviations, and the slips each new path must catch (an Adagrad accumulator off torch's
default, chained clients or a restart from the initial model in round 2, a sampler that always draws the first
clients), switched on in the stand-in, are rejected."""
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
    fedml_standin,
    framework_checks,
    installed,
)

DRIVER = "fedtheory.conformance.drivers.fedml"
CHEAP = {"fedavg": ["fedavg.one_round", "fedavg.multi_round"], "fedprox": ["fedprox.one_round", "fedprox.multi_round"],
         "server_optimizer": ["server_optimizer.first_round", "server_optimizer.multi_round"],
         "feddyn": ["feddyn.one_round", "feddyn.server_state", "feddyn.multi_round"]}
SINGLE_PROCESS = ("fedavg", "fedprox", "fedopt_sgd", "fedopt_adam", "fedopt_adagrad", "feddyn", "fedavg_later_rounds",
                  "fedprox_later_rounds", "fedprox_later_rounds_fedml_law")
CHECKS = [c for c in framework_checks("fedml") if c.factory in SINGLE_PROCESS]


@pytest.fixture()
def driver():
    dtype = torch.get_default_dtype()
    try:
        with installed(fedml_sp_standin, DRIVER) as module:
            yield module
    finally:
        torch.set_default_dtype(dtype)  # the driver sets float64, as in FedML's worker


def test_the_runpy_entry_has_the_nine_single_process_checks():
    assert sorted(c.factory for c in CHECKS) == ["fedavg", "fedavg_later_rounds", "feddyn", "fedopt_adagrad",
                                                 "fedopt_adam", "fedopt_sgd", "fedprox", "fedprox_later_rounds",
                                                 "fedprox_later_rounds_fedml_law"]


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_single_process_check_passes_through_the_driver(driver, check):
    assert_recorded_verdict(check_through_driver(driver, check, CHEAP[check.family], max_examples=3), None)


# FedML's deviations, the stand-in's slips: with them on, each check gives the verdict of its stored report
DEFECTS = {"fedavg": ("chained_clients",), "fedprox": ("chained_clients",), "fedopt_sgd": ("chained_clients",),
           "fedopt_adam": ("chained_clients", "torch_adam"), "feddyn": ("dyn_penalty_on_data",),
           "fedopt_adagrad": ("chained_clients",),
           # rounds 2 on (FedML's own loop): no deviation there; FedProx's sampler is FedML's uniform one, which the
           # stand-in carries too (its fedprox.own_sampler fails Li et al.'s law without a slip)
           "fedavg_later_rounds": (), "fedprox_later_rounds": (), "fedprox_later_rounds_fedml_law": ()}


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_single_process_check_gives_its_stored_verdict_with_fedmls_deviations(driver, monkeypatch, check):
    for slip in DEFECTS[check.name]:
        monkeypatch.setitem(fedml_sp_standin.SLIP, slip, True)
    # FedDyn's server state (docs/frameworks/fedml.md, FedDyn deviations 2 and 3) is not re-typed: the stand-in's
    # server is Alg. 1's, so feddyn.server_state is left out here
    props = [p for p in CHEAP[check.family] if p != "feddyn.server_state"]
    if "later_rounds" in check.name:  # the checks that run FedML's own sampler: its law is part of their verdict
        props.append(f"{check.family}.own_sampler")
    assert_stored_verdict(check_through_driver(driver, check, props, max_examples=3), "fedml", check)


def test_the_targets_survive_fedmls_label_cast(driver):
    targets = torch.tensor([0.25, -1.5]).as_subclass(driver.Targets)
    assert torch.equal(targets.long(), targets)


def test_no_server_step_and_adam_at_torchs_defaults_only(driver):
    with pytest.raises(ValueError, match="no server learning rate"):
        driver.fedavg()(None, [], server_step=0.5)
    with pytest.raises(ValueError, match="torch's defaults"):
        driver.fedopt_adam()(None, [], beta1=0.5)
    with pytest.raises(ValueError, match="initial_v must be torch's defaults"):
        driver.fedopt_adagrad()(None, [], beta1=0.0, tau=1e-10, initial_v=0.1)
    with pytest.raises(ValueError, match="no server learning rate"):
        driver.fedavg_later_rounds()(None, [], server_step=0.5)


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


def test_torchs_adagrad_defaults_are_the_kits_declared_hyperparameters(driver):
    # the check's declared (beta1, tau, initial_v), read against torch itself (not the driver's constant)
    check = next(c for c in CHECKS if c.factory == "fedopt_adagrad")
    defaults = torch.optim.Adagrad([torch.zeros(1, requires_grad=True)]).defaults
    assert (check.hyper["beta1"], check.hyper["tau"], check.hyper["initial_v"]) == (
        0.0, defaults["eps"], defaults["initial_accumulator_value"]) == driver.TORCH_ADAGRAD_DEFAULTS
    assert defaults["lr_decay"] == 0


def test_an_adagrad_accumulator_off_torchs_default_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(fedml_sp_standin.SLIP, "adagrad_accumulator", 0.1)
    check = next(c for c in CHECKS if c.factory == "fedopt_adagrad")
    report = conformance.check(driver.fedopt_adagrad(), check.family, max_examples=8, shrink=False,
                               fixed=list(check.fixed), properties=["server_optimizer.first_round"], **check.hyper)
    assert not report.passed, report.table()


@pytest.mark.parametrize("factory, family, slip", [("fedavg_later_rounds", "fedavg", "chained_clients"),
                                                   ("fedavg_later_rounds", "fedavg", "rounds_from_initial"),
                                                   ("fedprox_later_rounds", "fedprox", "chained_clients")])
def test_a_second_round_off_the_paper_is_rejected(driver, monkeypatch, factory, family, slip):
    # chained clients in round 2, or a round 2 that restarts from the initial model instead of round 1's aggregate
    monkeypatch.setitem(fedml_sp_standin.SLIP, slip, True)
    report = conformance.check(getattr(driver, factory)(), family, max_examples=8, shrink=False,
                               fixed=["server_step"], properties=[f"{family}.one_round"])
    assert not report.passed, report.table()


def test_the_landing_client_takes_any_start_to_x_in_one_step(driver):
    # (1/(2d))||s w - s x||^2 with s^2 = d / eta: one SGD step of size eta from w lands on x
    x, eta = torch.tensor([0.3, -1.2, 2.0]), 0.1
    (features, targets), = driver._landing_batch(x.numpy(), eta)
    w = torch.tensor([5.0, 1.0, -4.0], requires_grad=True)
    loss = 0.5 * torch.mean((features @ w - targets.as_subclass(torch.Tensor)) ** 2)
    loss.backward()
    assert torch.allclose(w.detach() - eta * w.grad, x, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("factory, family", [("fedavg_later_rounds", "fedavg"),
                                             ("fedprox_later_rounds_fedml_law", "fedprox")])
def test_the_later_rounds_run_fedmls_own_sampler(driver, factory, family):
    # round 2 of FedML's loop draws through its own _client_sampling (m of N, seeded by the run's loop index)
    report = conformance.check(getattr(driver, factory)(), family, fixed=["server_step"],
                               properties=[f"{family}.own_sampler"])
    assert report.passed, report.table()
    assert all(r.status == "holds" for r in report.results), report.table()


def test_fedmls_fedprox_sampling_is_not_li_et_als(driver):
    # as shipped, judged under the paper's law: FedML draws uniformly and weighs by n_k/n (McMahan et al.'s scheme)
    report = conformance.check(driver.fedprox_later_rounds(), "fedprox", fixed=["server_step"],
                               properties=["fedprox.own_sampler"])
    assert not report.passed
    assert "Li et al.'s sampling" in report.failures[0].diagnosis, report.table()


def test_the_later_rounds_with_a_sampler_that_always_draws_the_first_clients_are_rejected(driver, monkeypatch):
    monkeypatch.setitem(fedml_standin.SLIP, "sample_first", True)
    report = conformance.check(driver.fedavg_later_rounds(), "fedavg", fixed=["server_step"],
                               properties=["fedavg.own_sampler"])
    assert not report.passed
    assert "the sampler's law fails" in report.failures[0].diagnosis, report.table()
