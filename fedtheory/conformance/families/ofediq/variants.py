"""OFedIQ / FedOGD (Kwon, Park & Hong, Alg. 2)
written as framework code (a loop over client objects, in a chosen ``dtype``), with ``slip`` options:
the power test's wrong implementations and differently written correct ones."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...statekit import sealed

__all__ = ["ofediq", "TEXTBOOK", "WRONG", "CORRECT"]


def _sbq(u, U, s, b, slip):
    """(s, b)-quantizer of OFedIQ (Definition 2): blocks, r = |u|/||u_I||, m = min(floor(s r), s - 1)."""
    if s is None:
        return u.copy()
    out = np.zeros_like(u)
    blocks = [np.arange(u.size)] if slip == "quantizer_ignores_blocks" else np.array_split(np.arange(u.size), b)
    for I in blocks:
        nrm = np.linalg.norm(u[I])
        if nrm == 0:
            continue
        r = np.abs(u[I]) / nrm
        m = np.minimum(np.floor(s * r), s - 1)
        up = 0.0 if slip == "quantizer_rounds_down" else (U[I] < s * r - m)
        out[I] = nrm * np.sign(u[I]) * (m + up) / s
    return out


def _own_uniforms(rng, d, slip):
    """The uniforms U_i of its own rounding; the slips: integers 0/1 for uniforms (a fair coin), one U shared by
    every coordinate."""
    if slip == "own_rounding_coin":
        return rng.integers(0, 2, d).astype(float)
    return np.full(d, rng.random()) if slip == "own_rounding_shared_uniform" else rng.random(d)


def ofediq(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1, weighting="uniform",
           draw=None, slip=None, **_):
    """OFedIQ (Kwon, Park & Hong, Alg. 2) one time step per call, client by client; reports the regret."""
    K = len(clients)
    st = state or {"t": 0, "theta": {}, "acc": {}, "cum": 0.0}
    t = int(st["t"])
    theta, acc = dict(st["theta"]), dict(st["acc"])
    start = t % period == 0 and slip != "no_period_restart"
    loss = sum(c.value(x) for c in clients)
    transmit = (t + 1) % period == 0
    total = np.zeros_like(x)
    sampled = 0
    coins = None
    if transmit and draw is None:  # its own coins and uniforms (the slips: 1 - p, one coin shared by all, ...)
        q = 1.0 - p if slip == "own_participation_one_minus_p" else p
        coins = np.full(K, rng.random() < q) if slip == "own_participation_shared_coin" else rng.random(K) < q
        if slip == "own_participation_every_step":  # a coin per step of the period, all of them won: p^L
            coins = np.all(rng.random((period, K)) < q, axis=0)
        if slip == "own_participation_sticky" and "last" in st:  # repeats the last coin half of the time
            coins = np.where(rng.random(K) < 0.5, np.asarray(st["last"], dtype=bool), coins)
        shared = _own_uniforms(rng, x.size, slip)
        draw = {"participate": {c.cid: bool(coins[i]) for i, c in enumerate(clients)},
                "uniforms": {c.cid: shared if slip == "own_rounding_shared_by_clients" else
                             _own_uniforms(rng, x.size, slip) for c in clients}}
    for c in clients:
        g0 = x if (start or c.cid not in theta) else np.asarray(theta[c.cid])
        grad = c.grad(g0)
        theta[c.cid] = g0 - eta * grad
        acc[c.cid] = grad if (start or c.cid not in acc or slip == "last_gradient_only") else \
            np.asarray(acc[c.cid]) + grad
        if transmit and draw["participate"][c.cid]:
            sampled += 1
            scale = 1.0 if slip == "no_inverse_p" else 1.0 / p
            total += _sbq(acc[c.cid] * scale, np.asarray(draw["uniforms"][c.cid]), s, b, slip)
    x_new = x - eta * total / (max(sampled, 1) if slip == "divide_by_sampled" else K) if transmit else x
    cum = float(st["cum"]) + (sum(c.value(x_new) for c in clients) if slip == "regret_at_new_model" else loss)
    # the comparator: min_w sum_k f_k(w), from the stacked data (the normal equations of all clients)
    Zs = np.vstack([c.features / np.sqrt(c.num_examples) for c in clients])
    ys = np.concatenate([c.targets / np.sqrt(c.num_examples) for c in clients])
    w_opt = np.linalg.lstsq(Zs, ys, rcond=None)[0]
    fmin = sum(c.value(w_opt) for c in clients)
    out = {"t": t + 1, "theta": theta, "acc": acc, "cum": cum, "regret": cum - (t + 1) * fmin}
    if slip == "own_participation_sticky" and (coins is not None or "last" in st):
        out["last"] = coins if coins is not None else st["last"]
    return x_new, out


TEXTBOOK = ofediq
WRONG: list[Variant] = [
    Variant("ofediq", "divide_by_sampled", partial(ofediq, slip="divide_by_sampled")),
    Variant("ofediq", "no_inverse_p", partial(ofediq, slip="no_inverse_p")),
    Variant("ofediq", "no_period_restart", partial(ofediq, slip="no_period_restart")),
    Variant("ofediq", "no_period_restart_L4", partial(ofediq, slip="no_period_restart"), {"period": 4}),
    Variant("ofediq", "last_gradient_only", partial(ofediq, slip="last_gradient_only")),
    Variant("ofediq", "quantizer_rounds_down", partial(ofediq, slip="quantizer_rounds_down")),
    Variant("ofediq", "regret_at_new_model", partial(ofediq, slip="regret_at_new_model")),
    Variant("ofediq", "quantizer_ignores_blocks", partial(ofediq, slip="quantizer_ignores_blocks"), {"b": 2}),
    Variant("ofediq", "own_participation_one_minus_p", partial(ofediq, slip="own_participation_one_minus_p"),
            {"p": 0.3}),
    Variant("ofediq", "own_participation_shared_coin", partial(ofediq, slip="own_participation_shared_coin")),
    Variant("ofediq", "own_rounding_coin", partial(ofediq, slip="own_rounding_coin")),
    Variant("ofediq", "own_rounding_shared_uniform", partial(ofediq, slip="own_rounding_shared_uniform")),
    # a coin at every step of the period (a client transmits with probability p^L), invisible at L = 1
    Variant("ofediq", "own_participation_every_step", partial(ofediq, slip="own_participation_every_step")),
    # each client repeats its coin of the previous period half of the time: marginally Bernoulli(p), independent
    # across clients, but S_t is not independent across t
    Variant("ofediq", "own_participation_sticky", partial(ofediq, slip="own_participation_sticky")),
    # one vector of uniforms shared by every client (their roundings move together)
    Variant("ofediq", "own_rounding_shared_by_clients", partial(ofediq, slip="own_rounding_shared_by_clients")),
]
CORRECT: list[Variant] = [
    Variant("ofediq", "client_loop_with_regret", ofediq, {"period": 3, "s": 2, "b": 2}),
    Variant("ofediq", "fedogd", ofediq, {"p": 1.0, "period": 1, "s": None}),
    Variant("ofediq", "sealed_state", sealed(ofediq)),
]
