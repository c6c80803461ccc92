"""EFL (Ma et al., Alg. 1, consistent reading of Section 3.3): every client k is called with s_k local steps
(the kit's draw["steps"]; 0 = inactive). An active client syncs w^k <- w^k + b (b = ST(Delta^G) broadcast
last round), runs s_k steps w <- w - eta (grad f_k(w) + lam (U o w - V)), Delta^k = R^k + w - w^k,
sends ST(Delta^k) and keeps R^k = Delta^k - ST(Delta^k) (eq. 5). Server: Delta^G = R^G + sum p_tau^k ST(Delta^k),
p_tau^k = E p^k / s_k ("efl") or p^k ("fedavg"), p^k = n_k / n; b = ST(Delta^G), R^G = Delta^G - b,
w^G += b; U, V = sums of the reporters' u^k = diag(I_k) (= diag(A_k) for a least-squares client), v^k = u^k o w."""
from __future__ import annotations

import numpy as np

from ._common import quad, st


def _setup(x, clients, state, weighting):
    if state is None:
        state = {"U": np.zeros_like(x), "V": np.zeros_like(x), "R_G": np.zeros_like(x), "b": np.zeros_like(x),
                 "w_k": {}, "R_k": {}, "last": {}, "round": 0}
    n = np.array([c.num_examples if weighting == "num_examples" else 1.0 for c in clients], float)
    return state, n / n.sum()


def _local(c, base, s, step, lam, U, V):
    A, b = quad(c)
    w = base.copy()
    for _ in range(s):
        w = w - step * (A @ w - b + lam * (U * w - V))
    return w, np.diag(A).copy()


def efl_dict_state(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
                   weighting="num_examples", draw=None, **_):
    """Correct: the paper's names U, V in a dict state, a client that missed the last broadcast re-syncs to w^G."""
    state, pk = _setup(x, clients, state, weighting)
    r = state["round"]
    steps = (draw or {}).get("steps", {})
    agg = np.zeros_like(x); Us = np.zeros_like(x); Vs = np.zeros_like(x)
    w_k, R_k, last = dict(state["w_k"]), dict(state["R_k"]), dict(state["last"])
    for p, c in zip(pk, clients):
        s = int(steps.get(c.cid, E))
        if s == 0:
            continue
        base = w_k[c.cid] + state["b"] if last.get(c.cid) == r - 1 and c.cid in w_k else x.copy()
        w, u = _local(c, base, s, step, lam, state["U"], state["V"])
        D = R_k.get(c.cid, np.zeros_like(x)) + w - base
        C = st(D, q)
        R_k[c.cid] = D - C
        w_k[c.cid] = base; last[c.cid] = r
        agg += (E * p / s if aggregation == "efl" else p) * C
        Us += u; Vs += u * w
    DG = state["R_G"] + agg
    bG = st(DG, q)
    return x + bG, {"U": Us, "V": Vs, "R_G": DG - bG, "b": bG, "w_k": w_k, "R_k": R_k, "last": last, "round": r + 1}


def efl_inactive_sends_residual(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=0.3,
                                aggregation="efl", weighting="num_examples", draw=None, **_):
    """WRONG: an inactive client (s_k = 0) still sends ST(R^k) of its old residual, weighted E p^k / max(s, 1);
    Section 2.4: an inactive client does no local work and contributes nothing (p_tau^k s_tau^k = 0)."""
    state, pk = _setup(x, clients, state, weighting)
    r = state["round"]; steps = (draw or {}).get("steps", {})
    agg = np.zeros_like(x); Us = np.zeros_like(x); Vs = np.zeros_like(x)
    R_k = dict(state["R_k"])
    for p, c in zip(pk, clients):
        s = int(steps.get(c.cid, E))
        R = R_k.get(c.cid, np.zeros_like(x))
        if s == 0:
            C = st(R, q); R_k[c.cid] = R - C
            agg += (E * p if aggregation == "efl" else p) * C
            continue
        w, u = _local(c, x, s, step, lam, state["U"], state["V"])
        D = R + w - x; C = st(D, q); R_k[c.cid] = D - C
        agg += (E * p / s if aggregation == "efl" else p) * C
        Us += u; Vs += u * w
    DG = state["R_G"] + agg; bG = st(DG, q)
    return x + bG, {"U": Us, "V": Vs, "R_G": DG - bG, "b": bG, "w_k": {}, "R_k": R_k, "last": {}, "round": r + 1}


def efl_client_syncs_uncompressed(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=0.3,
                                  aggregation="efl", weighting="num_examples", draw=None, **_):
    """WRONG: the server moves by b = ST(Delta^G) but the clients sync with the uncompressed Delta^G (print's
    client line mixed with the consistent server line), so client and server models drift apart from round 2."""
    state, pk = _setup(x, clients, state, weighting)
    r = state["round"]; steps = (draw or {}).get("steps", {})
    agg = np.zeros_like(x); Us = np.zeros_like(x); Vs = np.zeros_like(x)
    w_k, R_k = dict(state["w_k"]), dict(state["R_k"])
    DG_prev = state.get("DG", np.zeros_like(x))
    for p, c in zip(pk, clients):
        s = int(steps.get(c.cid, E))
        if s == 0:
            continue
        base = w_k[c.cid] + DG_prev if c.cid in w_k else x.copy()
        w, u = _local(c, base, s, step, lam, state["U"], state["V"])
        D = R_k.get(c.cid, np.zeros_like(x)) + w - base; C = st(D, q); R_k[c.cid] = D - C
        w_k[c.cid] = base
        agg += (E * p / s if aggregation == "efl" else p) * C
        Us += u; Vs += u * w
    DG = state["R_G"] + agg; bG = st(DG, q)
    return x + bG, {"U": Us, "V": Vs, "R_G": DG - bG, "b": bG, "DG": DG, "w_k": w_k, "R_k": R_k, "last": {},
                    "round": r + 1}


def efl_incomplete_drops_residual(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=0.3,
                                  aggregation="efl", weighting="num_examples", draw=None, **_):
    """WRONG: an incomplete client (0 < s_k < E) resets its residual to 0 after sending; eq. (5) keeps
    R^k = Delta^k - ST(Delta^k) whatever s_k."""
    state, pk = _setup(x, clients, state, weighting)
    r = state["round"]; steps = (draw or {}).get("steps", {})
    agg = np.zeros_like(x); Us = np.zeros_like(x); Vs = np.zeros_like(x)
    R_k = dict(state["R_k"])
    for p, c in zip(pk, clients):
        s = int(steps.get(c.cid, E))
        if s == 0:
            continue
        w, u = _local(c, x, s, step, lam, state["U"], state["V"])
        D = R_k.get(c.cid, np.zeros_like(x)) + w - x; C = st(D, q)
        R_k[c.cid] = D - C if s == E else np.zeros_like(x)
        agg += (E * p / s if aggregation == "efl" else p) * C
        Us += u; Vs += u * w
    DG = state["R_G"] + agg; bG = st(DG, q)
    return x + bG, {"U": Us, "V": Vs, "R_G": DG - bG, "b": bG, "w_k": {}, "R_k": R_k, "last": {}, "round": r + 1}


CORRECT = [("dict_state_ST_q0.3", efl_dict_state, {"q": 0.3})]
WRONG = [("inactive_client_sends_residual (q=0.3)", efl_inactive_sends_residual, {"q": 0.3}),
         ("clients_sync_with_uncompressed_update (q=0.3)", efl_client_syncs_uncompressed, {"q": 0.3}),
         ("incomplete_client_drops_residual (q=0.3)", efl_incomplete_drops_residual, {"q": 0.3})]
