"""Conformance properties of FedRed, FedRed-GD and FedRed-SGD (Jiang, Rodomanov & Stich 2024, Algs. 2-3).

Contract (docs/conformance.md): ``impl(x, clients, *, state=None, rng=None, **hyper) -> (x, state)`` runs ONE
iteration k from the reference point x~_k = x with ``lam``, ``eta``, ``p``, ``solver`` ("exact" = Alg. 2,
"linearized" = Alg. 3), ``reset`` (x_{i,k+1} <- x~_{k+1} after communicating), ``batch_size`` (None =
FedRed-GD; an integer = FedRed-SGD) and ``weighting``. The state is ``{"x_i": {cid: vector}, "h_i": {cid:
vector}}`` (local iterates and control variates (4)); ``state=None`` means Alg. 2's initialisation x_{i,0} =
x~_0, h_{i,0} from (4) at x~_0.

Draw protocol: the kit passes ``draw={"communicate": bool}`` (the shared coin theta_k) and, for FedRed-SGD,
``draw["batches"] = {cid: row indices}`` (the minibatch of each client). An implementation that takes its own
randomness instead is checked by ``fedred.coin_frequency``, which passes no draw and reads the coin from
whether x~ moved.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from hypothesis import strategies as st

from ...kit import Outcome, cases_with, instance_of, not_applicable, outcome, round_hyper, run_round, scale_of
from ...sequential import ALPHA, DELTA, bernoulli_sprt, categorical_sprt
from ...statekit import make_state, opaque_reason, own_state_reason, relative, rows
from ..dane import expected as ed
from ..registry import prop

__all__ = ["HYPER", "expected_iteration"]

HYPER: Mapping[str, Any] = {"lam": 1.0, "eta": 0.2, "p": 0.5, "solver": "linearized", "reset": True, "batch_size": None,
                            "weighting": "uniform"}
_REF = "Jiang, Rodomanov & Stich 2024, Alg. 2 / Alg. 3 with control variate (4)"
ROUNDS = 8
KEYS = ["x_i", "h_i"]
#: The paper's ranges the kit also draws hyperparameters from (fedtheory.conformance.families.varied_hyper): a
#: slip invisible at the user's values (a server step ignored at 1.0) shows at another.
RANGES: Mapping[str, tuple] = {"lam": (0.1, 3.0), "eta": (0.05, 0.5), "p": (0.1, 0.9)}


def _cases(hyper: Mapping[str, Any]) -> st.SearchStrategy:
    """Alg. 3 is a gradient step of size eta/(1 + lam eta): L <= 1/eta keeps it stable."""
    L_max = 20.0 if hyper.get("solver") == "exact" else min(20.0, 1.0 / hyper["eta"])
    extra = lambda draw, p: {"state_seed": draw(st.integers(0, 2**16)),  # noqa: E731
                             "coins": draw(st.lists(st.booleans(), min_size=ROUNDS, max_size=ROUNDS))}
    return _sized(cases_with(extra)(hyper, L_max=L_max, max_dim=20), hyper)


def _sized(cases: st.SearchStrategy, hyper: Mapping[str, Any]) -> st.SearchStrategy:
    """Minibatches need at least batch_size rows per client: sizes >= max(d, batch_size)."""
    bs = hyper.get("batch_size")
    return cases if bs is None else cases.map(lambda c: dict(c, sizes=[max(s, int(bs)) for s in c["sizes"]]))


def _batches(inst, hyper, seed) -> dict | None:
    bs = hyper.get("batch_size")
    if bs is None:
        return None
    rng = np.random.default_rng(seed)
    return {c.cid: sorted(rng.choice(c.num_examples, size=int(bs), replace=False).tolist()) for c in inst.clients}


def expected_iteration(inst, x_ref, X, H, hyper, communicate: bool, batches=None):
    """(x~+, X+, H+) of one iteration given the coin (and the minibatches)."""
    G = None if batches is None else ed.minibatch_grads(inst, X, batches)
    Xn = ed.fedred_locals(inst, x_ref, X, H, lam=hyper["lam"], eta=hyper["eta"], solver=hyper["solver"], G=G)
    if not communicate:
        return x_ref, Xn, H
    x_new = inst.weights @ Xn
    Hn = ed.control_variates(inst, x_new)
    if hyper.get("reset", True):
        Xn = np.broadcast_to(x_new, Xn.shape).copy()
    return x_new, Xn, Hn


def _given_state(inst, seed):
    """A state x_i = x~ + noise, h_i = (4) at a random point (sum_i w_i h_i = 0 as (4) gives)."""
    rng = np.random.default_rng(seed)
    X = inst.x0[None] + rng.standard_normal((inst.n, inst.d))
    H = ed.control_variates(inst, inst.x0 + rng.standard_normal(inst.d))
    return X, H


def _draw(communicate, batches):
    d = {"communicate": bool(communicate)}
    if batches is not None:
        d["batches"] = batches
    return d


def one_iteration(impl, case, hyper, rtol, communicate: bool) -> Outcome:
    inst = instance_of(case)
    X, H = _given_state(inst, case["state_seed"])
    batches = _batches(inst, hyper, case["state_seed"])
    want = expected_iteration(inst, inst.x0, X, H, hyper, communicate, batches)
    h = dict(round_hyper(hyper, inst), draw=_draw(communicate, batches))
    why = own_state_reason(impl, inst, h, KEYS)
    if why:
        return not_applicable(why)
    got_x, got_state = run_round(impl, inst, inst.x0, np.arange(inst.n), h, make_state(inst, x_i=X, h_i=H))
    why = opaque_reason(got_state, KEYS)
    if why:
        return not_applicable(why)
    scale = scale_of(inst, inst.x0, want[0], *X) + float(np.abs(H).max())
    worst, err = relative({"x~": (got_x, want[0]), "x_i": (rows(got_state, "x_i", inst), want[1]),
                           "h_i": (rows(got_state, "h_i", inst), want[2])}, scale)
    return outcome(err <= rtol, err, rtol, "" if err <= rtol else _diagnose(inst, X, H, hyper, communicate,
                                                                             batches, got_x, got_state, worst, rtol))


@prop(id="fedred.local_iteration", family="fedred",
      reference=f"{_REF}, theta_k = 0",
      statement="x_i+ = Alg. 2's prox solve / Alg. 3's (x_i + lam eta x~ - eta (g_i + h_i))/(1 + lam eta); x~, h_i kept",
      cases=_cases)
def local_iteration(impl, case, hyper, rtol) -> Outcome:
    return one_iteration(impl, case, hyper, rtol, communicate=False)


@prop(id="fedred.communication", family="fedred",
      reference=f"{_REF}, theta_k = 1",
      statement="x~+ = sum_i w_i x_i+, h_i+ = (4) at x~+, x_i+ = x~+ with the reset",
      cases=_cases)
def communication(impl, case, hyper, rtol) -> Outcome:
    return one_iteration(impl, case, hyper, rtol, communicate=True)


def _diagnose(inst, X, H, hyper, communicate, batches, got_x, got_state, worst, rtol) -> str:
    got_X = rows(got_state, "x_i", inst)
    scale = scale_of(inst, inst.x0, *X)
    if worst == "x_i":
        if communicate and not hyper.get("reset", True):
            if np.linalg.norm(got_X - inst.weights @ got_X) <= rtol * scale:
                return "local iterates reset to x~ although reset=False"
        if communicate and hyper.get("reset", True):
            Xn = ed.fedred_locals(inst, inst.x0, X, H, lam=hyper["lam"], eta=hyper["eta"], solver=hyper["solver"],
                                  G=None if batches is None else ed.minibatch_grads(inst, X, batches))
            if np.linalg.norm(got_X - Xn) <= rtol * scale:
                return "no reset of the local iterates after communication"
        _, X2, _ = expected_iteration(inst, inst.x0, X, H, dict(hyper, lam=0.0), communicate, batches)
        if np.linalg.norm(got_X - X2) <= rtol * scale:
            return "lam eta weight missing (x_i+ = x_i - eta (g_i + h_i))"
        _, X3, _ = expected_iteration(inst, inst.x0, X, -H, hyper, communicate, batches)
        if np.linalg.norm(got_X - X3) <= rtol * scale:
            return "control variate with the wrong sign"
        return "the local iterates differ from the paper's update"
    if worst == "h_i":
        if np.linalg.norm(rows(got_state, "h_i", inst) - H) <= rtol * scale:
            return "control variates not refreshed at the new reference point"
        return "the control variates differ from (4) at the new reference point"
    if np.linalg.norm(got_x - inst.x0) <= rtol * scale:
        return "the reference point does not move on a communication"
    if not communicate:
        return "the reference point moves without communication"
    return "the new reference point is not the weighted average of the local iterates"


@prop(id="fedred.fixed_point", family="fedred",
      reference=f"{_REF}: grad F_i(x*) = 0",
      statement="x~ = x_i = x*, h_i = (4) at x* is fixed for both coins",
      cases=_cases)
def fixed_point(impl, case, hyper, rtol) -> Outcome:
    """x~ = x_i = x* with h_i = (4) at x* is fixed under both coins (grad of the local problem is 0 at x*)."""
    inst = instance_of(case)
    why = own_state_reason(impl, inst, dict(round_hyper(hyper, inst), draw=_draw(False, _batches(inst, hyper, 0))),
                           KEYS)
    if why:
        return not_applicable(why)
    state = make_state(inst, x_i=np.tile(inst.x_star, (inst.n, 1)), h_i=ed.control_variates(inst, inst.x_star))
    worst = 0.0
    for coin in (False, True):
        h = dict(round_hyper(hyper, inst), draw=_draw(coin, None))
        if hyper.get("batch_size") is not None:
            # full-batch "minibatches": the fixed point holds for exact gradients only
            h["draw"]["batches"] = {c.cid: list(range(c.num_examples)) for c in inst.clients}
        got, _ = run_round(impl, inst, inst.x_star.copy(), np.arange(inst.n), h, state)
        worst = max(worst, float(np.linalg.norm(got - inst.x_star)) / scale_of(inst, inst.x_star))
    return outcome(worst <= rtol, worst, rtol, "" if worst <= rtol else "x* moves (drift not corrected)")


@prop(id="fedred.multi_round", family="fedred", core=True,
      reference=f"{_REF}; sum_i w_i h_i = 0 by (4)",
      statement=f"{ROUNDS} iterations from the implementation's own state equal the closed-form recursion",
      cases=_cases)
def multi_round(impl, case, hyper, rtol) -> Outcome:
    """R = 8 iterations from Alg. 2's initialisation (state=None), each from the state the implementation
    returned, with the kit's coins: x~ every iteration against the closed-form recursion; with a readable
    state also x_i, h_i and the invariant sum_i w_i h_i = 0 of (4)."""
    inst = instance_of(case)
    x_want = x_got = inst.x0
    X, H = np.tile(inst.x0, (inst.n, 1)), ed.control_variates(inst, inst.x0)
    state = None
    h = round_hyper(hyper, inst)
    err = 0.0
    for k, coin in enumerate(case["coins"]):
        batches = _batches(inst, hyper, case["state_seed"] + k)
        x_want, X, H = expected_iteration(inst, x_want, X, H, hyper, coin, batches)
        x_got, state = run_round(impl, inst, x_got, np.arange(inst.n), dict(h, draw=_draw(coin, batches)), state, seed=k)
        scale = scale_of(inst, inst.x0, x_want, *X) + float(np.abs(H).max())
        pairs = {"x~": (x_got, x_want)}
        if not opaque_reason(state, KEYS):
            pairs.update({"x_i": (rows(state, "x_i", inst), X), "h_i": (rows(state, "h_i", inst), H),
                          "sum_i w_i h_i": (inst.weights @ rows(state, "h_i", inst), np.zeros(inst.d))})
        worst, err = relative(pairs, scale)
        if err > rtol:
            return outcome(False, err, rtol, f"{worst} after iteration {k + 1} of {ROUNDS} (coins "
                           f"{''.join('1' if c else '0' for c in case['coins'][:k + 1])}) differs from the recursion"
                           + (" (earlier iterations match: a state-carried slip)" if k > 0 else ""))
    return outcome(True, err, rtol)


def _coin_cases(hyper):
    """Coin frequency on problems with n >= 2 clients and distinct local models (x~ moves when communicating)."""
    return _sized(cases_with(lambda draw, p: {"state_seed": draw(st.integers(0, 2**16))})(
        hyper, L_max=min(20.0, 1.0 / hyper["eta"]), min_clients=2, max_clients=3, max_dim=4, heterogeneous=True), hyper)


#: Iterations of the coin test chained from the implementation's own state before a restart from state=None.
COIN_CHAIN = 8


def second_p(p: float) -> float:
    """The kit's own second coin probability, far from the user's p and from 1/2: a coin that ignores p (a
    constant 1/2) or inverts it (1 - p) is right at p = 1/2 and wrong here."""
    return 0.25 if p >= 0.5 else 0.75


@prop(id="fedred.coin_frequency", family="fedred",
      reference=f"{_REF}: theta_k ~ Bernoulli(p)",
      statement=f"the implementation's own coin is Bernoulli(p), at the user's p and at a second p of the kit's "
                f"(0.25 or 0.75): a sequential test detects |p' - p| >= {DELTA:g} with power 0.95 and rejects a "
                f"right coin with probability <= {ALPHA:g} at each; and consecutive coins are independent (the four "
                f"values of two consecutive coins tested sequentially, false rejection <= {ALPHA:g} at each p)",
      cases=_coin_cases, expensive=True, examples=1)
def coin_frequency(impl, case, hyper, rtol) -> Outcome:
    """The implementation's own coin: iterations without a draw, in chains of 8 from Alg. 2's initialisation
    (state=None, x~_0 = x0 != x*) each from the state the implementation returned; each call's event is "x~
    moved by more than rtol". The paper's coins are independent of the history, so the events are i.i.d.
    Bernoulli(p) along a chain too, and a coin that depends on the history is caught. The events are tested against Bernoulli(p) by
    :func:`fedtheory.conformance.sequential.bernoulli_sprt` (false rejection <= 1e-6 exactly, power >= 0.95 at
    |p' - p| >= 0.03 for p in [0.1, 0.9], measured; 1,200-3,200 calls for a right coin on average, at most
    16,000), at the user's p and at :func:`second_p` (a coin whose law is right at one p only is wrong). The
    frequency alone does not see a coin with the right frequency that depends on the history (a deterministic
    credit counter communicating every 1/p iterations; a coin that repeats the previous one with some
    probability), so at each p the coins are then also read two at a time, (theta_1, theta_2), (theta_3,
    theta_4), ... of each chain, and the four values are tested against the law of two independent coins by
    :func:`fedtheory.conformance.sequential.categorical_sprt` (level 1e-6, a pair's probability off by 0.03
    detected with power >= 0.95, measured in tests/conformance/test_sequential.py; at most 16,000 pairs). One
    case only: the tests control their own error rates, which more cases would multiply (four tests: <= 4e-6)."""
    p = float(hyper["p"])
    if not DELTA < p < 1.0 - DELTA:
        return not_applicable(f"p = {p:g}: the coin test needs p in ({DELTA:g}, {1 - DELTA:g}) (p = 1: every "
                              f"iteration communicates)")
    inst = instance_of(case)
    rng = np.random.default_rng(case["state_seed"])
    scale = scale_of(inst, inst.x0)
    out = None
    for q in (p, second_p(p)):
        h = dict(round_hyper(hyper, inst), p=q)
        chain = {"x": inst.x0, "state": None, "left": 0}

        def communicates() -> bool:
            # chains of COIN_CHAIN iterations, each from the state the implementation returned, then a restart
            # from state=None: a coin that depends on the history (a cap on the iterations without
            # communication) shows, while x~ stays far enough from x* to tell a move from rounding
            if chain["left"] == 0:
                chain.update(x=inst.x0, state=None, left=COIN_CHAIN)
            x_new, chain["state"] = run_round(impl, inst, chain["x"], np.arange(inst.n), h, chain["state"],
                                              seed=int(rng.integers(2**31)))
            # moved beyond the tolerance (a float32 implementation returns x~ rounded when it does not communicate)
            moved = bool(np.linalg.norm(x_new - chain["x"]) > rtol * scale)
            chain.update(x=x_new, left=chain["left"] - 1)
            return moved

        which = "" if q == p else ", the kit's second p"
        test = bernoulli_sprt(communicates, q)
        llr = max(test.log_lr)
        out = outcome(not test.rejected, llr, test.threshold, "" if not test.rejected else
                      f"communicated {test.events} times in {test.samples} iterations (frequency "
                      f"{test.frequency:.4f}, p = {q:g}{which}): "
                      f"log-likelihood ratio {llr:.1f} >= {test.threshold:.1f}")
        if test.rejected:
            return out
        # the coins two at a time, (theta_1, theta_2), (theta_3, theta_4), ... of each chain: independent coins
        # give the four pairs with probabilities (1-p)^2, (1-p) p, p (1-p), p^2; a coin with the right frequency
        # that depends on the history (a deterministic credit counter, a coin that repeats the last one) does not
        chain.update(left=0)
        pairs = categorical_sprt(lambda: 2 * communicates() + communicates(), pair_probs(q))
        worst = pairs.worst
        out = outcome(not pairs.rejected, max(pairs.log_lr[worst]), pairs.threshold, "" if not pairs.rejected else
                      f"consecutive coins {PAIRS[worst]} came {pairs.counts[worst]} times in {pairs.samples} pairs "
                      f"({pairs.counts[worst] / pairs.samples:.3f}, p = {q:g}{which}) where independent coins give "
                      f"{pair_probs(q)[worst]:.3f}: the coin depends on the history")
        if pairs.rejected:
            return out
    return out


#: The four values of two consecutive coins, in the order of :func:`pair_probs`.
PAIRS = ("(0, 0)", "(0, 1)", "(1, 0)", "(1, 1)")


def pair_probs(p: float) -> list[float]:
    """P(theta_k, theta_{k+1}) of two independent Bernoulli(p) coins, in the order of :data:`PAIRS`."""
    return [(1.0 - p) ** 2, (1.0 - p) * p, p * (1.0 - p), p * p]
