"""FedElasticNet Alg. 3 (Kim et al.)
written as framework code (a loop over client objects, in a chosen ``dtype``), with ``slip`` options:
the power test's wrong implementations and differently written correct ones."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...statekit import sealed, zero_absent
from ...textbook import client_data
from ..fedelasticnet_fedavg.variants import elastic_solve, soft

__all__ = ["fedelasticnet_feddyn", "TEXTBOOK", "WRONG", "CORRECT"]


def fedelasticnet_feddyn(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed",
                         weighting="uniform", num_clients=None, slip=None, **_):
    """FedElasticNet Alg. 3: th_k by eq. (10) (ISTA), line 6 by the declared reading, lines 12-13."""
    state_given = state is not None
    state = state or {"h": np.zeros_like(x), "g_i": {}}
    h, g_i = np.asarray(state["h"]), dict(state["g_i"])
    reading = {"always_kkt": "kkt", "always_printed": "printed"}.get(slip, sign_at_zero)
    thetas, dh = [], np.zeros_like(x)
    for cl in clients:
        _, _, A, b = client_data(cl, np.float64)
        g = g_i.get(cl.cid, np.zeros_like(x))
        if slip == "late_joiner_gradient" and state_given and cl.cid not in g_i:
            g = A @ x - b  # a client seen for the first time starts from its gradient (line 1 says 0)
        th = x - soft(A @ x - b - g, l1) / (np.diag(A) + alpha) if slip == "separable_formula" else \
            elastic_solve(A, b + g, x, alpha, l1)  # the soft-threshold is exact for diagonal A only
        D = th - x
        if reading == "kkt":
            g_new = A @ th - b
        else:
            g_new = g - alpha * D - (0.0 if slip == "g_without_l1" else l1 * np.sign(D))
        dh += (g_new - g) if slip != "h_without_l1" else (-alpha * D)
        g_i[cl.cid] = g_new
        thetas.append(th)
    h_new = h + dh / num_clients
    return np.mean(thetas, axis=0) - h_new / alpha, {"h": h_new, "g_i": g_i}


TEXTBOOK = fedelasticnet_feddyn
WRONG: list[Variant] = [
    Variant("fedelasticnet_feddyn", "always_kkt", partial(fedelasticnet_feddyn, slip="always_kkt")),
    Variant("fedelasticnet_feddyn", "separable_formula", partial(fedelasticnet_feddyn, slip="separable_formula")),
    Variant("fedelasticnet_feddyn", "h_without_l1", partial(fedelasticnet_feddyn, slip="h_without_l1")),
    Variant("fedelasticnet_feddyn", "g_without_l1", partial(fedelasticnet_feddyn, slip="g_without_l1")),
    Variant("fedelasticnet_feddyn", "always_printed", partial(fedelasticnet_feddyn, slip="always_printed"),
            {"sign_at_zero": "kkt"}),
    Variant("fedelasticnet_feddyn", "absent_g_i_reset", zero_absent(fedelasticnet_feddyn, "g_i")),
    Variant("fedelasticnet_feddyn", "late_joiner_gradient", partial(fedelasticnet_feddyn, slip="late_joiner_gradient")),
]
CORRECT: list[Variant] = [
    Variant("fedelasticnet_feddyn", "kkt_reading", fedelasticnet_feddyn, {"sign_at_zero": "kkt"}),
    Variant("fedelasticnet_feddyn", "sealed_state", sealed(fedelasticnet_feddyn)),
]
