"""OFedIQ (Kwon, Park & Hong, Alg. 2 with the (s, b) quantizer of Definition 2): held-out implementations, from the
spec only. One call = one time step t (t = 1 on state=None); x = the server model w_t.

(6) g_k = w_t if (t - 1) mod L == 0 else theta_k;  (7) theta_k <- g_k - eta grad f_k(g_k);
at t mod L == 0, client k transmits with probability p (the kit's draw["participate"][cid] when given)
(8) m_k = Q_{s,b}(-(theta_k - w_start)/(eta p)), rounding with the kit's draw["uniforms"][cid] when given;
(9) w_{t+1} = w_start - eta/K sum_{k in S} m_k (K = num_clients); otherwise w_{t+1} = w_t.
Q: contiguous blocks (np.array_split), xi_i = (m+1)/s if U_i < s r_i - m else m/s, m = min(floor(s r_i), s - 1).
"""
from __future__ import annotations

import numpy as np


def Q(u, s, b, U, interleaved=False):
    if s is None:
        return u.copy()
    D = len(u)
    out = np.zeros(D)
    blocks = [np.arange(D)[i::b] for i in range(b)] if interleaved else np.array_split(np.arange(D), b)
    for I in blocks:
        if len(I) == 0:
            continue
        nrm = np.linalg.norm(u[I])
        if nrm == 0:
            continue
        r = np.abs(u[I]) / nrm
        m = np.minimum(np.floor(s * r), s - 1)
        xi = np.where(np.asarray(U)[I] < s * r - m, (m + 1) / s, m / s)
        out[I] = nrm * np.sign(u[I]) * xi
    return out


def _make(opaque=False, **bug):
    def impl(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1, num_clients=None,
             draw=None, **_):
        K = num_clients or len(clients); L = period
        if state is None:
            st = {"t": 1, "theta": {}, "start": x.copy()}
        else:
            src = state.d if opaque else state
            st = {"t": src["t"], "theta": dict(src["theta"]), "start": src["start"]}
        t = st["t"]
        restart = (t % L == 0) if bug.get("restart_off_by_one") else ((t - 1) % L == 0)
        if restart:
            st["start"] = x.copy()
        for c in clients:
            g = x.copy() if restart or c.cid not in st["theta"] else st["theta"][c.cid]
            grad_at = st["start"] if bug.get("grad_at_global") else g
            st["theta"][c.cid] = g - eta * c.grad(grad_at)
        xn = x.copy()
        if t % L == 0:
            agg = np.zeros_like(x)
            part = (draw or {}).get("participate")
            unif = (draw or {}).get("uniforms")
            pp = p ** L if bug.get("p_compounded") else p
            for c in clients:
                on = bool(part[c.cid]) if part is not None else bool(rng.random() < pp)
                if not on:
                    continue
                U = unif[c.cid] if unif is not None else rng.random(len(x))
                u = -(st["theta"][c.cid] - st["start"]) / (eta * p)
                agg += Q(u, s, b, U, interleaved=bug.get("interleaved", False))
            xn = st["start"] - eta / K * agg
        st["t"] = t + 1
        if opaque:
            box = _Box(); box.d = st
            return xn, box
        return xn, st
    return impl


class _Box:
    d: dict


CORRECT = [
    ("dict_state_loop", _make(), {}),
    ("opaque_state_L3_b2", _make(opaque=True), {"period": 3, "b": 2}),
]
WRONG = [
    ("restart_at_t_mod_L_eq_0", _make(restart_off_by_one=True), {}),
    ("local_gradients_at_period_start_model", _make(grad_at_global=True), {}),
    ("own_coin_p_to_the_L", _make(p_compounded=True), {"period": 2}),
    ("interleaved_blocks (b = 3)", _make(interleaved=True), {"b": 3}),
]


def _start_once():
    inner = _make()

    def impl(x, clients, *, state=None, **kw):
        """WRONG (shows from the second period): the period-start model is recorded once (setdefault-style) and
        never refreshed, so from the second period the server restarts from w_1 in (9) and the messages are
        taken against w_1."""
        first = None if state is None else state.get("first")
        xn, st = inner(x, clients, state=state, **kw)
        st["first"] = first if first is not None else st["start"]
        st["start"] = st["first"]
        return xn, st
    return impl


WRONG.append(("period_start_model_never_refreshed", _start_once(), {}))


def _shared_uniforms():
    def impl(x, clients, *, state=None, rng=None, draw=None, **kw):
        """WRONG: without a draw, one vector of rounding uniforms is drawn per step and shared by all clients
        (Definition 2 draws the xi_i independently; here the clients' roundings are perfectly correlated)."""
        if draw is None and rng is not None:
            U = rng.random(len(x))
            draw_ = {"uniforms": {c.cid: U for c in clients}}
            part = {c.cid: bool(rng.random() < kw.get("p", 0.5)) for c in clients}
            draw_["participate"] = part
            return _make()(x, clients, state=state, rng=rng, draw=draw_, **kw)
        return _make()(x, clients, state=state, rng=rng, draw=draw, **kw)
    return impl


WRONG.append(("own_uniforms_shared_by_clients", _shared_uniforms(), {}))
