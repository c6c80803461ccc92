"""The own-sampler property (fedtheory/conformance/sampling.py; docs/conformance.md, "A framework's own sampler"):
the sampling protocol of the contract, the rounds judged for the reported clients, the law test and its power."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402
from fedtheory.conformance.contract import ContractError, call_sampling_round  # noqa: E402
from fedtheory.conformance.families.fedavg.variants import fedavg  # noqa: E402
from fedtheory.conformance.instance import make_instance  # noqa: E402
from fedtheory.conformance.sampling import clients_per_round, rounds_for, self_sampling  # noqa: E402
from fedtheory.conformance.tolerances import SAMPLER_POWER_MARGIN, Z_MONTE_CARLO  # noqa: E402

OWN = ["fedavg.own_sampler"]


def test_rounds_give_twice_the_slack_to_a_client_never_or_always_drawn():
    for m, n in ((1, 2), (1, 3), (2, 5), (2, 4)):
        p, R = m / n, rounds_for(m, n)
        se = np.sqrt(R * p * (1 - p))
        # never drawn: off by R p; always drawn: off by R (1 - p); both at least margin * Z * se
        # (equality at the R the formula gives before its ceiling: compared up to float64 rounding of the sides)
        assert min(R * p, R * (1 - p)) >= SAMPLER_POWER_MARGIN * Z_MONTE_CARLO * se * (1 - 1e-12)
    assert rounds_for(1, 2) == 100 and rounds_for(1, 3) == 200 and rounds_for(2, 5) == 150


@pytest.mark.parametrize("bad", [0, 3, -1, 1.5])
def test_clients_per_round_outside_the_population_is_refused(bad):
    with pytest.raises(ValueError, match="m \\(clients per round\\) must be an integer in \\(0, n\\)"):
        rounds_for(bad, 3)
    with pytest.raises(ValueError, match="n .* at least 2"):
        clients_per_round(1)


def test_a_uniform_sampler_passes_and_one_that_takes_the_kits_participants_is_not_applicable():
    assert [r.status for r in conformance.check(self_sampling(fedavg), "fedavg", properties=OWN).results] == ["holds"]
    assert [r.status for r in conformance.check(fedavg, "fedavg", properties=OWN).results] == ["not applicable"]


def _wrong_count(x, clients, *, rng=None, clients_per_round=None, **hyper):
    """Draws with replacement: a round may repeat a client."""
    if clients_per_round is None:
        return fedavg(x, clients, rng=rng, **hyper)
    idx = np.zeros(clients_per_round, dtype=int)  # client 0, m times
    return fedavg(x, [clients[i] for i in idx], rng=rng, **hyper), None, {"drawn": [clients[i].cid for i in idx]}


@pytest.mark.parametrize("impl, words", [
    (self_sampling(fedavg, "first"), "the sampler's law fails"),
    (self_sampling(fedavg, "lies"), "differs from the paper's round for the clients it reports drawn"),
])
def test_a_biased_sampler_and_one_that_lies_about_its_draw_are_rejected(impl, words):
    report = conformance.check(impl, "fedavg", properties=OWN)
    assert [r.status for r in report.results] == ["violated"] and words in report.failures[0].diagnosis


def _params(n: int) -> dict:
    """A heterogeneous instance of n clients in d = 2 (the keys of fedtheory.conformance.kit.instance_params)."""
    return {"n": n, "d": 2, "mu": 0.5, "L": 2.0, "delta_frac": 0.2, "zeta2": 1.0, "sizes": [3 + i for i in range(n)],
            "weighting": "num_examples", "seed": 7, "ids": [10 + i for i in range(n)]}


def test_repeated_clients_are_rejected_where_m_distinct_are_declared():
    # m = 1 draws one client (never a repeat), so the population must be at least 4 for m = 2
    inst = make_instance(_params(4))
    from fedtheory.conformance.families.fedavg.properties import HYPER
    from fedtheory.conformance.sampling import own_sampler
    out = own_sampler(_wrong_count, inst, HYPER, 1e-8, lambda *a: (0.0, ""))
    assert out.violated and "distinct" in out.details


def test_a_report_without_drawn_is_a_contract_error():
    inst = make_instance(_params(2))

    def bad(x, clients, **_):
        return x, None, {"chosen": [10]}
    with pytest.raises(ContractError, match="drawn"):
        call_sampling_round(bad, inst.x0, inst.clients, None, {}, np.random.default_rng(0))
