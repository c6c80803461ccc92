"""FedNova's expected side (Wang, Liu, Liang, Joshi & Poor 2020, eqs. (6)-(7)): closed forms on quadratics.

Client i runs tau_i local steps from x on f_i (f_i(y) = 1/2 y^T A_i y - b_i^T y + const) with step eta and either
heavy-ball momentum rho (v_k = rho v_{k-1} + grad f_i(y_k), y_{k+1} = y_k - eta v_k, v_{-1} = 0) or the proximal
term mu/2 ||y - x||^2 (FedProx's local objective). In the eigenbasis of A_i = V diag(s) V^T each coordinate of
e_k = y_k - y_i* (y_i* the minimiser of the local objective, c = s + mu its curvature) obeys the linear recursion

    (e_{k+1}, v_k) = M (e_k, v_{k-1}),   M = [[1 - eta c, -eta rho], [c, rho]],

so y_tau - x = psi(s) (b - s x) coordinate-wise with psi = (1 - [M^tau]_00) / c: an affine map, evaluated by
2 x 2 matrix powers, with no local iterate computed. The paper's normaliser ||a_i||_1 (Section 4, the a_i of each
local solver):

    plain GD:  tau_i;   momentum:  sum_{k=1}^{tau_i} (1 - rho^k)/(1 - rho);   prox:  sum_{k=0}^{tau_i-1} (1 - eta mu)^k,

and one round over the clients S (p_i the weights normalised over S, eq. (6)-(7)):

    d_i = (x - y_i) / ||a_i||_1,   x+ = x - tau_eff sum_i p_i d_i,   tau_eff = sum_i p_i ||a_i||_1 (the paper's
    default), sum_i p_i tau_i, or a number the server chooses.

Server momentum beta (``server_momentum``; the authors' code calls it ``gmf``, "global momentum factor", and keeps
buf = gmf buf + D / eta, x -= eta buf): with D_r = x_r - x_r+ the round's FedNova step above and m = eta buf,

    m_1 = D_1,   m_r = beta m_(r-1) + D_r,   x_(r+1) = x_r - m_r,

so the first round is plain FedNova and the momentum shows from round 2 (:func:`server_momentum_round`).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ...expected import aggregation_weights
from ...instance import Instance

__all__ = ["normaliser", "operators", "displacements", "tau_effective", "round_map", "fixed_point",
           "server_momentum_round"]


def normaliser(tau: int, local_step: float, momentum: float = 0.0, prox: float = 0.0) -> float:
    """||a_i||_1 of tau local steps (Wang et al. 2020, Section 4 and App.: SGD, momentum SGD, proximal SGD)."""
    if momentum:
        k = np.arange(1, tau + 1)
        return float(np.sum((1.0 - momentum ** k) / (1.0 - momentum)))
    if prox:
        return float(np.sum((1.0 - local_step * prox) ** np.arange(tau)))
    return float(tau)


def _psi(s: np.ndarray, tau: int, eta: float, rho: float, mu: float) -> np.ndarray:
    c = s + mu
    M = np.zeros(s.shape + (2, 2))
    M[..., 0, 0], M[..., 0, 1], M[..., 1, 0], M[..., 1, 1] = 1.0 - eta * c, -eta * rho, c, rho
    return (1.0 - np.linalg.matrix_power(M, tau)[..., 0, 0]) / c


def operators(inst: Instance, clients: np.ndarray, taus: Sequence[int], local_step: float, momentum: float = 0.0,
              prox: float = 0.0) -> np.ndarray:
    """(|S|, d, d): E_i with y_i - x = E_i (b_i - A_i x) for tau_i local steps from any x (E_i = V psi(s) V^T)."""
    out = np.empty((len(clients), inst.d, inst.d))
    for j, (i, tau) in enumerate(zip(clients, taus)):
        s, V = np.linalg.eigh(inst.A[i])
        out[j] = (V * _psi(s, int(tau), local_step, momentum, prox)) @ V.T
    return out


def displacements(inst: Instance, x: np.ndarray, clients: np.ndarray, taus: Sequence[int], local_step: float,
                  momentum: float = 0.0, prox: float = 0.0) -> np.ndarray:
    """(|S|, d): y_i - x of each participant i (tau_i local steps from x), by the eigen closed form."""
    E = operators(inst, clients, taus, local_step, momentum, prox)
    return np.einsum("nij,nj->ni", E, inst.b[clients] - np.einsum("nij,j->ni", inst.A[clients], x))


def tau_effective(p: np.ndarray, norms: np.ndarray, taus: Sequence[int], tau_eff: Any) -> float:
    """tau_eff: "norm" = sum p_i ||a_i||_1 (the paper's), "steps" = sum p_i tau_i, or the server's number."""
    if tau_eff == "norm":
        return float(p @ norms)
    if tau_eff == "steps":
        return float(p @ np.asarray(taus, dtype=np.float64))
    return float(tau_eff)


def round_map(inst: Instance, x: np.ndarray, clients: np.ndarray, taus: Sequence[int], hyper: Mapping[str, Any]
              ) -> np.ndarray:
    """x+ of one FedNova round over ``clients`` (positions) whose local step counts are ``taus``."""
    eta, rho, mu = hyper["local_step"], hyper.get("momentum", 0.0), hyper.get("prox", 0.0)
    D = displacements(inst, x, clients, taus, eta, rho, mu)
    norms = np.array([normaliser(int(t), eta, rho, mu) for t in taus])
    p = aggregation_weights(inst, clients, hyper.get("weighting", "num_examples"))
    return x + tau_effective(p, norms, taus, hyper.get("tau_eff", "norm")) * (p @ (D / norms[:, None]))


def fixed_point(inst: Instance, taus: Sequence[int], hyper: Mapping[str, Any]) -> np.ndarray:
    """Over all clients, the x with sum_i p_i E_i (b_i - A_i x) / ||a_i||_1 = 0 (tau_eff > 0 scales it away):
    x = (sum_i w_i E_i A_i)^{-1} sum_i w_i E_i b_i, w_i = p_i / ||a_i||_1."""
    S = np.arange(inst.n)
    eta, rho, mu = hyper["local_step"], hyper.get("momentum", 0.0), hyper.get("prox", 0.0)
    E = operators(inst, S, taus, eta, rho, mu)
    w = aggregation_weights(inst, S, hyper.get("weighting", "num_examples")) / np.array(
        [normaliser(int(t), eta, rho, mu) for t in taus])
    return np.linalg.solve(np.einsum("n,nij,njk->ik", w, E, inst.A), np.einsum("n,nij,nj->i", w, E, inst.b))


def server_momentum_round(x: np.ndarray, plain: np.ndarray, m: np.ndarray | None, beta: float
                          ) -> tuple[np.ndarray, np.ndarray]:
    """(x+, m+) of a FedNova round with server momentum ``beta`` (the authors' ``gmf``): ``plain`` is the round's
    x+ without momentum, D = x - plain, m+ = D (first round, ``m`` None) or beta m + D, x+ = x - m+."""
    step = x - plain
    m_new = step if m is None else beta * np.asarray(m, dtype=np.float64) + step
    return x - m_new, m_new
