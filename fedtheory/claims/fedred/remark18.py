"""Remark 18 and Definitions 1-2: the dissimilarity constants delta_A, delta_B of quadratics, and their invariance to
a function common to every client (Section 3).
"""
from __future__ import annotations

import math

import numpy as np

from ...algorithms.dane import DANE
from ...problems.constructions import outlier_quadratic, vary_L
from ...problems.quadratic import QuadraticProblem
from ...run import run
from ...theory import fedred as th
from ..registry import Evidence, claim
from ..tolerances import EXACT_REL, GAP_FLOOR, IDENTITY_TOL, ITERATE_REL, MATERIAL_REL
from ._shared import describe, nonconvex_instance, quadratic_instance, start_point

__all__: list[str] = []


# ---------------------------------------------------------------------------------------------------------
# Remark 18: the dissimilarity constants; Section 3: invariance to a common part
# ---------------------------------------------------------------------------------------------------------


def _dissim_instances(thorough: bool):
    yield dict(n_clients=8, dim=10, mu=1.0, L=100.0, delta_B=3.0, zeta2=1.0, seed=0)
    yield dict(n_clients=8, dim=10, mu=1.0, L=100.0, delta_A=3.0, zeta2=1.0, seed=1)
    if thorough:
        yield from (dict(n_clients=n, dim=6, mu=0.5, L=20.0, delta_B=2.0, zeta2=1.0, seed=n) for n in (2, 3, 16, 40))


@claim(cites=("Remark 18",),
       id="fedred.dissimilarity.constants", paper="fedred", reference="Definitions 1-2",
       statement="For quadratics delta_B = max||E_i|| and delta_A = sqrt(lambda_max(mean E_i^2)) (the sup in Def. 2 "
                 "is attained); delta_A <= delta_B <= sqrt(n) delta_A; the outlier construction attains "
                 "delta_B/delta_A = sqrt(n-1); delta_B <= L for convex f_i; delta_A <= sqrt(mean||E_i||^2), strictly "
                 "on the Remark-18-type example; delta is invariant to a common added function",
       kind="identity", instances=_dissim_instances)


def check_dissimilarity_constants(kw: dict) -> Evidence:
    problem = quadratic_instance(kw)
    c = problem.certificate
    n, d = problem.n_clients, problem.dim
    A = problem.A if problem.A.ndim == 3 else np.einsum("nd,de->nde", problem.A, np.eye(d))
    E = A - np.tensordot(problem.weights, A, axes=1)
    norms = np.array([np.linalg.norm(Ei, 2) for Ei in E])  # independent recomputation (not in a hot path)
    dB = float(norms.max())
    S = np.tensordot(problem.weights, np.matmul(E, E), axes=1)
    ev, V = np.linalg.eigh(S)
    dA = float(np.sqrt(ev[-1]))
    # Relative errors with a rounding floor: E_i = A_i - Abar carries absolute errors ~1e-16 L, so a delta
    # below 1e-3 L is compared at the absolute level 1e-13 L (1e-10 of the floor 1e-3 L).
    def rel(a: float, b: float, L: float) -> float:
        return abs(a - b) / max(abs(b), 1e-3 * L)

    errs = {"delta_B": rel(dB, c.delta_B, c.L), "delta_A": rel(dA, c.delta_A, c.L)}
    # Def. 2 with the same (x, y) for every client: the top eigenvector of mean E_i^2 attains the sup,
    # random directions never exceed it.
    v = V[:, -1]
    attained = float(np.sqrt(problem.weights @ np.sum(np.matmul(E, v) ** 2, axis=1)))
    rng = np.random.default_rng(0)
    W = rng.standard_normal((200, d))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    sampled = float(np.sqrt(np.max(np.einsum("n,knd->k", problem.weights,
                                             np.einsum("nde,ke->knd", E, W) ** 2))))
    errs["def2_attained"] = abs(attained - dA) / dA
    sandwich = dA <= dB * (1 + EXACT_REL) and dB <= math.sqrt(n) * dA * (1 + EXACT_REL) and sampled <= dA * (1 + EXACT_REL)
    convex_ok = dB <= c.L * (1 + EXACT_REL)
    rms = float(np.sqrt(problem.weights @ norms**2))
    out = outlier_quadratic(max(n, 2), d, mu=c.mu, L=c.L, delta_B=c.delta_B, seed=kw.get("seed", 0)).certificate
    errs["outlier_ratio"] = abs(out.delta_B / out.delta_A - math.sqrt(max(n, 2) - 1)) / math.sqrt(max(n, 2) - 1)
    a = 1.0
    Er = np.zeros((4, 2, 2))
    Er[0], Er[1], Er[2], Er[3] = a * np.diag([1, 0]), -a * np.diag([1, 0]), a * np.diag([0, 1]), -a * np.diag([0, 1])
    rem = QuadraticProblem(Er + 2 * np.eye(2), np.zeros((4, 2))).certificate
    errs["remark18_delta_A"] = abs(rem.delta_A - a / math.sqrt(2)) / (a / math.sqrt(2))
    strict = rem.delta_A < a * (1 - MATERIAL_REL)
    shifted = vary_L(problem, c.L + 7.0).certificate
    errs["common_shift"] = max(rel(shifted.delta_A, c.delta_A, shifted.L), rel(shifted.delta_B, c.delta_B, shifted.L))
    worst = max(errs.values())
    holds = worst <= IDENTITY_TOL and sandwich and convex_ok and dA <= rms * (1 + EXACT_REL) and strict
    return Evidence(describe(kw), worst, IDENTITY_TOL, holds,
                    details={**errs, "delta_A": dA, "delta_B": dB, "sqrt_mean_norm2": rms, "sampled_max": sampled,
                             "outlier_ratio": out.delta_B / out.delta_A})


@claim(id="fedred.common_part_invariance", paper="fedred", reference="Jiang, Rodomanov & Stich (ICML 2024), Sec. 3",
       statement="Adding the same function to every f_i (a quadratic c q q^T, or the non-convex log term of 6(f)) "
                 "leaves delta_A, delta_B unchanged while L changes, and exact DANE's per-round contraction "
                 "lam/(lam+mu) stays valid",
       kind="invariant", instances=lambda thorough: iter([dict(n_clients=8, dim=10, mu=1.0, L=100.0, delta_A=1.0,
                                                               zeta2=1.0, seed=0, shifts=(0.0, 1e2, 1e3, 1e4))]),
       runs=("dane",))


def check_common_part(kw: dict) -> Evidence:
    base = quadratic_instance(kw)
    c0 = base.certificate
    lam = 2 * c0.delta_A
    x0 = start_point(base, 0)
    worst_ratio, worst_delta, Ls = -np.inf, 0.0, []
    for shift in kw["shifts"]:
        problem = vary_L(base, c0.L + shift)
        c = problem.certificate
        worst_delta = max(worst_delta, abs(c.delta_A - c0.delta_A) / c0.delta_A, abs(c.delta_B - c0.delta_B) / c0.delta_B)
        tr = run(DANE(lam=lam), problem, 60, x0=x0)
        d2 = tr.dist2
        keep = d2[:-1] > GAP_FLOOR * d2[0]
        worst_ratio = max(worst_ratio, float(np.max(d2[1:][keep] / d2[:-1][keep])) / th.dane_contraction(c.mu, lam))
        Ls.append(c.L)
    nc = [nonconvex_instance(dict(n_clients=5, dim=4, delta_B=0.5, seed=3, c=cc)).certificate
          for cc in (1.0, 4.0, 16.0)]
    worst_delta = max(worst_delta, max(abs(x.delta_B - nc[0].delta_B) / nc[0].delta_B for x in nc),
                      max(abs(x.delta_A - nc[0].delta_A) / nc[0].delta_A for x in nc))
    holds = worst_delta <= IDENTITY_TOL and worst_ratio <= 1 + ITERATE_REL and max(Ls) > 10 * min(Ls)
    return Evidence(describe({k: v for k, v in kw.items() if k != "shifts"}), worst_ratio, 1.0, holds,
                    tightness=worst_ratio, details={"L": Ls, "delta_rel_change": worst_delta})
