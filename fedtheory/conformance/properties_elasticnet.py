"""Conformance properties of FedElasticNet (Kim et al., Algorithms 1-3: FedAvg/FedProx, SCAFFOLD, FedDyn with
an elastic-net local regulariser lam2/2 ||th - th^{t-1}||^2 + lam1 ||th - th^{t-1}||_1).

Contract (docs/conformance.md): as FedProx / SCAFFOLD / FedDyn, with ``l1`` = lam1 and ``prox`` = lam2 (Alg. 1
and 2) or ``alpha`` = lam2 (Alg. 3); ``l1_mode`` says how K local steps treat the l1 term: "subgradient" is
eq. (7) as printed with sign(0) = 0, "proximal" the other reading (a soft-threshold after each step);
``sign_at_zero`` says which sign Alg. 3's state update (line 6) uses: "printed" sign(Delta) with sign(0) = 0,
or "kkt" the sub-gradient the exact solve certifies, (g_i - grad f_i(th_i) - lam2 Delta_i)/lam1, which makes
eq. (11) exact. Alg. 1 is checked under full participation (line 8 weights n_k/n by all clients' data, which
equals the participants' normalisation only then). Exact local solves are checked on diagonal quadratics
(:mod:`fedtheory.conformance.instance_diag`), where eqs. (4) and (10) are coordinate-wise soft-thresholds.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from hypothesis import strategies as st

from . import expected as ex
from . import expected_elasticnet as een
from .instance import make_instance
from .instance_diag import make_diagonal_instance
from .properties import NOT_APPLICABLE, Outcome, Property, _hyper, _round, _scale, instance_params
from .statekit import opaque_reason, relative, rows

__all__ = ["HYPER", "PROPERTIES"]

HYPER: Mapping[str, Mapping[str, Any]] = {
    "fedelasticnet_fedavg": {"local_steps": None, "local_step": 0.1, "prox": 0.5, "l1": 0.1,
                             "l1_mode": "subgradient", "server_step": 1.0, "weighting": "num_examples"},
    "fedelasticnet_scaffold": {"local_steps": 5, "local_step": 0.1, "prox": 0.0, "l1": 0.05,
                               "l1_mode": "subgradient", "server_step": 1.0, "weighting": "uniform"},
    "fedelasticnet_feddyn": {"alpha": 1.0, "l1": 0.1, "sign_at_zero": "printed", "weighting": "uniform"},
}
_KIM = "Kim et al. (FedElasticNet)"
ROUNDS = 6
_KEYS = {"fedelasticnet_scaffold": ("c", "c_i"), "fedelasticnet_feddyn": ("h", "g_i")}
_AMBIGUOUS = 1e-9  # a sign decided within this of zero is decided by rounding: the case is skipped


def _cases(hyper: Mapping[str, Any]) -> st.SearchStrategy:
    eta = hyper.get("local_step") if hyper.get("local_steps") is not None else None
    L_max = 20.0 if eta is None else min(20.0, 1.9 / eta - hyper.get("prox", 0.0))

    @st.composite
    def cases(draw):
        p = draw(instance_params(hyper, L_max=max(L_max, 0.5), max_dim=12, min_clients=1))
        p["state_seed"] = draw(st.integers(0, 2**16))
        return p
    return cases()


def _instance(case, hyper):
    keys = ("n", "d", "mu", "L", "delta_frac", "zeta2", "sizes", "weighting", "seed")
    params = {k: case[k] for k in keys}
    exact = "alpha" in hyper or hyper.get("local_steps") is None
    return make_diagonal_instance(params) if exact else make_instance(params)


def _skip(margin: float, scale: float) -> bool:
    return margin < _AMBIGUOUS * scale


# ----------------------------------------------------------------- Algorithm 1

def _alg1_locals(inst, x, h):
    S = np.arange(inst.n)
    lin = np.zeros((inst.n, inst.d))
    if h["local_steps"] is None:
        return een.exact_local(inst, x, lin, S, h["prox"], h["l1"]), np.inf
    return een.elastic_steps(inst, x, lin, S, steps=h["local_steps"], step=h["local_step"], lam2=h["prox"],
                             lam1=h["l1"], mode=h["l1_mode"])


def check_alg1_one_round(impl, case, hyper, rtol) -> Outcome:
    """Alg. 1 lines 5-8: th^t = th^{t-1} + sum_k n_k/n Delta_k (full participation), Delta_k from eq. (4)."""
    inst = _instance(case, hyper)
    x = inst.x0
    TH, margin = _alg1_locals(inst, x, hyper)
    if _skip(margin, _scale(inst, x)):
        return Outcome(True, float("nan"), rtol)
    a = ex.aggregation_weights(inst, np.arange(inst.n), hyper["weighting"])
    want = x + hyper["server_step"] * a @ (TH - x)
    got, _ = _round(impl, inst, x, np.arange(inst.n), _hyper(hyper, inst))
    err = float(np.linalg.norm(got - want)) / _scale(inst, x, want)
    note = ""
    if err > rtol:
        note = "the elastic-net local update differs from eq. (4)/(7)"
        alt_mode = "proximal" if hyper["l1_mode"] == "subgradient" else "subgradient"
        for name, h in (("l1 term missing", dict(hyper, l1=0.0)), ("l1 term with the wrong sign", dict(hyper, l1=-hyper["l1"])),
                        ("l2 term missing", dict(hyper, prox=0.0)),
                        (f"the other reading of sign(0) (l1_mode={alt_mode!r})", dict(hyper, l1_mode=alt_mode))):
            if h["local_steps"] is None and h["l1"] < 0:
                continue
            TH2, _ = _alg1_locals(inst, x, h)
            if np.linalg.norm(got - (x + hyper["server_step"] * a @ (TH2 - x))) <= rtol * _scale(inst, x, want):
                note = name
                break
    return Outcome(err <= rtol, err, rtol, note)


def check_alg1_l1_zero(impl, case, hyper, rtol) -> Outcome:
    """lam1 = 0 is FedProx with mu = lam2 (Kim et al., Section 3.1): FedProx's closed form on a general quadratic."""
    inst = make_instance({k: case[k] for k in ("n", "d", "mu", "L", "delta_frac", "zeta2", "sizes", "weighting",
                                               "seed")})
    h = _hyper(hyper, inst, l1=0.0)
    want = ex.round_map(inst, inst.x0, np.arange(inst.n), local_steps=h["local_steps"], local_step=h["local_step"],
                        prox=h["prox"], server_step=h["server_step"], weighting=h["weighting"])
    got, _ = _round(impl, inst, inst.x0, np.arange(inst.n), h)
    err = float(np.linalg.norm(got - want)) / _scale(inst, inst.x0, want)
    return Outcome(err <= rtol, err, rtol, "" if err <= rtol else "with l1 = 0 it is not FedProx")


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
    TH = een.exact_local(inst, x, -G[S], S, alpha, lam1)
    D = TH - x
    G = G.copy()
    if h["sign_at_zero"] == "kkt":
        G_new = np.einsum("nij,nj->ni", inst.A[S], TH) - inst.b[S]  # line 6 made exact: eq. (11)
    else:
        G_new = G[S] - alpha * D - lam1 * np.sign(D)
    w, a = inst.weights[S], ex.aggregation_weights(inst, S, h["weighting"])
    hs_new = hs + w @ (G_new - G[S])
    G[S] = G_new
    return a @ TH - hs_new / alpha, hs_new, G, np.inf


def _step(family, *args):
    return _alg2_step(*args) if family == "fedelasticnet_scaffold" else _alg3_step(*args)


def _subset(rng, n):
    return np.sort(rng.choice(n, size=rng.integers(1, n + 1), replace=False))


def _compare(inst, state, family, x_got, x_want, server, C, scale):
    server_key, client_key = _KEYS[family]
    pairs = {"model": (x_got, x_want)}
    if not opaque_reason(state, [server_key, client_key]):
        got_C = rows(state, client_key, inst)
        got_s = np.asarray(state[server_key], dtype=np.float64)
        pairs.update({client_key: (got_C, C), server_key: (got_s, server),
                      f"{server_key} - sum_i w_i {client_key}": (got_s - inst.weights @ got_C, np.zeros(inst.d))})
    return relative(pairs, scale)


def _one_round(family):
    def check(impl, case, hyper, rtol) -> Outcome:
        inst = _instance(case, hyper)
        rng = np.random.default_rng(case["state_seed"])
        C = rng.standard_normal((inst.n, inst.d))
        server = inst.weights @ C
        server_key, client_key = _KEYS[family]
        state = {server_key: server.copy(), client_key: {c.cid: C[i].copy() for i, c in enumerate(inst.clients)}}
        S = _subset(rng, inst.n)
        x = inst.x0
        x_want, s_want, C_want, margin = _step(family, inst, x, server, C, S, _hyper(hyper, inst))
        scale = _scale(inst, x, x_want) + float(np.abs(C_want).max())
        if _skip(margin, scale):
            return Outcome(True, float("nan"), rtol)
        x_got, got_state = _round(impl, inst, x, S, _hyper(hyper, inst), state)
        why = opaque_reason(got_state, [server_key, client_key])
        if why:
            return NOT_APPLICABLE(why)
        worst, err = _compare(inst, got_state, family, x_got, x_want, s_want, C_want, scale)
        return Outcome(err <= rtol, err, rtol, "" if err <= rtol else _diagnose(family, inst, x, server, C, S, hyper,
                                                                                 x_got, got_state, worst, rtol, scale))
    return check


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
        xw, sw, Cw, _ = _step(family, inst, x, server, C, S, _hyper(h, inst))
        if _compare(inst, got_state, family, x_got, xw, sw, Cw, scale)[1] <= rtol:
            return name
    return f"the update of {worst} differs from the paper's"


def _multi_round(family):
    def check(impl, case, hyper, rtol) -> Outcome:
        """R rounds from state=None (Alg. 2: c = c_k = 0; Alg. 3 line 1: h^0 = 0, grad L_k(th_k^0) = 0), each
        from the implementation's returned state; h = sum_i w_i g_i (Alg. 3) / c = sum_i w_i c_i after every round."""
        inst = _instance(case, hyper)
        rng = np.random.default_rng(case["state_seed"])
        x_want = x_got = inst.x0
        server, C = np.zeros(inst.d), np.zeros((inst.n, inst.d))
        state, err, hist = None, 0.0, []
        for t in range(ROUNDS):
            S = np.arange(inst.n) if t == 0 else _subset(rng, inst.n)
            hist.append(S.tolist())
            x_want, server, C, margin = _step(family, inst, x_want, server, C, S, _hyper(hyper, inst))
            scale = _scale(inst, inst.x0, x_want) + float(np.abs(C).max())
            if _skip(margin, scale):
                return Outcome(True, float("nan"), rtol)
            x_got, state = _round(impl, inst, x_got, S, _hyper(hyper, inst), state, seed=t)
            worst, err = _compare(inst, state, family, x_got, x_want, server, C, scale)
            if err > rtol:
                return Outcome(False, err, rtol, f"{worst} after round {t + 1} of {ROUNDS} (participants {hist}) "
                               "differs from the recursion" + (" (earlier rounds match: a state-carried slip)"
                                                               if t > 0 else ""))
        return Outcome(True, err, rtol)
    return check


def check_alg2_k1(impl, case, hyper, rtol) -> Outcome:
    """One local step of eq. (7) from th = th^{t-1}: sign(0) = 0 and lam2 (th - th^{t-1}) = 0, so the printed
    reading gives th - x = -eta (grad f_k(x) - c_k + c); the proximal reading gives S_{eta lam1}(-eta (...))."""
    inst = _instance(case, hyper)
    h = _hyper(hyper, inst, local_steps=1)
    S = np.arange(inst.n)
    x = inst.x0
    g = np.einsum("nij,j->ni", inst.A, x) - inst.b  # zero control variates: state=None
    step = -h["local_step"] * g
    dy = step if h["l1_mode"] == "subgradient" else een.soft(step, h["local_step"] * h["l1"])
    want = x + h["server_step"] * ex.aggregation_weights(inst, S, h["weighting"]) @ dy
    got, _ = _round(impl, inst, x, S, h)
    err = float(np.linalg.norm(got - want)) / _scale(inst, x, want)
    return Outcome(err <= rtol, err, rtol, "" if err <= rtol else
                   "the first local step does not read sign(0) as declared by l1_mode")


PROPERTIES: tuple[Property, ...] = (
    Property("fedelasticnet_fedavg.one_round", "fedelasticnet_fedavg", f"{_KIM}, Alg. 1 lines 5-8, eq. (4)",
             "th^t = th^{t-1} + sum_k n_k/n Delta_k, Delta_k = exact soft-threshold solve (diagonal) or K steps",
             _cases, check_alg1_one_round),
    Property("fedelasticnet_fedavg.l1_zero", "fedelasticnet_fedavg", f"{_KIM}, Section 3.1 (lam1 = 0 is FedProx)",
             "with l1 = 0 one round equals FedProx's closed form", _cases, check_alg1_l1_zero),
    Property("fedelasticnet_scaffold.one_round", "fedelasticnet_scaffold", f"{_KIM}, Alg. 2 lines 5-14, eq. (7)",
             "one round from a given (c, c_k) equals eq. (7) K times and the option II control variate update",
             _cases, _one_round("fedelasticnet_scaffold")),
    Property("fedelasticnet_scaffold.first_step", "fedelasticnet_scaffold", f"{_KIM}, eq. (7) at th = th^{{t-1}}",
             "K = 1: the l1 term reads sign(0) as declared (0 printed; soft-threshold proximal)", _cases,
             check_alg2_k1),
    Property("fedelasticnet_scaffold.multi_round", "fedelasticnet_scaffold", f"{_KIM}, Alg. 2",
             f"{ROUNDS} rounds from the implementation's own state equal the recursion; c = 1/m sum c_k",
             _cases, _multi_round("fedelasticnet_scaffold")),
    Property("fedelasticnet_feddyn.one_round", "fedelasticnet_feddyn", f"{_KIM}, Alg. 3 lines 5-13, eq. (10)",
             "one round from a given (h, g_k) equals the exact solve (10) and line 6 by the declared sign reading",
             _cases, _one_round("fedelasticnet_feddyn")),
    Property("fedelasticnet_feddyn.multi_round", "fedelasticnet_feddyn", f"{_KIM}, Alg. 3; Lemma B.2",
             f"{ROUNDS} rounds from the implementation's own state equal the recursion; h = 1/m sum g_k",
             _cases, _multi_round("fedelasticnet_feddyn")),
)
