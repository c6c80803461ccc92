"""OFedIQ (Kwon, Park & Hong, Alg. 2, eqs. (6)-(9), Definition 2), from the paper and docs/conformance.md only.

One call = one time step t (t = 1 from state=None); the call returns the server model after the step (it
changes only at t in [T]_L = {L, 2L, ...}). Every client: g_k = w_t at a period's first step ((t-1) mod L = 0),
else theta_k; theta_k <- g_k - eta grad f_k(g_k). At t mod L = 0 client k transmits with probability p
(draw["participate"] when given) m_k = Q_{s,b}(-(theta_k - w_start)/(eta p)); the server sets
w = w_start - eta/K sum_{transmitting} m_k (K = all clients). Q_{s,b}: contiguous blocks (np.array_split),
per block norm, level m = min(floor(s r), s - 1), up with probability s r - m (up iff uniform < s r - m,
uniforms from draw["uniforms"] when given); s = None means no quantization.
"""
from __future__ import annotations

import numpy as np


def quantize(u, s, b, unif):
    if s is None:
        return u.copy()
    out = np.zeros_like(u)
    for blk in np.array_split(np.arange(u.size), b):
        if blk.size == 0:
            continue
        nrm = np.linalg.norm(u[blk])
        if nrm == 0.0:
            continue
        r = np.abs(u[blk]) / nrm
        m = np.minimum(np.floor(s * r), s - 1)
        up = np.asarray(unif)[blk] < s * r - m
        out[blk] = nrm * np.sign(u[blk]) * (m + up) / s
    return out


def ofediq_dict(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=None, b=1, num_clients=None,
                draw=None, **_):
    """Correct. Dict state {"t", "w_start", "theta": {cid: vector}}; its own Bernoulli(p) coin per client once
    per period and its own rounding uniforms (rng.random(d) per client) when no draw is given."""
    st = state if state is not None else {"t": 1, "w_start": None, "theta": {}}
    t, L = st["t"], int(period)
    K = num_clients or len(clients)
    if (t - 1) % L == 0:
        st["w_start"] = x.copy()
    for c in clients:
        g = x if (t - 1) % L == 0 else st["theta"][c.cid]
        st["theta"][c.cid] = g - eta * c.grad(g)
    x_new = x
    if t % L == 0:
        acc = np.zeros_like(x)
        for c in clients:
            if draw is not None and "participate" in draw:
                on = bool(draw["participate"][c.cid])
            else:
                on = rng.random() < p
            if not on:
                continue
            u = -(st["theta"][c.cid] - st["w_start"]) / (eta * p)
            if draw is not None and "uniforms" in draw:
                unif = draw["uniforms"][c.cid]
            else:
                unif = rng.random(x.size)
            acc += quantize(u, s, b, unif)
        x_new = st["w_start"] - eta / K * acc
    st["t"] = t + 1
    return x_new, st


def ofediq_systematic_coins(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=None, b=1,
                            num_clients=None, draw=None, **_):
    """WRONG (correlated coins with the right marginals): without a draw, participation is drawn by
    "systematic sampling", one uniform u per period and client j (in list order) transmits iff
    (u + j/n) mod 1 < p. Each client transmits with probability p, but the coins are dependent (at p = 0.5 and
    two clients exactly one transmits); Alg. 2 has independent Bernoulli(p_k) coins."""
    st = state if state is not None else {"t": 1, "w0": None, "th": {}}
    t, L = st["t"], int(period)
    K = num_clients or len(clients)
    start = (t - 1) % L == 0
    if start:
        st["w0"] = x.copy()
    for c in clients:
        g = x if start else st["th"][c.cid]
        st["th"][c.cid] = g - eta * c.grad(g)
    out = x
    if t % L == 0:
        if draw is not None and "participate" in draw:
            on = [bool(draw["participate"][c.cid]) for c in clients]
        else:
            u = rng.random()
            on = [((u + j / len(clients)) % 1.0) < p for j in range(len(clients))]
        acc = np.zeros_like(x)
        for c, o in zip(clients, on):
            if o:
                unif = draw["uniforms"][c.cid] if draw is not None and "uniforms" in draw else rng.random(x.size)
                acc += quantize(-(st["th"][c.cid] - st["w0"]) / (eta * p), s, b, unif)
        out = st["w0"] - eta / K * acc
    st["t"] = t + 1
    return out, st


def ofediq_sampled_only_restart(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=None, b=1,
                                num_clients=None, draw=None, **_):
    """WRONG (shows only after a period in which some client did not transmit): only clients that transmitted
    in the previous period restart from the new w at a period's start; a client that was not sampled continues
    from its own theta. Eq. (6) restarts every client, g_{k,t} = w_t when t - 1 is in [T]_L, sampled or not."""
    st = state if state is not None else {"t": 1, "w0": None, "th": {}, "synced": None}
    t, L = st["t"], int(period)
    K = num_clients or len(clients)
    start = (t - 1) % L == 0
    if start:
        st["w0"] = x.copy()
    for c in clients:
        fresh = c.cid not in st["th"] or st["synced"] is None or c.cid in st["synced"]
        g = x if (start and fresh) else st["th"][c.cid]
        st["th"][c.cid] = g - eta * c.grad(g)
    out = x
    if t % L == 0:
        acc, sent = np.zeros_like(x), set()
        for c in clients:
            on = bool(draw["participate"][c.cid]) if draw is not None and "participate" in draw else rng.random() < p
            if on:
                sent.add(c.cid)
                unif = draw["uniforms"][c.cid] if draw is not None and "uniforms" in draw else rng.random(x.size)
                acc += quantize(-(st["th"][c.cid] - st["w0"]) / (eta * p), s, b, unif)
        out = st["w0"] - eta / K * acc
        st["synced"] = sent
    st["t"] = t + 1
    return out, st


def ofediq_rounding_flipped(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=None, b=1,
                            num_clients=None, draw=None, **_):
    """WRONG: the quantizer rounds up iff the uniform is *above* s r - m, i.e. with probability
    1 - (s r - m); Definition 2 rounds up with probability s r - m (unbiased). The expectation of Q(u) is then
    not u (except where s r - m = 1/2)."""
    st = state if state is not None else {"t": 1, "w0": None, "th": {}}
    t, L = st["t"], int(period)
    K = num_clients or len(clients)
    start = (t - 1) % L == 0
    if start:
        st["w0"] = x.copy()
    for c in clients:
        g = x if start else st["th"][c.cid]
        st["th"][c.cid] = g - eta * c.grad(g)
    out = x
    if t % L == 0:
        acc = np.zeros_like(x)
        for c in clients:
            on = bool(draw["participate"][c.cid]) if draw is not None and "participate" in draw else rng.random() < p
            if not on:
                continue
            u = -(st["th"][c.cid] - st["w0"]) / (eta * p)
            unif = np.asarray(draw["uniforms"][c.cid] if draw is not None and "uniforms" in draw else rng.random(x.size))
            if s is None:
                acc += u
                continue
            q = np.zeros_like(u)
            for blk in np.array_split(np.arange(u.size), b):
                nrm = np.linalg.norm(u[blk])
                if blk.size == 0 or nrm == 0:
                    continue
                r = np.abs(u[blk]) / nrm
                lvl = np.minimum(np.floor(s * r), s - 1)
                up = unif[blk] > s * r - lvl
                q[blk] = nrm * np.sign(u[blk]) * (lvl + up) / s
            acc += q
        out = st["w0"] - eta / K * acc
    st["t"] = t + 1
    return out, st



def ofediq_fixed_size_sample(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=None, b=1,
                             num_clients=None, draw=None, **_):
    """WRONG (own sampling with a wrong law): without a draw it samples round(p K) clients uniformly without
    replacement (the usual "clients per round" sampler). Each client's marginal is round(p K)/K, which is p
    only when p K is an integer (round(0.5) = 0 at K = 2, p = 0.25), and the coins are never independent (at
    p = 0.5, K = 2 exactly one client transmits). Alg. 2: independent Bernoulli(p_k) per client."""
    st = state if state is not None else {"t": 1, "w0": None, "th": {}}
    t, L = st["t"], int(period)
    K = num_clients or len(clients)
    start = (t - 1) % L == 0
    if start:
        st["w0"] = x.copy()
    for c in clients:
        g = x if start else st["th"][c.cid]
        st["th"][c.cid] = g - eta * c.grad(g)
    out = x
    if t % L == 0:
        if draw is not None and "participate" in draw:
            chosen = {c.cid for c in clients if draw["participate"][c.cid]}
        else:
            k = int(round(p * len(clients)))
            chosen = {clients[i].cid for i in rng.choice(len(clients), size=k, replace=False)}
        acc = np.zeros_like(x)
        for c in clients:
            if c.cid in chosen:
                unif = draw["uniforms"][c.cid] if draw is not None and "uniforms" in draw else rng.random(x.size)
                acc += quantize(-(st["th"][c.cid] - st["w0"]) / (eta * p), s, b, unif)
        out = st["w0"] - eta / K * acc
    st["t"] = t + 1
    return out, st


def ofediq_dropout_p(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=None, b=1,
                     num_clients=None, draw=None, **_):
    """WRONG (invisible at the default p = 0.5): the unbiasing factor is 1/(1 - p), p read as a drop-out
    probability, while the transmission itself follows p (or the kit's draw). Eq. (8) divides by p_k, the
    transmission probability, so the aggregate is biased for p != 1/2."""
    st = state if state is not None else {"t": 1, "w0": None, "th": {}}
    t, L = st["t"], int(period)
    K = num_clients or len(clients)
    start = (t - 1) % L == 0
    if start:
        st["w0"] = x.copy()
    for c in clients:
        g = x if start else st["th"][c.cid]
        st["th"][c.cid] = g - eta * c.grad(g)
    out = x
    if t % L == 0:
        keep = 1.0 - p if p < 1.0 else 1.0
        acc = np.zeros_like(x)
        for c in clients:
            on = bool(draw["participate"][c.cid]) if draw is not None and "participate" in draw else rng.random() < p
            if on:
                unif = draw["uniforms"][c.cid] if draw is not None and "uniforms" in draw else rng.random(x.size)
                acc += quantize(-(st["th"][c.cid] - st["w0"]) / (eta * keep), s, b, unif)
        out = st["w0"] - eta / K * acc
    st["t"] = t + 1
    return out, st


class _Clock:
    """Opaque OFedIQ state: step counter, period-start model, local models stacked by client id."""

    def __init__(self):
        self.t, self.w0, self.ids, self.theta = 1, None, [], None


def ofediq_vector_object(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=None, b=1,
                         num_clients=None, draw=None, **_):
    """Correct. Vectorised over clients (rows ordered by id), an opaque state object; own coins drawn as one
    vector rng.random(n) < p per period (independent), own rounding uniforms rng.random((n, d))."""
    ck = state if state is not None else _Clock()
    cl = sorted(clients, key=lambda c: c.cid)
    n, d = len(cl), x.size
    K = num_clients or n
    start = (ck.t - 1) % period == 0
    if start:
        ck.w0 = x.copy()
        ck.theta = np.tile(x, (n, 1))
        ck.ids = [c.cid for c in cl]
    G = np.stack([c.grad(ck.theta[i]) for i, c in enumerate(cl)])
    ck.theta = ck.theta - eta * G
    out = x
    if ck.t % period == 0:
        if draw is not None and "participate" in draw:
            on = np.array([bool(draw["participate"][c.cid]) for c in cl])
        else:
            on = rng.random(n) < p
        if draw is not None and "uniforms" in draw:
            Uni = np.array([np.asarray(draw["uniforms"][c.cid], float) for c in cl])
        else:
            Uni = rng.random((n, d))
        Mv = -(ck.theta - ck.w0) / (eta * p)
        acc = np.zeros(d)
        for i in np.flatnonzero(on):
            acc += quantize(Mv[i], s, b, Uni[i])
        out = ck.w0 - eta / K * acc
    ck.t += 1
    return out, ck


CORRECT = [
    ("ofediq_dict", ofediq_dict, {}),
    ("ofediq_vector_object", ofediq_vector_object, {}),
]
WRONG = [
    ("ofediq_dropout_p", ofediq_dropout_p, {}),
    ("ofediq_fixed_size_sample", ofediq_fixed_size_sample, {}),
    ("ofediq_systematic_coins", ofediq_systematic_coins, {}),
    ("ofediq_sampled_only_restart", ofediq_sampled_only_restart, {}),
    ("ofediq_rounding_flipped", ofediq_rounding_flipped, {}),
]
