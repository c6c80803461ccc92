"""The sequential coin and selection tests (fedtheory/conformance/sequential.py): its stated power and false-rejection rate,
recomputed on coins simulated here (NumPy's generator, not the kit's), and its use by fedred.coin_frequency."""
from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest

from fedtheory.conformance.sequential import ALPHA, DELTA, MAX_SAMPLES, bernoulli_sprt, categorical_sprt


def _coin(p: float, seed: int):
    """A Bernoulli(p) coin drawn ahead in one array (fast), handed out one event at a time."""
    events = iter((np.random.default_rng(seed).random(MAX_SAMPLES) < p).tolist())
    return events.__next__


@pytest.mark.parametrize("p0, shift", [(0.5, DELTA), (0.5, -DELTA), (0.1, DELTA), (0.9, -DELTA)])
def test_a_coin_off_by_delta_is_rejected_with_power_at_least_095(p0: float, shift: float) -> None:
    # p0 = 1/2 has the largest variance p(1 - p), so the fewest bits of evidence per call: the hardest p0.
    runs = 200
    rejected = sum(bernoulli_sprt(_coin(p0 + shift, seed), p0).rejected for seed in range(runs))
    assert rejected / runs >= 0.95


def test_a_right_coin_is_rejected_at_most_alpha_of_the_time() -> None:
    # At alpha = 1e-6 no simulation could see a rejection; at alpha = 0.05 the same construction (Ville's
    # inequality on each side's likelihood ratio) must keep the rate of a right coin under 0.05.
    runs = 400
    rejected = sum(bernoulli_sprt(_coin(0.5, seed), 0.5, alpha=0.05).rejected for seed in range(runs))
    assert rejected / runs <= 0.05
    assert ALPHA == 1e-6


def test_a_right_coin_stops_early_and_the_counts_are_its_own() -> None:
    result = bernoulli_sprt(_coin(0.3, 7), 0.3)
    assert not result.rejected and 0 < result.samples < MAX_SAMPLES
    assert abs(result.frequency - 0.3) < DELTA
    calls = []
    # always an event: each call adds log(0.53 / 0.5) to the upper side's log-LR, which rejects at log(2 / alpha)
    assert bernoulli_sprt(lambda: calls.append(1) or True, 0.5).rejected
    assert len(calls) == math.ceil(math.log(2 / ALPHA) / math.log((0.5 + DELTA) / 0.5))


@pytest.mark.parametrize("kwargs, name", [({"p0": 0.0}, "p0"), ({"p0": 1.0}, "p0"), ({"p0": 0.5, "delta": 0.6}, "delta"),
                                          ({"p0": 0.5, "alpha": 0.0}, "alpha"), ({"p0": 0.5, "max_samples": 0},
                                                                                 "max_samples")])
def test_bad_parameters_are_refused_by_name(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        bernoulli_sprt(lambda: True, **kwargs)


def test_the_kit_rejects_the_fedred_coin_of_one_third_where_p_is_03() -> None:
    """The coin the earlier 400-iteration z-test accepted (z = 2.6 against 5); the right coin passes."""
    pytest.importorskip("hypothesis")
    from fedtheory import conformance
    from fedtheory.conformance.families.fedred import variants

    wrong = partial(variants.fedred, slip="own_coin_one_third")
    for impl, status in ((wrong, "violated"), (variants.fedred, "holds")):
        report = conformance.check(impl, "fedred", properties=["fedred.coin_frequency"], p=0.3, vary=False)
        assert report.results[0].status == status
        assert report.results[0].examples == 1


W = (0.1, 0.2, 0.7)  # the selection law of dane.own_selection's case


def _draws(probs, seed: int):
    """Categorical draws made ahead in one array by NumPy's generator, handed out one at a time."""
    return iter(np.random.default_rng(seed).choice(len(probs), size=MAX_SAMPLES, p=probs).tolist()).__next__


def test_a_right_selection_is_rejected_at_most_alpha_of_the_time() -> None:
    # the union bound over the three per-client tests at alpha / 3 keeps the whole test at alpha
    runs = 300
    rejected = sum(categorical_sprt(_draws(W, seed), W, alpha=0.05).rejected for seed in range(runs))
    assert rejected / runs <= 0.05


@pytest.mark.parametrize("wrong", [(0.13, 0.2, 0.67), (1 / 3, 1 / 3, 1 / 3), (0.1, 0.23, 0.67)])
def test_a_selection_with_one_client_off_by_delta_is_rejected_with_power_at_least_095(wrong) -> None:
    runs = 100
    rejected = sum(categorical_sprt(_draws(wrong, seed), W).rejected for seed in range(runs))
    assert rejected / runs >= 0.95


def test_the_selection_test_names_the_client_that_is_off() -> None:
    result = categorical_sprt(_draws((1 / 3, 1 / 3, 1 / 3), 0), W)
    assert result.rejected and result.worst in (0, 2) and sum(result.counts) == result.samples
    with pytest.raises(ValueError, match="probs"):
        categorical_sprt(lambda: 0, (0.5, 0.6))
    with pytest.raises(ValueError, match="category 3"):
        categorical_sprt(lambda: 3, W)
    with pytest.raises(ValueError, match="tested"):
        categorical_sprt(lambda: 0, W, tested=[5])


@pytest.mark.parametrize("r0, shift", [(0.5, 0.1), (0.5, -0.1), (0.625, 0.1), (0.625, -0.1)])
def test_the_serial_test_of_ofediq_detects_a_repeat_probability_off_by_its_delta(r0: float, shift: float) -> None:
    """ofediq.own_participation's serial test: a coin repeats from one period to the next with probability
    r = p^2 + (1 - p)^2 (0.5 at p = 1/2, 0.625 at the kit's second p 1/4); the test, at delta = SERIAL_DELTA,
    rejects a repeat probability off by delta with power >= 0.95 (simulated indicators, independent of the kit)."""
    from fedtheory.conformance.families.ofediq.properties import SERIAL_DELTA

    assert SERIAL_DELTA == 0.1
    runs = 200
    rejected = sum(bernoulli_sprt(_coin(r0 + shift, seed), r0, delta=SERIAL_DELTA).rejected for seed in range(runs))
    assert rejected / runs >= 0.95


@pytest.mark.parametrize("r0, shift", [(1 / 3, 0.1), (1 / 3, -0.1), (0.54, 0.1), (0.54, -0.1)])
def test_the_serial_test_of_dane_detects_a_repeat_probability_off_by_its_delta(r0: float, shift: float) -> None:
    """dane.own_selection's serial test: two consecutive rounds select the same client with probability
    sum_i w_i^2 (1/3 for three uniform clients, 0.54 for w = (0.1, 0.2, 0.7)); at delta = SERIAL_DELTA a repeat
    probability off by delta is rejected with power >= 0.95 (simulated indicators, independent of the kit)."""
    from fedtheory.conformance.families.dane.properties import SERIAL_DELTA

    assert SERIAL_DELTA == 0.1
    runs = 200
    rejected = sum(bernoulli_sprt(_coin(r0 + shift, seed), r0, delta=SERIAL_DELTA).rejected for seed in range(runs))
    assert rejected / runs >= 0.95


@pytest.mark.parametrize("p, sign", [(0.5, 1), (0.5, -1), (0.25, 1), (0.25, -1)])
def test_the_serial_test_of_scaffnew_detects_a_repeat_probability_off_by_its_delta(p: float, sign: int) -> None:
    """scaffnew.own_coin's serial test: two consecutive rounds have the same K ~ Geometric(p) (K > 12 one value)
    with probability r = sum_k P(K = k)^2, about p / (2 - p); at its delta, min(SERIAL_DELTA, r / 2), a repeat
    probability off by delta is rejected with power >= 0.95 (simulated indicators, independent of the kit)."""
    from fedtheory.conformance.families.scaffnew.properties import OWN_COIN_MAX, SERIAL_DELTA

    probs = [(1 - p) ** (k - 1) * p for k in range(1, OWN_COIN_MAX + 1)]
    r = sum(q * q for q in probs) + (1 - sum(probs)) ** 2
    assert abs(r - p / (2 - p)) < 1e-2
    delta = min(SERIAL_DELTA, r / 2, (1 - r) / 2)
    runs = 200
    rejected = sum(bernoulli_sprt(_coin(r + sign * delta, seed), r, delta=delta).rejected for seed in range(runs))
    assert rejected / runs >= 0.95


@pytest.mark.parametrize("p, more, less", [(0.5, 0, 3), (0.5, 1, 2), (0.25, 1, 0), (0.25, 3, 0)])
def test_the_pair_test_of_fedred_detects_a_pair_probability_off_by_delta(p: float, more: int, less: int) -> None:
    """fedred.coin_frequency's pair test: the four values of two consecutive coins against (1-p)^2, (1-p)p,
    p(1-p), p^2; moving DELTA of probability from one value to another is rejected with power >= 0.95 (simulated
    pairs, independent of the kit; measured 0.99-1.0)."""
    from fedtheory.conformance.families.fedred.properties import pair_probs

    base = [(1 - p) ** 2, (1 - p) * p, p * (1 - p), p * p]
    assert pair_probs(p) == pytest.approx(base)
    wrong = list(base)
    wrong[more] += DELTA
    wrong[less] -= DELTA
    runs = 100
    rejected = sum(categorical_sprt(_draws(wrong, seed), base).rejected for seed in range(runs))
    assert rejected / runs >= 0.95
