"""Appendix A: GD on naively compressed weights does not converge, DoCoFL does (Theorem 1 with sigma = 0); and the
variance floor of naive compression on a quadratic (Section 3.1). Scalar claims run R independent paths as R
coordinates of one separable problem (with per-coordinate compressor randomness), so one run simulates R paths
through the library's own code.
"""
from __future__ import annotations

import math

import numpy as np

from ...algorithms.docofl import DoCoFL
from ...compressors.noise import ScaledRademacher
from ...problems.base import Certificate, Problem
from ...theory import docofl as th
from ..registry import Evidence, claim
from ..space import InstanceSpace, Param
from ..tolerances import DECAYED_REL, EXACT_REL, FEW_OPS_REL, Z_MONTE_CARLO
from ._shared import run_iterates, separable_quadratic

#: run_iterates and separable_quadratic (from _shared) are re-exported for notebooks/04_compression.ipynb and tests.
__all__ = ["HingeProblem", "run_iterates", "separable_quadratic"]


class HingeProblem(Problem):
    """App. A's f(w) = 1/2 (w-1)^2 + 1/2 [w-1]_+^2, applied to each of ``dim`` coordinates (independent copies):
    one client, f(w) = sum_j f(w_j); 1-strongly convex, 2-smooth, w* = 1."""

    def __init__(self, dim: int) -> None:
        self.n_clients, self.dim = 1, int(dim)
        self.weights = np.ones(1)
        self.sigma2 = 0.0
        self.certificate = Certificate(
            x_star=np.ones(self.dim), f_star=0.0, mu=1.0, L=2.0, mu_f=1.0, L_f=2.0, mu_i=np.ones(1),
            L_i=np.full(1, 2.0), delta_A=0.0, delta_B=0.0, zeta2=0.0, weights=self.weights, kkt_residual=0.0,
            exact={"x_star": True, "f_star": True, "mu": True, "L": True})

    def values(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        U = np.atleast_2d(X) - 1.0
        return 0.5 * np.sum(U * U + np.maximum(U, 0.0) ** 2, axis=1)

    def grads(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        U = np.atleast_2d(X) - 1.0
        return U + np.maximum(U, 0.0)


# ---------------------------------------------------------------------------------------------------------
# Appendix A: naive weight compression does not converge; DoCoFL does
# ---------------------------------------------------------------------------------------------------------


def _appa_instances(thorough: bool):
    for om in ([0.1, 0.3, 0.5, 0.8] if thorough else [0.3, 0.5]):
        yield {"scale": om, "eta": 0.2, "paths": 20000 if thorough else 8000, "rounds": 120, "seed": 0}


@claim(id="docofl.appendixA.naive_nonconvergence", paper="docofl", reference="App. A, eq. (9)",
       statement="GD on f(w) = (w-1)^2/2 + [w-1]_+^2/2 with naively compressed weights w(1 + eps), eps = +-omega, "
                 "does not converge to w* = 1: E[w_t] = 3/(3+omega) + (1 - eta(3+omega)/2)^t (1 - 3/(3+omega)) "
                 "(z <= 5 at every t), iterates stay in [1/(1+omega), 1/(1-omega)], h(1) = E[eps]_+ = omega/2",
       kind="counterexample", instances=_appa_instances, runs=("docofl",))


def check_appendix_a(inst: dict) -> Evidence:
    om, eta, R, T = inst["scale"], inst["eta"], inst["paths"], inst["rounds"]
    p = HingeProblem(R)
    alg = DoCoFL(step=eta, naive=True, anchor_compressor=ScaledRademacher(scale=om, per_coordinate=True),
                 stochastic=False)
    xs, _ = run_iterates(alg, p, T, inst["seed"], np.ones(R))
    mean = xs.mean(1)
    se = xs.std(1, ddof=1) / math.sqrt(R)
    theory = th.appendix_a_mean(np.arange(T + 1), eta, om, 1.0)
    z = np.where(se > 0, np.abs(mean - theory) / np.where(se > 0, se, 1.0), np.abs(mean - theory) / 1e-15)
    inside = bool(np.all(xs >= 1 / (1 + om) - EXACT_REL) and np.all(xs <= 1 / (1 - om) + EXACT_REL))
    # h(1) = E grad f(1 + eps) with eps = +-omega: (om + 2 om)/2 + (-om)/2 = om/2 exactly
    h1 = 0.5 * (p.grads(np.array([[1 + om]]))[0, 0] + p.grads(np.array([[1 - om]]))[0, 0])
    gap = 1.0 - mean[-1]
    gap_z = gap / se[-1]
    ok = bool(np.max(z[1:]) <= Z_MONTE_CARLO and inside and abs(h1 - om / 2) <= FEW_OPS_REL and gap_z > Z_MONTE_CARLO)
    return Evidence(f"omega={om} eta={eta} paths={R}", float(mean[-1]), th.appendix_a_limit(om), ok,
                    details={"max_z": float(np.max(z[1:])), "limit_gap": om / (3 + om), "measured_gap": float(gap),
                             "gap_z": float(gap_z), "invariant_interval": inside, "h(1)": float(h1)})


def _appa_docofl_instances(thorough: bool):
    for om in ([0.3, 0.5, 0.9] if thorough else [0.5]):
        yield {"scale": om, "K": 2, "V": 2, "paths": 200, "seed": 0}


#: Theorem 1 (sigma = 0) on App. A's function: any correction-compressor scale omega, period K and queue V.
#: The run length grows like theta = omega K V + 1 (T ~ 2200 theta rounds), so the searched ranges stop at
#: omega = 1, K = V = 3 (T <= 22,000) and the search gets at most 40 evaluations (60 s budget); the paths
#: are independent copies, so fewer (50) suffice for the search's maximum over paths to move.
_APPA_DOCOFL_SPACE = InstanceSpace(
    params=(Param("scale", 0.05, 1.0, log=True), Param("K", 1, 3, integer=True), Param("V", 1, 3, integer=True)),
    fixed={"paths": 50, "seed": 0}, defaults=tuple(_appa_docofl_instances(False)),
    thorough=tuple(_appa_docofl_instances(True))[::2], max_evaluations=40)


@claim(cites=("Theorem 1", "Theorem 3.4"),
       id="docofl.appendixA.docofl_converges", paper="docofl", reference="App. A (sigma = 0)",
       statement="on App. A's function DoCoFL (C_w = id, C_c = scaled Rademacher with the same omega, K = V = 2, "
                 "eta = 1/(30 beta theta)) converges in every path (|w_T - 1| < 1e-6) and "
                 "(1/T) sum_t |f'(w_t)|^2 <= 120 M beta theta / T per path",
       kind="bound", space=_APPA_DOCOFL_SPACE, cost="slow", runs=("docofl",),
       non_discriminating=(
           "proven for C_c = id: DoCoFL is then GD, whose iterates approach 1 from below, where f is the quadratic "
           "(w - 1)^2/2 (curvature 1, beta = 2), so (1/T) sum_t |f'(w_t)|^2 = (1 - (1 - eta)^(2T))/(eta T (2 - eta)) "
           "against 120 M beta theta/T = 2/(eta T): at most 1/(2(2 - eta)) <= 0.2521 (the same inequality as "
           "docofl.theorem1's, tests/claims/docofl/test_theorem1.py); with the compressed correction it is only "
           "measured: the worst-case search's 37 evaluations over omega, K, V never exceeded 0.252"))


def check_appendix_a_docofl(inst: dict) -> Evidence:
    om, K, V, R = inst["scale"], inst["K"], inst["V"], inst["paths"]
    beta = 2.0
    theta = th.theta(om**2, K * V)
    eta = 1.0 / (30 * beta * theta)
    T = int(math.ceil(16 * math.log(10) / eta)) + 1     # (1 - eta)^T <= 1e-16: far below the 1e-6 target
    p = HingeProblem(R)
    alg = DoCoFL(step=eta, period=K, queue_size=V, correction_compressor=ScaledRademacher(scale=om, per_coordinate=True),
                 stochastic=False)
    x0 = np.zeros(R)
    xs, _ = run_iterates(alg, p, T, inst["seed"], x0)
    G = p.grads(xs[:-1])
    avg_grad2 = np.mean(G * G, axis=0)                   # per path
    M = float(p.values(x0[None, :1])[0])                 # f(0) - f* per path = 1/2
    bound = 120 * M * beta * theta / T
    final = float(np.max(np.abs(xs[-1] - 1.0)))
    ok = final < DECAYED_REL and bool(np.all(avg_grad2 <= bound))
    return Evidence(f"omega={om} K={K} V={V} T={T}", float(avg_grad2.max()), bound, ok,
                    tightness=float(avg_grad2.max() / bound), details={"max_final_error": final})


# ---------------------------------------------------------------------------------------------------------
# Section 3.1: the variance floor of naive compression against DoCoFL
# ---------------------------------------------------------------------------------------------------------


def _floor_instances(thorough: bool):
    yield {"a": 2.0, "w_star": 5.0, "scale": 0.3, "eta": 0.05, "paths": 40000 if thorough else 10000,
           "rounds": 300, "seed": 0}


@claim(id="docofl.variance_floor.derived", paper="docofl", reference="derived by fedtheory; Sec. 3.1",
       statement="naive weight compression on f = a/2 (w - w*)^2 has exact E(w_t - w*)^2 (recursion) -> "
                 "eta a omega^2 w*^2/(2 - eta a - eta a omega^2) > 0 (MC z <= 5), while DoCoFL (C_w = id, "
                 "sigma = 0) drives every path's error below 1e-12 of its start",
       kind="identity", derived=True, instances=_floor_instances, runs=("docofl",))


def check_variance_floor(inst: dict) -> Evidence:
    a, ws, om, eta, R, T = inst["a"], inst["w_star"], inst["scale"], inst["eta"], inst["paths"], inst["rounds"]
    p = separable_quadratic(a, ws, R)
    naive = DoCoFL(step=eta, naive=True, anchor_compressor=ScaledRademacher(scale=om, per_coordinate=True),
                   stochastic=False)
    x0 = np.full(R, ws + 1.0)
    xs, _ = run_iterates(naive, p, T, inst["seed"], x0)
    u2 = (xs - ws) ** 2
    exact = th.naive_second_moment(T, a, eta, om**2, ws, ws + 1.0)
    floor = th.naive_variance_floor(a, eta, om**2, ws)
    se = u2.std(1, ddof=1) / math.sqrt(R)
    z = float(np.max(np.abs(u2.mean(1)[1:] - exact[1:]) / se[1:]))
    limit_ok = abs(th.naive_second_moment(20000, a, eta, om**2, ws, ws + 1.0)[-1] - floor) <= EXACT_REL * floor
    doc = DoCoFL(step=eta, period=2, queue_size=2,
                 correction_compressor=ScaledRademacher(scale=om, per_coordinate=True), stochastic=False)
    xd, _ = run_iterates(doc, p, 2000, inst["seed"], x0)
    doc_ratio = float(np.max((xd[-1] - ws) ** 2) / 1.0)
    ok = z <= Z_MONTE_CARLO and limit_ok and doc_ratio <= EXACT_REL
    return Evidence(f"a={a} w*={ws} omega={om} eta={eta}", float(u2.mean(1)[-1]), float(exact[-1]), ok,
                    details={"max_z": z, "floor": floor, "docofl_final_error_ratio": doc_ratio})
