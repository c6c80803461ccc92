"""EFL's and DoCoFL's experiments run the methods their claims judge, with the protocol the docs state."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fedtheory.algorithms import EFL, DoCoFL, FedAvg, FedProx
from fedtheory.claims.docofl.table3 import DOCOFL_METHODS
from fedtheory.claims.efl.figure2 import POSITIVE, ZERO
from fedtheory.claims.efl.table2 import EFL_METHODS, FEDPROX_METHODS
from fedtheory.compressors.noise import Identity
from fedtheory.experiments import docofl, efl


def test_efl_runs_every_judged_method_with_the_same_step_and_incomplete_clients() -> None:
    methods = efl.methods(SimpleNamespace(n_clients=20))
    assert set(methods) == {*EFL_METHODS, "FedAvg", *FEDPROX_METHODS} and {ZERO, *POSITIVE} <= set(methods)
    for name in EFL_METHODS:
        alg = methods[name]
        assert isinstance(alg, EFL) and alg.weighting == "efl" and alg.q is None
        assert (alg.E, alg.s_min, alg.s_max, alg.participation, alg.step) == (5, 1, 5, 0.5, 0.2)
    assert methods[ZERO].lam == 0.0 and all(methods[m].lam > 0 for m in POSITIVE)
    # the baselines keep a client only when it is active and finishes all E steps: probability 0.5 / 5
    for name in ("FedAvg", *FEDPROX_METHODS):
        alg = methods[name]
        assert isinstance(alg, (FedAvg, FedProx)) and alg.local_steps == 5 and alg.local_step == 0.2
        assert alg.participation.p == pytest.approx(0.1)


def test_docofl_compares_table3s_configurations_with_fedavg_on_the_same_sampling() -> None:
    methods = docofl.methods(SimpleNamespace(n_clients=50))
    assert set(methods) == {"FedAvg", *DOCOFL_METHODS}
    assert all(isinstance(a, DoCoFL) and a.n_sampled == 10 and (a.period, a.queue_size) == (10, 3)
               for a in methods.values())
    fedavg = methods["FedAvg"]
    assert all(isinstance(c, Identity) for c in (fedavg.anchor_compressor, fedavg.correction_compressor,
                                                 fedavg.uplink_compressor))
    # (b_w, b_c, b_g) = (2, 2, 3): 2-bit ECUQ anchors, 4 and 8 quantisation levels
    cfg = methods["DoCoFL (2,2,3)"]
    assert cfg.anchor_compressor.b == 2.0 and cfg.correction_compressor.levels == 4
    assert cfg.uplink_compressor.levels == 8
