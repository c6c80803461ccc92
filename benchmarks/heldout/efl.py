"""EFL (Ma et al., Alg. 1 with ST of Alg. 2), "consistent" reading: held-out implementations, from the spec only.

Round tau with the kit's s_k (draw={"steps": {cid: s_k}}): every client with s_k > 0 synchronises
w^k <- w^k + b (b = the last broadcast ST(Delta^G), 0 before round 1), runs s_k steps
w <- w - eta [grad f_k(w) + lam (U o w - V)], sends c^k = ST(R^k + w_end - w^k) and keeps R^k = Delta^k - c^k.
Server: Delta^G = R^G + sum_k p_tau^k c^k, p_tau^k = E p^k / s_k ("efl") or p^k ("fedavg"), p^k = m_k / sum m;
b = ST(Delta^G), R^G = Delta^G - b, x+ = x + b. U, V = sums over the reporters of u^k = diag(A_k) (Gaussian
Fisher) and u^k o w_end. q = None: ST = identity (R = 0). State: a mapping with "U", "V" (and our own keys).
"""
from __future__ import annotations

import numpy as np

from ._util import quad, weights


def ST(T, q):
    if q is None:
        return T.copy()
    n = T.size
    k = max(int(np.floor(n * q)), 1)
    idx = np.argpartition(-np.abs(T), k - 1)[:k]
    out = np.zeros_like(T)
    mu = np.abs(T[idx]).sum() / k
    out[idx] = mu * np.sign(T[idx])
    return out


def _make(opaque=False, **bug):
    def impl(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
             weighting="num_examples", draw=None, **_):
        d = len(x)
        if state is None:
            st = {"U": np.zeros(d), "V": np.zeros(d), "b": np.zeros(d), "RG": np.zeros(d), "w": {}, "R": {}}
        else:
            src = state.data if opaque else state
            st = {k: (dict(v) if isinstance(v, dict) else np.array(v, dtype=float)) for k, v in src.items()}
        steps = (draw or {}).get("steps", {c.cid: E for c in clients})
        p = weights(clients, weighting)
        if bug.get("renormalise_active"):
            act = np.array([steps.get(c.cid, E) > 0 for c in clients], float)
            p = p * act / max((p * act).sum(), 1e-300)
        agg = np.zeros(d); U = np.zeros(d); V = np.zeros(d); reported = False
        for pk, c in zip(p, clients):
            s = int(steps.get(c.cid, E))
            if s == 0:
                continue
            wk = st["w"][c.cid] + st["b"] if c.cid in st["w"] else x.copy()
            A, b_ = quad(c)
            w = wk.copy()
            n_steps = s + 1 if bug.get("eq6_sum_to_s") else s
            for _ in range(n_steps):
                if bug.get("elastic_uv_confused"):
                    el = st["U"] * (w - st["V"])
                else:
                    el = st["U"] * w - st["V"]
                w = w - step * (c.grad(w) + lam * el)
            Dk = st["R"].get(c.cid, np.zeros(d)) + (w - wk)
            ck = ST(Dk, q)
            st["R"][c.cid] = Dk - ck
            st["w"][c.cid] = wk
            ptk = E * pk / s if aggregation == "efl" else pk
            agg += ptk * ck
            u = np.diag(A).copy(); U += u; V += u * w; reported = True
        DG = st["RG"] + agg
        b = ST(DG, q)
        st["RG"] = DG - b; st["b"] = b
        if reported:
            st["U"], st["V"] = U, V
        if opaque:
            box = _Box(); box.data = st
            return x + b, box
        return x + b, st
    return impl


class _Box:
    data: dict


CORRECT = [
    ("dict_state_no_compression", _make(), {}),
    ("dict_state_ST_q0.3", _make(), {"q": 0.3}),
    ("opaque_state_ST_q0.5_fedavg_weights", _make(opaque=True), {"q": 0.5, "aggregation": "fedavg"}),
]
WRONG = [
    ("eq6_typo_s_plus_one_steps", _make(eq6_sum_to_s=True), {}),
    ("p_renormalised_over_active", _make(renormalise_active=True), {}),
    ("elastic_term_U_times_w_minus_V", _make(elastic_uv_confused=True), {}),
]


def _drop_inactive_residual():
    inner = _make()

    def impl(x, clients, *, state=None, draw=None, E=3, **kw):
        """WRONG: a client that is inactive (s_k = 0) in a round loses its error-feedback residual R^k (its
        client object is rebuilt next time), instead of keeping it for its next active round."""
        xn, st = inner(x, clients, state=state, draw=draw, E=E, **kw)
        steps = (draw or {}).get("steps", {})
        for c in clients:
            if steps.get(c.cid, E) == 0:
                st["R"].pop(c.cid, None)
        return xn, st
    return impl


WRONG.append(("inactive_client_drops_residual (q=0.3)", _drop_inactive_residual(), {"q": 0.3}))
