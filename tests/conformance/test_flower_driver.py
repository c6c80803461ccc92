"""Flower 1.42.0's own sampler through ``fedtheory/conformance/drivers/flower.py`` (docs/frameworks.md, "Flower"):
the real ``flwr`` (installed by the ``conformance`` extra, as in CI), its ``SimpleClientManager.sample`` drawing
at ``fraction_fit`` = m/N, the draws judged by the kit, and a slipped sampler rejected."""
from __future__ import annotations

import logging
import random

import numpy as np
import pytest

pytest.importorskip("hypothesis")
pytest.importorskip("flwr", reason="Flower is an optional extra: pip install 'fedtheory[flower]'")

from fedtheory import conformance  # noqa: E402
from fedtheory.conformance.drivers import flower  # noqa: E402
from fedtheory.conformance.instance import make_instance  # noqa: E402

from .standins import framework_checks  # noqa: E402


@pytest.fixture(autouse=True)
def _quiet():
    logging.disable(logging.WARNING)  # Flower warns once per round about metrics aggregation
    yield
    logging.disable(logging.NOTSET)


def _own(impl, family, **hyper):
    return conformance.check(impl, family, properties=[f"{family}.own_sampler"], **hyper).results[0]


def test_every_run_py_check_names_a_factory_of_the_driver():
    checks = framework_checks("flower")
    assert {c.factory for c in checks} <= set(flower.__all__)
    assert all(callable(getattr(flower, c.factory)()) for c in checks)


def test_flowers_own_sampler_passes_for_fedavg_and_a_server_optimizer():
    assert _own(flower.fedavg(), "fedavg", fixed=["server_step"]).status == "holds"
    assert _own(flower.fedyogi(), "server_optimizer", optimizer="fedyogi", weighting="num_examples").status == "holds"


def test_the_draw_is_flowers_random_sample_at_fraction_fit_seeded_by_the_kit():
    params = {"n": 5, "d": 2, "mu": 0.5, "L": 2.0, "delta_frac": 0.2, "zeta2": 1.0, "sizes": [3, 4, 5, 6, 7],
              "weighting": "num_examples", "seed": 3, "ids": [10, 11, 12, 13, 14]}
    inst = make_instance(params)
    impl = flower.fedavg()
    before = random.getstate()
    draws = [impl(inst.x0, inst.clients, rng=np.random.default_rng(s), clients_per_round=2)[2]["drawn"]
             for s in (1, 1, 2)]
    assert random.getstate() == before, "the caller's random stream is left as it was"
    assert draws[0] == draws[1] and all(len(set(d)) == 2 and set(d) <= set(params["ids"]) for d in draws)
    # the expected draw, written from SimpleClientManager.sample: random.sample of the registered proxies' ids
    # ("position:cid", registered in order) seeded with the driver's seed
    random.seed(int(np.random.default_rng(1).integers(0, 2**63)))
    want = random.sample([f"{i}:{c}" for i, c in enumerate(params["ids"])], 2)
    random.setstate(before)
    assert draws[0] == [int(w.split(":")[1]) for w in want]


def test_a_sampler_that_always_takes_the_first_clients_is_rejected(monkeypatch):
    from flwr.server import client_manager
    monkeypatch.setattr(client_manager.random, "sample", lambda population, k: list(population)[:k])
    out = _own(flower.fedavg(), "fedavg", fixed=["server_step"])
    assert out.status == "violated" and "the sampler's law fails" in out.diagnosis


def test_fedprox_samples_as_fedavg_which_fails_li_et_al_s_law_and_holds_under_flowers():
    shipped = _own(flower.fedprox(), "fedprox", fixed=["server_step"])
    assert shipped.status == "violated"
    assert "aggregation weights by num_examples" in shipped.diagnosis and "Li et al.'s sampling" in shipped.diagnosis
    own_law = _own(flower.fedprox_flower_law(), "fedprox", fixed=["server_step"])
    assert own_law.status == "holds" and "declares, 'uniform'" in own_law.diagnosis


def test_participation_outside_the_clients_is_refused_by_name():
    inst = make_instance({"n": 2, "d": 1, "mu": 1.0, "L": 1.0, "delta_frac": 0.0, "zeta2": 0.0, "sizes": [2, 2],
                          "weighting": "num_examples", "seed": 0})
    with pytest.raises(ValueError, match="clients_per_round must be in \\[1, 2\\]"):
        flower.fedavg()(inst.x0, inst.clients, rng=np.random.default_rng(0), clients_per_round=3)
