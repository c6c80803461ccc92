"""Flower's secure aggregation (fedtheory/conformance/drivers/flower_secagg.py) on Flower 1.42.0 itself: the
driver's in-process grid needs flwr only (the ``flower`` extra CI installs), not Ray, so CI runs Flower's own
``SecAggPlusWorkflow`` and ``secaggplus_mod`` rather than a re-typed stand-in. Every in-process check of
benchmarks/frameworks/run.py's FRAMEWORKS["flower-secagg"] gives the verdict docs/frameworks.md records, on cheap
properties; the tolerance is the one derived from SecAgg+'s arithmetic, recomputed here from its formula; and a slip
planted in Flower's client mod (the weight applied twice) is rejected at that tolerance."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("hypothesis")
pytest.importorskip("flwr", reason="the Flower SecAgg+ driver runs Flower's own code (pip install 'fedtheory[flower]')")

from fedtheory import conformance  # noqa: E402
from fedtheory.conformance import expected as ex  # noqa: E402
from fedtheory.conformance.instance import make_instance  # noqa: E402
from fedtheory.conformance.tolerances import LOCAL_SPREAD_BOUND, secure_aggregation_rtol  # noqa: E402

from .standins import assert_recorded_verdict, check_through_driver, framework_checks  # noqa: E402

secagg = pytest.importorskip("fedtheory.conformance.drivers.flower_secagg")

CHEAP = ["fedavg.one_round", "fedavg.num_examples", "fedavg.permutation"]
# docs/frameworks.md's Flower SecAgg+ rows: the diagnosis each FAIL's first failure starts with
FAILS = {"fedavg_secagg": "returns the input model unchanged"}  # one sampled client: the workflow halts
# run_simulation starts Ray for every round (about 10 s): run.py runs it, not CI
CHECKS = [c for c in framework_checks("flower-secagg") if c.factory != "fedavg_simulation"]


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_in_process_runpy_check_gives_the_recorded_verdict(check):
    assert_recorded_verdict(check_through_driver(secagg, check, list(check.properties) or CHEAP), FAILS.get(check.name))


def test_the_tolerance_is_twice_the_one_round_bound_at_flowers_defaults():
    c, Q, W = 8.0, 2**22, 1000.0  # SecAggPlusWorkflow's clipping_range, quantization_range, max_weight
    one_round = (2 * c + LOCAL_SPREAD_BOUND / 2) * W / Q
    assert secure_aggregation_rtol(clipping_range=c, quantization_range=Q, max_weight=W) == pytest.approx(2 * one_round)
    assert framework_checks("flower-secagg")[0].rtol == pytest.approx(2 * one_round)
    with pytest.raises(ValueError, match="max_weight must be > 0"):
        secure_aggregation_rtol(clipping_range=c, quantization_range=Q, max_weight=0.0)


def test_the_spread_bound_holds_on_instances_drawn_as_the_kit_draws_them():
    """LOCAL_SPREAD_BOUND: sqrt(d) sum_k ||w_k - xbar||_inf / (W A scale) <= 1 (measured at most 0.41)."""
    rng, W, Q = np.random.default_rng(7), 1000.0, 2**22
    for _ in range(300):
        n, d = int(rng.integers(2, 8)), int(rng.integers(1, 51))
        eta, K = rng.uniform(0.02, 0.2), int(rng.integers(1, 9))
        L = rng.uniform(min(20.0, 1.9 / eta) / 4, min(20.0, 1.9 / eta))
        inst = make_instance(dict(n=n, d=d, mu=L / rng.uniform(1, 50), L=L, delta_frac=rng.uniform(0, 0.4),
                                  zeta2=rng.uniform(0, 4), sizes=[int(v) for v in rng.integers(d, 3 * d + 11, size=n)],
                                  weighting="num_examples", seed=int(rng.integers(2**31))))
        N = ex.local_operators(inst, K, eta, 0.0)
        w = inst.x0 + np.einsum("nij,nj->ni", N, inst.b - np.einsum("nij,j->ni", inst.A, inst.x0))
        nk = inst.sizes.astype(float)
        xbar = nk @ w / nk.sum()
        scale = max(1.0, np.linalg.norm(inst.x_star), np.linalg.norm(inst.x0), np.linalg.norm(xbar))
        A = np.round(nk / W * Q).sum() / Q
        assert np.sqrt(d) * np.abs(w - xbar).max(axis=1).sum() / (W * A * scale) <= LOCAL_SPREAD_BOUND


def test_a_weight_applied_twice_in_the_client_mod_is_rejected(monkeypatch):
    import importlib

    # the module, not the function of the same name the package re-exports
    mod = importlib.import_module("flwr.client.mod.secure_aggregation.secaggplus_mod")

    def twice(parameters, multiplier):  # the slip: the client scales its model by its weight twice
        return [p * multiplier * multiplier for p in parameters]

    monkeypatch.setattr(mod, "parameters_multiply", twice)
    check = framework_checks("flower-secagg")[1]  # at least two clients, the derived tolerance
    report = conformance.check(secagg.fedavg(), "fedavg", rtol=check.rtol, max_examples=6, shrink=False,
                               fixed=["server_step"], min_clients=check.min_clients,
                               properties=["fedavg.one_round"])
    assert not report.passed
    assert report.failures[0].measured > check.rtol

