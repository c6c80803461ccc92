"""EFL (Ma et al., Alg. 1 with ST of Alg. 2), consistent reading, from the paper and docs/conformance.md only.

Round tau, every client called with its s_k (draw["steps"]; 0 = inactive): an active client starts from the
server model (in sync), takes s_k GD steps on f_k + lam/2 sum_i (w - w_i)^T diag(I_i)(w - w_i), i.e. gradient
grad f_k(w) + lam (U o w - V); Delta_k = R_k + (w_end - w_start), c_k = ST(Delta_k), R_k = Delta_k - c_k.
Server: Delta_G = R_G + sum_k p_tau^k c_k with p_tau^k = E p^k / s_k ("efl") or p^k ("fedavg"),
b = ST(Delta_G), R_G = Delta_G - b, w_G+ = w_G + b. q = None means no compression (ST = identity).
p^k = m_k / sum_j m_j over all N clients ("num_examples") or 1/N. U, V: the sums of the reporting clients'
u_k = diag(Z_k^T Z_k / m_k) (Gaussian Fisher of least squares) and u_k o w_end; kept in the state as "U", "V".
"""
from __future__ import annotations

import numpy as np


def st_compress(T, q):
    """Alg. 2 with exactly k = max(floor(n q), 1) entries (argsort, stable tie-break)."""
    if q is None:
        return T.copy()
    n = T.size
    k = max(int(np.floor(n * q)), 1)
    idx = np.argsort(-np.abs(T), kind="stable")[:k]
    out = np.zeros_like(T)
    mu = np.abs(T[idx]).sum() / k
    out[idx] = mu * np.sign(T[idx])
    return out


def _fisher(c):
    Z = c.features
    return (Z * Z).sum(axis=0) / Z.shape[0]


def efl_dict(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
             variant="consistent", weighting="num_examples", draw=None, **_):
    """Correct. Consistent reading; state {"U", "V", "R": {cid: residual}, "RG"} (a dict with the paper's U, V).
    A client back from idle rounds downloads w_G (every active client starts from the server model)."""
    d = len(x)
    st = {} if state is None else dict(state)
    U = np.asarray(st.get("U", np.zeros(d)), float)
    V = np.asarray(st.get("V", np.zeros(d)), float)
    R = dict(st.get("R", {}))
    RG = np.asarray(st.get("RG", np.zeros(d)), float)
    steps = draw["steps"] if draw is not None else {c.cid: E for c in clients}
    sz = np.array([1.0 if weighting == "uniform" else c.num_examples for c in clients])
    pk = sz / sz.sum()
    agg = np.zeros(d)
    U_new, V_new = np.zeros(d), np.zeros(d)
    for p, c in zip(pk, clients):
        s = int(steps[c.cid])
        if s <= 0:
            continue
        w = x.copy()
        for _ in range(s):
            w = w - step * (c.grad(w) + lam * (U * w - V))
        delta = R.get(c.cid, np.zeros(d)) + (w - x)
        comp = st_compress(delta, q)
        R[c.cid] = delta - comp
        coef = E * p / s if aggregation == "efl" else p
        agg += coef * comp
        u = _fisher(c)
        U_new += u
        V_new += u * w
    DG = RG + agg
    b = st_compress(DG, q)
    return x + b, {"U": U_new, "V": V_new, "R": R, "RG": DG - b}


def efl_active_renormalised(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None,
                            aggregation="efl", variant="consistent", weighting="num_examples", draw=None, **_):
    """WRONG: p^k normalised over the active clients only (s_k > 0), p^k = m_k / sum_{active} m_j. In eq. (1)
    and eq. (6) p^k is the client's fixed weight in the global objective over all N clients, and the declared
    aggregation "efl" is Section 4.2's E p^k / s_k with that p^k; renormalising inflates every active client's
    step whenever someone is inactive."""
    d = len(x)
    st = state or {}
    U, V = np.asarray(st.get("U", np.zeros(d))), np.asarray(st.get("V", np.zeros(d)))
    R, RG = dict(st.get("R", {})), np.asarray(st.get("RG", np.zeros(d)))
    steps = draw["steps"] if draw is not None else {c.cid: E for c in clients}
    active = [c for c in clients if steps[c.cid] > 0]
    tot = sum((1.0 if weighting == "uniform" else c.num_examples) for c in active) or 1.0
    agg, Un, Vn = np.zeros(d), np.zeros(d), np.zeros(d)
    for c in active:
        s = int(steps[c.cid])
        p = (1.0 if weighting == "uniform" else c.num_examples) / tot
        w = x.copy()
        for _ in range(s):
            w = w - step * (c.grad(w) + lam * (U * w - V))
        delta = R.get(c.cid, 0.0) + (w - x)
        comp = st_compress(delta, q)
        R[c.cid] = delta - comp
        agg += (E * p / s if aggregation == "efl" else p) * comp
        u = _fisher(c)
        Un, Vn = Un + u, Vn + u * w
    DG = RG + agg
    b = st_compress(DG, q)
    return x + b, {"U": Un, "V": Vn, "R": R, "RG": DG - b}


def efl_one_step_short(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
                       variant="consistent", weighting="num_examples", draw=None, **_):
    """WRONG: the local loop is `for j in range(1, s)`, s_k - 1 steps instead of s_k (eq. (4), j = 0..s-1);
    a client with s_k = 1 does nothing, yet is still weighted by E p^k / s_k."""
    d = len(x)
    st = state or {}
    U, V = np.asarray(st.get("U", np.zeros(d))), np.asarray(st.get("V", np.zeros(d)))
    R, RG = dict(st.get("R", {})), np.asarray(st.get("RG", np.zeros(d)))
    steps = draw["steps"] if draw is not None else {c.cid: E for c in clients}
    tot = sum((1.0 if weighting == "uniform" else c.num_examples) for c in clients)
    agg, Un, Vn = np.zeros(d), np.zeros(d), np.zeros(d)
    for c in clients:
        s = int(steps[c.cid])
        if s == 0:
            continue
        p = (1.0 if weighting == "uniform" else c.num_examples) / tot
        w = x.copy()
        for _j in range(1, s):
            w = w - step * (c.grad(w) + lam * (U * w - V))
        delta = R.get(c.cid, 0.0) + (w - x)
        comp = st_compress(delta, q)
        R[c.cid] = delta - comp
        agg += (E * p / s if aggregation == "efl" else p) * comp
        u = _fisher(c)
        Un, Vn = Un + u, Vn + u * w
    DG = RG + agg
    b = st_compress(DG, q)
    return x + b, {"U": Un, "V": Vn, "R": R, "RG": DG - b}


def efl_elastic_mean_not_sum(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None,
                             aggregation="efl", variant="consistent", weighting="num_examples", draw=None,
                             num_clients=None, **_):
    """WRONG: the elastic term uses the averages U/N and V/N instead of the sums U = sum_i u_i, V = sum_i v_i
    (eq. (2) sums the penalty over all N clients; eq. (3) defines U, V as sums). Equivalent to lam/N:
    invisible with a single client or lam = 0."""
    d = len(x)
    N = num_clients or len(clients)
    st = state or {}
    U = np.asarray(st.get("U", np.zeros(d)), float) / N
    V = np.asarray(st.get("V", np.zeros(d)), float) / N
    R, RG = dict(st.get("R", {})), np.asarray(st.get("RG", np.zeros(d)))
    steps = draw["steps"] if draw is not None else {c.cid: E for c in clients}
    tot = sum((1.0 if weighting == "uniform" else c.num_examples) for c in clients)
    agg, Un, Vn = np.zeros(d), np.zeros(d), np.zeros(d)
    for c in clients:
        s = int(steps[c.cid])
        if s == 0:
            continue
        p = (1.0 if weighting == "uniform" else c.num_examples) / tot
        w = x.copy()
        for _ in range(s):
            w = w - step * (c.grad(w) + lam * (U * w - V))
        delta = R.get(c.cid, 0.0) + (w - x)
        comp = st_compress(delta, q)
        R[c.cid] = delta - comp
        agg += (E * p / s if aggregation == "efl" else p) * comp
        u = _fisher(c)
        Un, Vn = Un + u, Vn + u * w
    DG = RG + agg
    b = st_compress(DG, q)
    return x + b, {"U": Un, "V": Vn, "R": R, "RG": DG - b}



def efl_E_from_max_steps(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
                         variant="consistent", weighting="num_examples", draw=None, **_):
    """WRONG (invisible whenever some client completes E steps): the compensation uses max_k s_k of this round
    in place of E, p_tau^k = max_j s_j p^k / s_k. Section 4.2's scheme is E p^k / s_k with E the fixed maximum
    number of local steps; when every client is incomplete the aggregate is scaled down."""
    d = len(x)
    st = state or {}
    U, V = np.asarray(st.get("U", np.zeros(d))), np.asarray(st.get("V", np.zeros(d)))
    R, RG = dict(st.get("R", {})), np.asarray(st.get("RG", np.zeros(d)))
    steps = draw["steps"] if draw is not None else {c.cid: E for c in clients}
    E_seen = max(int(steps[c.cid]) for c in clients) or E
    tot = sum((1.0 if weighting == "uniform" else c.num_examples) for c in clients)
    agg, Un, Vn = np.zeros(d), np.zeros(d), np.zeros(d)
    for c in clients:
        s = int(steps[c.cid])
        if s == 0:
            continue
        p = (1.0 if weighting == "uniform" else c.num_examples) / tot
        w = x.copy()
        for _ in range(s):
            w = w - step * (c.grad(w) + lam * (U * w - V))
        delta = R.get(c.cid, 0.0) + (w - x)
        comp = st_compress(delta, q)
        R[c.cid] = delta - comp
        agg += (E_seen * p / s if aggregation == "efl" else p) * comp
        u = _fisher(c)
        Un, Vn = Un + u, Vn + u * w
    DG = RG + agg
    b = st_compress(DG, q)
    return x + b, {"U": Un, "V": Vn, "R": R, "RG": DG - b}


CORRECT = [("efl_dict", efl_dict, {})]
WRONG = [
    ("efl_E_from_max_steps", efl_E_from_max_steps, {}),
    ("efl_active_renormalised", efl_active_renormalised, {}),
    ("efl_one_step_short", efl_one_step_short, {}),
    ("efl_elastic_mean_not_sum", efl_elastic_mean_not_sum, {}),
]
