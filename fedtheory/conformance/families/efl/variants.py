"""EFL (Ma et al., Alg. 1)
written as framework code (a loop over client objects, in a chosen ``dtype``), with ``slip`` options:
the power test's wrong implementations and differently written correct ones."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...statekit import opaque, sealed
from ...textbook import client_data, client_weights

__all__ = ["efl", "TEXTBOOK", "WRONG", "CORRECT"]


def _st(T, q, slip=None):
    """ST (EFL Alg. 2): the k = max(floor(d q), 1) largest magnitudes -> mean kept magnitude times the sign."""
    if q is None:
        return T.copy()
    k = max(int(np.floor(T.size * q + 1e-12)), 1)
    keep = np.argsort(-np.abs(T), kind="stable")[:k]
    out = np.zeros_like(T)
    out[keep] = T[keep] if slip == "st_keeps_values" else np.abs(T[keep]).mean() * np.sign(T[keep])
    return out


def efl(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
        variant="consistent", weighting="num_examples", draw=None, slip=None, dtype=np.float64, **_):
    """EFL (Ma et al., Alg. 1 + Alg. 2): sync w^k + b, s_k steps on the elastic objective (eqs. 2-4), error
    feedback (eq. 5), aggregation with p_tau^k = E p^k / s_k (eq. 6, Section 4.2), server error feedback."""
    x = np.asarray(x)
    d = x.size
    st = state or {"w_i": {}, "r_i": {}, "r": np.zeros(d), "b": np.zeros(d), "U": np.zeros(d), "V": np.zeros(d),
                   "seen": {}}
    U, V = np.asarray(st["U"], dtype=dtype), np.asarray(st["V"], dtype=dtype)
    sign = -1.0 if slip == "elastic_sign" else (0.5 if slip == "elastic_half" else 1.0)
    p = client_weights(clients, weighting, np.float64)
    w_i, r_i, seen = dict(st["w_i"]), dict(st["r_i"]), dict(st["seen"])
    sent_sum, ends = np.zeros(d), {}
    for pk, c in zip(p, clients):
        s = int(draw["steps"][c.cid])
        if s == 0 and slip == "inactive_trained":
            s = E
        if s == 0:
            seen[c.cid] = False
            if slip == "idle_drops_residual":
                r_i.pop(c.cid, None)
            continue
        if slip == "sync_missing" and c.cid in w_i:
            start = np.asarray(w_i[c.cid])  # its own last start model, without the broadcast
        else:
            start = np.asarray(w_i[c.cid]) + np.asarray(st["b"]) if seen.get(c.cid) else x.copy()
        Z, t, A, b = client_data(c, dtype)
        w = start.astype(dtype)
        for _k in range(s):
            w = w - dtype(step) * (A @ w - b + dtype(lam) * sign * (U * w - V))
        R = np.zeros(d) if slip == "no_error_feedback" else np.asarray(r_i.get(c.cid, np.zeros(d)))
        delta = R + (w.astype(np.float64) - start)
        comp = _st(delta, q, slip)
        r_i[c.cid] = delta - comp
        coef = pk if aggregation == "fedavg" or slip == "no_compensation" else E * pk / s
        sent_sum += coef * (delta if variant == "printed" else comp)
        w_i[c.cid], seen[c.cid], ends[c.cid] = start, True, w.astype(np.float64)
    RG = np.zeros(d) if slip == "server_no_error_feedback" else np.asarray(st["r"])
    delta_g = RG + sent_sum
    bcast = _st(delta_g, q, slip)
    x_new = x + (delta_g if variant == "printed" else bcast)
    # u^k = diag(I_k) at the end model: diag(A_k) for least squares (unit-variance Gaussian likelihood),
    # v^k = u^k o w^k; U, V sum over this round's reporters
    U_new, V_new = np.zeros(d), np.zeros(d)
    for c in clients:
        if lam > 0 and c.cid in ends:
            u = np.diag(c.features.T @ c.features) / c.num_examples
            U_new, V_new = U_new + u, V_new + u * ends[c.cid]
    return x_new.astype(np.float64), {"w_i": w_i, "r_i": r_i, "r": delta_g - bcast, "b": bcast, "U": U_new,
                                      "V": V_new, "seen": seen}


TEXTBOOK = efl
WRONG: list[Variant] = [
    Variant("efl", "no_compensation", partial(efl, slip="no_compensation")),
    Variant("efl", "inactive_trained", partial(efl, slip="inactive_trained")),
    Variant("efl", "elastic_sign", partial(efl, slip="elastic_sign")),
    Variant("efl", "elastic_half", partial(efl, slip="elastic_half")),
    Variant("efl", "no_error_feedback", partial(efl, slip="no_error_feedback"), {"q": 0.5}),
    Variant("efl", "server_no_error_feedback", partial(efl, slip="server_no_error_feedback"), {"q": 0.5}),
    Variant("efl", "st_keeps_values", partial(efl, slip="st_keeps_values"), {"q": 0.5}),
    Variant("efl", "sync_missing", partial(efl, slip="sync_missing"), {"q": 0.5}),
    # error feedback lost for a client idle in a round (its client object rebuilt): shows only when it returns
    Variant("efl", "idle_client_drops_residual", partial(efl, slip="idle_drops_residual"), {"q": 0.3}),
]
CORRECT: list[Variant] = [
    Variant("efl", "float32_compressed", partial(efl, dtype=np.float32), {"q": 0.5}, 1e-4),
    Variant("efl", "opaque_state_printed", opaque(efl), {"variant": "printed", "q": 0.3}),
    Variant("efl", "sealed_state", sealed(efl), {"q": 0.3}),
]
