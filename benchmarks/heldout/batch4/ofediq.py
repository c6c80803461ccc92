"""OFedIQ (Kwon, Park & Hong, Alg. 2), one call per time step t = 1, 2, ... (x = w_t, constant within a period of L):
every client g = w_t if (t-1) mod L == 0 else theta_k (6), theta_k = g - eta grad f_k(g) (7); at t mod L == 0 client k
transmits with probability p (draw["participate"][cid]) m_k = Q_{s,b}((w_{t-L+1} - theta_k)/(eta p)) (8) and the server
sets w_{t+1} = w_{t-L+1} - eta/K sum_{S_t} m_k (9). Q_{s,b} (Definition 2): per block of np.array_split(D, b),
||u_I|| sign(u_i) xi_i with xi_i = (m_i + 1)/s with probability s r_i - m_i (uniform U_i < s r_i - m_i;
draw["uniforms"][cid][i]), m_i/s otherwise, r_i = |u_i|/||u_I||, m_i = min(floor(s r_i), s - 1); s = None: no
quantization. theta_k = w_1 initially."""
from __future__ import annotations

import numpy as np


def quantize(u, s, b, U):
    """Q_{s,b}(u) with the uniforms U (one per coordinate)."""
    if s is None:
        return u.copy()
    out = np.zeros_like(u)
    for I in np.array_split(np.arange(len(u)), b):
        nrm = np.linalg.norm(u[I])
        if nrm == 0:
            continue
        r = np.abs(u[I]) / nrm
        m = np.minimum(np.floor(s * r), s - 1)
        up = np.asarray(U, float)[I] < s * r - m
        out[I] = nrm * np.sign(u[I]) * (m + up) / s
    return out


def _draws(draw, cid, key):
    if draw and key in draw and cid in draw[key]:
        return draw[key][cid]
    return None


# ---------------------------------------------------------------- correct

class OFedIQState:
    def __init__(self):
        self.t = 1
        self.theta = {}


def ofediq_object(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1, weighting="uniform",
                  num_clients=None, draw=None, **_):
    """Correct: state in an object, a client loop, its own coins and rounding uniforms from rng when no draw."""
    st = state if state is not None else OFedIQState()
    L = period
    K = num_clients or len(clients)
    t = st.t
    new = OFedIQState()
    new.t = t + 1
    new.theta = dict(st.theta)
    for c in clients:
        g = x if (t - 1) % L == 0 else new.theta.get(c.cid, x)
        new.theta[c.cid] = g - eta * c.grad(g)
    if t % L != 0:
        return x.copy(), new
    total = np.zeros_like(x)
    for c in clients:
        part = _draws(draw, c.cid, "participate")
        if part is None:
            part = rng.random() < p
        if not part:
            continue
        U = _draws(draw, c.cid, "uniforms")
        if U is None:
            U = rng.random(len(x))
        total += quantize((x - new.theta[c.cid]) / (eta * p), s, b, U)
    return x - eta / K * total, new


def ofediq_vectorised(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                      weighting="uniform", num_clients=None, draw=None, **_):
    """Correct: a dict state {"t", "theta"}, clients stacked in an (n, d) array; own coins drawn as one vector of
    independent uniforms per period."""
    st = state or {"t": 1, "theta": {}}
    t = st["t"]
    K = num_clients or len(clients)
    ids = [c.cid for c in clients]
    if (t - 1) % period == 0:
        G = np.tile(x, (len(clients), 1))
    else:
        G = np.stack([np.asarray(st["theta"].get(i, x), float) for i in ids])
    Th = G - eta * np.stack([c.grad(G[j]) for j, c in enumerate(clients)])
    theta = {**st["theta"], **{i: Th[j] for j, i in enumerate(ids)}}
    if t % period:
        return x.copy(), {"t": t + 1, "theta": theta}
    if draw and "participate" in draw:
        mask = np.array([bool(draw["participate"][i]) for i in ids])
    else:
        mask = rng.random(len(ids)) < p
    Uall = None if (draw and "uniforms" in draw) else rng.random((len(ids), len(x)))
    agg = np.zeros_like(x)
    for j, i in enumerate(ids):
        if mask[j]:
            U = draw["uniforms"][i] if Uall is None else Uall[j]
            agg += quantize((x - Th[j]) / (eta * p), s, b, U)
    return x - eta * agg / K, {"t": t + 1, "theta": theta}


# ---------------------------------------------------------------- wrong

def _step_common(x, clients, st, eta, period):
    t = st["t"]
    th = dict(st["theta"])
    for c in clients:
        g = x if (t - 1) % period == 0 else th.get(c.cid, x)
        th[c.cid] = g - eta * c.grad(g)
    return t, th


def ofediq_round_up_complement(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                               weighting="uniform", num_clients=None, draw=None, **_):
    """WRONG: rounds up when U > s r - m, i.e. with probability 1 - (s r - m); Definition 2 rounds up with
    probability s r - m (the quantizer is then biased: E Q(u) != u)."""
    st = state or {"t": 1, "theta": {}}
    t, th = _step_common(x, clients, st, eta, period)
    if t % period:
        return x.copy(), {"t": t + 1, "theta": th}
    K = num_clients or len(clients)
    agg = np.zeros_like(x)
    for c in clients:
        part = _draws(draw, c.cid, "participate")
        if part is None:
            part = rng.random() < p
        if not part:
            continue
        u = (x - th[c.cid]) / (eta * p)
        U = _draws(draw, c.cid, "uniforms")
        U = np.asarray(rng.random(len(x)) if U is None else U, float)
        if s is None:
            agg += u
            continue
        for I in np.array_split(np.arange(len(u)), b):
            nrm = np.linalg.norm(u[I])
            if nrm == 0:
                continue
            r = np.abs(u[I]) / nrm
            m = np.minimum(np.floor(s * r), s - 1)
            agg[I] += nrm * np.sign(u[I]) * (m + (U[I] > s * r - m)) / s
    return x - eta / K * agg, {"t": t + 1, "theta": th}


def ofediq_antithetic_coins(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                            weighting="uniform", num_clients=None, draw=None, **_):
    """WRONG: its own coins are "stratified": one uniform u per period and client j (by position among the clients
    sorted by id) transmits iff (u + j/n) mod 1 < p. Each client transmits with probability p, but the clients are
    not independent (Alg. 2 / Section 2.1: each k in S_t independently with probability p_k)."""
    st = state or {"t": 1, "theta": {}}
    t, th = _step_common(x, clients, st, eta, period)
    if t % period:
        return x.copy(), {"t": t + 1, "theta": th}
    K = num_clients or len(clients)
    order = sorted(c.cid for c in clients)
    u0 = None
    agg = np.zeros_like(x)
    for c in clients:
        part = _draws(draw, c.cid, "participate")
        if part is None:
            if u0 is None:
                u0 = rng.random()
            part = (u0 + order.index(c.cid) / len(order)) % 1.0 < p
        if part:
            U = _draws(draw, c.cid, "uniforms")
            U = rng.random(len(x)) if U is None else U
            agg += quantize((x - th[c.cid]) / (eta * p), s, b, U)
    return x - eta / K * agg, {"t": t + 1, "theta": th}


def ofediq_double_inverse_p(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                            weighting="uniform", num_clients=None, draw=None, **_):
    """WRONG: the 1/p_k compensation applied twice, by the clients in (8) and again by the server
    (w - eta/(K p) sum m_k); (9) divides by K only. Invisible at p = 1."""
    st = state or {"t": 1, "theta": {}}
    t, th = _step_common(x, clients, st, eta, period)
    if t % period:
        return x.copy(), {"t": t + 1, "theta": th}
    K = num_clients or len(clients)
    agg = np.zeros_like(x)
    for c in clients:
        part = _draws(draw, c.cid, "participate")
        if part is None:
            part = rng.random() < p
        if part:
            U = _draws(draw, c.cid, "uniforms")
            U = rng.random(len(x)) if U is None else U
            agg += quantize((x - th[c.cid]) / (eta * p), s, b, U)
    return x - eta / (K * p) * agg, {"t": t + 1, "theta": th}


def ofediq_coin_every_other_period(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                                   weighting="uniform", num_clients=None, draw=None, **_):
    """WRONG: its own coins are refreshed only every other period (the coin of an odd period is kept in the state and
    reused in the next one, "to save randomness"): each client still transmits with probability p, independently of
    the others, but S_t is not independent across t (Section 2.1: independently across t)."""
    st = state or {"t": 1, "theta": {}, "coins": {}, "period_no": 0}
    t, th = _step_common(x, clients, st, eta, period)
    coins = dict(st.get("coins", {}))
    k = st.get("period_no", 0)
    if t % period:
        return x.copy(), {"t": t + 1, "theta": th, "coins": coins, "period_no": k}
    K = num_clients or len(clients)
    agg = np.zeros_like(x)
    for c in clients:
        part = _draws(draw, c.cid, "participate")
        if part is None:
            if k % 2 == 0 or c.cid not in coins:
                coins[c.cid] = bool(rng.random() < p)
            part = coins[c.cid]
        if part:
            U = _draws(draw, c.cid, "uniforms")
            U = rng.random(len(x)) if U is None else U
            agg += quantize((x - th[c.cid]) / (eta * p), s, b, U)
    return x - eta / K * agg, {"t": t + 1, "theta": th, "coins": coins, "period_no": k + 1}


def ofediq_rng_seeded_by_cid(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                             weighting="uniform", num_clients=None, draw=None, **_):
    """WRONG: without a draw each client draws its coin and its rounding uniforms from np.random.default_rng(cid),
    created in the call ("one reproducible generator per client"): the same numbers at every period, so a client
    always or never transmits and always rounds the same way (Alg. 2: independent Bernoulli(p_k) at every t in
    [T]_L; Definition 2: fresh xi_i)."""
    st = state or {"t": 1, "theta": {}}
    t, th = _step_common(x, clients, st, eta, period)
    if t % period:
        return x.copy(), {"t": t + 1, "theta": th}
    K = num_clients or len(clients)
    agg = np.zeros_like(x)
    for c in clients:
        gen = np.random.default_rng(abs(int(c.cid)))
        part = _draws(draw, c.cid, "participate")
        if part is None:
            part = gen.random() < p
        if part:
            U = _draws(draw, c.cid, "uniforms")
            U = gen.random(len(x)) if U is None else U
            agg += quantize((x - th[c.cid]) / (eta * p), s, b, U)
    return x - eta / K * agg, {"t": t + 1, "theta": th}


def make_ofediq_counter_in_closure():
    """WRONG: the time step t is a counter in a closure, advanced on every call and never reset when state=None
    (only theta_k is in the returned state); a run that starts when the counter is not at a period's start
    restarts and transmits at the wrong steps ((6) and (9) count t from 1 in every run)."""
    clock = {"t": 0}

    def ofediq_counter_in_closure(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                                  weighting="uniform", num_clients=None, draw=None, **_):
        clock["t"] += 1
        t = clock["t"]
        th = dict(state or {})
        for c in clients:
            g = x if (t - 1) % period == 0 else th.get(c.cid, x)
            th[c.cid] = g - eta * c.grad(g)
        if t % period:
            return x.copy(), th
        K = num_clients or len(clients)
        agg = np.zeros_like(x)
        for c in clients:
            part = _draws(draw, c.cid, "participate")
            if part is None:
                part = rng.random() < p
            if part:
                U = _draws(draw, c.cid, "uniforms")
                U = rng.random(len(x)) if U is None else U
                agg += quantize((x - th[c.cid]) / (eta * p), s, b, U)
        return x - eta / K * agg, th
    return ofediq_counter_in_closure


CORRECT = [
    ("ofediq_object_loop", ofediq_object, {}),
    ("ofediq_vectorised_dict", ofediq_vectorised, {}),
]
WRONG = [
    ("ofediq_round_up_complement", ofediq_round_up_complement, {}),
    ("ofediq_antithetic_coins", ofediq_antithetic_coins, {}),
    ("ofediq_double_inverse_p", ofediq_double_inverse_p, {}),
    ("ofediq_counter_in_closure", make_ofediq_counter_in_closure(), {}),
    ("ofediq_coin_every_other_period", ofediq_coin_every_other_period, {}),
    ("ofediq_rng_seeded_by_cid", ofediq_rng_seeded_by_cid, {}),
]
CRASH_IS_THE_BUG: tuple = ()
