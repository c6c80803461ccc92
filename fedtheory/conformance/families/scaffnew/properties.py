"""scaffnew's properties: the five the stateful families share (:mod:`fedtheory.conformance.stateful`), declared
with this paper's source."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from hypothesis import strategies as st

from ... import stateful
from ...kit import Outcome, instance_of, not_applicable, outcome, round_hyper, run_round, scale_of
from ...sequential import ALPHA, DELTA, bernoulli_sprt, categorical_sprt
from ..registry import prop

__all__ = ["HYPER"]

HYPER: Mapping[str, Any] = {"step": 0.5, "p": 0.5, "weighting": "uniform"}
MISHCHENKO = "Mishchenko et al. 2022, Alg. 2 (ProxSkip); Thm 3.6"
#: The paper's ranges the kit also draws hyperparameters from (fedtheory.conformance.families.varied_hyper): a
#: slip invisible at the user's values (a server step ignored at 1.0) shows at another.
RANGES: Mapping[str, tuple] = {"step": (0.05, 0.9), "p": (0.1, 0.9)}


def _cases(hyper: Mapping[str, Any]):
    return stateful.stateful_cases(hyper, "scaffnew")


@prop(id="scaffnew.converges", family="scaffnew", core=True, reference=MISHCHENKO,
      statement="converges to x* exactly (1e-6 relative) under heterogeneity", cases=_cases, expensive=True)
def converges(impl, case, hyper, rtol) -> Outcome:
    return stateful.converges(impl, case, hyper, rtol, "scaffnew")


@prop(id="scaffnew.one_round", family="scaffnew", reference=MISHCHENKO,
      statement="one round from a consistent state equals the closed form", cases=_cases)
def one_round(impl, case, hyper, rtol) -> Outcome:
    return stateful.one_round(impl, case, hyper, rtol, "scaffnew")


@prop(id="scaffnew.fixed_point", family="scaffnew", reference=MISHCHENKO,
      statement="x* with control variates grad f_i(x*) is a fixed point", cases=_cases)
def fixed_point(impl, case, hyper, rtol) -> Outcome:
    return stateful.fixed_point(impl, case, hyper, rtol, "scaffnew")


@prop(id="scaffnew.server_state", family="scaffnew", reference=MISHCHENKO,
      statement="server state invariant: sum h_i = 0", cases=_cases)
def server_state(impl, case, hyper, rtol) -> Outcome:
    return stateful.server_state(impl, case, hyper, rtol, "scaffnew")


@prop(id="scaffnew.multi_round", family="scaffnew", core=True, reference="Mishchenko et al. 2022, Alg. 2 (ProxSkip)",
      statement=f"{stateful.ROUNDS} rounds from the implementation's own state (zero start, random participants) "
                "equal the closed-form recursion; a readable state equals it too", cases=_cases)
def multi_round(impl, case, hyper, rtol) -> Outcome:
    return stateful.multi_round(impl, case, hyper, rtol, "scaffnew")


#: Local-step counts named one by one in the coin test; longer rounds form one category (K > OWN_COIN_MAX).
OWN_COIN_MAX = 12


def _coin_case(hyper: Mapping[str, Any]) -> st.SearchStrategy:
    """One fixed client (id 13, not a list position) in one dimension with f = a (x - c)^2 / 2, a = 0.2 / gamma:
    after K local steps from x0 the model is c + 0.8^K (x0 - c), a different model for every K."""
    a = 0.2 / float(hyper["step"])
    return st.just({"n": 1, "d": 1, "mu": a, "L": a, "delta_frac": 0.0, "zeta2": 0.0, "sizes": [3],
                    "weighting": "uniform", "seed": 0, "ids": [13], "round_seed": 0})


@prop(id="scaffnew.own_coin", family="scaffnew", reference="Mishchenko et al. 2022, Alg. 2: theta_t ~ Bernoulli(p)",
      statement=f"with local_steps=None the implementation draws its own coins: the number of local steps of a "
                f"round, read off the model, is Geometric(p), at the user's p and at a second p of the kit's "
                f"(sequential test per count 1..{OWN_COIN_MAX} and the tail; false rejection <= {ALPHA:g} per p, a "
                f"count's probability off by {DELTA:g} detected); n.a. when local_steps=None is not supported",
      cases=_coin_case, expensive=True, examples=1)
def own_coin(impl, case, hyper, rtol) -> Outcome:
    """ProxSkip communicates after each local step with probability p, so a round has K ~ Geometric(p) local
    steps: P(K = k) = (1 - p)^(k - 1) p. Called with ``local_steps=None`` and no state, the implementation draws
    its own coins; on one client with f = (x - c)^2 / 2 and h = 0 the returned model c + (1 - gamma)^K (x0 - c)
    names K. The counts 1..12 and the tail K > 12 are tested with
    :func:`fedtheory.conformance.sequential.categorical_sprt` at the user's p and at :func:`second_p` (a coin that
    ignores p, or uses 1 - p, is right at p = 1/2 only). An implementation that takes no ``local_steps=None``
    (it raises) is not applicable: its coins are the kit's by contract."""
    p, gamma = float(hyper["p"]), float(hyper["step"])
    if not DELTA < p < 1.0 - DELTA:
        return not_applicable(f"p = {p:g}: the coin test needs p in ({DELTA:g}, {1 - DELTA:g})")
    inst = instance_of(case)
    c = float(inst.x_star[0])
    x0 = inst.x0 if abs(float(inst.x0[0]) - c) > 0.5 else inst.x0 + 1.0
    contraction = 1.0 - gamma * float(inst.A[0, 0, 0])
    models = c + contraction ** np.arange(1, OWN_COIN_MAX + 1) * (float(x0[0]) - c)  # K = 1..12
    scale = scale_of(inst, x0)
    if not 0.0 < contraction < 1.0 or np.min(np.abs(np.diff(models))) <= 1e3 * rtol * scale:
        return not_applicable(f"step = {gamma:g}: the local-step counts give models too close to tell apart")
    rng = np.random.default_rng(case["round_seed"])
    h = dict(round_hyper(hyper, inst), local_steps=None)
    try:
        run_round(impl, inst, x0, np.arange(1), h, None, seed=0)
    except Exception as exc:  # noqa: BLE001 - not supporting its own coins is allowed by the contract
        return not_applicable(f"local_steps=None (its own ProxSkip coins) is not supported: {type(exc).__name__}: "
                              f"{exc}")
    out = None
    for q in (p, second_p(p)):
        hq = dict(h, p=q)
        probs = [(1 - q) ** (k - 1) * q for k in range(1, OWN_COIN_MAX + 1)]
        probs.append(1.0 - sum(probs))
        off = [0.0]

        def count() -> int:
            got, _ = run_round(impl, inst, x0, np.arange(1), hq, None, seed=int(rng.integers(2**31)))
            return count_of(got)

        def count_of(got) -> int:
            r = (float(got[0]) - c) / (float(x0[0]) - c)  # contraction^K for K local steps
            if 0.0 <= r < contraction ** (OWN_COIN_MAX + 0.5):
                return OWN_COIN_MAX  # the tail K > 12
            dist = np.abs(models - float(got[0])) / scale
            off[0] = max(off[0], float(dist.min()))
            return int(np.argmin(dist))  # K - 1

        test = categorical_sprt(count, probs)
        which = "" if q == p else " (the kit's second p)"
        if off[0] > rtol:
            return outcome(False, off[0], rtol, f"p = {q:g}{which}: a returned model is not K local steps from x0 "
                                                "for any K (h = 0 at the start: x_K = c + (1 - gamma)^K (x0 - c))")
        worst = test.worst
        label = f"K = {worst + 1}" if worst < OWN_COIN_MAX else f"K > {OWN_COIN_MAX}"
        out = outcome(not test.rejected, max(test.log_lr[worst]), test.threshold, "" if not test.rejected else
                      f"p = {q:g}{which}: {label} in {test.counts[worst]} of {test.samples} rounds "
                      f"({test.counts[worst] / test.samples:.3f}) where Geometric({q:g}) gives {probs[worst]:.3f}")
        if test.rejected:
            return out
        serial = _serial(impl, inst, x0, hq, probs, count_of, rng, q, which)
        if off[0] > rtol:
            return outcome(False, off[0], rtol, f"p = {q:g}{which}: a model of a round run from the state the "
                                                "implementation returned is not K local steps from x0 for any K (on "
                                                "one client h stays 0)")
        if serial is not None:
            return serial
    return out


def _serial(impl, inst, x0, h, probs, count_of, rng, q, which) -> Outcome | None:
    """Two consecutive rounds, the second from the state the implementation returned after the first (on one
    client h stays 0, so both rounds read K off the same models): the coins of different rounds are independent,
    so K_1 = K_2 with probability r = sum_k P(K = k)^2 (the tail K > 12 one value). Tested sequentially (level
    1e-6, an error of 0.1 detected): K drawn once and kept in the state, or a K that depends on the previous
    round's, is caught here."""
    r = float(np.sum(np.square(probs)))

    def repeated() -> bool:
        got, state = run_round(impl, inst, x0, np.arange(1), h, None, seed=int(rng.integers(2**31)))
        again, _ = run_round(impl, inst, x0, np.arange(1), h, state, seed=int(rng.integers(2**31)))
        return count_of(got) == count_of(again)

    test = bernoulli_sprt(repeated, r, delta=min(SERIAL_DELTA, r / 2, (1.0 - r) / 2))
    if not test.rejected:
        return None
    return outcome(False, max(test.log_lr), test.threshold,
                   f"p = {q:g}{which}: two consecutive rounds had the same number of local steps {test.events} times "
                   f"in {test.samples} ({test.frequency:.3f}) where independent Geometric({q:g}) draws give "
                   f"{r:.3f}: the coins depend on the previous round")


#: The error in the probability that two consecutive rounds have the same K that the serial test detects.
SERIAL_DELTA = 0.1


def second_p(p: float) -> float:
    """The kit's second coin probability, far from the user's p and from 1/2."""
    return 0.25 if p >= 0.5 else 0.75
