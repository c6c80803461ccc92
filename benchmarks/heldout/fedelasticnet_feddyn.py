"""FedElasticNet Alg. 3 (FedDyn + elastic net, Kim et al.): held-out implementations, from the spec only.

Delta_k = argmin_u f_k(x + u) - <g_k, u> + alpha/2||u||^2 + lam1 ||u||_1 (eq. (10), exact);
line 6: g_k+ = g_k - alpha Delta_k - lam1 sign(Delta_k) ("printed", sign(0) = 0) or grad f_k(theta_k) ("kkt");
line 12: h+ = h + 1/m sum (g_k+ - g_k) (equal to the printed line with the same sign reading);
line 13: x+ = mean theta_k - h+/alpha. State {"h", "g_i"}, g_k = 0 and h = 0 initially.
"""
from __future__ import annotations

import numpy as np

from ._util import enet, quad


def _make(opaque=False, **bug):
    def impl(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed", num_clients=None, **_):
        d = len(x); m = num_clients or len(clients)
        if opaque:
            st = state if state is not None else (np.zeros(d), {})
            h, G = st[0], dict(st[1])
        else:
            h = np.zeros(d) if state is None else np.asarray(state["h"])
            G = {} if state is None else dict(state["g_i"])
        thetas, dg = [], np.zeros(d)
        for c in clients:
            A, b = quad(c)
            g = G.get(c.cid, np.zeros(d))
            D = enet(A + alpha * np.eye(d), A @ x - b - g, l1)
            th = x + D
            if sign_at_zero == "kkt":
                gn = c.grad(th)
            else:
                s = np.sign(th) if bug.get("sign_of_theta") else np.sign(D)
                gn = g - alpha * D - l1 * s
            dg += gn - g; G[c.cid] = gn; thetas.append(th)
        h_new = h + dg / (len(clients) if bug.get("h_over_P") else m)
        xn = np.mean(thetas, 0) - (h if bug.get("old_h") else h_new) / alpha
        return (xn, (h_new, G)) if opaque else (xn, {"h": h_new, "g_i": G})
    return impl


CORRECT = [
    ("dict_state_printed", _make(), {}),
    ("opaque_tuple_state_kkt", _make(opaque=True), {"sign_at_zero": "kkt"}),
]
WRONG = [
    ("server_uses_previous_h", _make(old_h=True), {}),
    ("line6_sign_of_theta", _make(sign_of_theta=True), {}),
    ("h_averaged_over_participants_opaque", _make(opaque=True, h_over_P=True), {}),
]
