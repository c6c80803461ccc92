"""Flower 1.42.0's Message-API strategies (``flwr.serverapp.strategy``) through
``fedtheory/conformance/drivers/flower_message.py`` (docs/frameworks.md, "Flower"), against the real ``flwr`` that
CI installs (the ``flower`` extra): each check of run.py's FRAMEWORKS["flower-message"] gives the verdict
docs/frameworks.md records on its cheap properties and its own sampler; the draw is Flower's ``sample_nodes``
seeded by the kit; FedAdam's first step is compared with Reddi et al.'s Alg. 2 computed here; and slips (a
ClientApp that reports 1 as num-examples, a sampler that takes the first nodes) are rejected."""
from __future__ import annotations

import logging
import random

import numpy as np
import pytest

pytest.importorskip("hypothesis")
pytest.importorskip("flwr", reason="Flower is an optional extra: pip install 'fedtheory[flower]'")

from fedtheory import conformance  # noqa: E402
from fedtheory.conformance.drivers import flower_message as fm  # noqa: E402
from fedtheory.conformance.instance import make_instance  # noqa: E402

from .standins import assert_recorded_verdict, check_through_driver, framework_checks  # noqa: E402

CHECKS = framework_checks("flower-message")
CHEAP = {"fedavg": ["fedavg.one_round", "fedavg.num_examples", "fedavg.own_sampler"],
         "fedprox": ["fedprox.one_round", "fedprox.large_prox", "fedprox.own_sampler"],
         "server_optimizer": ["server_optimizer.first_round", "server_optimizer.from_state",
                              "server_optimizer.own_sampler"]}
# docs/frameworks.md's Message-API rows: the diagnosis each FAIL's first failure starts with
FAILS = {"fedprox": "aggregation weights by num_examples instead of uniformly",  # its own sampler, Li et al.'s law
         "fedadam": "bias correction with step count t = 2"}
PARAMS = {"n": 5, "d": 2, "mu": 0.5, "L": 2.0, "delta_frac": 0.2, "zeta2": 1.0, "sizes": [3, 4, 5, 6, 7],
          "weighting": "num_examples", "seed": 3, "ids": [10, 11, 12, 13, 14]}


@pytest.fixture(autouse=True)
def _quiet():
    logging.disable(logging.WARNING)  # Flower logs every round and warns about fraction_evaluate=0
    yield
    logging.disable(logging.NOTSET)


def test_every_run_py_check_names_a_factory_of_the_driver():
    assert {c.factory for c in CHECKS} <= set(fm.__all__)
    assert all(callable(getattr(fm, c.factory)()) for c in CHECKS)


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_runpy_check_gives_the_recorded_verdict(check):
    assert_recorded_verdict(check_through_driver(fm, check, CHEAP[check.family]), FAILS.get(check.name))


def test_the_draw_is_sample_nodes_at_fraction_train_seeded_by_the_kit():
    inst = make_instance(PARAMS)
    before = random.getstate()
    draws = [fm.fedavg()(inst.x0, inst.clients, rng=np.random.default_rng(s), clients_per_round=2)[2]["drawn"]
             for s in (1, 1, 2)]
    assert random.getstate() == before, "the caller's random stream is left as it was"
    assert draws[0] == draws[1] and all(len(set(d)) == 2 and set(d) <= set(PARAMS["ids"]) for d in draws)
    # the expected draw, written from strategy_utils.sample_nodes: random.sample(grid node ids 1..N, m)
    random.seed(int(np.random.default_rng(1).integers(0, 2**63)))
    want = random.sample(range(1, 6), 2)
    random.setstate(before)
    assert draws[0] == [PARAMS["ids"][nid - 1] for nid in want]


def test_fedavg_round_is_the_num_examples_weighted_mean_of_k_gradient_steps():
    inst = make_instance(PARAMS)
    K, eta = 3, 0.1
    local = []
    for c in inst.clients:  # the expected side: K full-batch GD steps per client, then sum n_k w_k / sum n_k
        w = inst.x0.copy()
        for _ in range(K):
            w = w - eta * c.grad(w)
        local.append(w)
    n = np.array(PARAMS["sizes"], dtype=float)
    want = n @ np.array(local) / n.sum()
    assert np.allclose(fm.fedavg()(inst.x0, inst.clients, local_steps=K, local_step=eta), want, rtol=1e-12)


def test_fedadam_first_step_is_adams_second_not_reddi_et_al_alg_2():
    inst = make_instance({**PARAMS, "n": 1, "sizes": [4], "ids": [10], "d": 1})
    eta, b1, b2, tau = 0.1, 0.9, 0.99, 1e-3
    w = inst.x0.copy()
    for _ in range(5):
        w = w - 0.1 * inst.clients[0].grad(w)
    delta = w - inst.x0
    m, v = (1 - b1) * delta, (1 - b2) * delta**2
    paper = inst.x0 + eta * m / (np.sqrt(v) + tau)
    adam_t2 = inst.x0 + eta * np.sqrt(1 - b2**2) / (1 - b1**2) * m / (np.sqrt(v) + tau)
    got, _ = fm.fedadam()(inst.x0, inst.clients, server_step=eta, beta1=b1, beta2=b2, tau=tau)
    assert np.allclose(got, adam_t2, rtol=1e-12) and not np.allclose(got, paper, rtol=1e-3)


def test_a_client_app_that_reports_one_as_num_examples_is_rejected(monkeypatch):
    real = fm.MetricRecord
    monkeypatch.setattr(fm, "MetricRecord", lambda metrics: real({**metrics, "num-examples": 1}))
    out = conformance.check(fm.fedavg(), "fedavg", properties=["fedavg.num_examples"], fixed=["server_step"],
                            max_examples=6, shrink=False)
    assert not out.passed


def test_a_sampler_that_always_takes_the_first_nodes_is_rejected(monkeypatch):
    from flwr.serverapp.strategy import strategy_utils

    monkeypatch.setattr(strategy_utils.random, "sample", lambda population, k: list(population)[:k])
    out = conformance.check(fm.fedavg(), "fedavg", properties=["fedavg.own_sampler"], fixed=["server_step"])
    assert out.results[0].status == "violated" and "the sampler's law fails" in out.results[0].diagnosis


def test_bad_arguments_are_refused_by_name():
    inst = make_instance({**PARAMS, "n": 2, "sizes": [2, 2], "ids": [0, 1]})
    with pytest.raises(ValueError, match="clients_per_round must be in \\[1, 2\\]"):
        fm.fedavg()(inst.x0, inst.clients, rng=np.random.default_rng(0), clients_per_round=3)
    with pytest.raises(ValueError, match="server_step must be 1.0"):
        fm.fedavg()(inst.x0, inst.clients, server_step=0.5)
    with pytest.raises(ValueError, match="beta1 must be 0.0"):
        fm.fedadagrad()(inst.x0, inst.clients, beta1=0.9)
    with pytest.raises(ValueError, match="name must be one of"):
        fm.strategy_round("FedAdam")
