"""DANE+ (Jiang, Rodomanov & Stich 2024, Alg. 1), written from the paper and docs/conformance.md only.

Round r: grad f(x) = sum_i w_i grad f_i(x); control variate (1) h_i = grad f(x) - grad f_i(x), or the
(B.84) variate carried in the state (h_{i,0} = grad f(x^0) - grad f_i(x^0), h_i+ = h_i + m (x_i - x+));
F_i(z) = f_i(z) + <h_i, z> + lam/2 ||z - x||^2, x_i = argmin F_i (local_steps=None) or K GD steps of
size eta from x; x+ = sum_i w_i x_i ("standard") or x_xi with xi ~ w ("random", given as draw["client"]).
"""
from __future__ import annotations

import numpy as np


def _w(clients, weighting):
    m = np.array([1.0 if weighting == "uniform" else c.num_examples for c in clients])
    return m / m.sum()


def _Ab(c, dtype=float):
    Z = np.asarray(c.features, dtype=dtype)
    y = np.asarray(c.targets, dtype=dtype)
    return Z.T @ Z / len(y), Z.T @ y / len(y)


def dane_f32_exact(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                   weighting="uniform", **_):
    """Correct (declared rtol 1e-4, weighting="num_examples"): control variate (1) and exact local solves,
    all in float32."""
    w = _w(clients, weighting).astype(np.float32)
    x32 = x.astype(np.float32)
    Abs = [_Ab(c, np.float32) for c in clients]
    grads = [A @ x32 - b for A, b in Abs]
    gf = sum(wi * g for wi, g in zip(w, grads))
    out = np.zeros_like(x32)
    for wi, (A, b), g in zip(w, Abs, grads):
        h = gf - g
        if local_steps is None:
            xi = np.linalg.solve(A + np.float32(lam) * np.eye(len(x), dtype=np.float32), b - h + np.float32(lam) * x32)
        else:
            xi = x32.copy()
            for _ in range(int(local_steps)):
                xi = xi - np.float32(local_step) * (A @ xi - b + h + np.float32(lam) * (xi - x32))
        out += wi * xi
    return out.astype(np.float64)


def dane_random_own_choice(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                           weighting="uniform", averaging="random", draw=None, **_):
    """Correct (declared averaging="random"): randomized averaging. The selected client is draw["client"] when
    the kit gives it, else drawn with rng.choice over the clients with probabilities w (keyed by id, so the
    list order does not matter). Only the selected client's local problem is solved."""
    w = _w(clients, weighting)
    gf = sum(wi * c.grad(x) for wi, c in zip(w, clients))
    if draw is not None and "client" in draw:
        j = draw["client"]
    else:
        j = clients[int(rng.choice(len(clients), p=w))].cid
    c = next(c for c in clients if c.cid == j)
    h = gf - c.grad(x)
    A, b = _Ab(c)
    if local_steps is None:
        return np.linalg.solve(A + lam * np.eye(len(x)), b - h + lam * x)
    z = x.copy()
    for _ in range(int(local_steps)):
        z = z - local_step * (A @ z - b + h + lam * (z - x))
    return z


def dane_b84_tuple(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                   weighting="uniform", m=1.0, **_):
    """Correct (declared control_variate="scaffnew", local_steps=5): the (B.84) variate in an opaque state, a
    tuple of (ids, array of h_i rows); h_{i,0} = grad f(x^0) - grad f_i(x^0)."""
    w = _w(clients, weighting)
    ids = tuple(c.cid for c in clients)
    if state is None:
        G = np.array([c.grad(x) for c in clients])
        H = (w @ G)[None, :] - G
    else:
        old_ids, old_H = state
        row = {cid: old_H[k] for k, cid in enumerate(old_ids)}
        H = np.array([row[cid] for cid in ids])
    Xs = []
    for i, c in enumerate(clients):
        A, b = _Ab(c)
        if local_steps is None:
            Xs.append(np.linalg.solve(A + lam * np.eye(len(x)), b - H[i] + lam * x))
        else:
            z = x.copy()
            for _ in range(int(local_steps)):
                z = z - local_step * (A @ z - b + H[i] + lam * (z - x))
            Xs.append(z)
    Xs = np.array(Xs)
    x_new = w @ Xs
    return x_new, (ids, H + m * (Xs - x_new))


def dane_b84_uniform_init(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                          weighting="uniform", m=1.0, **_):
    """WRONG (declared control_variate="scaffnew", weighting="num_examples"): wrong initialisation from
    state=None. h_{i,0} = mean_j grad f_j(x^0) - grad f_i(x^0) with a plain mean, while the model is averaged
    with w_i = m_i / M. Then sum_i w_i h_{i,0} != 0 (App. B.3 requires it, with grad f the w-weighted
    gradient); identical when all clients have the same size."""
    w = _w(clients, weighting)
    if state is None:
        g = {c.cid: c.grad(x) for c in clients}
        gbar = np.mean(list(g.values()), axis=0)
        h = {cid: gbar - gi for cid, gi in g.items()}
    else:
        h = {k: np.asarray(v, float) for k, v in state["h_i"].items()}
    xs = {}
    for c in clients:
        A, b = _Ab(c)
        if local_steps is None:
            xs[c.cid] = np.linalg.solve(A + lam * np.eye(len(x)), b - h[c.cid] + lam * x)
        else:
            z = x.copy()
            for _ in range(int(local_steps)):
                z = z - local_step * (A @ z - b + h[c.cid] + lam * (z - x))
            xs[c.cid] = z
    x_new = sum(wi * xs[c.cid] for wi, c in zip(w, clients))
    return x_new, {"h_i": {cid: h[cid] + m * (xs[cid] - x_new) for cid in xs}}


def dane_plain_mean_gradient(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                             weighting="uniform", **_):
    """WRONG (declared weighting="num_examples"): control variate (1) built from the plain mean of the client
    gradients, h_i = 1/n sum_j grad f_j(x) - grad f_i(x), while the average uses w_i = m_i / M. The paper's
    f is sum_i w_i f_i; then grad F_i(x) = grad f(x) and x* is fixed, which this loses (equal sizes hide it)."""
    w = _w(clients, weighting)
    grads = np.array([c.grad(x) for c in clients])
    gbar = grads.mean(axis=0)
    out = np.zeros_like(x)
    for wi, c, g in zip(w, clients, grads):
        A, b = _Ab(c)
        if local_steps is None:
            xi = np.linalg.solve(A + lam * np.eye(len(x)), b - (gbar - g) + lam * x)
        else:
            xi = x.copy()
            for _ in range(int(local_steps)):
                xi -= local_step * (A @ xi - b + gbar - g + lam * (xi - x))
        out += wi * xi
    return out


class _Warm:
    def __init__(self):
        self.last = {}


def dane_warm_start_local(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                          weighting="uniform", **_):
    """WRONG (declared local_steps=5; a slip carried only in an opaque state): the K local GD steps start from
    the client's previous local model x_{i,r} (kept in an object) instead of x^r. DANE+-GD starts the local
    solver at x^r; with K finite steps the last iterate depends on the start. Round 1 is exact."""
    st = state if state is not None else _Warm()
    w = _w(clients, weighting)
    gf = sum(wi * c.grad(x) for wi, c in zip(w, clients))
    out = np.zeros_like(x)
    for wi, c in zip(w, clients):
        h = gf - c.grad(x)
        A, b = _Ab(c)
        if local_steps is None:
            z = np.linalg.solve(A + lam * np.eye(len(x)), b - h + lam * x)
        else:
            z = st.last.get(c.cid, x).copy()
            for _ in range(int(local_steps)):
                z = z - local_step * (A @ z - b + h + lam * (z - x))
        st.last[c.cid] = z
        out += wi * z
    return out, st



def dane_inverse_lam(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
                     weighting="uniform", **_):
    """WRONG (invisible at the default lam = 1): the regularisation weight is taken as 1/lam (a "mu = 1/lam"
    step-size parameterisation mixed up with Alg. 1's lam/2 ||x - x^r||^2), so the local problem is
    f_i + <h_i, .> + 1/(2 lam) ||. - x^r||^2."""
    w = _w(clients, weighting)
    gf = sum(wi * c.grad(x) for wi, c in zip(w, clients))
    mu = 1.0 / lam
    out = np.zeros_like(x)
    for wi, c in zip(w, clients):
        A, b = _Ab(c)
        h = gf - c.grad(x)
        if local_steps is None:
            z = np.linalg.solve(A + mu * np.eye(len(x)), b - h + mu * x)
        else:
            z = x.copy()
            for _ in range(int(local_steps)):
                z = z - local_step * (A @ z - b + h + mu * (z - x))
        out += wi * z
    return out


CORRECT = [
    ("dane_f32_exact", dane_f32_exact, {"rtol": 1e-4, "weighting": "num_examples"}),
    ("dane_random_own_choice", dane_random_own_choice, {"averaging": "random"}),
    ("dane_b84_tuple", dane_b84_tuple, {"control_variate": "scaffnew", "local_steps": 5}),
]
WRONG = [
    ("dane_inverse_lam", dane_inverse_lam, {}),
    ("dane_b84_uniform_init", dane_b84_uniform_init, {"control_variate": "scaffnew", "weighting": "num_examples"}),
    ("dane_plain_mean_gradient", dane_plain_mean_gradient, {"weighting": "num_examples"}),
    ("dane_warm_start_local", dane_warm_start_local, {"local_steps": 5}),
]
