"""Textbook implementations through the adapter contract, and the deliberately wrong ones (the kit's power).

Each family has one implementation with a ``slip`` option; ``slip=None`` is the paper's algorithm and every
other value is one plausible mistake (the list is :data:`SLIPS`). They are written the way client/server code
is written in frameworks -- a loop over client objects, each training on its own data -- because that is
what the kit is for; fedtheory's own vectorised algorithms are checked through
:mod:`fedtheory.conformance.adapters.native`.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

import numpy as np

from ..compressors import QSGD, RandK, TopK

__all__ = ["fedavg", "scaffold", "feddyn", "scaffnew", "compressor", "SLIPS", "CORRECT", "wrong_implementations"]


def _prox_solve(c, x: np.ndarray, lin: np.ndarray, lam: float) -> np.ndarray:
    """argmin f_i(y) - <lin, y> + lam/2 ||y - x||^2 from the client's data: (Z^T Z/m + lam I) y = Z^T t/m + lin + lam x."""
    Z, t, m = c.features, c.targets, c.num_examples
    return np.linalg.solve(Z.T @ Z / m + lam * np.eye(x.size), Z.T @ t / m + lin + lam * x)


def fedavg(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, prox=0.0,
           weighting="num_examples", num_clients=None, slip: str | None = None, **_):
    """FedAvg (McMahan et al. 2017, Alg. 1) and FedProx (Li et al. 2020, Alg. 2): every client runs K steps of
    GD on f_i + prox/2 ||. - x||^2 from x (or solves it exactly when local_steps is None); the server moves
    x by server_step times the num_examples-weighted mean of the updates."""
    start, ys = x, []
    K = local_steps if slip != "ignore_local_steps" else 1
    K = K - 1 if slip == "k_minus_1" else K
    lam = {"prox_sign": -prox, "prox_half": prox / 2}.get(slip, prox)
    for c in clients:
        if slip == "sequential_clients":
            start = ys[-1] if ys else x
        if local_steps is None:
            y = _prox_solve(c, x, np.zeros_like(x), lam)
        else:
            y = start.copy()
            for k in range(K):
                centre = {"prox_center_zero": 0.0, "prox_center_moving": y}.get(slip, x)
                eta = local_step / (k + 1) if slip == "lr_decay" else local_step
                decay = 1e-2 * y if slip == "weight_decay" else 0.0
                y = y - eta * (c.grad(y) + lam * (y - centre) + decay)
        ys.append(y)
    m = np.array([c.num_examples for c in clients], dtype=np.float64)
    if weighting == "uniform" or slip == "uniform_weights":
        m = np.ones_like(m)
    elif slip == "sqrt_weights":
        m = np.sqrt(m)
    a = m / m.sum()
    if slip == "divide_by_all_clients":
        a = a * len(clients) / num_clients
    delta = a @ (np.stack(ys) - x)
    if slip == "running_average":
        avg = ys[0]
        for y in ys[1:]:
            avg = (avg + y) / 2.0
        delta = avg - x
    if slip == "last_client":
        delta = ys[-1] - x
    return x + (2.0 if slip == "server_step_twice" else 1.0) * server_step * delta


def _require_uniform(weighting: str, name: str) -> None:
    if weighting != "uniform":
        raise ValueError(f"the reference {name} implements the paper's uniform weighting, got weighting={weighting!r}")


def scaffold(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             weighting="uniform", num_clients=None, slip: str | None = None, **_):
    """SCAFFOLD (Karimireddy et al. 2020, Alg. 1, option II):
    y <- y - eta_l (g_i(y) - c_i + c) K times; c_i+ = c_i - c + (x - y)/(K eta_l);
    x+ = x + eta_g/|S| sum dy_i; c+ = c + 1/N sum dc_i."""
    _require_uniform(weighting, "SCAFFOLD")
    state = state or {"c": np.zeros_like(x), "c_i": {}}
    c, c_i = state["c"], dict(state["c_i"])
    dys, dcs = [], []
    for cl in clients:
        ci = c_i.get(cl.cid, np.zeros_like(x))
        y = x.copy()
        for _k in range(local_steps):
            corr = (ci - c) if slip == "correction_sign" else (c - ci)
            y = y - local_step * (cl.grad(y) + corr)
        denom = local_steps if slip == "divide_by_K" else local_steps * local_step
        ci_new = ci - c + (x - y) / denom
        dys.append(y - x)
        dcs.append(ci_new - ci)
        c_i[cl.cid] = ci_new
    x_new = x + server_step * np.mean(dys, axis=0)
    if slip == "no_server_c":
        c_new = c
    elif slip == "c_mean_over_S":
        c_new = c + np.mean(dcs, axis=0)
    else:
        c_new = c + np.sum(dcs, axis=0) / num_clients
    return x_new, {"c": c_new, "c_i": c_i}


def feddyn(x, clients, *, state=None, rng=None, alpha=1.0, weighting="uniform", num_clients=None,
           slip: str | None = None, **_):
    """FedDyn (Acar et al. 2021, Alg. 1) with exact local solves:
    theta_i = argmin f_i - <g_i, .> + alpha/2 ||. - x||^2; g_i <- g_i - alpha (theta_i - x);
    h <- h - alpha/m sum_S (theta_i - x); x+ = mean_S theta_i - h/alpha."""
    _require_uniform(weighting, "FedDyn")
    state = state or {"h": np.zeros_like(x), "g_i": {}}
    h, g_i = state["h"], dict(state["g_i"])
    thetas = []
    for cl in clients:
        g = g_i.get(cl.cid, np.zeros_like(x))
        theta = _prox_solve(cl, x, -g if slip == "lin_sign" else g, alpha)
        g_i[cl.cid] = g - alpha * (theta - x)
        thetas.append(theta)
    thetas = np.stack(thetas)
    h_new = h if slip == "no_h_update" else h - alpha * np.sum(thetas - x, axis=0) / num_clients
    x_new = thetas.mean(axis=0) - (0.0 if slip == "no_server_correction" else h_new / alpha)
    return x_new, {"h": h_new, "g_i": g_i}


def scaffnew(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=1, weighting="uniform",
             slip: str | None = None, **_):
    """Scaffnew (Mishchenko et al. 2022, Alg. 2), one communication: local_steps steps
    x_i <- x_i - gamma (g_i(x_i) - h_i) from x, then xbar = mean x_i and h_i <- h_i + (p/gamma)(xbar - x_i)."""
    _require_uniform(weighting, "Scaffnew")
    state = state or {"h_i": {}}
    h_i = dict(state["h_i"])
    xs = []
    for cl in clients:
        h = h_i.get(cl.cid, np.zeros_like(x))
        y = x.copy()
        for _k in range(local_steps):
            y = y - step * (cl.grad(y) - (-h if slip == "h_sign" else h))
        xs.append(y)
    xbar = np.mean(xs, axis=0)
    factor = 1.0 / step if slip == "h_factor_no_p" else p / step
    for cl, y in zip(clients, xs):
        h_i[cl.cid] = h_i.get(cl.cid, np.zeros_like(x)) + factor * (xbar - y)
    return xbar, {"h_i": h_i}


class compressor:
    """A compressor through the contract: wraps fedtheory's QSGD / rand-k / top-k (rows -> one vector) and
    declares omega, unbiasedness and bits; the slips break the scaling or the declarations."""

    def __init__(self, kind: str = "qsgd", *, s: int = 4, k_frac: float = 0.5, slip: str | None = None) -> None:
        self.kind, self.s, self.k_frac, self.slip = kind, s, k_frac, slip
        self.unbiased = kind != "topk" or slip == "topk_claims_unbiased"

    def _impl(self, d: int):
        k = max(1, int(round(self.k_frac * d)))
        return {"qsgd": QSGD(s=self.s), "randk": RandK(k=k), "topk": TopK(k=k)}[self.kind]

    def omega(self, d: int) -> float:
        if self.kind == "topk":
            return 0.0
        w = self._impl(d).omega(d)
        return w / 2 if self.slip == "omega_halved" else w

    def compress(self, x: np.ndarray, rng: np.random.Generator):
        d = x.size
        impl = self._impl(d)
        if self.slip == "qsgd_no_norm":  # levels of x/||x|| sent without multiplying back by ||x||
            nrm = np.linalg.norm(x)
            y, bits = impl.compress((x / nrm if nrm > 0 else x)[None, :], rng)
            return y[0], float(bits[0])
        y, bits = impl.compress(x[None, :], rng)
        y = y[0]
        if self.slip == "randk_unscaled":
            k = max(1, int(round(self.k_frac * d)))
            y = y * k / d
        if self.slip == "bits_nnz":  # one bit per non-zero: forgets the norm and the levels
            return y, float(np.count_nonzero(y))
        return y, float(bits[0])


#: family -> (implementation, slips). Every slip is a plausible mistake the kit must reject.
SLIPS: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    "fedavg": (fedavg, ("uniform_weights", "server_step_twice", "k_minus_1", "ignore_local_steps", "sqrt_weights",
                        "divide_by_all_clients", "running_average", "sequential_clients", "weight_decay",
                        "lr_decay", "last_client")),
    "fedprox": (fedavg, ("prox_sign", "prox_half", "prox_center_zero", "prox_center_moving")),
    "scaffold": (scaffold, ("divide_by_K", "correction_sign", "no_server_c", "c_mean_over_S")),
    "feddyn": (feddyn, ("no_h_update", "no_server_correction", "lin_sign")),
    "scaffnew": (scaffnew, ("h_factor_no_p", "h_sign")),
}
COMPRESSOR_SLIPS = (("qsgd", "qsgd_no_norm"), ("randk", "randk_unscaled"), ("randk", "omega_halved"),
                    ("topk", "topk_claims_unbiased"), ("qsgd", "bits_nnz"))

#: family -> correct implementations (the textbook ones; fedtheory's own are added by the native adapter).
CORRECT: dict[str, list[Any]] = {
    "fedavg": [fedavg], "fedprox": [fedavg], "scaffold": [scaffold], "feddyn": [feddyn], "scaffnew": [scaffnew],
    "compressor": [compressor("qsgd"), compressor("randk")],
}


def wrong_implementations() -> list[tuple[str, str, Any]]:
    """(family, slip, implementation) for every deliberately wrong implementation."""
    out = [(fam, slip, partial(impl, slip=slip)) for fam, (impl, slips) in SLIPS.items() for slip in slips]
    out += [("compressor", slip, compressor(kind, slip=slip)) for kind, slip in COMPRESSOR_SLIPS]
    return out
