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


# ----------------------------------------------------------------- FedProx's law (Li et al. 2020, Alg. 2)

FEDPROX_OWN = ["fedprox.own_sampler"]


def test_md_rounds_give_twice_the_slack_against_both_wrong_samplers():
    from fractions import Fraction

    from fedtheory.conformance.families.fedprox.properties import OWN_SAMPLER_SHARES
    from fedtheory.conformance.sampling import rounds_for_md
    sizes, m = list(OWN_SAMPLER_SHARES), 3
    R = rounds_for_md(m, sizes)
    p = np.array(sizes) / sum(sizes)
    se = np.sqrt(R * m * p * (1 - p))
    # expected counts of the two wrong samplers over R m draws, computed here from their definitions
    uniform = np.full(len(sizes), R * m / len(sizes))
    first = np.array([R if k < m else 0 for k in range(len(sizes))], dtype=float)
    for wrong in (uniform, first):
        assert np.max(np.abs(wrong - R * m * p) / se) >= SAMPLER_POWER_MARGIN * Z_MONTE_CARLO * (1 - 1e-12)
    # R is the least such: one round fewer leaves the uniform sampler within twice the slack everywhere
    se1 = np.sqrt((R - 1) * m * p * (1 - p))
    assert np.max(np.abs((R - 1) * m / len(sizes) - (R - 1) * m * p) / se1) < SAMPLER_POWER_MARGIN * Z_MONTE_CARLO
    # by hand: the light clients p = 1/15 against 1/6: 100 (1/15)(14/15) / (3 (1/10)^2) = 207.4 -> 208
    assert R == 208 == -(-Fraction(100) * Fraction(1, 15) * Fraction(14, 15) // (3 * Fraction(1, 10) ** 2))


@pytest.mark.parametrize("m, sizes, words", [(3, [2, 2, 2, 2, 2, 2], "must not all be equal"),
                                             (0, [1, 4], "m \\(clients per round\\)"),
                                             (1, [1, 0], "positive integers")])
def test_md_rounds_refuse_bad_input(m, sizes, words):
    from fedtheory.conformance.sampling import rounds_for_md
    with pytest.raises(ValueError, match=words):
        rounds_for_md(m, sizes)


def test_li_et_al_sampler_passes_and_the_wrong_ones_are_rejected_with_their_reason():
    ok = conformance.check(self_sampling(fedavg, "md"), "fedprox", properties=FEDPROX_OWN)
    assert [r.status for r in ok.results] == ["holds"], ok.table()
    # McMahan et al.'s uniform sampler without replacement is not Li et al.'s law
    for how, words in (("md_ignores_sizes", "the sampler's law fails"), ("md_first", "the sampler's law fails"),
                       ("uniform", "the sampler's law fails too"),
                       ("md_distinct", "a client drawn twice counts once")):
        report = conformance.check(self_sampling(fedavg, how), "fedprox", properties=FEDPROX_OWN)
        assert [r.status for r in report.results] == ["violated"], how
        assert words in report.failures[0].diagnosis, (how, report.failures[0].diagnosis)
    assert "the sampler's law holds" in conformance.check(
        self_sampling(fedavg, "md_distinct"), "fedprox", properties=FEDPROX_OWN).failures[0].diagnosis


def test_a_round_with_a_repeated_client_counts_it_twice():
    """The expected side of a round over the draws [a, a, b]: (2 w_a + w_b) / 3, written out from the local solutions
    (K steps of GD on f_i + lam/2 ||. - x||^2) without the kit's closed form."""
    from fedtheory.conformance.families.fedprox.properties import OWN_SAMPLER_SHARES
    params = dict(_params(len(OWN_SAMPLER_SHARES)), sizes=[3 * s for s in OWN_SAMPLER_SHARES])
    inst = make_instance(params)
    x, lam, eta, K = inst.x0, 1.0, 0.1, 5

    def local(c):
        w = x.copy()
        for _ in range(K):
            w = w - eta * (c.grad(w) + lam * (w - x))
        return w
    a, b = inst.clients[0], inst.clients[4]
    want = (2 * local(a) + local(b)) / 3
    from fedtheory.conformance import expected as ex
    got = ex.round_map(inst, x, np.array([0, 0, 4]), local_steps=K, local_step=eta, prox=lam, weighting="uniform")
    assert np.allclose(got, want, rtol=1e-12, atol=1e-12)
    assert not np.allclose((local(a) + local(b)) / 2, want, rtol=1e-6)  # the distinct reading differs here


def test_an_unknown_law_is_refused():
    from fedtheory.conformance.sampling import own_sampler
    with pytest.raises(ValueError, match="law must be one of"):
        own_sampler(fedavg, make_instance(_params(2)), {}, 1e-8, lambda *a: (0.0, ""), law="poisson")


# ----------------------------------------------------------------- a law the implementation declares

def _replacement(how: str, law: str | None = "uniform_replacement"):
    """fedavg drawing m clients with replacement uniformly (``"ok"``), always client 0 m times (``"first"``) or
    correctly but training the next clients (``"lies"``), declaring ``law`` in its report."""
    def impl(x, clients, *, rng=None, clients_per_round=None, **hyper):
        if clients_per_round is None:
            return fedavg(x, clients, rng=rng, **hyper)
        n, m = len(clients), int(clients_per_round)
        idx = np.zeros(m, dtype=int) if how == "first" else rng.integers(0, n, size=m)
        used = (idx + 1) % n if how == "lies" else idx
        report = {"drawn": [clients[i].cid for i in idx], **({"law": law} if law else {})}
        return fedavg(x, [clients[i] for i in used], rng=rng, **hyper), None, report
    return impl


def test_replacement_rounds_give_twice_the_slack_to_a_client_never_or_always_drawn():
    from fedtheory.conformance.sampling import rounds_for_replacement
    for m, n in ((1, 2), (1, 3), (2, 4), (2, 5)):
        R = rounds_for_replacement(m, n)
        se = np.sqrt(R * m * (1 / n) * (1 - 1 / n))  # client i's count is Binomial(R m, 1/n)
        # never drawn: off by R m / n; drawn once every round: off by R (1 - m / n)
        assert min(R * m / n, R * (1 - m / n)) >= SAMPLER_POWER_MARGIN * Z_MONTE_CARLO * se * (1 - 1e-12)
    # by hand: 100 max((n - 1)/m, m (n - 1)/(n - m)^2)
    assert [rounds_for_replacement(m, n) for m, n in ((1, 2), (2, 4), (2, 5))] == [100, 150, 200]


def test_a_declared_law_is_judged_and_named_and_the_paper_law_still_rejects_repeats():
    ok = conformance.check(_replacement("ok"), "fedavg", properties=OWN)
    assert [r.status for r in ok.results] == ["holds"], ok.table()
    assert "judged under the law the implementation declares, 'uniform_replacement'" in ok.results[0].diagnosis
    # the same sampler without the declaration is judged under McMahan et al.'s law: a repeat fails it
    plain = conformance.check(_replacement("ok", law=None), "fedavg", properties=OWN)
    assert "sampling with replacement" in plain.failures[0].diagnosis
    for how, words in (("first", "the sampler's law fails"),
                       ("lies", "differs from the paper's round for the clients it reports drawn")):
        report = conformance.check(_replacement(how), "fedavg", properties=OWN)
        assert [r.status for r in report.results] == ["violated"], how
        assert words in report.failures[0].diagnosis and "uniform_replacement" in report.failures[0].diagnosis


def test_an_unknown_or_changing_law_is_rejected():
    inst = make_instance(_params(4))
    from fedtheory.conformance.families.fedavg.properties import HYPER
    from fedtheory.conformance.sampling import own_sampler
    out = own_sampler(_replacement("ok", law="poisson"), inst, HYPER, 1e-8, lambda *a: (0.0, ""))
    assert out.violated and "'poisson'" in out.details
    calls = {"n": 0}

    def changing(x, clients, **kw):
        calls["n"] += 1
        return _replacement("ok", law="uniform_replacement" if calls["n"] == 1 else "md")(x, clients, **kw)
    out = own_sampler(changing, inst, HYPER, 1e-8, lambda *a: (0.0, ""))
    assert out.violated and "round 1 declared 'uniform_replacement'" in out.details
    with pytest.raises(ContractError, match="law"):
        call_sampling_round(lambda x, c, **_: (x, None, {"drawn": [10], "law": 3}), inst.x0, inst.clients, None,
                            {}, np.random.default_rng(0))
