"""Expected side for FedOGD / OFedAvg / OFedIQ (Kwon, Park & Hong, Algs. 1-2) on a static stream L_{k,t} = f_k.

Time step t (0-based; the paper's t + 1), period L, step eta, sampling probabilities p_k, weights 1/K:

* eq. (6): g_k = w (the global model) at the first step of a period, else the local iterate theta_k;
* eq. (7): theta_k <- g_k - eta grad f_k(g_k); the period's gradients accumulate;
* eq. (8): at the last step of a period, a client whose coin is 1 (probability p_k) sends
  m_k = Q(sum of its period's gradients / p_k);
* eq. (9): w <- w - eta sum_{k sampled} (1/K) m_k (the server divides by K, not by the number sampled).
* (s, b)-quantizer (Definition 2, eq. (12)): blocks I_1..I_b (``np.array_split``), r_i = |u_i| / ||u_I||,
  m_i = min(floor(s r_i), s - 1), Q(u)_i = ||u_I|| sign(u_i) (m_i + [U_i < s r_i - m_i]) / s with the kit's
  uniform U_i (so the outcome is fixed and the expectation enumerable).
* regret (eq. (3)) of the first t + 1 steps against the exact static comparator:
  sum_{tau <= t} sum_k f_k(w_{psi(tau)}) - (t + 1) min_w sum_k f_k(w).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ....references.compression import sb_quantize_row
from ...instance import Instance

__all__ = ["quantize", "ofediq_step", "static_min"]


def quantize(u: np.ndarray, U: np.ndarray | None, s: int | None, b: int | None) -> np.ndarray:
    """Rows of u through the (s, b)-quantizer with uniforms U (identity for s = None): Definition 2 as transcribed
    in fedtheory/references/compression.py (one home for the paper's quantizer)."""
    if s is None:
        return np.array(u, dtype=np.float64)
    u = np.atleast_2d(np.asarray(u, dtype=np.float64))
    U = np.atleast_2d(np.asarray(U, dtype=np.float64))
    return np.array([sb_quantize_row(u[r], U[r], s, b or 1) for r in range(u.shape[0])])


def ofediq_step(inst: Instance, w: np.ndarray, t: int, theta: np.ndarray, acc: np.ndarray, h: Mapping,
                participate: np.ndarray, uniforms: np.ndarray | None):
    """(w after step t, theta, acc) of eqs. (6)-(9)."""
    L = int(h["period"])
    start = t % L == 0
    G0 = np.broadcast_to(w, theta.shape) if start else theta
    grads = np.einsum("nij,nj->ni", inst.A, G0) - inst.b
    theta = G0 - h["eta"] * grads
    acc = grads if start else acc + grads
    if (t + 1) % L == 0:
        p = np.broadcast_to(np.asarray(h["p"], dtype=np.float64), (inst.n,))
        M = quantize(acc / p[:, None], uniforms, h.get("s"), h.get("b"))
        w = w - h["eta"] * ((np.asarray(participate, dtype=np.float64) / inst.n) @ M)
    return w, theta, acc


def static_min(inst: Instance) -> float:
    """min_w sum_k f_k(w) (the comparator of one step), from the normal equations."""
    A, b = inst.A.sum(axis=0), inst.b.sum(axis=0)
    w = np.linalg.solve(A, b)
    const = sum(float(c.targets @ c.targets) / (2 * c.num_examples) for c in inst.clients)
    return float(0.5 * w @ A @ w - b @ w + const)
