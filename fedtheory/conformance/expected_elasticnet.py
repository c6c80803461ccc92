"""Expected side for FedElasticNet (Kim et al., Algorithms 1-3), by direct evaluation of the printed equations.

* Exact local solve of eq. (4) / eq. (10) on a diagonal quadratic (A_i = diag(s_i)): minimising
  f_i(th) + <lin_i, th> + lam2/2 ||th - x||^2 + lam1 ||th - x||_1 coordinate-wise gives
  th - x = S_{lam1}(b_i - lin_i - s_i x) / (s_i + lam2), S_t(z) = sign(z) max(|z| - t, 0).
* K local steps of eq. (7), th <- th - eta (grad f_i(th) + lin_i + lam2 (th - x) + lam1 sign(th - x)) from th = x,
  with sign(0) = 0 as printed ("subgradient"), or the proximal reading that takes the l1 term by a
  soft-threshold after each gradient step ("proximal", ISTA). The sign makes the map piecewise affine, so the
  kit evaluates eq. (7) step by step (K einsums; this is the paper's equation, not an algorithm of fedtheory)
  and reports the smallest |th_k - x| entry after the first step, so that a case whose sign is decided by
  rounding can be skipped.
"""
from __future__ import annotations

import numpy as np

from .instance import Instance
from .instance_diag import diagonal_of

__all__ = ["soft", "exact_local", "elastic_steps"]


def soft(z: np.ndarray, t: float) -> np.ndarray:
    """Soft-threshold S_t(z) = sign(z) max(|z| - t, 0)."""
    return np.sign(z) * np.maximum(np.abs(z) - t, 0.0)


def exact_local(inst: Instance, x: np.ndarray, lin: np.ndarray, S: np.ndarray, lam2: float, lam1: float) -> np.ndarray:
    """th_i for i in S (rows of ``lin`` are the participants'), diagonal instances only."""
    s = diagonal_of(inst)[S]
    return x[None] + soft(inst.b[S] - lin - s * x[None], lam1) / (s + lam2)


def elastic_steps(inst: Instance, x: np.ndarray, lin: np.ndarray, S: np.ndarray, *, steps: int, step: float,
                  lam2: float, lam1: float, mode: str) -> tuple[np.ndarray, float]:
    """(th_K for i in S, margin): eq. (7) K times from th = x; margin = min |th_k - x| over k >= 1 (subgradient)."""
    A, b = inst.A[S], inst.b[S]
    th = np.broadcast_to(x, b.shape).copy()
    margin = np.inf
    for k in range(steps):  # K steps of the printed update, vectorised over the participants
        g = np.einsum("nij,nj->ni", A, th) - b + lin + lam2 * (th - x)
        if mode == "subgradient":
            if k > 0:
                margin = min(margin, float(np.min(np.abs(th - x))))
            th = th - step * (g + lam1 * np.sign(th - x))
        else:
            th = x + soft(th - x - step * g, step * lam1)
    return th, margin
