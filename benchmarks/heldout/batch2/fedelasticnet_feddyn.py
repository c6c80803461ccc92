"""FedElasticNet Alg. 3 (Kim et al.): Delta_k = argmin_u L_k(th + u) - <g_k, u> + alpha/2 ||u||^2
+ lam1 ||u||_1 (eq. 10); line 6 g_k+ = g_k - alpha Delta_k - lam1 sign(Delta_k) ("printed", sign(0) = 0) or
g_k+ = grad L_k(th_k) ("kkt"); line 12 h+ = h + 1/m sum_P (g_k+ - g_k); line 13 th+ = mean_P th_k - h+/alpha."""
from __future__ import annotations

import numpy as np

from ._common import elastic_net, quad


def fen3_opaque_kkt(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, num_clients=None,
                    sign_at_zero="kkt", **_):
    """Correct (KKT reading declared): state a tuple (h, {cid: g_k})."""
    m = num_clients or len(clients)
    h, g = state if state is not None else (np.zeros_like(x), {})
    g = dict(g); hn = h.copy(); ths = []
    for c in clients:
        A, b = quad(c)
        gk = g.get(c.cid, np.zeros_like(x))
        u = elastic_net(A + alpha * np.eye(len(x)), A @ x - b - gk, l1)
        new = A @ (x + u) - b if sign_at_zero == "kkt" else gk - alpha * u - l1 * np.sign(u)
        hn += (new - gk) / m
        g[c.cid] = new; ths.append(x + u)
    return np.mean(ths, 0) - hn / alpha, (hn, g)


def fen3_copysign(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, num_clients=None, **_):
    """WRONG: sign(Delta) computed with np.copysign(1, Delta), which is +-1 at Delta = 0; the printed reading
    has sign(0) = 0 (a zero coordinate of Delta carries no l1 term in lines 6 and 12)."""
    m = num_clients or len(clients)
    st = state or {"h": np.zeros_like(x), "g_i": {}}
    g = dict(st["g_i"]); hn = st["h"].copy(); ths = []
    for c in clients:
        A, b = quad(c)
        gk = g.get(c.cid, np.zeros_like(x))
        u = elastic_net(A + alpha * np.eye(len(x)), A @ x - b - gk, l1)
        s = np.copysign(1.0, u)
        g[c.cid] = gk - alpha * u - l1 * s
        hn -= (alpha * u + l1 * s) / m
        ths.append(x + u)
    return np.mean(ths, 0) - hn / alpha, {"h": hn, "g_i": g}


def fen3_h_sums_all_clients(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, num_clients=None, **_):
    """WRONG: line 12 summed over every client seen (k in [m], with the absent clients' stored th_k), as the
    first line of Lemma B.2's proof is printed; Alg. 3 sums over the participants P_t only."""
    m = num_clients or len(clients)
    st = state or {"h": np.zeros_like(x), "g_i": {}, "theta": {}}
    g = dict(st["g_i"]); th_k = dict(st.get("theta", {})); hn = st["h"].copy(); ths = []
    for c in clients:
        A, b = quad(c)
        gk = g.get(c.cid, np.zeros_like(x))
        u = elastic_net(A + alpha * np.eye(len(x)), A @ x - b - gk, l1)
        g[c.cid] = gk - alpha * u - l1 * np.sign(u)
        th_k[c.cid] = x + u; ths.append(x + u)
    for _k, thk in th_k.items():
        hn -= (alpha * (thk - x) + l1 * np.sign(thk - x)) / m
    return np.mean(ths, 0) - hn / alpha, {"h": hn, "g_i": g, "theta": th_k}


CORRECT = [("opaque_tuple_kkt", fen3_opaque_kkt, {"sign_at_zero": "kkt"})]
WRONG = [("sign_by_copysign (sign(0) = +-1)", fen3_copysign, {}),
         ("h_sums_over_all_clients (Lemma B.2 typo)", fen3_h_sums_all_clients, {})]
