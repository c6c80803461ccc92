"""pfl 0.6.0's own sampler through ``fedtheory/conformance/drivers/pfl.py`` (docs/frameworks.md, "Apple pfl"): the
real ``pfl`` (installed by the ``conformance`` extra, as in CI), its ``FederatedDataset.get_cohort`` drawing with
``get_user_sampler``, the draws judged by the kit under the paper's law and under pfl's, and a slipped sampler
rejected."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("hypothesis")
pytest.importorskip("pfl", reason="Apple's pfl is an optional extra: pip install 'fedtheory[pfl]'")

from fedtheory import conformance  # noqa: E402
from fedtheory.conformance.drivers import pfl  # noqa: E402
from fedtheory.conformance.instance import make_instance  # noqa: E402

from .standins import framework_checks  # noqa: E402

RTOL = 1e-4  # pfl's model differences are float32 (PyTorchModel.get_model_difference)


def _own(impl, family, **hyper):
    return conformance.check(impl, family, rtol=RTOL, properties=[f"{family}.own_sampler"], **hyper).results[0]


def test_every_run_py_check_names_a_factory_of_the_driver():
    checks = framework_checks("pfl")
    assert all(callable(getattr(pfl, c.factory)()) for c in checks)
    assert {c.factory for c in checks} >= {"fedavg", "fedprox", "scaffold"}


def test_the_random_sampler_draws_with_replacement_which_the_papers_law_rejects_and_pfls_accepts():
    shipped = _own(pfl.fedavg(), "fedavg")
    assert shipped.status == "violated" and "sampling with replacement" in shipped.diagnosis
    declared = _own(pfl.fedavg_pfl_law(), "fedavg")
    assert declared.status == "holds" and "'uniform_replacement'" in declared.diagnosis
    prox = _own(pfl.fedprox_pfl_law(), "fedprox")
    assert prox.status == "holds" and "'uniform_replacement'" in prox.diagnosis


def test_minimize_reuse_cycles_through_the_users():
    params = {"n": 4, "d": 2, "mu": 0.5, "L": 2.0, "delta_frac": 0.2, "zeta2": 1.0, "sizes": [3, 4, 5, 6],
              "weighting": "num_examples", "seed": 3, "ids": [10, 11, 12, 13]}
    inst = make_instance(params)
    impl, x, draws = pfl.fedavg_minimize_reuse(), inst.x0, []
    for t in range(3):
        x, _, report = impl(x, inst.clients, rng=np.random.default_rng(t), clients_per_round=3)
        draws.append(report["drawn"])
    # pfl's MinimizeReuseUserSampler: itertools.cycle over the user ids, the cohort continuing across rounds
    assert draws == [[10, 11, 12], [13, 10, 11], [12, 13, 10]]
    # every client in exactly a fraction m/N of the rounds: the kit's count test sees z = 0
    out = _own(pfl.fedavg_minimize_reuse(), "fedavg")
    assert out.status == "holds" and out.measured == 0.0


def test_the_random_cohorts_are_seeded_by_the_kit():
    """The same kit seeds give the same cohorts, whatever NumPy's global stream holds (pfl's local training draws
    from it; the cohort's per-draw seeds come from the dataset's own RandomState, seeded from the kit)."""
    params = {"n": 4, "d": 2, "mu": 0.5, "L": 2.0, "delta_frac": 0.2, "zeta2": 1.0, "sizes": [3, 4, 5, 6],
              "weighting": "num_examples", "seed": 3, "ids": [10, 11, 12, 13]}
    inst = make_instance(params)

    def draws(first_seed):
        impl, x, out = pfl.fedavg(), inst.x0, []
        for t in range(6):
            x, _, report = impl(x, inst.clients, rng=np.random.default_rng(first_seed + t), clients_per_round=3)
            out.append(report["drawn"])
        return out
    np.random.seed(123)
    first = draws(0)
    np.random.seed(456)
    assert first == draws(0) != draws(100)


def test_a_sampler_that_always_draws_the_first_user_is_rejected(monkeypatch):
    monkeypatch.setattr(pfl, "get_user_sampler", lambda kind, user_ids: (lambda: user_ids[0]))
    out = _own(pfl.fedavg_pfl_law(), "fedavg")
    assert out.status == "violated" and "the sampler's law fails" in out.diagnosis


def test_an_unknown_sampler_or_algorithm_is_refused_by_name():
    with pytest.raises(ValueError, match="kind must be one of"):
        pfl.sampling_round("fedavg", "poisson")
    with pytest.raises(ValueError, match="algorithm must be"):
        pfl.sampling_round("feddyn")
