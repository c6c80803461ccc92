"""FedRed (Jiang, Rodomanov & Stich 2024, Algs. 2-3): held-out implementations, from the spec only.

One call = one iteration k. Given x~ (the argument x) and state {"x_i", "h_i"} (None: x_i = x~, h_i = (4) at x~):
  linearized (Alg. 3): x_i+ = (x_i + lam eta x~ - eta (grad f_i(x_i) + h_i)) / (1 + lam eta)
  exact (Alg. 2):      x_i+ = (A_i + (lam + 1/eta) I)^{-1} (b_i - h_i + lam x~ + x_i/eta)
  coin theta ~ Bernoulli(p) (the kit's draw={"communicate": bool} when given): if 1, x~+ = sum w_i x_i+,
  h_i+ = grad f(x~+) - grad f_i(x~+), x_i+ = x~+ when reset. Returns (x~+, state).
"""
from __future__ import annotations

import numpy as np

from ._util import quad, weights


def _cv(clients, z, w):
    G = {c.cid: c.grad(z) for c in clients}
    gf = sum(wi * G[c.cid] for wi, c in zip(w, clients))
    return {c.cid: gf - G[c.cid] for c in clients}


def _step(c, xi, xt, h, lam, eta, solver):
    if solver == "exact":
        A, b = quad(c)
        return np.linalg.solve(A + (lam + 1 / eta) * np.eye(len(xt)), b - h + lam * xt + xi / eta)
    return (xi + lam * eta * xt - eta * (c.grad(xi) + h)) / (1 + lam * eta)


def _coin(draw, rng, p):
    if draw is not None and "communicate" in draw:
        return bool(draw["communicate"])
    return bool(rng.random() < p)


def fedred_dict(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized", reset=True,
                weighting="uniform", draw=None, **_):
    """Correct: readable dict state, either solver."""
    w = weights(clients, weighting)
    if state is None:
        X = {c.cid: x.copy() for c in clients}; H = _cv(clients, x, w)
    else:
        X = dict(state["x_i"]); H = dict(state["h_i"])
    Xn = {c.cid: _step(c, X[c.cid], x, H[c.cid], lam, eta, solver) for c in clients}
    if _coin(draw, rng, p):
        xt = sum(wi * Xn[c.cid] for wi, c in zip(w, clients))
        H = _cv(clients, xt, w)
        if reset:
            Xn = {c.cid: xt.copy() for c in clients}
        return xt, {"x_i": Xn, "h_i": H}
    return x.copy(), {"x_i": Xn, "h_i": H}


class _S:
    __slots__ = ("loc", "cv")


def fedred_opaque_matrix(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, reset=True,
                         weighting="uniform", draw=None, **_):
    """Correct: Alg. 3 with an opaque state, local iterates as one (n, d) array in the clients' order of the
    first call, client lookup through a cid -> row map."""
    w = weights(clients, weighting)
    if state is None:
        st = _S(); st.loc = ({c.cid: k for k, c in enumerate(clients)}, np.tile(x, (len(clients), 1)))
        g = np.array([c.grad(x) for c in clients]); st.cv = w @ g - g
    else:
        st = state
    rows, Xa = st.loc
    idx = [rows[c.cid] for c in clients]
    Xc = Xa[idx]; Hc = st.cv[idx]
    Gc = np.array([c.grad(xr) for c, xr in zip(clients, Xc)])
    Xn = (Xc + lam * eta * x - eta * (Gc + Hc)) / (1 + lam * eta)
    new = _S()
    if _coin(draw, rng, p):
        xt = w @ Xn
        g = np.array([c.grad(xt) for c in clients])
        cv = np.empty_like(st.cv); cv[idx] = w @ g - g
        Xa2 = np.empty_like(Xa); Xa2[idx] = np.tile(xt, (len(clients), 1)) if reset else Xn
        new.loc, new.cv = (rows, Xa2), cv
        return xt, new
    Xa2 = np.empty_like(Xa); Xa2[idx] = Xn
    new.loc, new.cv = (rows, Xa2), st.cv
    return x.copy(), new


def fedred_f32(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized", reset=True,
               weighting="uniform", draw=None, **_):
    """Correct (rtol 1e-5): Alg. 3 in float32."""
    w = weights(clients, weighting).astype(np.float32)
    f32 = np.float32; xt = x.astype(f32)
    Q = {c.cid: quad(c, f32) for c in clients}
    def grad(c, z):
        return Q[c.cid][0] @ z - Q[c.cid][1]
    def cv(z):
        G = {c.cid: grad(c, z) for c in clients}; gf = sum(wi * G[c.cid] for wi, c in zip(w, clients))
        return {k: gf - v for k, v in G.items()}
    if state is None:
        X = {c.cid: xt.copy() for c in clients}; H = cv(xt)
    else:
        X, H = state
    a = f32(lam * eta); e = f32(eta)
    Xn = {c.cid: (X[c.cid] + a * xt - e * (grad(c, X[c.cid]) + H[c.cid])) / (f32(1) + a) for c in clients}
    if _coin(draw, rng, p):
        xn = sum(wi * Xn[c.cid] for wi, c in zip(w, clients))
        return xn.astype(np.float64), ({c.cid: xn.copy() for c in clients} if reset else Xn, cv(xn))
    return x.copy(), (Xn, H)


# ---------------------------------------------------------------- wrong
def _variant(**bug):
    def impl(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized", reset=True,
             weighting="uniform", draw=None, **_):
        w = weights(clients, weighting)
        if state is None:
            X = {c.cid: x.copy() for c in clients}; H = _cv(clients, x, w)
        else:
            X = dict(state["x_i"]); H = dict(state["h_i"])
        if bug.get("grad_at_ref"):
            Xn = {c.cid: (X[c.cid] + lam * eta * x - eta * (c.grad(x) + H[c.cid])) / (1 + lam * eta) for c in clients}
        else:
            Xn = {c.cid: _step(c, X[c.cid], x, H[c.cid], lam, eta, solver) for c in clients}
        if draw is not None and "communicate" in draw:
            coin = bool(draw["communicate"])
        elif bug.get("coin_gt"):
            coin = bool(rng.random() > p)
        elif bug.get("coin_per_client"):
            coin = bool(np.any(rng.random(len(clients)) < p))
        else:
            coin = bool(rng.random() < p)
        if coin:
            xt = sum(wi * Xn[c.cid] for wi, c in zip(w, clients))
            if bug.get("cv_at_old"):
                H = _cv(clients, x, w)
            elif bug.get("cv_only_if_reset") and not reset:
                pass
            else:
                H = _cv(clients, xt, w)
            if reset:
                Xn = {c.cid: xt.copy() for c in clients}
            return xt, {"x_i": Xn, "h_i": H}
        return x.copy(), {"x_i": Xn, "h_i": H}
    return impl


CORRECT = [
    ("dict_state_linearized", fedred_dict, {}),
    ("dict_state_exact_no_reset", fedred_dict, {"solver": "exact", "reset": False}),
    ("opaque_array_state", fedred_opaque_matrix, {}),
    ("f32_linearized (rtol 1e-5)", fedred_f32, {"rtol": 1e-5}),
]
WRONG = [
    ("gradient_at_reference_point", _variant(grad_at_ref=True), {}),
    ("cv_refreshed_at_old_reference", _variant(cv_at_old=True), {}),
    ("cv_refreshed_only_with_reset", _variant(cv_only_if_reset=True), {"reset": False}),
    ("own_coin_one_minus_p (at p=0.5)", _variant(coin_gt=True), {}),
    ("own_coin_one_minus_p (at p=0.3)", _variant(coin_gt=True), {"p": 0.3}),
    ("own_coin_any_of_n_clients", _variant(coin_per_client=True), {}),
]


def _sgd(scale_full=False):
    def impl(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, reset=True, batch_size=2,
             weighting="uniform", draw=None, **_):
        """FedRed-SGD (Alg. 3): g_i = the minibatch gradient at x_i on the kit's rows draw["batches"][cid]."""
        w = weights(clients, weighting)
        if state is None:
            X = {c.cid: x.copy() for c in clients}; H = _cv(clients, x, w)
        else:
            X = dict(state["x_i"]); H = dict(state["h_i"])
        batches = (draw or {}).get("batches") or {}
        Xn = {}
        for c in clients:
            rows = np.asarray(batches[c.cid]) if c.cid in batches else rng.choice(c.num_examples, batch_size,
                                                                                 replace=False)
            Zb = np.asarray(c.features)[rows]; yb = np.asarray(c.targets)[rows]
            denom = c.num_examples if scale_full else len(rows)
            g = Zb.T @ (Zb @ X[c.cid] - yb) / denom
            Xn[c.cid] = (X[c.cid] + lam * eta * x - eta * (g + H[c.cid])) / (1 + lam * eta)
        if _coin(draw, rng, p):
            xt = sum(wi * Xn[c.cid] for wi, c in zip(w, clients))
            return xt, {"x_i": {c.cid: xt.copy() for c in clients} if reset else Xn, "h_i": _cv(clients, xt, w)}
        return x.copy(), {"x_i": Xn, "h_i": H}
    return impl


CORRECT.append(("fedred_sgd_kit_batches", _sgd(), {"batch_size": 2}))
WRONG.append(("fedred_sgd_batch_grad_divided_by_m", _sgd(scale_full=True), {"batch_size": 2}))
