"""What FedElasticNet's three families share (Kim et al., Algorithms 1-3: FedAvg/FedProx, SCAFFOLD, FedDyn with
an elastic-net local regulariser lam2/2 ||th - th^{t-1}||^2 + lam1 ||th - th^{t-1}||_1): the cases, the instances,
and the one-round and multi-round properties of Algs. 2 and 3 (declared by their families' packages).

Contract (docs/conformance.md): as FedProx / SCAFFOLD / FedDyn, with ``l1`` = lam1 and ``prox`` = lam2 (Alg. 1
and 2) or ``alpha`` = lam2 (Alg. 3); ``l1_mode`` says how K local steps treat the l1 term: "subgradient" is
eq. (7) as printed with sign(0) = 0, "proximal" the other reading (a soft-threshold after each step);
``sign_at_zero`` says which sign Alg. 3's state update (line 6) uses: "printed" sign(Delta) with sign(0) = 0,
or "kkt" the sub-gradient the exact solve certifies, (g_i - grad f_i(th_i) - lam2 Delta_i)/lam1, which makes
eq. (11) exact. Alg. 1 is checked under full participation (line 8 weights n_k/n by all clients' data, which
equals the participants' normalisation only then). Exact local solves are checked on general quadratics (an
exact active-set solve, :func:`fedtheory.conformance.expected_elasticnet.exact_local`) and on diagonal ones
(:mod:`fedtheory.conformance.instance_diag`), where eqs. (4) and (10) are coordinate-wise soft-thresholds.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from hypothesis import strategies as st

from . import expected as ex
from . import expected_elasticnet as een
from .instance import instance_params_of, make_instance
from .instance_diag import make_diagonal_instance
from .kit import Outcome, instance_params, not_applicable, outcome, round_hyper, run_round, scale_of
from .statekit import opaque_reason, own_state_reason, relative, rows_or_initial
from .tolerances import TIE_REL

__all__ = ["KIM", "ROUNDS", "elastic_cases", "elastic_instance", "ambiguous", "one_round", "multi_round"]

#: The paper, as properties cite it.
KIM = "Kim et al. (FedElasticNet)"
ROUNDS = 6
#: The state layout of Algs. 2 and 3 (server key, per-client key).
_KEYS = {"fedelasticnet_scaffold": ("c", "c_i"), "fedelasticnet_feddyn": ("h", "g_i")}


def elastic_cases(hyper: Mapping[str, Any]) -> st.SearchStrategy:
    eta = hyper.get("local_step") if hyper.get("local_steps") is not None else None
    L_max = 20.0 if eta is None else min(20.0, 1.9 / eta - hyper.get("prox", 0.0))

    @st.composite
    def cases(draw):
        p = draw(instance_params(hyper, L_max=max(L_max, 0.5), max_dim=12, min_clients=1))
        p["state_seed"] = draw(st.integers(0, 2**16))
        # exact solves: separable clients too, where eqs. (4) and (10) are coordinate-wise soft-thresholds and
        # the support is decided without rounding; general ones catch a solve that is exact only there
        exact = "alpha" in hyper or hyper.get("local_steps") is None
        p["diagonal"] = draw(st.booleans()) if exact else False
        return p
    return cases()


def elastic_instance(case, hyper):
    """A general quadratic instance; diagonal (separable) where the case asks for one."""
    params = instance_params_of(case)
    return make_diagonal_instance(params) if case.get("diagonal") else make_instance(params)


def ambiguous(margin: float, scale: float) -> bool:
    return margin < TIE_REL * scale


# ----------------------------------------------------------------- Algorithms 2 and 3 (stateful)

def _alg2_step(inst, x, c, C, S, h):
    """Alg. 2 lines 5-14 (uniform weights: eta_g/|P_t| and 1/m)."""
    TH, margin = een.elastic_steps(inst, x, c - C[S], S, steps=h["local_steps"], step=h["local_step"],
                                   lam2=h["prox"], lam1=h["l1"], mode=h["l1_mode"])
    dy = TH - x
    dc = -c - dy / (h["local_steps"] * h["local_step"])
    a, w = ex.aggregation_weights(inst, S, h["weighting"]), inst.weights[S]
    C = C.copy()
    C[S] += dc
    return x + h["server_step"] * a @ dy, c + w @ dc, C, margin


def _alg3_step(inst, x, hs, G, S, h):
    """Alg. 3 lines 5-13 with the exact solve (10); line 6 by the declared reading of sign(0)."""
    alpha, lam1 = h["alpha"], h["l1"]
    TH, margin = een.exact_local(inst, x, -G[S], S, alpha, lam1)
    if h["sign_at_zero"] == "kkt":
        margin = np.inf  # eq. (11) reads no sign: the round is continuous in the data
    D = TH - x
    G = G.copy()
    if h["sign_at_zero"] == "kkt":
        G_new = np.einsum("nij,nj->ni", inst.A[S], TH) - inst.b[S]  # line 6 made exact: eq. (11)
    else:
        G_new = G[S] - alpha * D - lam1 * np.sign(D)
    w, a = inst.weights[S], ex.aggregation_weights(inst, S, h["weighting"])
    hs_new = hs + w @ (G_new - G[S])
    G[S] = G_new
    return a @ TH - hs_new / alpha, hs_new, G, margin


def _step(family, *args):
    return _alg2_step(*args) if family == "fedelasticnet_scaffold" else _alg3_step(*args)


def _subset(rng, n, strict=False):
    """A random non-empty subset of n clients (``strict``: not all of them, when n > 1)."""
    size = rng.integers(1, n) if strict and n > 1 else rng.integers(1, n + 1)
    return np.sort(rng.choice(n, size=size, replace=False))


def _compare(inst, state, family, x_got, x_want, server, C, scale):
    server_key, client_key = _KEYS[family]
    pairs = {"model": (x_got, x_want)}
    if not opaque_reason(state, [server_key, client_key]):
        got_C = rows_or_initial(state, client_key, inst, np.zeros((inst.n, inst.d)))
        got_s = np.asarray(state[server_key], dtype=np.float64)
        pairs.update({client_key: (got_C, C), server_key: (got_s, server),
                      f"{server_key} - sum_i w_i {client_key}": (got_s - inst.weights @ got_C, np.zeros(inst.d))})
    return relative(pairs, scale)


def one_round(impl, case, hyper, rtol, family: str) -> Outcome:
    inst = elastic_instance(case, hyper)
    server_key, client_key = _KEYS[family]
    why = own_state_reason(impl, inst, round_hyper(hyper, inst), [server_key, client_key])
    if why:
        return not_applicable(why)
    rng = np.random.default_rng(case["state_seed"])
    C = rng.standard_normal((inst.n, inst.d))
    server = inst.weights @ C
    state = {server_key: server.copy(), client_key: {c.cid: C[i].copy() for i, c in enumerate(inst.clients)}}
    S = _subset(rng, inst.n)
    x = inst.x0
    x_want, s_want, C_want, margin = _step(family, inst, x, server, C, S, round_hyper(hyper, inst))
    scale = scale_of(inst, x, x_want) + float(np.abs(C_want).max())
    if ambiguous(margin, scale):
        return outcome(True, float("nan"), rtol)
    x_got, got_state = run_round(impl, inst, x, S, round_hyper(hyper, inst), state)
    why = opaque_reason(got_state, [server_key, client_key])
    if why:
        return not_applicable(why)
    worst, err = _compare(inst, got_state, family, x_got, x_want, s_want, C_want, scale)
    return outcome(err <= rtol, err, rtol, "" if err <= rtol else _diagnose(family, inst, x, server, C, S, hyper,
                                                                             x_got, got_state, worst, rtol, scale))


def _diagnose(family, inst, x, server, C, S, hyper, x_got, got_state, worst, rtol, scale) -> str:
    if family == "fedelasticnet_feddyn":
        other = "kkt" if hyper["sign_at_zero"] == "printed" else "printed"
        alts = {f"line 6 follows the other reading of sign(0) (sign_at_zero={other!r})": dict(hyper, sign_at_zero=other),
                "l1 term missing (plain FedDyn)": dict(hyper, l1=0.0)}
    else:
        other = "proximal" if hyper["l1_mode"] == "subgradient" else "subgradient"
        alts = {f"the other reading of sign(0) in eq. (7) (l1_mode={other!r})": dict(hyper, l1_mode=other),
                "l1 term missing (plain SCAFFOLD)": dict(hyper, l1=0.0),
                "l1 term with the wrong sign": dict(hyper, l1=-hyper["l1"])}
    for name, h in alts.items():
        xw, sw, Cw, _ = _step(family, inst, x, server, C, S, round_hyper(h, inst))
        if _compare(inst, got_state, family, x_got, xw, sw, Cw, scale)[1] <= rtol:
            return name
    return f"the update of {worst} differs from the paper's"


def multi_round(impl, case, hyper, rtol, family: str) -> Outcome:
    """R rounds from state=None (Alg. 2: c = c_k = 0; Alg. 3 line 1: h^0 = 0, grad L_k(th_k^0) = 0), each
    from the implementation's returned state; h = sum_i w_i g_i (Alg. 3) / c = sum_i w_i c_i after every round."""
    inst = elastic_instance(case, hyper)
    rng = np.random.default_rng(case["state_seed"])
    x_want = x_got = inst.x0
    server, C = np.zeros(inst.d), np.zeros((inst.n, inst.d))
    state, err, hist = None, 0.0, []
    for t in range(ROUNDS):
        S = _subset(rng, inst.n, strict=t == 0)  # round 1 leaves a client out: it joins later
        hist.append(S.tolist())
        x_want, server, C, margin = _step(family, inst, x_want, server, C, S, round_hyper(hyper, inst))
        scale = scale_of(inst, inst.x0, x_want) + float(np.abs(C).max())
        if ambiguous(margin, scale):
            return outcome(True, float("nan"), rtol)
        x_got, state = run_round(impl, inst, x_got, S, round_hyper(hyper, inst), state, seed=t)
        worst, err = _compare(inst, state, family, x_got, x_want, server, C, scale)
        if err > rtol:
            return outcome(False, err, rtol, f"{worst} after round {t + 1} of {ROUNDS} (participants {hist}) "
                           "differs from the recursion" + (" (earlier rounds match: a state-carried slip)"
                                                           if t > 0 else ""))
    return outcome(True, err, rtol)


