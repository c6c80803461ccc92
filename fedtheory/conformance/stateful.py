"""The properties SCAFFOLD, FedDyn and Scaffnew share: convergence, one round from a given state, the fixed point
with the right control variates, the server-state invariant and R rounds from the implementation's own state.

Each takes the family ("scaffold", "feddyn" or "scaffnew"); the families' packages declare them with their
papers (Karimireddy et al. 2020, Alg. 1; Acar et al. 2021, Alg. 1; Mishchenko et al. 2022, Alg. 2). The state
layouts are :data:`fedtheory.conformance.contract.STATE_KEYS`; the expected sides are
:mod:`fedtheory.conformance.expected` and :mod:`fedtheory.conformance.expected_stateful`.

Multi-round: round 1 starts from ``state=None`` (the papers' zero initialisation: c = c_i = 0, h = g_i = 0,
h_i = 0) with a strict subset of the clients (SCAFFOLD, FedDyn), so some join later from that initial state;
every later round is called with the state the implementation returned, while the kit advances the
closed-form recursion with the same participants (and Scaffnew's local-step counts). The model is compared
every round, so a slip carried in the state (a control variate not stored, stored for the wrong client, updated
from a stale value) is caught even when the state is opaque; a readable state is compared too, with the
server-state invariant of each paper after every round.
"""
from __future__ import annotations

import copy
from typing import Any, Mapping

import numpy as np
from hypothesis import strategies as st

from . import expected as ex
from . import expected_stateful as es
from . import sampling
from .contract import STATE_KEYS
from .kit import Outcome, cases_with, identity, instance_of, not_applicable, outcome, round_hyper, run_round, scale_of
from .statekit import opaque_reason, relative, rows_or_initial
from .tolerances import CONVERGED_REL

__all__ = ["ROUNDS", "stateful_cases", "converges", "one_round", "fixed_point", "server_state", "multi_round",
           "own_sampler"]

#: Rounds of the multi-round property.
ROUNDS = 6


def stateful_cases(hyper: Mapping[str, Any], family: str) -> st.SearchStrategy:
    """Heterogeneous, well-conditioned problems scaled to the step sizes so that a correct method converges
    in a few hundred rounds (SCAFFOLD: K eta_l L <= 1/2; FedDyn: L ~ alpha; Scaffnew: gamma L <= 1)."""
    if family == "scaffold":
        L_max = 0.5 / (hyper["local_steps"] * hyper["local_step"])
    elif family == "feddyn":
        L_max = 2.0 * hyper["alpha"]
    else:
        L_max = 1.0 / hyper["step"]
    return cases_with(lambda draw, p: {"round_seed": draw(st.integers(0, 2**16))})(
        hyper, L_max=L_max, kappa_max=4.0, min_clients=2, max_dim=12, heterogeneous=True)


def _hyper_of_round(family, hyper, rng) -> dict:
    if family == "scaffnew":  # the coin flips of ProxSkip: local steps until communication ~ Geometric(p)
        return dict(hyper, local_steps=int(rng.geometric(hyper["p"])))
    return dict(hyper)


def _run(impl, inst, hyper, family, rounds, *, x=None, state=None, partial=False, seed=0, stop_at=None):
    rng = np.random.default_rng(seed)
    x = inst.x0 if x is None else x
    for t in range(rounds):
        S = np.sort(rng.choice(inst.n, size=rng.integers(1, inst.n + 1), replace=False)) if partial \
            else np.arange(inst.n)
        x, state = run_round(impl, inst, x, S, _hyper_of_round(family, round_hyper(hyper, inst), rng), state, seed=t)
        if not np.all(np.isfinite(x)):
            break
        if stop_at is not None and np.linalg.norm(x - inst.x_star) <= stop_at:
            break
    return x, state


def converges(impl, case, hyper, rtol, family: str) -> Outcome:
    inst = instance_of(case)
    d0 = float(np.linalg.norm(inst.x0 - inst.x_star))
    tol = CONVERGED_REL * d0
    x, _ = _run(impl, inst, hyper, family, 600, seed=case["round_seed"], stop_at=tol / 10)
    err = float(np.linalg.norm(x - inst.x_star)) / d0 if np.all(np.isfinite(x)) else float("inf")
    note = "" if err <= CONVERGED_REL else ("diverges" if not np.isfinite(err) or err > 1 else
                                   "stalls away from x* (client drift not corrected)")
    return outcome(err <= CONVERGED_REL, err, CONVERGED_REL, note)


def _state_layout(state, family) -> str:
    server_key, client_key = STATE_KEYS[family]
    if not isinstance(state, Mapping) or client_key not in state or (server_key and server_key not in state):
        keys = f'"{server_key}" and "{client_key}"' if server_key else f'"{client_key}"'
        return f"state is opaque (a mapping with {keys} makes this property applicable)"
    return ""


def _probe(impl, inst, hyper, family, case) -> str:
    """Run one round from scratch and say why the state cannot be read ("" when it can)."""
    _, state = _run(impl, inst, hyper, family, 1, seed=case["round_seed"])
    return _state_layout(state, family)


def _make_state(family, inst, C) -> dict:
    """A state in the contract's layout with client rows C and the server part sum_i w_i C_i."""
    server_key, client_key = STATE_KEYS[family]
    state = {client_key: {c.cid: C[i].copy() for i, c in enumerate(inst.clients)}}
    if server_key:
        state[server_key] = inst.weights @ C
    return state


def _client_rows(state, family, inst) -> np.ndarray:
    client_key = STATE_KEYS[family][1]
    return np.stack([np.asarray(state[client_key].get(c.cid, np.zeros(inst.d)), dtype=np.float64)
                     for c in inst.clients])


def fixed_point(impl, case, hyper, rtol, family: str) -> Outcome:
    inst = instance_of(case)
    why = _probe(impl, inst, hyper, family, case)
    if why:
        return not_applicable(why)
    # server part sum_i w_i grad f_i(x*) = 0 up to rounding: x* minimises sum w_i f_i
    state = _make_state(family, inst, ex.client_grads(inst, inst.x_star))
    x, _ = _run(impl, inst, hyper, family, 3, x=inst.x_star.copy(), state=state, seed=case["round_seed"])
    return identity(inst, x, inst.x_star, inst.x_star, rtol,
                     "x* with control variates = client gradients at x* is not a fixed point")


def server_state(impl, case, hyper, rtol, family: str) -> Outcome:
    inst = instance_of(case)
    partial = family != "scaffnew"  # Scaffnew is analysed with full participation only
    _, state = _run(impl, inst, hyper, family, 4, partial=partial, seed=case["round_seed"])
    why = _state_layout(state, family)
    if why:
        return not_applicable(why)
    server_key, client_key = STATE_KEYS[family]
    C = _client_rows(state, family, inst)
    mean = inst.weights @ C
    server = np.zeros(inst.d) if server_key is None else np.asarray(state[server_key], dtype=np.float64)
    scale = max(1.0, float(np.abs(C).max()))
    err = float(np.linalg.norm(server - mean)) / scale
    what = "sum_i w_i h_i is not 0" if server_key is None else f"{server_key} is not the weighted mean of {client_key}"
    return outcome(err <= rtol, err, rtol, "" if err <= rtol else what)


def one_round(impl, case, hyper, rtol, family: str) -> Outcome:
    """One round from a random consistent state equals the paper's update in closed form (local GD on
    f_i + <lin_i, .> is the FedAvg operator with b_i + lin_i; FedDyn's exact solve is N_i = (A_i + alpha I)^-1)."""
    inst = instance_of(case)
    why = _probe(impl, inst, hyper, family, case)
    if why:
        return not_applicable(why)
    rng = np.random.default_rng(case["round_seed"])
    server_key, client_key = STATE_KEYS[family]
    C = rng.standard_normal((inst.n, inst.d))
    if family == "scaffnew":
        C -= inst.weights @ C  # Scaffnew's invariant sum_i w_i h_i = 0
    state = _make_state(family, inst, C)
    S = np.arange(inst.n) if family == "scaffnew" else \
        np.sort(rng.choice(inst.n, size=rng.integers(1, inst.n + 1), replace=False))
    h = round_hyper(hyper, inst)
    if family == "scaffnew":
        h["local_steps"] = int(rng.geometric(hyper["p"]))
    x = inst.x0
    given = copy.deepcopy(state)  # what the kit reads below: an implementation may update its state in place
    got_x, got_state = run_round(impl, inst, x, S, h, state, seed=0)
    a, w = ex.aggregation_weights(inst, S, h["weighting"]), inst.weights[S]
    r = inst.b[S] - np.einsum("nij,j->ni", inst.A[S], x)
    want_C = C.copy()
    if family == "scaffold":
        c = given["c"]
        dy = np.einsum("nij,nj->ni", ex.local_operators(inst, h["local_steps"], h["local_step"])[S], r + C[S] - c)
        dc = -r - C[S] if h.get("option") == "I" else -c - dy / (h["local_steps"] * h["local_step"])
        want_x, want_server = x + h["server_step"] * a @ dy, c + w @ dc
        want_C[S] += dc
    elif family == "feddyn":
        dth = np.einsum("nij,nj->ni", ex.local_operators(inst, None, 0.0, h["alpha"])[S], r + C[S])
        want_C[S] -= h["alpha"] * dth
        want_server = given["h"] - h["alpha"] * w @ dth
        want_x = x + a @ dth - want_server / h["alpha"]
    else:
        dy = np.einsum("nij,nj->ni", ex.local_operators(inst, h["local_steps"], h["step"]), r + C)
        want_x = x + a @ dy
        want_C += (h["p"] / h["step"]) * (want_x - x - dy)
        want_server = None
    scale = scale_of(inst, x, want_x) + float(np.abs(want_C).max())
    got_C = _client_rows(got_state, family, inst)
    errs = {"model": np.linalg.norm(got_x - want_x), client_key: np.linalg.norm(got_C - want_C)}
    if server_key:
        errs[server_key] = np.linalg.norm(np.asarray(got_state[server_key], dtype=np.float64) - want_server)
    worst = max(errs, key=errs.get)
    err = float(errs[worst]) / scale
    return outcome(err <= rtol, err, rtol, "" if err <= rtol else f"the update of {worst} differs from the paper's")



def _step(family: str, inst, x, server, C, S, h: Mapping[str, Any]):
    if family == "scaffold":
        return es.scaffold_step(inst, x, server, C, S, local_steps=h["local_steps"], local_step=h["local_step"],
                                server_step=h["server_step"], weighting=h["weighting"], option=h.get("option", "II"))
    if family == "feddyn":
        return es.feddyn_step(inst, x, server, C, S, alpha=h["alpha"], weighting=h["weighting"])
    return es.scaffnew_step(inst, x, C, local_steps=h["local_steps"], step=h["step"], p=h["p"],
                            weighting=h["weighting"])


def multi_round(impl, case, hyper, rtol, family: str) -> Outcome:
    inst = instance_of(case)
    rng = np.random.default_rng(case["round_seed"])
    server_key, client_key = STATE_KEYS[family]
    x_want = x_got = inst.x0
    server, C = np.zeros(inst.d), np.zeros((inst.n, inst.d))
    state, err = None, 0.0
    history = []
    for t in range(ROUNDS):
        h = round_hyper(hyper, inst)
        if family == "scaffnew":  # the kit draws ProxSkip's local-step count (a geometric number of coins)
            S = np.arange(inst.n)
            h["local_steps"] = int(rng.geometric(hyper["p"]))
        else:  # random non-empty subsets; the first one leaves a client out, who joins later from the initial state
            size = rng.integers(1, inst.n) if t == 0 and inst.n > 1 else rng.integers(1, inst.n + 1)
            S = np.sort(rng.choice(inst.n, size=size, replace=False))
        history.append(S.tolist() if family != "scaffnew" else h["local_steps"])
        x_want, server, C = _step(family, inst, x_want, server, C, S, h)
        x_got, state = run_round(impl, inst, x_got, S, h, state, seed=t)
        scale = scale_of(inst, inst.x0, x_want) + float(np.abs(C).max())
        pairs = {"model": (x_got, x_want)}
        keys = [k for k in (server_key, client_key) if k]
        if not opaque_reason(state, keys):
            got_C = rows_or_initial(state, client_key, inst, np.zeros((inst.n, inst.d)))
            pairs[client_key] = (got_C, C)
            if server_key:
                pairs[server_key] = (np.asarray(state[server_key], dtype=np.float64), server)
                pairs[f"{server_key} - sum_i w_i {client_key}"] = (
                    np.asarray(state[server_key], dtype=np.float64) - inst.weights @ got_C, np.zeros(inst.d))
        worst, err = relative(pairs, scale)
        if err > rtol:
            what = "participants" if family != "scaffnew" else "local steps"
            return outcome(False, err, rtol, f"{worst} after round {t + 1} of {ROUNDS} ({what} {history}) "
                           "differs from the recursion" + (" (earlier rounds match: a state-carried slip)"
                                                           if t > 0 else ""))
    return outcome(True, err, rtol)


def own_sampler(impl, case, hyper, rtol, family: str) -> Outcome:
    """The implementation's own sampler at partial participation (:mod:`fedtheory.conformance.sampling`): each
    round is the recursion of :func:`multi_round` from the model the implementation returned, for the clients it
    reports drawn; a readable state is compared too and then carried (so one slip is reported once, at its round)."""
    inst = instance_of(case)
    server_key, client_key = STATE_KEYS[family]
    keys = [k for k in (server_key, client_key) if k]
    kit = {"server": np.zeros(inst.d), "C": np.zeros((inst.n, inst.d))}

    def judge(x, state, x_new, state_new, S, h):
        want_x, server, C = _step(family, inst, x, kit["server"], kit["C"], S, h)
        scale = scale_of(inst, inst.x0, want_x) + float(np.abs(C).max())
        pairs = {"model": (x_new, want_x)}
        if not opaque_reason(state_new, keys):
            got_C = rows_or_initial(state_new, client_key, inst, np.zeros((inst.n, inst.d)))
            pairs[client_key] = (got_C, C)
            if server_key:
                got_server = np.asarray(state_new[server_key], dtype=np.float64)
                pairs[server_key] = (got_server, server)
                server = got_server
            C = got_C
        kit["server"], kit["C"] = server, C
        worst, err = relative(pairs, scale)
        return err, f"{worst} differs from the recursion"
    return sampling.own_sampler(impl, inst, hyper, rtol, judge, seed=case["round_seed"])

