"""The NVFlare driver's FedOptRecipe path, FedAvg with ``aggregation_weights`` and FedAvgRecipeWithHE's path
(fedtheory/conformance/drivers/nvflare.py) on stand-ins with NVFlare 2.9.0's API shape
(tests/conformance/standins/nvflare_recipe_standin.py, nvflare_he_standin.py): every new ``run.py`` check gets
the verdict docs/frameworks.md records, and a slip of each path is rejected."""
from __future__ import annotations

import importlib
import sys
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")

from .standins import check_through_driver, framework_checks  # noqa: E402
from .standins import nvflare_he_standin as he_standin  # noqa: E402
from .standins import nvflare_recipe_standin as standin  # noqa: E402

DRIVER = "fedtheory.conformance.drivers.nvflare"
SO_CHEAP = ["server_optimizer.first_round", "server_optimizer.multi_round"]
FEDAVG_CHEAP = ["fedavg.one_round", "fedavg.num_examples"]


def _ours(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in ("nvflare", "tenseal"))


def _imported(standin_module):
    """The driver imported against ``standin_module`` (its fake nvflare and tenseal in ``sys.modules``); whatever
    those names were before comes back afterwards."""
    saved = {k: v for k, v in sys.modules.items() if _ours(k)}
    standin_module.install()
    sys.modules.pop(DRIVER, None)
    dtype = torch.get_default_dtype()
    yield importlib.import_module(DRIVER)
    torch.set_default_dtype(dtype)
    for k in [k for k in sys.modules if _ours(k)]:
        del sys.modules[k]
    sys.modules.update(saved)
    sys.modules.pop(DRIVER, None)


@pytest.fixture()
def driver():
    yield from _imported(standin)


@pytest.fixture()
def he_driver():
    yield from _imported(he_standin)


def _check(name: str):
    return next(c for c in framework_checks("nvflare") if c.name == name)


@pytest.mark.parametrize("name", ["fedopt_recipe_sgdm", "fedopt_recipe_adagrad"])
def test_fedopt_recipe_passes_where_the_optimizer_is_alg2s(driver, name):
    report = check_through_driver(driver, _check(name), SO_CHEAP)
    status = {r.prop.id: r.status for r in report.results}
    assert status == dict.fromkeys(SO_CHEAP, "holds"), report.table()


def test_fedopt_recipe_with_adam_is_kingma_and_bas(driver):
    report = check_through_driver(driver, _check("fedopt_recipe_adam"), SO_CHEAP)
    assert not report.passed, report.table()
    assert "Adam of Kingma & Ba" in report.failures[0].diagnosis, report.table()


def test_fedopt_recipe_from_a_checkpoint_loses_it(driver):
    """The persistor loads the checkpoint file without loading it into the ``"model"`` component, which the
    generator's optimizer steps: round 1 starts from the model's own weights."""
    report = check_through_driver(driver, _check("fedopt_recipe_sgdm_checkpoint"), SO_CHEAP)
    status = {r.prop.id: r.status for r in report.results}
    assert status == dict.fromkeys(SO_CHEAP, "violated"), report.table()


def test_a_server_update_with_the_wrong_sign_is_rejected(driver, monkeypatch):
    monkeypatch.setitem(standin.SLIP, "server_update_sign", True)
    report = check_through_driver(driver, _check("fedopt_recipe_sgdm"), SO_CHEAP)
    assert not report.passed, report.table()


def test_fedavg_with_aggregation_weights_is_mcmahans_and_without_them_uniform(driver, monkeypatch):
    report = check_through_driver(driver, _check("fedavg_aggregation_weights"), FEDAVG_CHEAP)
    assert report.passed and all(r.status == "holds" for r in report.results), report.table()
    monkeypatch.setitem(standin.SLIP, "aggregation_weights_ignored", True)
    report = check_through_driver(driver, _check("fedavg_aggregation_weights"), FEDAVG_CHEAP)
    assert not report.passed, report.table()
    assert "weighted uniformly" in report.failures[0].diagnosis, report.table()


def test_fedavg_with_he_passes_at_the_tolerance_its_parameters_give(he_driver, monkeypatch):
    """The stand-in carries TenSEAL's scale reset (a relative 6.7e-7 each round): rtol 1e-8 sees it, the run.py
    check's ``ckks_rtol`` does not, and an encryptor that does not weigh by the steps is rejected."""
    check = _check("fedavg_he")
    report = check_through_driver(he_driver, check, ["fedavg.one_round", "fedavg.permutation"])
    assert report.passed and all(r.status == "holds" for r in report.results), report.table()
    assert not check_through_driver(he_driver, replace(check, rtol=1e-8), ["fedavg.one_round"]).passed
    monkeypatch.setitem(he_standin.SLIP, "encryptor_ignores_steps", True)
    assert not check_through_driver(he_driver, check, ["fedavg.one_round"]).passed
