"""Conformance properties of FedOGD, OFedAvg and OFedIQ (Kwon, Park & Hong, Algs. 1-2) on static streams.

Contract (docs/conformance.md): ``impl(w, clients, *, state=None, rng=None, **hyper) -> (w, state)`` runs ONE
time step with every client listed: ``eta``, ``period`` (L), ``p`` (sampling probability), ``s``/``b`` (the
(s, b)-quantizer; ``s=None`` = none), ``weighting`` ("uniform": the paper's 1/K), and the kit's draw
``draw={"participate": {cid: bool}, "uniforms": {cid: [D uniforms]}}`` at the last step of a period (round up
coordinate i iff U_i < s r_i - m_i). The returned ``w`` is the global model in use, w_{psi(t)}.
FedOGD is p = 1, L = 1, s = None. If the state is a mapping with ``"regret"``, it is checked too.
"""
from __future__ import annotations

import itertools
from typing import Any, Mapping

import numpy as np
from hypothesis import strategies as st

from ...kit import Outcome, instance_of, instance_params, not_applicable, outcome, round_hyper, run_round, scale_of
from ...sequential import ALPHA, DELTA, bernoulli_sprt, categorical_sprt
from ...tolerances import REGRET_FLOOR
from ..registry import prop
from . import expected as eo

__all__ = ["HYPER"]

HYPER: Mapping[str, Any] = {"eta": 0.05, "period": 2, "p": 0.5, "s": 4, "b": 1, "weighting": "uniform"}
_REF = "Kwon, Park & Hong (OFedIQ), Alg. 2, eqs. (6)-(9), Definition 2"
STEPS = 6
#: The paper's ranges the kit also draws hyperparameters from (fedtheory.conformance.families.varied_hyper): a
#: slip invisible at the user's values (a server step ignored at 1.0) shows at another.
RANGES: Mapping[str, tuple] = {"eta": (0.01, 0.1), "period": (1, 4), "p": (0.1, 0.9), "s": (1, 8)}


def horizon(hyper: Mapping[str, Any]) -> int:
    """Time steps of ``ofediq.steps``: two full periods of L steps and the first step of a third (6 at least), so
    a slip in the restart at a period's start shows at the transmission that ends the second period."""
    return max(STEPS, 2 * int(hyper["period"]) + 1)


def _cases(hyper: Mapping[str, Any], max_clients: int = 6, max_dim: int = 10) -> st.SearchStrategy:
    min_dim = int(hyper.get("b") or 1) if hyper.get("s") is not None else 1  # the quantizer needs b <= D

    @st.composite
    def cases(draw):
        p = draw(instance_params(hyper, L_max=min(20.0, 1.0 / hyper["eta"]), max_clients=max_clients,
                                 max_dim=max(max_dim, min_dim)))
        if p["d"] < min_dim:
            p = dict(p, d=min_dim, sizes=[max(m, min_dim) for m in p["sizes"]])
        p["draw_seed"] = draw(st.integers(0, 2**16))
        return p
    return cases()


def _draws(inst, hyper, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _t in range(horizon(hyper)):
        part = rng.random(inst.n) < hyper["p"]
        U = rng.random((inst.n, inst.d))
        out.append((part, U))
    return out


def _draw_arg(inst, part, U):
    return {"participate": {c.cid: bool(part[i]) for i, c in enumerate(inst.clients)},
            "uniforms": {c.cid: U[i].tolist() for i, c in enumerate(inst.clients)}}


@prop(id="ofediq.steps", family="ofediq", core=True,
      reference=f"{_REF}; regret eq. (3)",
      statement="max(6, 2 L + 1) time steps with the kit's coins and uniforms equal eqs. (6)-(9); the reported regret equals "
             "the exact comparator's",
      cases=_cases)
def steps(impl, case, hyper, rtol) -> Outcome:
    """max(6, 2 L + 1) time steps from state=None (theta = w_0) with the kit's coins and uniforms: the model in use every step
    against eqs. (6)-(9); with a readable ``regret``, also the regret against the exact static comparator."""
    inst = instance_of(case)
    h = round_hyper(hyper, inst)
    w_want = w_got = inst.x0
    theta, acc = np.tile(inst.x0, (inst.n, 1)), np.zeros((inst.n, inst.d))
    state, err, cum = None, 0.0, 0.0
    fmin = eo.static_min(inst)
    for t, (part, U) in enumerate(_draws(inst, hyper, case["draw_seed"])):
        cum += sum(c.value(w_want) for c in inst.clients)  # the loss of step t is taken at w_{psi(t)}
        w_want, theta, acc = eo.ofediq_step(inst, w_want, t, theta, acc, hyper, part, U)
        w_got, state = run_round(impl, inst, w_got, np.arange(inst.n), dict(h, draw=_draw_arg(inst, part, U)), state,
                              seed=t)
        err = float(np.linalg.norm(w_got - w_want)) / scale_of(inst, inst.x0, w_want)
        if err > rtol:
            return outcome(False, err, rtol, f"step {t + 1} of {horizon(hyper)} (period {hyper['period']}, sampled "
                           f"{part.astype(int).tolist()}) differs from eqs. (6)-(9)")
        if isinstance(state, Mapping) and "regret" in state:
            want_regret = cum - (t + 1) * fmin
            r_err = abs(float(state["regret"]) - want_regret) / max(1.0, abs(cum))
            if r_err > max(rtol, REGRET_FLOOR):
                return outcome(False, r_err, rtol, f"regret after step {t + 1} is {float(state['regret']):.6g}, "
                               f"the exact comparator gives {want_regret:.6g}")
    return outcome(True, err, rtol)


@prop(id="ofediq.participation", family="ofediq",
      reference="Kwon, Park & Hong, eq. (8) with 1/p_k, eq. (9) with 1/K",
      statement="E over the 2^K participation outcomes = FedOGD's step",
      cases=lambda h: _cases(h, max_clients=5))
def participation(impl, case, hyper, rtol) -> Outcome:
    """L = 1, no quantization: the exact expectation over the 2^K participation outcomes (probabilities
    prod p^c (1-p)^(1-c)) of one step is FedOGD's w - eta (1/K) sum_k grad f_k(w) (the 1/p_k of eq. (8) makes
    the sampled aggregate unbiased, Section 3.2)."""
    inst = instance_of(case)
    p = float(hyper["p"])
    h = dict(round_hyper(hyper, inst), period=1, s=None)
    mean = np.zeros(inst.d)
    for coins in itertools.product((False, True), repeat=inst.n):
        prob = float(np.prod([p if c else 1 - p for c in coins]))
        if prob == 0.0:
            continue
        part = np.array(coins)
        got, _ = run_round(impl, inst, inst.x0, np.arange(inst.n), dict(h, draw=_draw_arg(inst, part, np.zeros(
            (inst.n, inst.d)))), None)
        mean += prob * got
    want = inst.x0 - hyper["eta"] * (np.einsum("nij,j->ni", inst.A, inst.x0) - inst.b).mean(axis=0)
    err = float(np.linalg.norm(mean - want)) / scale_of(inst, inst.x0, want)
    return outcome(err <= rtol, err, rtol, "" if err <= rtol else
                   "the expectation over participation is not the FedOGD step (is the 1/p_k scaling there, "
                   "and does the server divide by K?)")


def _participation_case(hyper: Mapping[str, Any]) -> st.SearchStrategy:
    """One fixed instance for the statistical test: two heterogeneous clients, ids 11 and 14 (not list
    positions), in two dimensions, so that the four participation outcomes give four distinct models."""
    L = min(5.0, 1.0 / hyper["eta"])
    return st.just({"n": 2, "d": 2, "mu": min(0.5, L), "L": L, "delta_frac": 0.5, "zeta2": 1.0, "sizes": [3, 5],
                    "weighting": hyper.get("weighting", "uniform"), "seed": 0, "ids": [11, 14], "draw_seed": 0})


def second_p(p: float) -> float:
    """The kit's own second participation probability, far from the user's p and from 1/2: coins that ignore p (a
    constant 1/2) or invert it (1 - p) are right at p = 1/2 and wrong here."""
    return 0.25 if p >= 0.5 else 0.75


def _period_outcomes(inst, hyper: Mapping[str, Any], subsets, w0: np.ndarray | None = None) -> np.ndarray:
    """The model after one full period of L steps from w0 (default: the instance's x0; no quantization) for each
    participation subset: L local gradient steps (6)-(7) from w0, then (8)-(9) with the subset transmitting."""
    w0 = inst.x0 if w0 is None else w0
    out = []
    for S in subsets:
        w, theta, acc = w0, np.tile(w0, (inst.n, 1)), np.zeros((inst.n, inst.d))
        for t in range(int(hyper["period"])):
            w, theta, acc = eo.ofediq_step(inst, w, t, theta, acc, hyper, np.array(S), None)
        out.append(w)
    return np.stack(out)


@prop(id="ofediq.own_participation", family="ofediq",
      reference="Kwon, Park & Hong, Alg. 2: at the end of each period client k transmits with probability p_k, "
                "independently",
      statement=f"without a draw, the implementation's own coins follow the law of independent Bernoulli(p) "
                f"participation once per period (L >= 2), at the user's p and at a second p of the kit's: the four "
                f"outcomes of two clients are tested sequentially (false rejection <= {ALPHA:g} per p, an "
                f"outcome's probability off by {DELTA:g} detected)",
      cases=_participation_case, expensive=True, examples=1)
def own_participation(impl, case, hyper, rtol) -> Outcome:
    """The implementation's own participation: full periods of L = max(2, period) steps from state=None, without
    a draw and without quantization, each period from a fresh start. The model after the period must be one of
    the four outcomes of eqs. (6)-(9) (L local steps, then the subset S of the two clients transmits with the
    1/p aggregate), and the subsets must follow P(S) = p^|S| (1 - p)^(2 - |S|)
    (:func:`fedtheory.conformance.sequential.categorical_sprt`, one sequential test per outcome at level
    1e-6 / 4). This catches one coin shared by all clients, a coin drawn at every step (p^L per period), and, at
    the kit's :func:`second_p`, coins that do not use p. One case only: the test controls its own error rate,
    which more cases would multiply."""
    p = float(hyper["p"])
    if not 0.0 < p < 1.0:
        return not_applicable(f"p = {p:g}: every client transmits (FedOGD), there is no participation law")
    inst = instance_of(case)
    rng = np.random.default_rng(case["draw_seed"])
    subsets = list(itertools.product((False, True), repeat=inst.n))
    out = None
    for q in (p, second_p(p)):
        hq = dict(hyper, p=q, period=max(2, int(hyper["period"])), s=None)
        h = dict(round_hyper(hq, inst), period=hq["period"], s=None)
        outcomes = _period_outcomes(inst, hq, subsets)
        probs = [float(np.prod([q if c else 1.0 - q for c in S])) for S in subsets]
        scale = scale_of(inst, inst.x0, *outcomes)
        if min(np.linalg.norm(outcomes[i] - outcomes[j]) for i in range(len(subsets)) for j in range(i)) \
                <= 1e3 * rtol * scale:
            return not_applicable("two participation outcomes give the same model: the model does not name them")
        off = [0.0]

        def draw_outcome() -> int:
            got, state = inst.x0, None
            for _t in range(h["period"]):
                got, state = run_round(impl, inst, got, np.arange(inst.n), h, state, seed=int(rng.integers(2**31)))
            dist = np.linalg.norm(outcomes - got, axis=1) / scale
            off[0] = max(off[0], float(dist.min()))
            return int(np.argmin(dist))

        test = categorical_sprt(draw_outcome, probs)
        which = "" if q == p else " (the kit's second p)"
        where = f"p = {q:g}{which}, L = {h['period']}"
        if off[0] > rtol:
            return outcome(False, off[0], rtol, f"{where}: a returned model is none of the participation outcomes "
                                                "of eqs. (6)-(9) (are the coins drawn once per period, and the "
                                                "sampled 1/p aggregate used?)")
        worst = test.worst
        out = outcome(not test.rejected, max(test.log_lr[worst]), test.threshold, "" if not test.rejected else
                      f"{where}: clients {[c.cid for c, on in zip(inst.clients, subsets[worst]) if on]} transmitted "
                      f"together in {test.counts[worst]} of {test.samples} periods "
                      f"({test.counts[worst] / test.samples:.3f}) where independent Bernoulli({q:g}) coins give "
                      f"{probs[worst]:.3f}")
        if test.rejected:
            return out
        out = _serial(impl, inst, h, hq, subsets, outcomes, scale, rng, rtol, q, where)
        if out.status != "holds":
            return out
    return out


def _serial(impl, inst, h, hq, subsets, outcomes, scale, rng, rtol, q, where) -> Outcome:
    """Two consecutive periods from state=None, the second from the state the implementation returned: S_t must
    be independent across t (Section 2.1), so each client's coin repeats from one period to the next with
    probability r = q^2 + (1 - q)^2, independently across clients. The repeat indicators of the clients, two per
    pair of periods, are tested sequentially against Bernoulli(r) (level 1e-6; a repeat probability off by
    :data:`SERIAL_DELTA` detected). Coins with the right marginal law that depend on the previous period (a coin
    that repeats the last one, a credit counter) are caught here and nowhere else."""
    following = [_period_outcomes(inst, hq, subsets, w0=w) for w in outcomes]
    r = q * q + (1.0 - q) ** 2
    off = [0.0]
    pending: list[bool] = []

    def nearest(candidates, got) -> int:
        dist = np.linalg.norm(candidates - got, axis=1) / scale
        off[0] = max(off[0], float(dist.min()))
        return int(np.argmin(dist))

    def repeated() -> bool:
        # one pair of periods gives one indicator per client; they are handed to the test one at a time
        if not pending:
            got, state = inst.x0, None
            first = 0
            for t in range(2 * h["period"]):
                got, state = run_round(impl, inst, got, np.arange(inst.n), h, state, seed=int(rng.integers(2**31)))
                if t + 1 == h["period"]:
                    first = nearest(outcomes, got)
            second = nearest(following[first], got)
            pending.extend(a == b for a, b in zip(subsets[first], subsets[second]))
        return pending.pop(0)

    test = bernoulli_sprt(repeated, r, delta=min(SERIAL_DELTA, (1.0 - r) / 2))
    if off[0] > rtol:
        return outcome(False, off[0], rtol, f"{where}: a model after the second period is none of the participation "
                                            "outcomes of eqs. (6)-(9) from the first period's model (does the "
                                            "second period restart from the new global model?)")
    llr = max(test.log_lr)
    return outcome(not test.rejected, llr, test.threshold, "" if not test.rejected else
                   f"{where}: a client's coin repeated from one period to the next {test.events} times in "
                   f"{test.samples} ({test.frequency:.3f}) where coins independent across periods give {r:.3f}: "
                   f"the coins depend on the previous period")


#: The error in the probability that a coin repeats from one period to the next that the serial test detects.
SERIAL_DELTA = 0.1


@prop(id="ofediq.quantizer", family="ofediq",
      reference="Kwon, Park & Hong, Definition 2, eq. (12)",
      statement="E over the 2^D rounding outcomes = the unquantized step",
      cases=lambda h: _cases(h, max_clients=1, max_dim=6))
def quantizer(impl, case, hyper, rtol) -> Outcome:
    """One client, L = 1, p = 1: the exact expectation over the 2^D rounding outcomes of the (s, b)-quantizer
    (the kit's uniforms pick each branch; probabilities s r_i - m_i) equals the unquantized step: Q is unbiased
    (Definition 2)."""
    if hyper.get("s") is None:
        return not_applicable("no quantization (s = None)")
    inst = instance_of(dict(case, n=1, sizes=case["sizes"][:1], delta_frac=0.0, zeta2=0.0,
                            ids=case.get("ids", [0])[:1]))
    if inst.d > 6:
        return outcome(True, float("nan"), rtol)  # 2^D outcomes: small D only (the cases draw D <= 6)
    s, b = int(hyper["s"]), int(hyper.get("b") or 1)
    h = dict(round_hyper(hyper, inst), period=1, p=1.0)
    g = (inst.A[0] @ inst.x0 - inst.b[0])
    blocks = np.array_split(np.arange(inst.d), b)
    r = np.empty(inst.d)
    for block in blocks:
        nrm = np.linalg.norm(g[block])
        r[block] = np.abs(g[block]) / nrm if nrm > 0 else 0.0
    m = np.minimum(np.floor(s * r), s - 1)
    up_prob = s * r - m
    mean = np.zeros(inst.d)
    for ups in itertools.product((False, True), repeat=inst.d):
        prob = float(np.prod([q if u else 1 - q for q, u in zip(up_prob, ups)]))
        if prob == 0.0:
            continue
        U = np.where(np.array(ups), 0.0, np.nextafter(1.0, 0.0))[None]  # 0 rounds up, ~1 rounds down
        got, _ = run_round(impl, inst, inst.x0, np.arange(1), dict(h, draw=_draw_arg(inst, np.array([True]), U)), None)
        mean += prob * got
    want = inst.x0 - hyper["eta"] * g
    err = float(np.linalg.norm(mean - want)) / scale_of(inst, inst.x0, want)
    return outcome(err <= rtol, err, rtol, "" if err <= rtol else "the quantizer is biased: E Q(u) != u")


def _rounding_probs(g: np.ndarray, s: int) -> np.ndarray:
    """P(round coordinate i up) = s r_i - m_i of the (s, 1)-quantizer (one block), r = |g| / ||g||."""
    r = np.abs(g) / np.linalg.norm(g)
    return s * r - np.minimum(np.floor(s * r), s - 1)


def _client_grads(inst) -> np.ndarray:
    return np.einsum("nij,j->ni", inst.A, inst.x0) - inst.b


def _rounding_case(hyper: Mapping[str, Any]) -> st.SearchStrategy:
    """One fixed instance: two clients (ids 12 and 17, not list positions) in two dimensions whose four rounding
    probabilities are all in [0.2, 0.8] and whose gradient norms differ by 10% or more (the first seed that gives
    this at the declared s), so every one of the 16 joint outcomes has probability >= 0.0016 and names one
    rounding of each coordinate of each client."""
    L = min(5.0, 1.0 / hyper["eta"])
    base = {"n": 2, "d": 2, "mu": min(0.5, L), "L": L, "delta_frac": 0.5, "zeta2": 1.0, "sizes": [4, 6],
            "weighting": "uniform", "ids": [12, 17], "draw_seed": 0}
    for seed in range(500):
        case = dict(base, seed=seed)
        G = _client_grads(instance_of(case))
        probs = np.concatenate([_rounding_probs(g, int(hyper.get("s") or 1)) for g in G])
        norms = np.linalg.norm(G, axis=1)
        if np.all((probs >= 0.2) & (probs <= 0.8)) and abs(norms[0] - norms[1]) >= 0.1 * norms.max():
            return st.just(case)
    return st.just(dict(base, seed=0))  # s = 1 or None: the property reports not applicable


@prop(id="ofediq.own_rounding", family="ofediq",
      reference="Kwon, Park & Hong, Definition 2: coordinate i rounds up with probability s r_i - m_i",
      statement=f"without a draw, the implementation's own quantizer rounds each coordinate of each client up "
                f"independently with probability s r_i - m_i: the 16 outcomes of two clients' two-dimensional "
                f"updates are tested sequentially "
                f"(false rejection <= {ALPHA:g}, an outcome's probability off by {DELTA:g} detected)",
      cases=_rounding_case, expensive=True, examples=1)
def own_rounding(impl, case, hyper, rtol) -> Outcome:
    """The implementation's own rounding: two clients, L = 1, p = 1, one block (b = 1), without a draw. The model
    returned is w - (eta / 2) sum_k Q(g_k) with Q(g_k)_i = ||g_k|| sign(g_ki) (m_ki + up_ki) / s; each must be one
    of the 16 outcomes of the four up_ki, and the outcomes must follow the product law of independent
    Bernoulli(s r_ki - m_ki) (:func:`fedtheory.conformance.sequential.categorical_sprt`, level 1e-6 in all): a
    biased rounding, and uniforms shared by the clients or the coordinates, are rejected. One case only."""
    if hyper.get("s") is None:
        return not_applicable("no quantization (s = None)")
    s = int(hyper["s"])
    inst = instance_of(case)
    G = _client_grads(inst)
    up_prob = np.stack([_rounding_probs(g, s) for g in G])
    if not np.all((up_prob >= 0.2) & (up_prob <= 0.8)):
        return not_applicable(f"s = {s}: no two-client update with all rounding probabilities in [0.2, 0.8]")
    h = dict(round_hyper(hyper, inst), period=1, p=1.0, b=1)
    nrm = np.linalg.norm(G, axis=1, keepdims=True)
    m = np.minimum(np.floor(s * np.abs(G) / nrm), s - 1)
    outcomes_up = [np.array(up).reshape(inst.n, inst.d)
                   for up in itertools.product((False, True), repeat=inst.n * inst.d)]
    outcomes = np.stack([inst.x0 - hyper["eta"] * (nrm * np.sign(G) * (m + up) / s).mean(axis=0)
                         for up in outcomes_up])
    probs = [float(np.prod(np.where(up, up_prob, 1.0 - up_prob))) for up in outcomes_up]
    scale = scale_of(inst, inst.x0, *outcomes)
    if min(np.linalg.norm(outcomes[i] - outcomes[j]) for i in range(len(outcomes)) for j in range(i)) \
            <= 1e3 * rtol * scale:
        return not_applicable("two rounding outcomes give the same model: the model does not name them")
    rng = np.random.default_rng(case["draw_seed"])
    off = [0.0]

    def draw_outcome() -> int:
        got, _ = run_round(impl, inst, inst.x0, np.arange(inst.n), h, None, seed=int(rng.integers(2**31)))
        dist = np.linalg.norm(outcomes - got, axis=1) / scale
        off[0] = max(off[0], float(dist.min()))
        return int(np.argmin(dist))

    test = categorical_sprt(draw_outcome, probs)
    if off[0] > rtol:
        return outcome(False, off[0], rtol, "a returned model is none of the 16 rounding outcomes of Definition 2 "
                                            "(is the update quantized, with m_i = min(floor(s r_i), s - 1)?)")
    worst = test.worst
    ups = {c.cid: ["up" if u else "down" for u in outcomes_up[worst][k]] for k, c in enumerate(inst.clients)}
    return outcome(not test.rejected, max(test.log_lr[worst]), test.threshold, "" if not test.rejected else
                   f"rounding {ups} came {test.counts[worst]} times in {test.samples} steps "
                   f"({test.counts[worst] / test.samples:.3f}) where independent roundings (Definition 2) give "
                   f"{probs[worst]:.4f}")
