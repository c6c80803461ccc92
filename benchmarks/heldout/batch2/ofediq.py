"""OFedIQ (Kwon, Park & Hong, Alg. 2), one call per time step t = 1, 2, ...: every client k steps from
g_k = w_t at a period start ((t - 1) mod L = 0) else theta_k: theta_k <- g_k - eta grad f_k(g_k) (7); at
t mod L = 0 client k transmits with probability p (the kit's draw["participate"] when given)
m_k = Q_{s,b}(-(theta_k - w_{t-L+1})/(eta p)) (8) and w_{t+1} = w_{t-L+1} - eta/K sum_S m_k (9); otherwise the
global model stays. Q (Definition 2): b contiguous blocks, |u_i|/||u_B|| rounded to m/s or (m+1)/s, up with
probability s r_i - m (the kit's draw["uniforms"] when given, up iff U_i < s r_i - m); s = None: no quantizer."""
from __future__ import annotations

import numpy as np

from ._common import quad


def quantize(u, s, b, U):
    if s is None:
        return u.copy()
    out = np.zeros_like(u)
    for blk in np.array_split(np.arange(u.size), b):
        nrm = np.linalg.norm(u[blk])
        if nrm == 0:
            continue
        r = np.abs(u[blk]) / nrm
        m = np.minimum(np.floor(s * r), s - 1)
        xi = np.where(np.asarray(U)[blk] < s * r - m, m + 1, m) / s
        out[blk] = nrm * np.sign(u[blk]) * xi
    return out


def _draws(c, draw, rng, p, D):
    part = draw["participate"][c.cid] if draw is not None and "participate" in draw else bool(rng.random() < p)
    U = np.asarray(draw["uniforms"][c.cid]) if draw is not None and "uniforms" in draw else rng.random(D)
    return part, U


def ofediq_dict_loop(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1, num_clients=None,
                     draw=None, **_):
    """Correct: a client loop, dict state {"t", "theta"}; own coins and uniforms from rng without a draw."""
    K = num_clients or len(clients)
    st = state or {"t": 0, "theta": {}}
    t = st["t"] + 1
    theta = dict(st["theta"])
    for c in clients:
        g = x if (t - 1) % period == 0 else theta.get(c.cid, x)
        theta[c.cid] = g - eta * c.grad(g)
    xn = x.copy()
    if t % period == 0:
        for c in clients:
            part, U = _draws(c, draw, rng, p, x.size)
            if part:
                xn -= eta / K * quantize(-(theta[c.cid] - x) / (eta * p), s, b, U)
    return xn, {"t": t, "theta": theta}


class _IQ:
    __slots__ = ("t", "ids", "TH")


def ofediq_opaque_vectorised(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                             num_clients=None, draw=None, **_):
    """Correct: clients stacked, (n, D) arrays in an opaque __slots__ object."""
    K = num_clients or len(clients)
    ids = [c.cid for c in clients]
    AB = [quad(c) for c in clients]
    A = np.stack([a for a, _ in AB]); bb = np.stack([v for _, v in AB])
    new = _IQ(); new.ids = ids
    new.t = (state.t if state is not None else 0) + 1
    if (new.t - 1) % period == 0 or state is None:
        G = np.repeat(x[None], len(ids), 0)
    else:
        pos = {cid: r for r, cid in enumerate(state.ids)}
        G = np.array([state.TH[pos[cid]] if cid in pos else x for cid in ids])
    new.TH = G - eta * (np.einsum("nij,nj->ni", A, G) - bb)
    if new.t % period != 0:
        return x.copy(), new
    M = -(new.TH - x) / (eta * p)
    agg = np.zeros_like(x)
    for r, c in enumerate(clients):
        part, U = _draws(c, draw, rng, p, x.size)
        if part:
            agg += quantize(M[r], s, b, U)
    return x - eta / K * agg, new


def ofediq_p_by_data_share(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                           num_clients=None, draw=None, **_):
    """WRONG: its own coin is Bernoulli(p n_k / mean n) ("p_k proportional to data") while m_k divides by the
    declared p; Alg. 2 with p_k = p transmits with probability p (and the 1/p_k must match the coin)."""
    K = num_clients or len(clients)
    st = state or {"t": 0, "theta": {}}
    t = st["t"] + 1; theta = dict(st["theta"])
    for c in clients:
        g = x if (t - 1) % period == 0 else theta.get(c.cid, x)
        theta[c.cid] = g - eta * c.grad(g)
    xn = x.copy()
    if t % period == 0:
        sizes = np.array([c.num_examples for c in clients], float)
        for c, n in zip(clients, sizes):
            if draw is not None and "participate" in draw:
                part = draw["participate"][c.cid]
            else:
                part = bool(rng.random() < min(1.0, p * n / sizes.mean()))
            U = np.asarray(draw["uniforms"][c.cid]) if draw is not None and "uniforms" in draw else rng.random(x.size)
            if part:
                xn -= eta / K * quantize(-(theta[c.cid] - x) / (eta * p), s, b, U)
    return xn, {"t": t, "theta": theta}


def ofediq_b_as_block_size(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                           num_clients=None, draw=None, **_):
    """WRONG: b read as the block *size* (blocks of b entries); Definition 2 partitions [D] into b blocks."""
    K = num_clients or len(clients)
    st = state or {"t": 0, "theta": {}}
    t = st["t"] + 1; theta = dict(st["theta"])
    for c in clients:
        g = x if (t - 1) % period == 0 else theta.get(c.cid, x)
        theta[c.cid] = g - eta * c.grad(g)
    xn = x.copy()
    if t % period == 0:
        for c in clients:
            part, U = _draws(c, draw, rng, p, x.size)
            if not part:
                continue
            u = -(theta[c.cid] - x) / (eta * p)
            if s is None:
                xn -= eta / K * u
                continue
            q = np.zeros_like(u)
            for lo in range(0, u.size, b):
                blk = slice(lo, lo + b)
                nrm = np.linalg.norm(u[blk])
                if nrm > 0:
                    r = np.abs(u[blk]) / nrm; m = np.minimum(np.floor(s * r), s - 1)
                    q[blk] = nrm * np.sign(u[blk]) * np.where(U[blk] < s * r - m, m + 1, m) / s
            xn -= eta / K * q
    return xn, {"t": t, "theta": theta}


def ofediq_p_in_local_steps(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1,
                            num_clients=None, draw=None, **_):
    """WRONG: the 1/p_k of (8) folded into the local steps (theta <- g - eta/p grad f(g)) and m_k =
    -(theta - w)/eta; the same at L = 1, but for L > 1 the later gradients are taken at the wrong iterates (7)."""
    K = num_clients or len(clients)
    st = state or {"t": 0, "theta": {}}
    t = st["t"] + 1; theta = dict(st["theta"])
    for c in clients:
        g = x if (t - 1) % period == 0 else theta.get(c.cid, x)
        theta[c.cid] = g - eta / p * c.grad(g)
    xn = x.copy()
    if t % period == 0:
        for c in clients:
            part, U = _draws(c, draw, rng, p, x.size)
            if part:
                xn -= eta / K * quantize(-(theta[c.cid] - x) / eta, s, b, U)
    return xn, {"t": t, "theta": theta}


CORRECT = [("dict_state_client_loop", ofediq_dict_loop, {}),
           ("opaque_vectorised_b2", ofediq_opaque_vectorised, {"b": 2})]
WRONG = [("own_coin_p_by_data_share", ofediq_p_by_data_share, {}),
         ("b_read_as_block_size", ofediq_b_as_block_size, {}),
         ("one_over_p_inside_local_steps (L=2 default)", ofediq_p_in_local_steps, {})]
