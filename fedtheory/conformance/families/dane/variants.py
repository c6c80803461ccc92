"""DANE / DANE+ (Jiang, Rodomanov & Stich 2024, Alg. 1)
written as framework code (a loop over client objects, in a chosen ``dtype``), with ``slip`` options:
the power test's wrong implementations and differently written correct ones."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...statekit import opaque, sealed
from ...textbook import client_data, client_weights

__all__ = ["dane", "TEXTBOOK", "WRONG", "CORRECT"]


def dane(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1, control_variate="gradient",
         m=1.0, averaging="standard", weighting="uniform", draw=None, slip=None, dtype=np.float64, **_):
    """DANE+ (Jiang, Rodomanov & Stich 2024, Alg. 1): x_i = argmin f_i + <h_i, .> + lam/2||. - x||^2 (or K GD steps
    from x, last iterate); x+ = sum_i w_i x_i or x_{xi}; (B.84) h_i+ = h_i + m (x_i - x+)."""
    x0 = np.asarray(x)
    x = x0.astype(dtype)
    lam, eta = dtype(lam / 2 if slip == "prox_half" else lam), dtype(local_step)
    w = client_weights(clients, "uniform" if slip == "uniform_weights" else weighting, dtype)
    data = [client_data(c, dtype) for c in clients]
    at = x
    if slip == "cv_stale" and isinstance(state, dict) and "x_prev" in state:
        at = np.asarray(state["x_prev"], dtype=dtype)  # the control variate of the previous round's point
    G = np.stack([A @ at - b for _, _, A, b in data])
    if control_variate == "scaffnew":
        H = np.stack([np.asarray(state["h_i"][c.cid], dtype=dtype) for c in clients]) if state else w @ G - G
        if state is None and slip == "b84_start":
            H = -H  # h_0 = grad f_i(x^0) - grad f(x^0): another start App. B.3 allows (it sums to zero)
        elif state is None and slip == "b84_zero_start":
            H = 0 * H  # h_0 = 0: allowed (App. B.3 asks only sum_i w_i h_i0 = 0)
        elif state is None and slip == "b84_start_nonzero_sum":
            H = H + G  # h_0 = grad f(x^0): sum_i w_i h_i0 = grad f(x^0), not 0 (App. B.3 does not allow it)
    else:
        H = w @ G - G
        H = {"cv_sign": -H, "no_cv": 0 * H}.get(slip, H)
    Y = []
    for (_Z, _t, A, b), h in zip(data, H):
        if local_steps is None:
            Y.append(np.linalg.solve(A + lam * np.eye(x.size, dtype=dtype), b - h + lam * x))
        else:
            y = x.copy()
            for _k in range(local_steps - (1 if slip == "k_minus_1" else 0)):
                y = y - eta * (A @ y - b + h + lam * (y - x))
            Y.append(y)
    Y = np.stack(Y)
    if averaging == "random" and slip != "random_ignores_draw":
        if slip == "random_first":
            j = 0
        elif draw is not None:
            j = [c.cid for c in clients].index(draw["client"])
        else:  # its own xi_r ~ w (uniform where the slip forgets the weights)
            if slip == "own_selection_by_sorted_id":  # the weights of the clients sorted by id, used by position
                j = int(rng.choice(len(clients), p=w[np.argsort([c.cid for c in clients])]))
            elif slip == "own_selection_reshuffled":  # cycles through the clients in a shuffled order
                ids = [c.cid for c in clients]
                left = list(state["left"]) if isinstance(state, dict) and state.get("left") else \
                    [ids[k] for k in rng.permutation(len(clients))]
                j = ids.index(left.pop(0))
            else:
                j = int(rng.choice(len(clients), p=None if slip == "own_selection_uniform" else w))
        x_new = Y[j]
    else:
        x_new = w @ Y
    out_state = None
    if control_variate == "scaffnew":
        mm = {"b84_m_half": m / 2, "b84_sign": -m}.get(slip, m)
        H_new = H if slip == "b84_stale" else H + dtype(mm) * (Y - x_new)
        out_state = {"h_i": {c.cid: H_new[i].astype(np.float64) for i, c in enumerate(clients)}}
    elif slip == "cv_stale":
        out_state = {"x_prev": x.copy()}
    elif slip == "own_selection_reshuffled" and averaging == "random" and draw is None:
        out_state = {"left": left}
    x_new = x_new.astype(np.float64)
    return x_new if out_state is None else (x_new, out_state)


def _dane_preconditioned(x, clients, *, lam=1.0, weighting="uniform", **_):
    """DANE with exact solves written as the preconditioned step x - [sum_i w_i (A_i + lam I)^{-1}] grad f(x)."""
    w = _w(clients, weighting)
    P = sum(wi * np.linalg.inv(c.features.T @ c.features / c.num_examples + lam * np.eye(x.size))
            for wi, c in zip(w, clients))
    g = sum(wi * c.grad(x) for wi, c in zip(w, clients))
    return x - P @ g


def _w(clients, weighting):
    m = np.array([c.num_examples if weighting == "num_examples" else 1 for c in clients], dtype=np.float64)
    return m / m.sum()


TEXTBOOK = dane
WRONG: list[Variant] = [
    Variant("dane", "cv_sign", partial(dane, slip="cv_sign")),
    Variant("dane", "no_cv", partial(dane, slip="no_cv")),
    Variant("dane", "prox_half", partial(dane, slip="prox_half")),
    Variant("dane", "cv_stale", partial(dane, slip="cv_stale")),
    Variant("dane", "uniform_weights", partial(dane, slip="uniform_weights"), {"weighting": "num_examples"}),
    Variant("dane", "k_minus_1", partial(dane, slip="k_minus_1"), {"local_steps": 4}),
    Variant("dane", "b84_m_half", partial(dane, slip="b84_m_half"), {"control_variate": "scaffnew", "m": 0.7}),
    Variant("dane", "b84_sign", partial(dane, slip="b84_sign"), {"control_variate": "scaffnew", "m": 0.7}),
    Variant("dane", "b84_stale", partial(dane, slip="b84_stale"), {"control_variate": "scaffnew", "m": 0.7}),
    Variant("dane", "b84_sign_opaque_state", opaque(partial(dane, slip="b84_sign")),
            {"control_variate": "scaffnew", "m": 0.7}),
    # a start whose control variates do not sum to zero (App. B.3 asks sum_i w_i h_i0 = 0)
    Variant("dane", "b84_start_nonzero_sum_opaque_state", opaque(partial(dane, slip="b84_start_nonzero_sum")),
            {"control_variate": "scaffnew", "m": 0.7}),
    Variant("dane", "b84_start_nonzero_sum", partial(dane, slip="b84_start_nonzero_sum"),
            {"control_variate": "scaffnew", "m": 0.7}),
    Variant("dane", "random_ignores_draw", partial(dane, slip="random_ignores_draw"), {"averaging": "random"}),
    Variant("dane", "random_first", partial(dane, slip="random_first"), {"averaging": "random"}),
    Variant("dane", "own_selection_uniform", partial(dane, slip="own_selection_uniform"),
            {"averaging": "random", "weighting": "num_examples"}),
    # its own selection law right only when the clients come sorted by id
    Variant("dane", "own_selection_by_sorted_id", partial(dane, slip="own_selection_by_sorted_id"),
            {"averaging": "random", "weighting": "num_examples"}),
    # its own selection cycles through the clients in a shuffled order (random reshuffling): uniform in each round
    # from a fresh start, but never the same client twice in a row within a cycle, where xi_r is i.i.d.
    Variant("dane", "own_selection_reshuffled", partial(dane, slip="own_selection_reshuffled"), {"averaging": "random"}),
]
CORRECT: list[Variant] = [
    Variant("dane", "float32", partial(dane, dtype=np.float32), {}, 1e-4),
    Variant("dane", "float32_b84_inexact", partial(dane, dtype=np.float32),
            {"control_variate": "scaffnew", "local_steps": 3}, 1e-4),
    Variant("dane", "preconditioned_step", _dane_preconditioned),
    Variant("dane", "random_selection", dane, {"averaging": "random"}),
    Variant("dane", "b84_opaque_state", opaque(dane), {"control_variate": "scaffnew", "m": 0.7}),
    Variant("dane", "b84_sealed_state", sealed(dane), {"control_variate": "scaffnew", "m": 0.7}),
    # other starts App. B.3 allows (any h_i0 with sum_i w_i h_i0 = 0), readable and opaque
    Variant("dane", "b84_zero_start", partial(dane, slip="b84_zero_start"), {"control_variate": "scaffnew", "m": 0.7}),
    Variant("dane", "b84_zero_start_opaque_state", opaque(partial(dane, slip="b84_zero_start")),
            {"control_variate": "scaffnew", "m": 0.7}),
    Variant("dane", "b84_negated_start", partial(dane, slip="b84_start"), {"control_variate": "scaffnew", "m": 0.7}),
    Variant("dane", "b84_zero_start_k_steps_num_examples", partial(dane, slip="b84_zero_start"),
            {"control_variate": "scaffnew", "m": 0.7, "local_steps": 3, "weighting": "num_examples"}),
]
