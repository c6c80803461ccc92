"""Multi-round properties of SCAFFOLD, FedDyn and Scaffnew: R rounds from the implementation's own state.

Round 1 starts from ``state=None`` (the papers' zero initialisation: c = c_i = 0, h = g_i = 0, h_i = 0); every
later round is called with the state the implementation returned, while the kit advances the closed-form
recursion of :mod:`fedtheory.conformance.expected_stateful` with the same participants (and Scaffnew's
local-step counts). The model is compared every round, so a slip carried in the state (a control variate not
stored, stored for the wrong client, updated from a stale value) is caught even when the state is opaque;
a readable state is compared too, with the server-state invariant of each paper after every round.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from . import expected_stateful as es
from .contract import STATE_KEYS
from .properties import Outcome, Property, _hyper, _instance, _round, _scale, _stateful_cases
from .statekit import opaque_reason, relative, rows

__all__ = ["PROPERTIES", "ROUNDS"]

ROUNDS = 6


def _step(family: str, inst, x, server, C, S, h: Mapping[str, Any]):
    if family == "scaffold":
        return es.scaffold_step(inst, x, server, C, S, local_steps=h["local_steps"], local_step=h["local_step"],
                                server_step=h["server_step"], weighting=h["weighting"])
    if family == "feddyn":
        return es.feddyn_step(inst, x, server, C, S, alpha=h["alpha"], weighting=h["weighting"])
    return es.scaffnew_step(inst, x, C, local_steps=h["local_steps"], step=h["step"], p=h["p"],
                            weighting=h["weighting"])


def _multi_round(family: str):
    def check(impl, case, hyper, rtol) -> Outcome:
        inst = _instance(case)
        rng = np.random.default_rng(case["round_seed"])
        server_key, client_key = STATE_KEYS[family]
        x_want = x_got = inst.x0
        server, C = np.zeros(inst.d), np.zeros((inst.n, inst.d))
        state, err = None, 0.0
        history = []
        for t in range(ROUNDS):
            h = _hyper(hyper, inst)
            if family == "scaffnew":  # the kit draws ProxSkip's local-step count (a geometric number of coins)
                S = np.arange(inst.n)
                h["local_steps"] = int(rng.geometric(hyper["p"]))
            else:  # a random non-empty subset; the first round has everyone so every c_i/g_i is set once
                S = np.arange(inst.n) if t == 0 else np.sort(rng.choice(inst.n, size=rng.integers(1, inst.n + 1),
                                                                         replace=False))
            history.append(S.tolist() if family != "scaffnew" else h["local_steps"])
            x_want, server, C = _step(family, inst, x_want, server, C, S, h)
            x_got, state = _round(impl, inst, x_got, S, h, state, seed=t)
            scale = _scale(inst, inst.x0, x_want) + float(np.abs(C).max())
            pairs = {"model": (x_got, x_want)}
            keys = [k for k in (server_key, client_key) if k]
            if not opaque_reason(state, keys):
                pairs[client_key] = (rows(state, client_key, inst), C)
                if server_key:
                    got_C = rows(state, client_key, inst)
                    pairs[server_key] = (np.asarray(state[server_key], dtype=np.float64), server)
                    pairs[f"{server_key} - sum_i w_i {client_key}"] = (
                        np.asarray(state[server_key], dtype=np.float64) - inst.weights @ got_C, np.zeros(inst.d))
            worst, err = relative(pairs, scale)
            if err > rtol:
                what = "participants" if family != "scaffnew" else "local steps"
                return Outcome(False, err, rtol, f"{worst} after round {t + 1} of {ROUNDS} ({what} {history}) "
                               "differs from the recursion" + (" (earlier rounds match: a state-carried slip)"
                                                               if t > 0 else ""))
        return Outcome(True, err, rtol)
    return check


_REFS = {"scaffold": "Karimireddy et al. 2020, Alg. 1 (option II, eq. (5))", "feddyn": "Acar et al. 2021, Alg. 1",
         "scaffnew": "Mishchenko et al. 2022, Alg. 2 (ProxSkip)"}

PROPERTIES: tuple[Property, ...] = tuple(
    Property(f"{fam}.multi_round", fam, _REFS[fam],
             f"{ROUNDS} rounds from the implementation's own state (zero start, random participants) equal the "
             "closed-form recursion; a readable state equals it too",
             (lambda f: (lambda hyper: _stateful_cases(hyper, f)))(fam), _multi_round(fam))
    for fam in ("scaffold", "feddyn", "scaffnew"))
