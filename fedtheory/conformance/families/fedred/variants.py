"""FedRed (Jiang, Rodomanov & Stich 2024, Algs. 2-3)
written as framework code (a loop over client objects, in a chosen ``dtype``), with ``slip`` options:
the power test's wrong implementations and differently written correct ones."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...statekit import forgetful, opaque, sealed
from ...textbook import client_data, client_weights

__all__ = ["fedred", "TEXTBOOK", "WRONG", "CORRECT"]


def fedred(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized", reset=True,
           batch_size=None, weighting="uniform", draw=None, slip=None, dtype=np.float64, **_):
    """One iteration of FedRed (Alg. 2) / FedRed-GD/-SGD (Alg. 3) with control variate (4)."""
    x = np.asarray(x).astype(dtype)
    w = client_weights(clients, "uniform" if slip == "average_unweighted" else weighting, dtype)
    data = [client_data(c, dtype) for c in clients]

    def cv(at):
        G = np.stack([A @ at - b for _, _, A, b in data])
        return w @ G - G

    if state is None:
        X, H = np.tile(x, (len(clients), 1)), cv(x)
    else:
        # a client without a stored local iterate starts from x~ (Alg. 2's initialisation)
        X = np.stack([np.asarray(state["x_i"].get(c.cid, x), dtype=dtype) for c in clients])
        H = np.stack([np.asarray(state["h_i"][c.cid], dtype=dtype) for c in clients])
    if draw is not None and "communicate" in draw and slip != "always_communicate":
        communicate = bool(draw["communicate"])
    else:
        # own-coin slips: half the probability; 1/3 where the paper's p is 0.3 (a coin the old 400-iteration
        # z-test accepted, z = 2.6 against 5)
        q = {"own_coin_biased": p / 2, "own_coin_one_third": 1 / 3, "own_coin_one_minus_p": 1 - p}.get(slip, p)
        communicate = slip == "always_communicate" or bool(rng.random() < q)
        if slip == "own_coin_capped":  # forced after 2 iterations without communicating: depends on history
            idle = int((state or {}).get("idle", 0))
            communicate = communicate or idle >= 2
        if slip == "own_coin_credit":  # a deterministic credit counter: frequency exactly p, no randomness
            credit = float((state or {}).get("credit", 0.0)) + p
            communicate = credit >= 1.0 - 1e-12
        if slip == "own_coin_sticky" and state is not None and rng.random() < 0.5:
            communicate = bool(state["last"])  # repeats the previous coin half of the time: Bernoulli(p), correlated
    lam, eta = dtype(lam), dtype(eta)
    Y = []
    for i, (c, (Z, t, A, b)) in enumerate(zip(clients, data)):
        if solver == "exact":
            total = lam + 1 / eta
            rhs = b - H[i] + lam * x + (0 if slip == "exact_wrong_center" else X[i] / eta)
            Y.append(np.linalg.solve(A + total * np.eye(x.size, dtype=dtype), rhs))
            continue
        if batch_size is not None and slip != "sgd_full_batch":
            rows = np.asarray(draw["batches"][c.cid]) if draw and "batches" in draw else \
                rng.choice(c.num_examples, size=batch_size, replace=False)
            g = Z[rows].T @ (Z[rows] @ X[i] - t[rows]) / dtype(len(rows))
        else:
            g = A @ X[i] - b
        if slip == "lam_eta_missing":
            Y.append(X[i] - eta * (g + H[i]))
        else:
            Y.append((X[i] + lam * eta * x - eta * (g + H[i])) / (1 + lam * eta))
    Y = np.stack(Y)
    x_new = x
    if communicate:
        x_new = w @ (X if slip == "ref_from_old_locals" else Y)
        if slip != "cv_not_refreshed":
            H = cv(x_new)
        if (reset and slip != "no_reset") or slip == "always_reset":
            Y = np.tile(x_new, (len(clients), 1))
    st = {"x_i": {c.cid: Y[i].astype(np.float64) for i, c in enumerate(clients)},
          "h_i": {c.cid: H[i].astype(np.float64) for i, c in enumerate(clients)}}
    if slip == "own_coin_capped":
        st["idle"] = 0 if communicate else int((state or {}).get("idle", 0)) + 1
    if slip == "own_coin_credit":
        st["credit"] = credit - 1.0 if communicate else credit
    if slip == "own_coin_sticky":
        st["last"] = communicate
    return x_new.astype(np.float64), st


def _fedred_reversed(x, clients, **kw):
    """FedRed with the clients processed in reverse order (another summation order of every average)."""
    x_new, st = fedred(x, list(reversed(clients)), **kw)
    return x_new, st


TEXTBOOK = fedred
WRONG: list[Variant] = [
    Variant("fedred", "no_reset", partial(fedred, slip="no_reset")),
    Variant("fedred", "cv_not_refreshed", partial(fedred, slip="cv_not_refreshed")),
    Variant("fedred", "lam_eta_missing", partial(fedred, slip="lam_eta_missing")),
    Variant("fedred", "always_communicate", partial(fedred, slip="always_communicate")),
    Variant("fedred", "own_coin_biased", partial(fedred, slip="own_coin_biased")),
    Variant("fedred", "own_coin_one_third", partial(fedred, slip="own_coin_one_third"), {"p": 0.3}),
    Variant("fedred", "ref_from_old_locals", partial(fedred, slip="ref_from_old_locals")),
    Variant("fedred", "always_reset", partial(fedred, slip="always_reset"), {"reset": False}),
    Variant("fedred", "average_unweighted", partial(fedred, slip="average_unweighted"), {"weighting": "num_examples"}),
    Variant("fedred", "sgd_full_batch", partial(fedred, slip="sgd_full_batch"), {"batch_size": 2}),
    Variant("fedred", "exact_wrong_center", partial(fedred, slip="exact_wrong_center"), {"solver": "exact"}),
    Variant("fedred", "forgets_local_iterates", forgetful(fedred, "x_i")),
    # 1 - p: right at the default p = 1/2, wrong at the kit's second p
    Variant("fedred", "own_coin_one_minus_p", partial(fedred, slip="own_coin_one_minus_p")),
    # its own coin forced after two idle iterations (a staleness cap): right from state=None, wrong along a chain
    Variant("fedred", "own_coin_capped", partial(fedred, slip="own_coin_capped")),
    # the right frequency with a law that depends on the history: a deterministic credit counter, and a coin that
    # repeats the previous one half of the time (marginally Bernoulli(p), correlated)
    Variant("fedred", "own_coin_credit", partial(fedred, slip="own_coin_credit")),
    Variant("fedred", "own_coin_sticky", partial(fedred, slip="own_coin_sticky")),
]
CORRECT: list[Variant] = [
    Variant("fedred", "float32", partial(fedred, dtype=np.float32), {}, 1e-4),
    Variant("fedred", "reverse_order", _fedred_reversed, {"solver": "exact", "reset": False}),
    Variant("fedred", "opaque_state", opaque(fedred)),
    Variant("fedred", "sgd_minibatches", fedred, {"batch_size": 2}),
    Variant("fedred", "sealed_state", sealed(fedred)),
]
