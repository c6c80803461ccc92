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

FedProx's law (``law="md"``, Li et al. 2020, Alg. 2: "Server selects a subset S_t of K devices at random (each
device k is chosen with probability p_k)", then w^{t+1} = 1/K sum_{k in S_t} w_k^{t+1}; p_k = n_k / n as in its
objective (1)). The K = m draws are independent and with replacement, so a round may draw a client twice; the kit
reads S_t as the multiset of the K draws, each draw one term of the 1/K average (a client drawn twice counts
twice). That reading is the one under which the average is unbiased, E_{S_t}[1/K sum_{k in S_t} w_k] =
sum_k p_k w_k, the property Li et al.'s analysis of device sampling needs of the average; averaging the distinct
clients drawn is not. (flgo's ``communicate`` trains each distinct client once and then lists its reply once per
draw, so its 1/K average is this one.) In law, each of the R m draws picks
client k with probability p_k, so its count c_k over R rounds is Binomial(R m, p_k): |c_k - R m p_k| <=
mc_slack(sqrt(R m p_k (1 - p_k))) for every k. R (:func:`rounds_for_md`) is the least number of rounds at which
the two wrong samplers of the power set are off by ``SAMPLER_POWER_MARGIN`` times that slack at some client: one
that draws uniformly (ignoring n_k) and one that always draws the first m clients. The instance must have unequal
num_examples (otherwise the law is the uniform one).

A framework's sampler may follow another law than the paper's, as its documentation says (pfl's
``get_user_sampler('random')`` draws each member of a cohort uniformly and independently, so with replacement;
Flower's FedProx samples as its FedAvg). The implementation then names that law in its report, ``{"drawn": [...],
"law": LAW}`` (one of :data:`DECLARABLE`), and the kit judges the draws under the declared law and each round for
the reported (multi)set, saying in the outcome that the law is the implementation's, not the paper's: the verdict
is then about the sampler doing what its framework documents, while the same implementation without the
declaration is judged under the paper's law. ``"uniform_replacement"``: each of the m draws of a round is a client
chosen uniformly and independently (a client drawn twice is listed, and counts, twice), so client i's count over R
rounds is Binomial(R m, 1/N) (:func:`rounds_for_replacement`).

An implementation that takes the kit's participants reports no draw: the property is "not applicable" for it.

:func:`self_sampling` turns an implementation that takes its participants into one that draws its own (correct,
and the wrong samplers of the power set: always the first m clients; reports its draw but trains others; under
FedProx's law, one that ignores n_k and one that counts a client drawn twice once).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Mapping

import numpy as np

from .contract import call_sampling_round
from .instance import Instance
from .kit import HOLDS, Outcome, not_applicable, outcome, round_hyper
from .tolerances import SAMPLER_POWER_MARGIN, Z_MONTE_CARLO, mc_slack

__all__ = ["rounds_for", "rounds_for_md", "rounds_for_replacement", "clients_per_round", "own_sampler",
           "self_sampling", "Judge", "LAWS", "DECLARABLE"]

#: The sampling laws the kit tests: McMahan et al.'s m distinct clients uniformly, Li et al.'s m draws with
#: replacement, client k with probability n_k / n.
LAWS = ("uniform", "md")
#: The laws an implementation may declare for its sampler (module docstring): the papers' two, and m independent
#: uniform draws with replacement.
DECLARABLE = LAWS + ("uniform_replacement",)

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


def rounds_for_md(m: int, sizes) -> int:
    """R for FedProx's law (module docstring): client k is drawn with probability p_k = n_k / n in each of the R m
    draws. A wrong sampler that draws client k with frequency q_k != p_k is off its expected count by R m |q_k - p_k|
    against a slack of Z sqrt(R m p_k (1 - p_k)); it is off by SAMPLER_POWER_MARGIN times the slack at client k once
    R >= (margin Z)^2 p_k (1 - p_k) / (m (q_k - p_k)^2). R is the least R at which that holds, at the client where
    it holds first, for both wrong samplers: q_k = 1/N (uniform, ignoring n_k) and q_k = 1/m for the first m
    clients, 0 for the others (always the first m). Exact rational arithmetic."""
    n = len(sizes)
    if not (isinstance(m, int) and 0 < m < n):
        raise ValueError(f"m (clients per round) must be an integer in (0, n) for a population of n = {n}, got {m}")
    if any(int(s) != s or s < 1 for s in sizes):
        raise ValueError(f"sizes (the clients' num_examples) must be positive integers, got {list(sizes)}")
    total = sum(int(s) for s in sizes)
    p = [Fraction(int(s), total) for s in sizes]
    if len(set(p)) == 1:
        raise ValueError(f"sizes must not all be equal for FedProx's law (it is then the uniform one), got "
                         f"{list(sizes)}")
    uniform = [Fraction(1, n)] * n
    first = [Fraction(1, m) if k < m else Fraction(0) for k in range(n)]
    need = max(min(pk * (1 - pk) / (m * (qk - pk) ** 2) for pk, qk in zip(p, q) if qk != pk)
               for q in (uniform, first))
    return math.ceil(Fraction(SAMPLER_POWER_MARGIN * Z_MONTE_CARLO) ** 2 * need)


def rounds_for_replacement(m: int, n: int) -> int:
    """R for m independent uniform draws a round (client i's count Binomial(R m, 1/N), standard error
    sqrt(R m (1/N)(1 - 1/N))): the least R at which a client the sampler never draws (count 0, off by R m / N) and
    one it always draws once a round (count R, off by R (1 - m / N)) are off by SAMPLER_POWER_MARGIN times the
    slack: R = (margin Z)^2 max((N - 1) / m, m (N - 1) / (N - m)^2), exact rational arithmetic."""
    if not (isinstance(m, int) and isinstance(n, int) and 0 < m < n):
        raise ValueError(f"m (clients per round) must be an integer in (0, n) for a population of n = {n}, got {m}")
    ratio = max(Fraction(n - 1, m), Fraction(m * (n - 1), (n - m) ** 2))
    return math.ceil(Fraction(SAMPLER_POWER_MARGIN * Z_MONTE_CARLO) ** 2 * ratio)


def clients_per_round(n: int) -> int:
    """m for a population of n >= 2: half of it (p = m / n in [1/3, 1/2], so R <= 200 rounds)."""
    if n < 2:
        raise ValueError(f"n (the population) must be at least 2 for partial participation, got {n}")
    return max(1, n // 2)


def _law_parameters(law: str, inst: Instance, m: int) -> tuple[np.ndarray, int, int]:
    """(client k's probability per draw, draws per round, R) under ``law``: ``"uniform"`` one draw per client
    (m distinct of n, each in a fraction m / n of the rounds), ``"md"`` m draws by n_k / n, ``"uniform_replacement"``
    m draws by 1 / n."""
    n = inst.n
    if law == "md":
        return inst.sizes / inst.sizes.sum(), m, rounds_for_md(m, [int(s) for s in inst.sizes])
    if law == "uniform_replacement":
        return np.full(n, 1.0 / n), m, rounds_for_replacement(m, n)
    return np.full(n, m / n), 1, rounds_for(m, n)


def _law_failure(law: str, inst: Instance, ids: list[int], counts: np.ndarray, p: np.ndarray, trials: int, R: int,
                 z: np.ndarray, worst: int, m: int) -> str:
    if law == "uniform":
        return (f"client {ids[worst]} drawn in {int(counts[worst])} of {R} rounds ({counts[worst] / R:.3f}) where "
                f"uniform sampling of {m} of {inst.n} clients gives {p[worst]:.3f} (z = {z[worst]:.2f}, threshold "
                f"{Z_MONTE_CARLO:g})")
    gives = (f"Li et al.'s sampling gives p_k = n_k / n = {int(inst.sizes[worst])}/{int(inst.sizes.sum())} = "
             f"{p[worst]:.3f}" if law == "md" else f"uniform draws with replacement give 1/{inst.n} = {p[worst]:.3f}")
    return (f"client {ids[worst]} drawn {int(counts[worst])} times in the {trials} draws of {R} rounds "
            f"({counts[worst] / trials:.3f}) where {gives} (z = {z[worst]:.2f}, threshold {Z_MONTE_CARLO:g})")


def own_sampler(impl: Callable[..., Any], inst: Instance, hyper: Mapping[str, Any], rtol: float, judge: Judge,
                seed: int = 0, per_round: Callable[[int], Mapping[str, Any]] | None = None,
                law: str = "uniform") -> Outcome:
    """Run R rounds of ``impl`` on the population of ``inst`` with ``clients_per_round`` = m and judge them: (a)
    each round by ``judge`` for the participants it reports (a multiset under a law with replacement, a client
    drawn twice listed twice in S), (b) the draws in law (module docstring): the paper's ``law``, ``"uniform"`` (m
    distinct clients, McMahan et al.) or ``"md"`` (m draws with replacement by n_k / n, Li et al.'s FedProx), or the
    law the implementation declares in its report (:data:`DECLARABLE`), which the outcome then names. The judge
    gets the law in effect as ``h["law"]``. ``per_round(t)`` adds the round's own hyperparameters (FedNova's tau_i
    of every client of the population)."""
    if law not in LAWS:
        raise ValueError(f"law must be one of {LAWS}, got {law!r}")
    paper, n, m = law, inst.n, clients_per_round(inst.n)
    ids = [int(c.cid) for c in inst.clients]
    position = {cid: i for i, cid in enumerate(ids)}
    counts = np.zeros(n)
    x, state, first_bad, R, t = inst.x0, None, None, None, 0
    while R is None or t < R:
        h = round_hyper(hyper, inst, clients_per_round=m, **(per_round(t) if per_round else {}))
        x_new, state_new, report = call_sampling_round(impl, x, inst.clients, state, h,
                                                       np.random.default_rng(seed + t))
        if report is None:
            if t == 0:
                return not_applicable("the implementation takes the kit's participants (it reports no "
                                      "{'drawn': ...} when given clients_per_round): its own sampler is not run")
            return outcome(False, float("nan"), rtol, f"round {t + 1} of {R} reports no draw where round 1 did")
        declared = report["law"] or paper
        if t == 0:
            if declared not in DECLARABLE:
                return outcome(False, float("nan"), rtol, f"the implementation declares the sampling law "
                               f"{declared!r}; the kit judges {DECLARABLE}")
            law = declared
            p, draws, R = _law_parameters(law, inst, m)
        elif declared != law:
            return outcome(False, float("nan"), rtol, f"round {t + 1} of {R} declares the law {declared!r} where "
                           f"round 1 declared {law!r}")
        drawn = report["drawn"]
        unknown = [c for c in drawn if c not in position]
        if unknown:
            return outcome(False, float(len(unknown)), 0.0, f"round {t + 1} reports clients {unknown} that are not "
                           f"in the population {ids}")
        S = np.array(sorted(position[c] for c in drawn), dtype=int)
        distinct = len(set(S.tolist()))
        if law != "uniform" and len(S) != m:
            return outcome(False, float(len(S)), float(m), f"round {t + 1} of {R} draws {sorted(drawn)} ({len(S)} "
                           f"draws) where clients_per_round = {m} draws are declared")
        if law == "uniform" and (len(S) != m or distinct != m):
            repeats = " (a client drawn twice: sampling with replacement)" if len(S) == m and distinct < m else ""
            return outcome(False, float(distinct), float(m), f"round {t + 1} of {R} draws {sorted(drawn)} "
                           f"({distinct} distinct of {len(S)}) where clients_per_round = {m} distinct clients of {n} "
                           f"are declared{repeats}")
        err, what = judge(x, state, x_new, state_new, S, {**h, "law": law})
        if not np.all(np.isfinite(x_new)):
            err, what = float("inf"), "the model is not finite"
        if err > rtol and first_bad is None:
            first_bad = (t, err, what, [ids[i] for i in S])
        np.add.at(counts, S, 1)
        x, state, t = x_new, state_new, t + 1
    trials = R * draws  # client k's count is Binomial(trials, p_k)
    se = np.sqrt(trials * p * (1 - p))
    z = np.abs(counts - trials * p) / se
    worst = int(np.argmax(z))
    law_holds = bool(np.all(np.abs(counts - trials * p) <= mc_slack(se)))
    failure = _law_failure(law, inst, ids, counts, p, trials, R, z, worst, m)
    whose = "" if law == paper else (f" (judged under the law the implementation declares, {law!r}, not the "
                                     f"paper's {paper!r})")
    if first_bad is not None:
        t, err, what, S_ids = first_bad
        return outcome(False, err, rtol, f"round {t + 1} of {R} (drawn {S_ids}) differs from the paper's round for "
                       f"the clients it reports drawn{': ' + what if what else ''}; the sampler's law "
                       + ("holds" if law_holds else f"fails too: {failure}") + whose)
    if law_holds and whose:  # a pass under the implementation's own law says so in the report
        return Outcome(HOLDS, float(z[worst]), Z_MONTE_CARLO, f"the sampler's law holds{whose}")
    return outcome(law_holds, float(z[worst]), Z_MONTE_CARLO, f"the sampler's law fails: {failure}{whose}")


def self_sampling(impl: Callable[..., Any], how: str = "uniform") -> Callable[..., Any]:
    """``impl`` (which takes its participants) made to draw its own when given ``clients_per_round`` = m:
    ``"uniform"`` draws m distinct clients uniformly from its ``rng`` (correct); ``"first"`` always the first m
    (wrong in law); ``"lies"`` reports a uniform draw but trains m clients it did not draw (wrong: the round is not
    the paper's for the reported clients). Under FedProx's law (Li et al. 2020, Alg. 2; ``impl`` then called with
    ``weighting="uniform"`` on the multiset of draws, the 1/K average): ``"md"`` m draws with replacement by
    n_k / n (correct); ``"md_ignores_sizes"`` with replacement, uniformly (wrong in law); ``"md_first"`` always the
    first m (wrong in law); ``"md_distinct"`` draws correctly but averages the distinct clients drawn, a client
    drawn twice counted once (wrong: the round). Without ``clients_per_round`` it is ``impl``."""
    hows = ("uniform", "first", "lies", "md", "md_ignores_sizes", "md_first", "md_distinct")
    if how not in hows:
        raise ValueError(f"how must be one of {hows}, got {how!r}")
    md = how.startswith("md")

    def wrapped(x, clients, *, state=None, rng=None, clients_per_round=None, **hyper):
        if clients_per_round is None:
            return impl(x, clients, state=state, rng=rng, **hyper)
        n, m = len(clients), int(clients_per_round)
        if how in ("first", "md_first"):
            drawn = np.arange(m)
        elif md:
            sizes = np.array([c.num_examples for c in clients], dtype=np.float64)
            p = None if how == "md_ignores_sizes" else sizes / sizes.sum()
            drawn = np.sort(rng.choice(n, size=m, replace=True, p=p))
        else:
            drawn = np.sort(rng.choice(n, size=m, replace=False))
        # "lies": the first m clients it did not draw (m <= n / 2, so there are enough, and none was drawn)
        used = {"lies": np.setdiff1d(np.arange(n), drawn)[:m], "md_distinct": np.unique(drawn)}.get(how, drawn)
        if md:
            hyper = {**hyper, "weighting": "uniform"}
        out = impl(x, [clients[i] for i in used], state=state, rng=rng, **hyper)
        x_new, new_state = out if isinstance(out, tuple) else (out, None)
        return x_new, new_state, {"drawn": [clients[i].cid for i in drawn]}
    wrapped.__qualname__ = f"self_sampling({getattr(impl, '__qualname__', 'impl')}, {how!r})"
    return wrapped
