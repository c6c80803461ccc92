"""The FedJAX driver's translation layer (fedtheory/conformance/drivers/fedjax.py) on a stand-in with
FedJAX 0.0.17's API shape and the bits of JAX the driver calls (tests/conformance/standins/fedjax_standin.py): CI
installs neither JAX nor FedJAX. Every check of benchmarks/frameworks/run.py's FRAMEWORKS["fedjax"] passes here
(the stand-in computes Reddi et al.'s Alg. 2), and docs/frameworks.md's three FAILs -- optax's Adam, Yogi and
Adagrad, turned on as the stand-in's SLIP -- are rejected with the documented diagnoses. The fake ``jax`` lives in
``sys.modules`` only inside the fixture."""
from __future__ import annotations

import importlib
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402

from .standins import (  # noqa: E402
    assert_recorded_verdict,
    assert_stored_verdict,
    check_through_driver,
    fedjax_standin,  # noqa: E402
    framework_checks,
    installed,
)

DRIVER = "fedtheory.conformance.drivers.fedjax"
CHEAP = {"fedavg": ["fedavg.one_round", "fedavg.multi_round"], "fedprox": ["fedprox.one_round", "fedprox.multi_round"],
         "server_optimizer": ["server_optimizer.first_round", "server_optimizer.multi_round"]}


CHECKS = framework_checks("fedjax")


def _ours(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in fedjax_standin.NAMES)


@pytest.fixture()
def driver():
    with installed(fedjax_standin, DRIVER) as module:
        yield module


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_runpy_check_passes_through_the_driver(driver, check):
    assert_recorded_verdict(check_through_driver(driver, check, CHEAP[check.family]), None)


# optax's design choices, the stand-in's slips: with them on, each check gives the verdict of its stored report
DEFECTS = {"fedadam": ("adam_bias_correction",), "fedyogi": ("yogi_optax",),
           "fedadagrad": ("adagrad_eps_inside_sqrt",)}


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_runpy_check_gives_its_stored_verdict_with_optaxs_choices(driver, monkeypatch, check):
    for slip in DEFECTS.get(check.name, ()):
        monkeypatch.setitem(fedjax_standin.SLIP, slip, True)
    assert_stored_verdict(check_through_driver(driver, check, CHEAP[check.family]), "fedjax", check)


def test_the_driver_turns_on_float64_and_the_fake_jax_is_removed_afterwards():
    before = {k: v for k, v in sys.modules.items() if _ours(k)}
    with installed(fedjax_standin, DRIVER) as module:
        fedjax_standin.install()  # a fresh fake jax starts in float32 ...
        assert not fedjax_standin._CONFIG["jax_enable_x64"]
        importlib.reload(module)  # ... and importing the driver turns float64 on
        assert fedjax_standin._CONFIG["jax_enable_x64"]
    assert {k: v for k, v in sys.modules.items() if _ours(k)} == before and DRIVER not in sys.modules


def test_fedadagrad_refuses_momentum(driver):
    with pytest.raises(ValueError, match="no momentum"):
        driver.fedadagrad()(None, [], beta1=0.9)


# docs/frameworks.md, FedJAX: optax's design choices and the kit's diagnoses
SLIPS = [("adam_bias_correction", "fedadam", {}, "Adam of Kingma & Ba"),
         ("yogi_optax", "fedyogi", {}, "differs from Alg. 2"),
         ("adagrad_eps_inside_sqrt", "fedadagrad", {"beta1": 0.0}, "tau inside the square root")]


@pytest.mark.parametrize("slip, optimizer, hyper, diagnosis", SLIPS, ids=[s[0] for s in SLIPS])
def test_optax_design_choices_are_rejected(driver, monkeypatch, slip, optimizer, hyper, diagnosis):
    monkeypatch.setitem(fedjax_standin.SLIP, slip, True)
    report = conformance.check(getattr(driver, optimizer)(), "server_optimizer", optimizer=optimizer,
                               weighting="num_examples", max_examples=8, shrink=False,
                               properties=["server_optimizer.first_round"], **hyper)
    assert not report.passed
    assert diagnosis in report.failures[0].diagnosis, report.table()


def test_a_proximal_anchor_that_follows_the_iterate_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(fedjax_standin.SLIP, "prox_anchor_follows", True)
    report = conformance.check(driver.fedprox(), "fedprox", max_examples=8, shrink=False,
                               properties=["fedprox.one_round"])
    assert not report.passed, report.table()


# FedJAX's own sampler (docs/frameworks.md, FedJAX): UniformGetClientSampler draws m of the population each round
@pytest.mark.parametrize("factory, family, hyper", [
    ("fedavg", "fedavg", {}),
    ("fedavgm", "server_optimizer", {"optimizer": "fedavgm", "weighting": "num_examples"})], ids=["fedavg", "fedavgm"])
def test_fedjaxs_own_sampler_runs_at_partial_participation(driver, factory, family, hyper):
    report = conformance.check(getattr(driver, factory)(), family, properties=[f"{family}.own_sampler"], **hyper)
    assert [r.status for r in report.results] == ["holds"], report.table()


def test_a_sampler_that_always_returns_the_first_clients_is_rejected_in_law(driver, monkeypatch):
    monkeypatch.setitem(fedjax_standin.SLIP, "sample_first", True)
    report = conformance.check(driver.fedavg(), "fedavg", properties=["fedavg.own_sampler"])
    assert [r.status for r in report.results] == ["violated"], report.table()
    assert "the sampler's law fails" in report.failures[0].diagnosis, report.failures[0].diagnosis


def test_fedprox_is_not_offered_the_sampling_protocol(driver):
    report = conformance.check(driver.fedprox(), "fedprox", properties=["fedprox.own_sampler"])
    assert [r.status for r in report.results] == ["not applicable"], report.table()
