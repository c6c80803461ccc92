"""FedElasticNet, Algorithm 2 (SCAFFOLD + elastic net): fedtheory's Scaffold options against the printed round.
"""
from __future__ import annotations

import numpy as np

from ...algorithms.federated import Draw
from ...algorithms.scaffold import Scaffold
from ...participation import UniformSubset
from ..registry import Evidence, claim
from ..tolerances import EXACT_REL
from .instances import spec_problem

__all__ = ["printed_algorithm2_round"]

PAPER = "fedelasticnet"


# ---------------------------------------------------------------------------------------------------------
# Algorithm 2 against its printed update (lines 5-14, eq. (7))
# ---------------------------------------------------------------------------------------------------------

def printed_algorithm2_round(A: np.ndarray, b: np.ndarray, theta: np.ndarray, c: np.ndarray, C: np.ndarray,
                             S: np.ndarray, *, B: int, eta_l: float, eta_g: float, lam1: float, lam2: float,
                             eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One round of Kim et al., Algorithm 2, written from the printed lines for quadratic clients
    L_k(x) = 1/2 x^T A_k x - b_k^T x (dense A of shape (m, d, d)), full local gradients:

        line 5:  theta_k = theta^{t-1}
        line 8:  theta_k <- theta_k - eta_l (grad L_k(theta_k) - c_k + c + lam2 (theta_k - theta^{t-1})
                                             + lam1 sign(theta_k - theta^{t-1}))          (B times, sign(0) = 0)
        line 10: c_k^t = c_k - c + (theta^{t-1} - theta_k)/(B eta_l)
        line 11: Delta_k = theta_k - theta^{t-1} (zeroed where |Delta_k(i)| <= eps, Section 3), Delta c_k
        line 13: theta^t = theta^{t-1} + eta_g/|P_t| sum_{P_t} Delta_k
        line 14: c^t = c + (1/m) sum_{P_t} Delta c_k

    Returns (theta^t, c^t, C^t, the sent Delta_k of the participants).
    """
    m = A.shape[0]
    AS, bS = A[S], b[S]
    Y = np.repeat(theta[None, :], S.size, axis=0)
    for _ in range(B):
        grad = np.einsum("kij,kj->ki", AS, Y) - bS
        Y = Y - eta_l * (grad - C[S] + c + lam2 * (Y - theta) + lam1 * np.sign(Y - theta))
    C_new = C[S] - c + (theta - Y) / (B * eta_l)
    delta = Y - theta
    delta = np.where(np.abs(delta) <= eps, 0.0, delta) if eps > 0 else delta
    dc = C_new - C[S]
    theta_new = theta + eta_g / S.size * delta.sum(axis=0)
    c_new = c + dc.sum(axis=0) / m
    C_all = C.copy()
    C_all[S] = C_new
    return theta_new, c_new, C_all, delta


def _alg2_instances(thorough: bool):
    # (m, d, seed, B, eta_l * beta, eta_g, lambda1, lambda2/beta, eps, participants per round, rounds)
    yield dict(m=5, d=4, seed=0, B=5, eta=0.2, eta_g=1.0, l1=0.05, l2=0.0, eps=0.0, P=2, T=8)
    yield dict(m=6, d=3, seed=1, B=3, eta=0.3, eta_g=0.7, l1=0.1, l2=0.5, eps=1e-3, P=3, T=8)
    yield dict(m=4, d=5, seed=2, B=4, eta=0.1, eta_g=1.0, l1=1e-4, l2=0.0, eps=1e-4, P=4, T=6)
    if thorough:
        for seed in range(3, 8):
            yield dict(m=7, d=6, seed=seed, B=6, eta=0.15, eta_g=1.2, l1=0.02 * seed, l2=0.1 * seed,
                       eps=1e-3, P=3, T=20)


@claim(cites=("Algorithm 2",),
       id="fedelasticnet.statements.algorithm2", paper=PAPER,
       reference="lines 5-14 and eq. (7); the epsilon-threshold of Section 3",
       statement="fedtheory's Scaffold(prox=lambda2, l1=lambda1, option II) reproduces Algorithm 2's printed "
                 "round (B local steps of eq. (7) with sign(0) = 0, c_k^t = c_k - c + (theta^{t-1} - theta_k)/"
                 "(B eta_l), theta^t = theta^{t-1} + eta_g/|P_t| sum Delta_k, c^t = c + (1/m) sum Delta c_k) to "
                 "1e-12 relative, over several rounds with the same sampled clients",
       kind="identity", instances=_alg2_instances, runs=("scaffold",))
def check_algorithm2(inst: dict) -> Evidence:
    problem = spec_problem(m=inst["m"], d=inst["d"], seed=inst["seed"])
    beta = problem.certificate.L
    eta_l, lam2 = inst["eta"] / beta, inst["l2"] * beta
    alg = Scaffold(local_steps=inst["B"], local_step=eta_l, server_step=inst["eta_g"], option="II", prox=lam2,
                   l1=inst["l1"], threshold=inst["eps"], participation=UniformSubset(inst["P"]))
    rng = np.random.default_rng(inst["seed"])
    d, m = problem.dim, problem.n_clients
    state = alg.init(problem, np.zeros(d))
    theta, c, C = np.zeros(d), np.zeros(d), np.zeros((m, d))
    worst = 0.0
    for _ in range(inst["T"]):
        S = np.sort(rng.choice(m, size=inst["P"], replace=False)).astype(np.int64)
        state, _ = alg.round_given(problem, state, Draw(clients=S))
        theta, c, C, delta = printed_algorithm2_round(problem.A, problem.b, theta, c, C, S, B=inst["B"],
                                                      eta_l=eta_l, eta_g=inst["eta_g"], lam1=inst["l1"],
                                                      lam2=lam2, eps=inst["eps"])
        for ours, printed in ((state.x, theta), (state.c, c), (state.C, C), (state.last_upload, delta)):
            worst = max(worst, float(np.max(np.abs(ours - printed))) / max(1.0, float(np.max(np.abs(printed)))))
    return Evidence(f"m={m} d={d} B={inst['B']} lambda1={inst['l1']:g} lambda2/beta={inst['l2']:g} "
                    f"eps={inst['eps']:g} |P|={inst['P']} T={inst['T']}", worst, EXACT_REL, worst <= EXACT_REL)
