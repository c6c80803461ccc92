"""The server-optimizer family's properties (Reddi et al. 2021, "Adaptive Federated Optimization", Alg. 2):
the first round, one round from a given server state, and several rounds from the implementation's own state.

One family covers the four optimizers; the ``optimizer`` hyperparameter picks one ("fedadam", "fedyogi",
"fedadagrad" or "fedavgm"): they share the clients' side, the pseudo-gradient and the state's layout, and
differ only in the update of :mod:`fedtheory.conformance.families.server_optimizer.expected`.

Hyperparameters left ``None`` (the default for ``server_step`` = eta, ``beta1``, ``beta2`` and ``tau``) are
drawn per case: beta1 and beta2 in [0, 1) as Alg. 2 allows (half the time the paper's experimental values
beta1 = 0.9, beta2 = 0.99), eta log-uniform in [1e-3, 10^0.5] and tau log-uniform in [1e-7, 1e-1]. A number
fixes it (an implementation whose constructor has no beta1, say). ``initial_v`` is v_{-1}: Alg. 2 asks
v_{-1} >= tau^2; the default 0 is what implementations do (the difference, tau^2 against Delta^2, is
invisible for small tau), and "tau^2" asks for the paper's smallest admissible value.

The state an implementation returns is opaque unless it is a mapping with "m" (and "v" for the adaptive
optimizers); then the kit compares it too and can start a round from a given state. Identity tolerances are
relative to the iterate scale (x) and to the state's natural scale (max ||Delta_t||, its square for v): the
adaptive step divides by sqrt(v) + tau, which keeps rounding at the relative level of Delta itself.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from hypothesis import strategies as st

from ... import expected as ex
from ... import sampling
from ...instance import Instance
from ...kit import (
    Outcome,
    cases_with,
    instance_of,
    not_applicable,
    outcome,
    relative_error,
    round_hyper,
    run_round,
    scale_of,
)
from ...statekit import opaque_reason
from ...weights import describe as describe_weights
from ..registry import prop
from .expected import OPTIMIZERS, initial_state, operators, pseudo_gradient, server_step

__all__ = ["HYPER", "ROUNDS", "resolve"]

HYPER: Mapping[str, Any] = {"optimizer": "fedadam", "local_steps": 5, "local_step": 0.1, "server_step": None,
                            "beta1": None, "beta2": None, "tau": None, "initial_v": 0.0, "weighting": "uniform"}
REDDI = "Reddi et al. 2021, Alg. 2"
#: Rounds of the multi-round property.
ROUNDS = 6
_DRAWN = ("server_step", "beta1", "beta2", "tau")


def _beta(paper: float, hi: float):
    return st.one_of(st.just(paper), st.floats(0.0, hi))


def _draws(draw, params: dict) -> dict:
    return {"server_step": 10.0 ** draw(st.floats(-3.0, 0.5)), "beta1": draw(_beta(0.9, 0.99)),
            "beta2": draw(_beta(0.99, 0.999)), "tau": 10.0 ** draw(st.floats(-7.0, -1.0)),
            "round_seed": draw(st.integers(0, 2**16))}


def _cases(hyper: Mapping[str, Any], **kw: Any):
    if hyper["optimizer"] not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, got {hyper['optimizer']!r}")
    v0 = hyper["initial_v"]
    if not (v0 == "tau^2" or (isinstance(v0, (int, float)) and v0 >= 0)):
        raise ValueError(f"initial_v must be a number >= 0 or 'tau^2', got {v0!r}")
    for name in ("beta1", "beta2"):
        if hyper[name] is not None and not 0.0 <= hyper[name] < 1.0:
            raise ValueError(f"{name} must be in [0, 1) or None (drawn), got {hyper[name]!r}")
    for name in ("server_step", "tau"):
        if hyper[name] is not None and not hyper[name] > 0:
            raise ValueError(f"{name} must be > 0 or None (drawn), got {hyper[name]!r}")
    return cases_with(_draws)(hyper, **kw)


def resolve(hyper: Mapping[str, Any], case: Mapping[str, Any]) -> dict:
    """The hyperparameters of a case: the user's, with each ``None`` replaced by the case's draw."""
    out = {**hyper, **{k: case[k] for k in _DRAWN if hyper.get(k) is None}}
    if out["initial_v"] == "tau^2":
        out["initial_v"] = out["tau"] ** 2
    return out


def _keys(hyper: Mapping[str, Any]) -> tuple[str, ...]:
    return ("m",) if hyper["optimizer"] == "fedavgm" else ("m", "v")


def _participants(rng: np.random.Generator, n: int, t: int) -> np.ndarray:
    """Everyone in the first round, then a random non-empty subset."""
    return np.arange(n) if t == 0 else np.sort(rng.choice(n, size=rng.integers(1, n + 1), replace=False))


# ----------------------------------------------------------------- diagnosis

def _bias_corrected(x, step, h, t):
    """Kingma & Ba's bias correction with step count t: eta sqrt(1 - beta2^t) / (1 - beta1^t)."""
    return x + step * np.sqrt(1.0 - h["beta2"] ** t) / (1.0 - h["beta1"] ** t)


def _alternatives(inst: Instance, N, x, state, S, h, t: int | None) -> list[tuple[str, np.ndarray]]:
    """Readings of round t (1-based; None from a given state) that the kit can name: (diagnosis, x_new)."""
    delta = pseudo_gradient(inst, N, x, S, h["weighting"])
    want, new = server_step(x, state, delta, h)
    other = "num_examples" if h["weighting"] == "uniform" else "uniform"
    given = t is None
    alts = [] if not given else [("the given state is ignored (the round starts from m = 0, v = initial_v)",
                                      server_step(x, initial_state(inst.d, h), delta, h)[0])]
    sizes = [int(m) for m in inst.sizes[S]]
    alts += [(f"pseudo-gradient weighted uniformly (1/n each; num_examples {sizes})" if other == "uniform" else
              f"pseudo-gradient weighted by num_examples {sizes} instead of uniformly",
              server_step(x, state, pseudo_gradient(inst, N, x, S, other), h)[0]),
            ("pseudo-gradient with the wrong sign (x - mean of client models)", server_step(x, state, -delta, h)[0]),
            ("server step applied twice", server_step(x, state, delta, dict(h, server_step=2 * h["server_step"]))[0])]
    if h["optimizer"] == "fedavgm":
        alts.append(("momentum as a moving average (1 - beta1) Delta", x + h["server_step"] * (
            h["beta1"] * np.asarray(state["m"]) + (1 - h["beta1"]) * delta)))
        return alts
    step = want - x
    counts = [(k, "") for k in (1, 2, 3)] if given else [(t, " (Kingma & Ba; the paper has none)"),
                                                        (t + 1, " (one ahead of the rounds)")]
    alts += [(f"bias correction with step count t = {k}{note}", _bias_corrected(x, step, h, k)) for k, note in counts]
    if h["optimizer"] == "fedadam":  # torch.optim.Adam, optax.adam: tau added to the bias-corrected sqrt(v)
        alts += [(f"Adam of Kingma & Ba with step count t = {k}: m/(1 - beta1^t) / (sqrt(v/(1 - beta2^t)) + tau)",
                  x + h["server_step"] * new["m"] / (1 - h["beta1"] ** k)
                  / (np.sqrt(new["v"] / (1 - h["beta2"] ** k)) + h["tau"])) for k, _ in counts]
    alts += [("tau inside the square root: sqrt(v + tau)",
              x + h["server_step"] * new["m"] / np.sqrt(new["v"] + h["tau"])),
             ("first moment without the (1 - beta1) factor",
              x + h["server_step"] * (h["beta1"] * np.asarray(state["m"]) + delta) / (np.sqrt(new["v"]) + h["tau"]))]
    if t == 1 and not given:
        v0 = 0.0 if h["initial_v"] else h["tau"] ** 2
        alts.append((f"v_(-1) = {v0:.3g} instead of initial_v = {h['initial_v']:.3g}",
                     server_step(x, initial_state(inst.d, dict(h, initial_v=v0)), delta, h)[0]))
    return alts


def _diagnose(inst, N, x, got, state, S, h, t, rtol) -> str:
    for name, alt in _alternatives(inst, N, x, state, S, h, t):
        if relative_error(got, alt, scale_of(inst, x, alt)) <= rtol:
            return name
    if h["optimizer"] == "fedavgm":  # linear in Delta: the weights of the clients' deltas can be measured
        deltas = np.einsum("nij,nj->ni", N[S], inst.b[S] - np.einsum("nij,j->ni", inst.A[S], x))
        measured = (got - x) / h["server_step"] - h["beta1"] * np.asarray(state["m"])
        said = describe_weights(deltas, measured, inst.sizes[S], ex.aggregation_weights(inst, S, h["weighting"]),
                                rtol, weights_only=True)
        if said:
            return f"pseudo-gradient: {said}"
    want, _ = server_step(x, state, pseudo_gradient(inst, N, x, S, h["weighting"]), h)
    return f"the server update differs from Alg. 2 by {relative_error(got, want, scale_of(inst, x, want)):.3g} relative"


# ----------------------------------------------------------------- properties

@prop(id="server_optimizer.first_round", family="server_optimizer", core=True, reference=f"{REDDI} (first round, m_-1 = 0)",
      statement="the first round from no state is x + eta m_0/(sqrt(v_0) + tau) (FedAvgM: x + eta Delta_0), "
                "Delta_0 the clients' weighted mean delta in closed form", cases=_cases)
def first_round(impl, case, hyper, rtol) -> Outcome:
    inst, h = instance_of(case), resolve(hyper, case)
    S, N = np.arange(inst.n), operators(inst, h)
    state = initial_state(inst.d, h)
    want, _ = server_step(inst.x0, state, pseudo_gradient(inst, N, inst.x0, S, h["weighting"]), h)
    got, _ = run_round(impl, inst, inst.x0, S, round_hyper(h, inst), None, seed=case["round_seed"])
    err = relative_error(got, want, scale_of(inst, inst.x0, want))
    return outcome(err <= rtol, err, rtol, "" if err <= rtol else _diagnose(inst, N, inst.x0, got, state, S, h, 1, rtol))


def _state_probe(impl, inst, h, case) -> str:
    _, state = run_round(impl, inst, inst.x0, np.arange(inst.n), round_hyper(h, inst), None, seed=case["round_seed"])
    return opaque_reason(state, _keys(h))


@prop(id="server_optimizer.from_state", family="server_optimizer", reference=REDDI,
      statement="one round from a given server state (m, v; Yogi's sign(v - Delta^2) of both signs) equals the "
                "update, and the returned state is (m_t, v_t)", cases=_cases)
def from_state(impl, case, hyper, rtol) -> Outcome:
    inst, h = instance_of(case), resolve(hyper, case)
    why = _state_probe(impl, inst, h, case)
    if why:
        return not_applicable(why)
    rng = np.random.default_rng(case["round_seed"])
    S, N = _participants(rng, inst.n, 1), operators(inst, h)
    delta = pseudo_gradient(inst, N, inst.x0, S, h["weighting"])
    size = max(float(np.abs(delta).max()), 1e-12)
    state = {"m": size * rng.standard_normal(inst.d)}
    if h["optimizer"] != "fedavgm":  # v around Delta^2: half the coordinates above it, half below
        state["v"] = delta ** 2 * np.exp(rng.uniform(-2.0, 2.0, inst.d)) + size ** 2 * 1e-3
    want, want_state = server_step(inst.x0, {"v": np.zeros(inst.d), **state}, delta, h)
    got, got_state = run_round(impl, inst, inst.x0, S, round_hyper(h, inst), dict(state), seed=0)
    err = relative_error(got, want, scale_of(inst, inst.x0, want))
    if err > rtol:
        why = _diagnose(inst, N, inst.x0, got, {"v": np.zeros(inst.d), **state}, S, h, None, rtol)
        if why.startswith("the given state is ignored"):
            why = _ignored(impl, inst, h, S, state, got, rtol)
        return outcome(False, err, rtol, why + " (from a given state)")
    if opaque_reason(got_state, _keys(h)):
        return outcome(False, float("inf"), rtol, "the returned state lost the keys of the given one")
    for k in _keys(h):
        e = relative_error(np.asarray(got_state[k], dtype=np.float64), want_state[k],
                           max(float(np.linalg.norm(want_state[k])), size ** (2 if k == "v" else 1)))
        if e > rtol:
            return outcome(False, e, rtol, f"the returned {k} differs from Alg. 2's {k}_t")
    return outcome(True, err, rtol)


def _ignored(impl, inst, h, S, state, got, rtol) -> str:
    """Whether the output depends on the given state, measured: the same output from another given state (-2 m and
    4 v) confirms "ignored"; otherwise the output matches the reading from the initial state on this state only."""
    other = {k: (-2.0 if k == "m" else 4.0) * np.asarray(v) for k, v in state.items()}
    again, _ = run_round(impl, inst, inst.x0, S, round_hyper(h, inst), other, seed=0)
    moved = relative_error(again, got, scale_of(inst, inst.x0, got))
    if moved <= rtol:
        return ("the given state is ignored: the output is the same from another given state (-2 m, 4 v) and equals "
                "the round from m = 0, v = initial_v")
    return (f"the round from the given state equals the one from m = 0, v = initial_v, yet the output changes by "
            f"{moved:.3g} relative with another given state (-2 m, 4 v): the given state is used, but not as "
            "Alg. 2's m and v")


@prop(id="server_optimizer.multi_round", family="server_optimizer", core=True, reference=REDDI,
      statement=f"{ROUNDS} rounds from the implementation's own state (random participants) equal the recursion "
                "of Alg. 2; a readable state (m, v) equals it too", cases=_cases)
def multi_round(impl, case, hyper, rtol) -> Outcome:
    inst, h = instance_of(case), resolve(hyper, case)
    rng, N = np.random.default_rng(case["round_seed"]), operators(inst, h)
    x_want = x_got = inst.x0
    want_state, got_state = initial_state(inst.d, h), None
    history, size = [], 0.0
    for t in range(ROUNDS):
        S = _participants(rng, inst.n, t)
        history.append(S.tolist())
        delta = pseudo_gradient(inst, N, x_want, S, h["weighting"])
        size = max(size, float(np.linalg.norm(delta)))
        x_prev, prev_state = x_want, want_state
        x_want, want_state = server_step(x_want, want_state, delta, h)
        reset_want, _ = server_step(x_prev, initial_state(inst.d, h), delta, h)
        x_got, got_state = run_round(impl, inst, x_got, S, round_hyper(h, inst), got_state, seed=t)
        err = relative_error(x_got, x_want, scale_of(inst, inst.x0, x_want))
        where = f"after round {t + 1} of {ROUNDS} (participants {history})"
        if err > rtol:
            if t > 0 and relative_error(x_got, reset_want, scale_of(inst, x_prev, reset_want)) <= rtol:
                why = "the server state is reset every round (m, v forgotten)"
            else:
                why = _diagnose(inst, N, x_prev, x_got, prev_state, S, h, t + 1, rtol)
            return outcome(False, err, rtol, f"model {where}: {why}"
                           + (" (earlier rounds match: a state-carried slip)" if t > 0 else ""))
        if not opaque_reason(got_state, _keys(h)):
            for k in _keys(h):
                e = relative_error(np.asarray(got_state[k], dtype=np.float64), want_state[k],
                                   max(float(np.linalg.norm(want_state[k])), size ** (2 if k == "v" else 1)))
                if e > rtol:
                    return outcome(False, e, rtol, f"state {k} {where} differs from Alg. 2's {k}_t")
    return outcome(True, err, rtol)


def _population(hyper: Mapping[str, Any]):
    """A heterogeneous population of 4..5 clients (so m = 2 clients a round: a sampler that draws with replacement
    shows a client twice, which m = 1 cannot; the clients differ, so a round over other clients than the reported
    ones shows) in small dimension: R <= 150 rounds."""
    return _cases(hyper, min_clients=4, max_clients=5, max_dim=8, heterogeneous=True)


@prop(id="server_optimizer.own_sampler", family="server_optimizer", examples=1, cases=_population,
      reference=f"{REDDI}: S a random subset of m clients",
      statement="its own sampler at clients_per_round = m < N: every round equals Alg. 2's update for the clients it "
                "reports drawn, each draws m distinct clients, each client is drawn in a fraction m/N of the rounds "
                "(z <= 5)")
def own_sampler(impl, case, hyper, rtol) -> Outcome:
    """The implementation's own sampler at partial participation (:mod:`fedtheory.conformance.sampling`): each
    round is Alg. 2's update from the model the implementation returned and the kit's (m, v), which a readable
    state replaces after the comparison (so one slip is reported once, at its round)."""
    inst, h = instance_of(case), resolve(hyper, case)
    N = operators(inst, h)
    kit = {"state": initial_state(inst.d, h), "size": 0.0}

    def judge(x, state, x_new, state_new, S, _h):
        delta = pseudo_gradient(inst, N, x, S, h["weighting"])
        kit["size"] = max(kit["size"], float(np.linalg.norm(delta)))
        want_x, want_state = server_step(x, kit["state"], delta, h)
        errs = {"model": relative_error(x_new, want_x, scale_of(inst, x, want_x))}
        if not opaque_reason(state_new, _keys(h)):
            for k in _keys(h):
                got = np.asarray(state_new[k], dtype=np.float64)
                errs[f"state {k}"] = relative_error(got, want_state[k], max(float(np.linalg.norm(want_state[k])),
                                                                           kit["size"] ** (2 if k == "v" else 1)))
                want_state = {**want_state, k: got}
        kit["state"] = want_state
        worst = max(errs, key=errs.get)
        return errs[worst], f"{worst} differs from Alg. 2's"
    return sampling.own_sampler(impl, inst, h, rtol, judge, seed=case["round_seed"])

