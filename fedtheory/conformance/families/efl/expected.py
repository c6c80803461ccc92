"""Expected side for EFL (Ma et al., "Towards Heterogeneous Clients with Elastic Federated Learning", Alg. 1
with the ST compressor of Alg. 2) on quadratics, by direct linear algebra.

Round tau, client k with s_k local steps (0 = inactive), step eta, elastic sums U, V:

* local objective (eqs. 2-3): f_k(w) + lam/2 sum_i (w - w^i)^T diag(I_i) (w - w^i), whose gradient is
  grad f_k(w) + lam (U o w - V); on a quadratic this is the quadratic with A_k' = A_k + lam diag(U),
  b_k' = b_k + lam V, so s_k gradient steps (eq. 4) from the start w are y* + (I - eta A_k')^{s_k} (w - y*);
* error feedback (eq. 5): Delta^k = R^k + (w_end - w_start), c^k = ST(Delta^k), R^k <- Delta^k - c^k;
* aggregation (eq. 6) with p_tau^k = E p^k / s_k ("efl", Section 4.2) or p^k ("fedavg"), 0 when inactive:
  Delta^G = R^G + sum_k p_tau^k c^k, b = ST(Delta^G), R^G <- Delta^G - b, w^G <- w^G + b ("consistent"), or
  the printed reading: Delta^G over the uncompressed Delta^k and w^G <- w^G + Delta^G while clients get b;
* ST (Alg. 2): keep the k = max(floor(d q), 1) largest magnitudes, replaced by their mean magnitude times the
  sign (Alg. 2 prints max(d q, 1), which need not be an integer); q = None means no compression.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from ....references.compression import st_row
from ...instance import Instance

__all__ = ["st", "st_cut_margin", "local_end", "coefficients", "efl_step"]


def st(T: np.ndarray, q: float | None) -> np.ndarray:
    """ST row by row (rows of a 2-D array, or one vector); identity for q = None: Alg. 2 as transcribed in
    fedtheory/references/compression.py (one home for the paper's compressor; at a tie the kit does not judge)."""
    if q is None:
        return np.array(T, dtype=np.float64)
    X = np.atleast_2d(np.asarray(T, dtype=np.float64))
    out = np.array([st_row(X[r], q) for r in range(X.shape[0])]).reshape(X.shape)
    return out if np.ndim(T) == 2 else out[0]


def st_cut_margin(T: np.ndarray, q: float | None) -> float:
    """How far ST's choice of coordinates is from a tie: min over rows of |T|_(k) - |T|_(k+1), the gap between
    the smallest kept and the largest dropped magnitude (inf without compression or when every coordinate is
    kept). At a tie the paper's ST does not say which coordinate to keep, so an outcome there is not judged.
    Ties are structural in EFL: ST's output has equal magnitudes, so sums of compressed updates often tie."""
    if q is None:
        return math.inf
    X = np.abs(np.atleast_2d(np.asarray(T, dtype=np.float64)))
    d = X.shape[1]
    k = max(int(math.floor(d * q + 1e-12)), 1)
    if k >= d or X.shape[0] == 0:
        return math.inf
    part = -np.sort(-X, axis=1)
    return float((part[:, k - 1] - part[:, k]).min())


def local_end(inst: Instance, starts: np.ndarray, steps: np.ndarray, eta: float, lam: float, U: np.ndarray,
              V: np.ndarray) -> np.ndarray:
    """(n, d): each client's model after s_k steps of eq. (4) from its start (rows with s_k = 0 unchanged)."""
    Ap = inst.A + lam * np.einsum("ij,j->ij", np.eye(inst.d), U)[None]
    bp = inst.b + lam * V[None]
    y_star = np.linalg.solve(Ap, bp[..., None])[..., 0]
    s, Q = np.linalg.eigh(Ap)
    power = (1.0 - eta * s) ** np.asarray(steps, dtype=np.float64)[:, None]
    return y_star + np.einsum("nij,nj,nkj,nk->ni", Q, power, Q, starts - y_star)


def coefficients(inst: Instance, steps: np.ndarray, E: int, aggregation: str) -> np.ndarray:
    """p_tau^k: E p^k / s_k (Section 4.2) or p^k, and 0 for inactive clients."""
    steps = np.asarray(steps)
    active = steps > 0
    coef = inst.weights if aggregation == "fedavg" else E * inst.weights / np.where(active, steps, 1)
    return np.where(active, coef, 0.0)


def efl_step(inst: Instance, x: np.ndarray, starts: np.ndarray, R: np.ndarray, RG: np.ndarray, steps: np.ndarray,
             U: np.ndarray, V: np.ndarray, h: Mapping) -> dict:
    """One round from the clients' start models: returns x, the residuals, the broadcast, the ends and the
    round's ST tie margin (:func:`st_cut_margin` over the active clients' and the server's compressions)."""
    act = np.asarray(steps) > 0
    W = local_end(inst, starts, steps, h["step"], h["lam"], U, V)
    delta = R + (W - starts)
    c = st(delta, h["q"])
    coef = coefficients(inst, steps, h["E"], h["aggregation"])
    sent = delta if h["variant"] == "printed" else c
    delta_g = RG + (coef * act) @ sent
    b = st(delta_g, h["q"])
    R_new = np.where(act[:, None], delta - c, R)
    x_new = x + (delta_g if h["variant"] == "printed" else b)
    margin = min(st_cut_margin(delta[act], h["q"]), st_cut_margin(delta_g, h["q"]))
    return {"x": x_new, "R": R_new, "RG": delta_g - b, "b": b, "W": W, "margin": margin}
