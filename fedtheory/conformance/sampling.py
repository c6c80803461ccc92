"""The implementation's own sampler: the multi-round property that runs it at partial participation and judges it.

A framework draws each round's participants with its own sampler (flgo's ``option['sample']``, FedML's
``_client_sampling``, FLSim's ``UniformlyRandomActiveUserSelector``). Under the contract's sampling protocol
(:mod:`fedtheory.conformance.contract`) the kit gives the implementation the whole population of N clients and
``clients_per_round`` = m, and the implementation reports the clients it drew, ``{"drawn": [cid, ...]}``. Over R
consecutive rounds (each from the model and state the implementation returned) the kit judges

(a) every round against the paper's round for *the reported participants* (the family's closed form or
    recursion, as in its multi-round property): a sampler that reports one set and trains another fails here;
(b) the sampler in law: every round draws m distinct clients of the population, and each client's count c_i over
    the R rounds matches the law of uniform sampling without replacement (McMahan et al. 2017, Alg. 1: "S_t =
    (random set of m clients)"), c_i ~ Binomial(R, p) with p = m / N, within the Monte Carlo rule of
    :mod:`fedtheory.montecarlo`: |c_i - R p| <= mc_slack(sqrt(R p (1 - p))) for every client i. R is chosen so
    that a client drawn never or always is off by ``SAMPLER_POWER_MARGIN`` times that slack
    (:data:`fedtheory.conformance.tolerances.SAMPLER_POWER_MARGIN`). A deterministic sampler seeded per round
    (FedML seeds NumPy with the round index) is judged the same way: its R draws are one realisation of the law.

An implementation that takes the kit's participants reports no draw: the property is "not applicable" for it.

:func:`self_sampling` turns an implementation that takes its participants into one that draws its own (correct,
and the two wrong samplers of the power set: always the first m clients; reports its draw but trains others).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Mapping

import numpy as np

from .contract import call_sampling_round
from .instance import Instance
from .kit import Outcome, not_applicable, outcome, round_hyper
from .tolerances import SAMPLER_POWER_MARGIN, Z_MONTE_CARLO, mc_slack

__all__ = ["rounds_for", "clients_per_round", "own_sampler", "self_sampling", "Judge"]

#: judge(x, state, x_new, state_new, S, hyper) -> (relative error of the round against the paper's round over the
#: participants S (indices into the instance's clients), what differs). A judge may keep the kit's recursion.
Judge = Callable[[np.ndarray, Any, np.ndarray, Any, np.ndarray, Mapping[str, Any]], tuple[float, str]]


def rounds_for(m: int, n: int) -> int:
    """R such that a client drawn never (count 0) or always (count R) is off R p (p = m / n) by
    SAMPLER_POWER_MARGIN times the slack mc_slack(sqrt(R p (1 - p))): R = (margin Z)^2 max(p / (1 - p), (1 - p) / p),
    in exact rational arithmetic (so p = 1/3 gives 200, not a rounded-up 201)."""
    if not (isinstance(m, int) and isinstance(n, int) and 0 < m < n):
        raise ValueError(f"m (clients per round) must be an integer in (0, n) for a population of n = {n}, got {m}")
    ratio = max(Fraction(m, n - m), Fraction(n - m, m))
    return math.ceil(Fraction(SAMPLER_POWER_MARGIN * Z_MONTE_CARLO) ** 2 * ratio)


def clients_per_round(n: int) -> int:
    """m for a population of n >= 2: half of it (p = m / n in [1/3, 1/2], so R <= 200 rounds)."""
    if n < 2:
        raise ValueError(f"n (the population) must be at least 2 for partial participation, got {n}")
    return max(1, n // 2)


def own_sampler(impl: Callable[..., Any], inst: Instance, hyper: Mapping[str, Any], rtol: float, judge: Judge,
                seed: int = 0, per_round: Callable[[int], Mapping[str, Any]] | None = None) -> Outcome:
    """Run R rounds of ``impl`` on the population of ``inst`` with ``clients_per_round`` = m and judge them: (a)
    each round by ``judge`` for the participants it reports, (b) the draws in law (module docstring).
    ``per_round(t)`` adds the round's own hyperparameters (FedNova's tau_i of every client of the population)."""
    n = inst.n
    m = clients_per_round(n)
    p = m / n
    R = rounds_for(m, n)
    ids = [int(c.cid) for c in inst.clients]
    position = {cid: i for i, cid in enumerate(ids)}
    counts = np.zeros(n)
    x, state, first_bad = inst.x0, None, None
    for t in range(R):
        h = round_hyper(hyper, inst, clients_per_round=m, **(per_round(t) if per_round else {}))
        x_new, state_new, drawn = call_sampling_round(impl, x, inst.clients, state, h,
                                                      np.random.default_rng(seed + t))
        if drawn is None:
            if t == 0:
                return not_applicable("the implementation takes the kit's participants (it reports no "
                                      "{'drawn': ...} when given clients_per_round): its own sampler is not run")
            return outcome(False, float("nan"), rtol, f"round {t + 1} of {R} reports no draw where round 1 did")
        unknown = [c for c in drawn if c not in position]
        if unknown:
            return outcome(False, float(len(unknown)), 0.0, f"round {t + 1} reports clients {unknown} that are not "
                           f"in the population {ids}")
        S = np.array(sorted(position[c] for c in drawn), dtype=int)
        if len(S) != m or len(set(S.tolist())) != m:
            return outcome(False, float(len(set(S.tolist()))), float(m), f"round {t + 1} of {R} draws {sorted(drawn)}"
                           f" ({len(set(S.tolist()))} distinct of {len(S)}) where clients_per_round = {m} distinct "
                           f"clients of {n} are declared")
        err, what = judge(x, state, x_new, state_new, S, h)
        if not np.all(np.isfinite(x_new)):
            err, what = float("inf"), "the model is not finite"
        if err > rtol and first_bad is None:
            first_bad = (t, err, what, [ids[i] for i in S])
        counts[S] += 1
        x, state = x_new, state_new
    se = math.sqrt(R * p * (1 - p))
    z = np.abs(counts - R * p) / se
    worst = int(np.argmax(z))
    law_holds = bool(np.all(np.abs(counts - R * p) <= mc_slack(se)))
    law = (f"client {ids[worst]} drawn in {int(counts[worst])} of {R} rounds ({counts[worst] / R:.3f}) where uniform "
           f"sampling of {m} of {n} clients gives {p:.3f} (z = {z[worst]:.2f}, threshold {Z_MONTE_CARLO:g})")
    if first_bad is not None:
        t, err, what, S_ids = first_bad
        return outcome(False, err, rtol, f"round {t + 1} of {R} (drawn {S_ids}) differs from the paper's round for "
                       f"the clients it reports drawn{': ' + what if what else ''}; the sampler's law "
                       + ("holds" if law_holds else f"fails too: {law}"))
    return outcome(law_holds, float(z[worst]), Z_MONTE_CARLO, f"the sampler's law fails: {law}")


def self_sampling(impl: Callable[..., Any], how: str = "uniform") -> Callable[..., Any]:
    """``impl`` (which takes its participants) made to draw its own when given ``clients_per_round`` = m:
    ``"uniform"`` draws m distinct clients uniformly from its ``rng`` (correct); ``"first"`` always the first m
    (wrong in law); ``"lies"`` reports a uniform draw but trains m clients it did not draw (wrong: the round is not the paper's for the reported clients). Without ``clients_per_round`` it is ``impl``."""
    if how not in ("uniform", "first", "lies"):
        raise ValueError(f"how must be 'uniform', 'first' or 'lies', got {how!r}")

    def wrapped(x, clients, *, state=None, rng=None, clients_per_round=None, **hyper):
        if clients_per_round is None:
            return impl(x, clients, state=state, rng=rng, **hyper)
        n, m = len(clients), int(clients_per_round)
        drawn = np.arange(m) if how == "first" else np.sort(rng.choice(n, size=m, replace=False))
        # "lies": the first m clients it did not draw (m <= n / 2, so there are enough, and none was drawn)
        used = np.setdiff1d(np.arange(n), drawn)[:m] if how == "lies" else drawn
        out = impl(x, [clients[i] for i in used], state=state, rng=rng, **hyper)
        x_new, new_state = out if isinstance(out, tuple) else (out, None)
        return x_new, new_state, {"drawn": [clients[i].cid for i in drawn]}
    wrapped.__qualname__ = f"self_sampling({getattr(impl, '__qualname__', 'impl')}, {how!r})"
    return wrapped
