"""OFedIQ (Kwon, Park & Hong, Alg. 2), one call per time step t = 1, 2, ...: g_k = w_t at a period start
((t - 1) mod L = 0), else theta_k (eq. 6); theta_k+ = g_k - eta grad f_k(g_k) (eq. 7); at t mod L = 0 each
client transmits with probability p_k the quantized m_k = Q_{s,b}(-(theta_k+ - w_{t-L+1}) / (eta p_k))
(eq. 8) and w_{t+1} = w_{t-L+1} - eta/K sum_{k in S_t} m_k (eq. 9); the model is unchanged inside a period.
Q_{s,b} (Definition 2): blocks np.array_split, level m = min(floor(s r), s - 1), r = |u_i| / ||u_block||,
rounded up with probability s r - m."""
from __future__ import annotations

import numpy as np


def quantize(u: np.ndarray, s, b: int, unif: np.ndarray) -> np.ndarray:
    """Q_{s,b}(u) with the given uniforms (one per coordinate): up iff unif_i < s r_i - m_i; s None = identity."""
    if s is None:
        return u.copy()
    out = np.zeros_like(u)
    for blk in np.array_split(np.arange(u.size), b):
        nrm = np.linalg.norm(u[blk])
        if nrm == 0:
            continue
        r = np.abs(u[blk]) / nrm
        m = np.minimum(np.floor(s * r), s - 1)
        lev = np.where(unif[blk] < s * r - m, m + 1, m) / s
        out[blk] = nrm * np.sign(u[blk]) * lev
    return out


def _step(x, clients, state, rng, draw, eta, L, p, s, b, K, coin=None, unif_fn=None):
    t, theta = (1, {}) if state is None else state
    draw = draw or {}
    new_theta = {}
    for c in clients:
        g = x if (t - 1) % L == 0 else theta[c.cid]
        new_theta[c.cid] = g - eta * c.grad(g)
    if t % L != 0:
        return x.copy(), (t + 1, new_theta)
    tot = np.zeros_like(x)
    for c in clients:
        part = draw["participate"][c.cid] if "participate" in draw else (coin(c) if coin else rng.random() < p)
        if not part:
            continue
        u = -(new_theta[c.cid] - x) / (eta * p)
        un = np.asarray(draw["uniforms"][c.cid], float) if "uniforms" in draw else (
            unif_fn(c, len(x)) if unif_fn else rng.random(len(x)))
        tot += quantize(u, s, b, un)
    return x - eta / K * tot, (t + 1, new_theta)


def ofediq_tuple(x, clients, *, state=None, rng=None, draw=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                 num_clients=None, **_):
    """Correct: tuple state (t, theta by id); its own coins and uniforms from rng when no draw is given."""
    return _step(x, clients, state, rng, draw, eta, period, p, s, b, num_clients or len(clients))


def ofediq_sticky_coins(x, clients, *, state=None, rng=None, draw=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                        num_clients=None, **_):
    """WRONG: its own transmission coin repeats the client's previous coin with probability 1/2 and is a fresh
    Bernoulli(p) otherwise: marginally Bernoulli(p) and independent across clients, but correlated across
    periods, where Alg. 2 draws S_t independently across t (Sec. 2.1)."""
    st = {"inner": None, "last": {}} if state is None else state

    def coin(c):
        prev = st["last"].get(c.cid)
        v = prev if (prev is not None and rng.random() < 0.5) else bool(rng.random() < p)
        st["last"][c.cid] = v
        return v
    x_new, inner = _step(x, clients, st["inner"], rng, draw, eta, period, p, s, b, num_clients or len(clients),
                         coin=coin)
    return x_new, {"inner": inner, "last": dict(st["last"])}


def ofediq_cid_seeded_rounding(x, clients, *, state=None, rng=None, draw=None, eta=0.05, period=2, p=0.5, s=4,
                               b=1, num_clients=None, **_):
    """WRONG: its own rounding uniforms come from a generator seeded with the client id, rebuilt at every
    step ("reproducible clients"), so each client rounds with the same uniforms every time; Definition 2's
    xi_i are fresh independent draws (the quantizer's unbiasedness is over them)."""
    return _step(x, clients, state, rng, draw, eta, period, p, s, b, num_clients or len(clients),
                 unif_fn=lambda c, D: np.random.default_rng(int(c.cid)).random(D))


def make_closure_clock():
    """WRONG: the time step t is kept on the object instead of in the returned state, so a run started again
    from state=None continues the previous run's clock and its periods start at the wrong steps (eq. (6)
    restarts at t = 1, L + 1, ...)."""
    class Clocked:
        t = 1

        def __call__(self, x, clients, *, state=None, rng=None, draw=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                     num_clients=None, **_):
            theta = {} if state is None else state
            th = {c.cid: theta.get(c.cid, x) for c in clients}
            x_new, (_, th) = _step(x, clients, (self.t, th), rng, draw, eta, period, p, s, b,
                                   num_clients or len(clients))
            self.t += 1
            return x_new, th
    return Clocked()


CORRECT = [("tuple_state", ofediq_tuple, {})]
WRONG = [("sticky_own_coins", ofediq_sticky_coins, {}),
         ("cid_seeded_rounding_uniforms", ofediq_cid_seeded_rounding, {}),
         ("clock_on_object", make_closure_clock(), {})]
