"""Expected side of one round of SCAFFOLD, FedDyn and Scaffnew from a given state, on quadratics.

Local gradient descent on f_i + <lin_i, .> from x is the FedAvg operator with b_i - lin_i
(:func:`fedtheory.conformance.expected.local_operators`); FedDyn's exact local solve is N_i = (A_i + alpha I)^{-1}.
The recursions (C holds every client's row, the server part is returned separately):

* SCAFFOLD, option II (Karimireddy et al. 2020, Alg. 1, eq. (5)): dy_i = N_i (b_i - A_i x + c_i - c),
  c_i+ = c_i - c - dy_i/(K eta_l), x+ = x + eta_g sum_S a_i dy_i, c+ = c + sum_S w_i (c_i+ - c_i);
* FedDyn (Acar et al. 2021, Alg. 1): dth_i = (A_i + alpha I)^{-1} (b_i - A_i x + g_i), g_i+ = g_i - alpha dth_i,
  h+ = h - alpha sum_S w_i dth_i, x+ = x + sum_S a_i dth_i - h+/alpha;
* Scaffnew (Mishchenko et al. 2022, Alg. 2) with K local steps before communicating: dy_i = N_i (b_i - A_i x + h_i),
  x+ = x + sum_i a_i dy_i, h_i+ = h_i + (p/gamma)(x+ - x - dy_i).

Each function is a handful of einsums: no algorithm is iterated.
"""
from __future__ import annotations

import numpy as np

from . import expected as ex
from .instance import Instance

__all__ = ["scaffold_step", "feddyn_step", "scaffnew_step"]


def _residual(inst: Instance, x: np.ndarray, S: np.ndarray) -> np.ndarray:
    return inst.b[S] - np.einsum("nij,j->ni", inst.A[S], x)


def scaffold_step(inst: Instance, x, c, C, S, *, local_steps: int, local_step: float, server_step: float,
                  weighting: str, option: str = "II"):
    """(x+, c+, C+) of one SCAFFOLD round over the participants S; c_i+ by option I (grad f_i(x)) or option II
    (c_i - c + (x - y_i)/(K eta_l)) of Karimireddy et al. (2020), eq. (4)."""
    a, w = ex.aggregation_weights(inst, S, weighting), inst.weights[S]
    dy = np.einsum("nij,nj->ni", ex.local_operators(inst, local_steps, local_step)[S], _residual(inst, x, S) + C[S] - c)
    dc = -_residual(inst, x, S) - C[S] if option == "I" else -c - dy / (local_steps * local_step)
    C = C.copy()
    C[S] += dc
    return x + server_step * a @ dy, c + w @ dc, C


def feddyn_step(inst: Instance, x, h, G, S, *, alpha: float, weighting: str):
    """(x+, h+, G+) of one FedDyn round (exact local solves) over the participants S."""
    a, w = ex.aggregation_weights(inst, S, weighting), inst.weights[S]
    dth = np.einsum("nij,nj->ni", ex.local_operators(inst, None, 0.0, alpha)[S], _residual(inst, x, S) + G[S])
    G = G.copy()
    G[S] -= alpha * dth
    h_new = h - alpha * w @ dth
    return x + a @ dth - h_new / alpha, h_new, G


def scaffnew_step(inst: Instance, x, H, *, local_steps: int, step: float, p: float, weighting: str):
    """(x+, None, H+) of one Scaffnew communication after ``local_steps`` local steps, all clients."""
    S = np.arange(inst.n)
    a = ex.aggregation_weights(inst, S, weighting)
    dy = np.einsum("nij,nj->ni", ex.local_operators(inst, local_steps, step), _residual(inst, x, S) + H)
    x_new = x + a @ dy
    return x_new, None, H + (p / step) * (x_new - x - dy)
