"""The technical lemmas of App. A.2 (Lemmas 10-17) of Jiang, Rodomanov & Stich (ICML 2024).

The text of the paper available to fedtheory lost every formula (docs/fedred.md). Each lemma is therefore checked
in the form fedtheory reconstructs from its hypotheses, from the steps its proof names and from the statements that
use it; those claims are registered as derived (``derived=True``). Lemmas 14-16 are textbook statements named by
their source (Nesterov 2018) and are checked as such.

Generic inequalities (Lemmas 10, 12, 13, 14) are checked on random vectors or sequences drawn from a declared
space, plus the equality cases, so that a changed constant is caught; Lemmas 11, 15-17 on the clients of
quadratics (``fedtheory.problems.quadratic``) and of fedtheory's non-convex family. The expected sides are
computed here from the problem's oracles and the instance's exact constants.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ...algorithms.fedred import FedRed
from ...problems.nonconvex import nonconvex
from ...problems.quadratic import quadratic
from ..registry import Evidence, claim
from ..space import InstanceSpace, Param, quadratic_space
from ..tolerances import CERTIFIED_CONSTANT_REL, EXACT_REL, ITERATE_REL
from ._shared import client_hessians, describe, weighted_mean_sq

__all__ = ["young_gap", "sqrt_recursion_gap", "weighted_sum_gap", "variance_identity_error",
           "coercivity_lower_bound", "separable_hessian_dissimilarity"]


# ---------------------------------------------------------------------------------------------------------
# Lemmas 10, 12, 13, 14: generic inequalities
# ---------------------------------------------------------------------------------------------------------


def young_gap(a: np.ndarray, b: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Lemma 10 (Young), rows of a and b: the normalised slacks of

        (A.3)  2<a, b> <= alpha ||a||^2 + ||b||^2 / alpha,
        (A.4)  ||a + b||^2 <= (1 + alpha) ||a||^2 + (1 + 1/alpha) ||b||^2,

    i.e. (lhs - rhs) / (|terms|), <= 0 when the inequality holds, 0 at equality (b = alpha a)."""
    aa, bb, ab = np.sum(a * a, axis=1), np.sum(b * b, axis=1), np.sum(a * b, axis=1)
    s = np.sum((a + b) ** 2, axis=1)
    g1 = (2 * ab - alpha * aa - bb / alpha) / (2 * np.abs(ab) + alpha * aa + bb / alpha + 1e-300)
    g2 = (s - (1 + alpha) * aa - (1 + 1 / alpha) * bb) / (s + (1 + alpha) * aa + (1 + 1 / alpha) * bb + 1e-300)
    return g1, g2


_VEC_SPACE = InstanceSpace(
    params=(Param("dim", 1, 50, integer=True), Param("alpha", 1e-3, 1e3, log=True),
            Param("scale", 1e-3, 1e3, log=True), Param("seed", 0, 10_000, integer=True)),
    defaults=(dict(dim=5, alpha=1.0, scale=1.0, seed=0), dict(dim=20, alpha=0.01, scale=100.0, seed=1),
              dict(dim=1, alpha=50.0, scale=1e-2, seed=2)),
    thorough=tuple(dict(dim=d, alpha=a, scale=1.0, seed=s) for s, (d, a) in
                   enumerate([(3, 1e-3), (40, 1e3), (10, 0.3)], start=3)))


@claim(cites=("Lemma 10",),
       id="fedred.appendix.young.derived", paper="fedred", derived=True,
       reference="eqs. (A.3)-(A.4) (form derived by fedtheory)",
       statement="(derived by fedtheory; the form of Lemma 10) for any alpha > 0 and vectors a, b: 2<a,b> <= "
                 "alpha||a||^2 + ||b||^2/alpha and ||a+b||^2 <= (1+alpha)||a||^2 + (1+1/alpha)||b||^2, with "
                 "equality at b = alpha a",
       kind="bound", space=_VEC_SPACE)


def check_young(kw: dict) -> Evidence:
    """500 random pairs of scale ``scale`` (and pairs with very different norms), plus the equality case."""
    rng = np.random.default_rng(kw["seed"])
    d, alpha, scale = int(kw["dim"]), float(kw["alpha"]), float(kw["scale"])
    a = scale * rng.standard_normal((500, d))
    b = scale * rng.standard_normal((500, d)) * np.exp(rng.uniform(-5, 5, (500, 1)))
    g1, g2 = young_gap(a, b, alpha)
    worst = float(max(g1.max(), g2.max()))
    e1, e2 = young_gap(a[:5], alpha * a[:5], alpha)  # equality case: both slacks are zero
    attained = float(max(np.abs(e1).max(), np.abs(e2).max()))
    holds = worst <= ITERATE_REL and attained <= EXACT_REL
    # Tightness of (A.4), ||a + b||^2 / ((1 + alpha)||a||^2 + (1 + 1/alpha)||b||^2), over the random pairs and the
    # equality pairs b = alpha a (where it is 1): computed from the vectors, not from young_gap.
    pairs = ((a, b), (a[:5], alpha * a[:5]))
    tight = max(float(np.max(np.sum((x + y) ** 2, axis=1) / ((1 + alpha) * np.sum(x * x, axis=1)
                                                             + (1 + 1 / alpha) * np.sum(y * y, axis=1))))
                for x, y in pairs)
    return Evidence(describe(kw), worst, 0.0, holds, tightness=tight, details={"equality_case_residual": attained})


def sqrt_recursion_gap(a0: float, c: np.ndarray, a: np.ndarray) -> float:
    """Lemma 12: the largest (a_R - (a_0 + sum_{r<R} c_r)) / (a_0 + sum c) over R, for a non-negative sequence
    satisfying a_{r+1}^2 <= a_r^2 + c_r a_{r+1}; <= 0 when a_R <= a_0 + sum_{r<R} c_r (so that
    a_R^2 <= (a_0 + sum c)^2, "taking the square on both sides")."""
    bound = a0 + np.concatenate(([0.0], np.cumsum(c)))
    seq = np.concatenate(([a0], a))
    return float(np.max((seq - bound) / np.maximum(bound, 1e-300)))


_SEQ_SPACE = InstanceSpace(
    params=(Param("R", 1, 300, log=True, integer=True), Param("a0", 0.0, 10.0),
            Param("c_scale", 1e-4, 1e2, log=True), Param("slack", 0.0, 1.0), Param("seed", 0, 10_000, integer=True)),
    defaults=(dict(R=50, a0=1.0, c_scale=0.1, slack=0.0, seed=0), dict(R=200, a0=0.0, c_scale=1.0, slack=0.5, seed=1),
              dict(R=3, a0=5.0, c_scale=10.0, slack=0.0, seed=2)),
    thorough=tuple(dict(R=300, a0=a0, c_scale=cs, slack=0.0, seed=s)
                   for s, (a0, cs) in enumerate([(1e-3, 1e-4), (10.0, 100.0)], start=3)))


@claim(cites=("Lemma 12",),
       id="fedred.appendix.sqrt_recursion.derived", paper="fedred", derived=True,
       reference="eq. (A.6) (form derived by fedtheory from its proof (A.7)-(A.10) and its use in Lemma 22)",
       statement="(derived by fedtheory; the form of Lemma 12) if a_r >= 0 and a_{r+1}^2 <= a_r^2 + c_r a_{r+1} "
                 "with c_r >= 0, then a_R <= a_0 + sum_{r<R} c_r, hence a_R^2 <= (a_0 + sum_{r<R} c_r)^2, for "
                 "every R",
       kind="bound", space=_SEQ_SPACE)


def check_sqrt_recursion(kw: dict) -> Evidence:
    """Sequences on (slack = 0) or below (slack > 0) the hypothesis' boundary: a_{r+1} is (1 - slack u) times
    the largest root of t^2 - c_r t - a_r^2 = 0, u ~ U(0, 1). At slack = 0 and a_0 = 0 the bound is attained."""
    rng = np.random.default_rng(kw["seed"])
    R = int(kw["R"])
    c = float(kw["c_scale"]) * rng.exponential(size=R)
    a = np.empty(R)
    prev = float(kw["a0"])
    for r in range(R):  # a recursion: each term needs the previous one
        root = 0.5 * (c[r] + math.sqrt(c[r] ** 2 + 4 * prev ** 2))
        prev = root * (1.0 - float(kw["slack"]) * rng.random())
        a[r] = prev
    hyp = float(np.max(a ** 2 - np.concatenate(([kw["a0"]], a[:-1])) ** 2 - c * a))
    worst = sqrt_recursion_gap(float(kw["a0"]), c, a)
    scale = float(kw["a0"]) + c.sum()
    return Evidence(describe(kw), worst, 0.0, worst <= ITERATE_REL, tightness=1.0 + worst,
                    details={"hypothesis_residual": hyp / max(scale ** 2, 1e-300), "a_R": a[-1], "bound": scale})


def weighted_sum_gap(q: float, a: np.ndarray, b: np.ndarray, c: float) -> float:
    """Lemma 13 for a_0..a_K, b_0..b_{K-1} satisfying q a_{k+1} + b_k <= a_k + c: the largest, over K, of

        [(q^K a_K + sum_{k<K} q^k b_k) / S_K - (a_0 / S_K + c)] / (a_0 / S_K + c),    S_K = sum_{k<K} q^k,

    <= 0 when (A.11) holds."""
    K = len(b)
    qk = q ** np.arange(K + 1)
    S = np.cumsum(qk[:-1])
    lhs = (qk[1:] * a[1:] + np.cumsum(qk[:-1] * b)) / S
    rhs = a[0] / S + c
    return float(np.max((lhs - rhs) / np.maximum(rhs, 1e-300)))


_LEMMA13_SPACE = InstanceSpace(
    params=(Param("q", 1.0, 3.0), Param("K", 1, 300, log=True, integer=True), Param("c", 0.0, 10.0),
            Param("slack", 0.0, 1.0), Param("seed", 0, 10_000, integer=True)),
    defaults=(dict(q=1.0, K=100, c=0.5, slack=0.0, seed=0), dict(q=1.1, K=200, c=0.0, slack=0.3, seed=1),
              dict(q=2.5, K=20, c=3.0, slack=0.0, seed=2)),
    thorough=tuple(dict(q=q, K=300, c=1.0, slack=0.0, seed=s) for s, q in enumerate((1.001, 1.5), start=3)))


@claim(cites=("Lemma 13",),
       id="fedred.appendix.weighted_sum.derived", paper="fedred", derived=True,
       reference="eq. (A.11) (form derived by fedtheory from its proof (A.12)-(A.14))",
       statement="(derived by fedtheory; the form of Lemma 13) if q >= 1 and non-negative a_k, b_k satisfy "
                 "q a_{k+1} + b_k <= a_k + c, then (q^K a_K + sum_{k<K} q^k b_k)/S_K <= a_0/S_K + c with "
                 "S_K = sum_{k<K} q^k, for every K (equality when the hypothesis is tight)",
       kind="bound", space=_LEMMA13_SPACE)


def check_weighted_sum(kw: dict) -> Evidence:
    """Random b_k and a_{k+1} = (a_k + c - b_k)/q reduced by a random fraction ``slack`` (kept >= 0)."""
    rng = np.random.default_rng(kw["seed"])
    K, q, c = int(kw["K"]), float(kw["q"]), float(kw["c"])
    a = np.empty(K + 1)
    b = np.empty(K)
    a[0] = 10.0 * rng.random()
    for k in range(K):  # a recursion
        b[k] = (a[k] + c) * rng.random()
        a[k + 1] = (a[k] + c - b[k]) / q * (1.0 - float(kw["slack"]) * rng.random())
    worst = weighted_sum_gap(q, a, b, c)
    return Evidence(describe(kw), worst, 0.0, worst <= ITERATE_REL, tightness=1.0 + worst)


def variance_identity_error(w: np.ndarray, X: np.ndarray, x: np.ndarray) -> float:
    """Lemma 14: |sum_i w_i ||x_i - x||^2 - (||xbar - x||^2 + sum_i w_i ||x_i - xbar||^2)| relative to the left
    side, xbar = sum_i w_i x_i."""
    xbar = w @ X
    lhs = weighted_mean_sq(w, X - x)
    rhs = float(np.sum((xbar - x) ** 2)) + weighted_mean_sq(w, X - xbar)
    return abs(lhs - rhs) / max(lhs, 1e-300)


_SET_SPACE = InstanceSpace(
    params=(Param("n", 1, 100, log=True, integer=True), Param("dim", 1, 50, integer=True),
            Param("offset", 0.0, 100.0), Param("weights", 0, 1, integer=True), Param("seed", 0, 10_000, integer=True)),
    defaults=(dict(n=10, dim=5, offset=0.0, weights=0, seed=0), dict(n=50, dim=20, offset=30.0, weights=1, seed=1),
              dict(n=1, dim=3, offset=1.0, weights=0, seed=2)),
    thorough=(dict(n=100, dim=50, offset=100.0, weights=1, seed=3),))


@claim(cites=("Lemma 14",),
       id="fedred.appendix.variance_identity", paper="fedred",
       reference="eq. (A.15)",
       statement="For vectors x_1..x_n and any x: (1/n) sum_i ||x_i - x||^2 = ||xbar - x||^2 + (1/n) sum_i "
                 "||x_i - xbar||^2 (checked also with client weights w_i, xbar = sum_i w_i x_i)",
       kind="identity", space=_SET_SPACE)


def check_variance_identity(kw: dict) -> Evidence:
    rng = np.random.default_rng(kw["seed"])
    n, d = int(kw["n"]), int(kw["dim"])
    w = rng.dirichlet(np.ones(n)) if kw["weights"] else np.full(n, 1.0 / n)
    worst = 0.0
    for _ in range(20):
        X = rng.standard_normal((n, d)) + float(kw["offset"])
        worst = max(worst, variance_identity_error(w, X, rng.standard_normal(d)))
    return Evidence(describe(kw), worst, EXACT_REL, worst <= EXACT_REL)


# ---------------------------------------------------------------------------------------------------------
# Lemma 11: the proximal-linear step (the FedRed-GD subproblem)
# ---------------------------------------------------------------------------------------------------------

_FEDRED_SPACE = quadratic_space(
    defaults=(dict(n_clients=6, dim=8, mu=0.5, L=50.0, delta_A=1.0, zeta2=1.0, seed=0, lam_factor=2.0, eta_L=1.0),
              dict(n_clients=4, dim=5, mu=0.05, L=10.0, delta_A=0.5, zeta2=3.0, seed=1, lam_factor=1.0, eta_L=0.3),
              # the server's other paths: unequal weights, randomized selection, no reset, the default p
              dict(n_clients=4, dim=5, mu=0.5, L=20.0, delta_A=1.0, zeta2=2.0, weights=(0.1, 0.2, 0.3, 0.4), seed=5,
                   lam_factor=1.5, eta_L=0.5, selection="random", reset=False, p=None)),
    extra=(Param("lam_factor", 0.0, 10.0), Param("eta_L", 1e-3, 10.0, log=True)))


@claim(cites=("Lemma 11", "Algorithm 3"),
       id="fedred.appendix.prox_step.derived", paper="fedred", derived=True,
       reference="eq. (A.5) (form derived by fedtheory: 'follows from the first-order optimality condition')",
       statement="(derived by fedtheory; the form of Lemma 11) for psi(x) = <g, x> + lam/2||x - u||^2 + 1/(2eta)||x - v||^2 "
                 "and x+ = argmin psi (the FedRed-GD step): psi(x) = psi(x+) + (lam + 1/eta)/2 ||x - x+||^2 for "
                 "every x",
       kind="identity", space=_FEDRED_SPACE, runs=("fedred",))


def check_prox_step(kw: dict) -> Evidence:
    """FedRed-GD runs 6 iterations; at each, every client's step is compared with the identity at 5 random x."""
    problem = quadratic(**{k: kw[k] for k in ("n_clients", "dim", "mu", "L", "delta_A", "zeta2", "weights", "seed")
                           if k in kw})
    c = problem.certificate
    lam, eta = float(kw["lam_factor"]) * c.delta_A, float(kw["eta_L"]) / c.L
    # lam = 2 delta_A and eta = 1/L are the algorithm's own defaults (None): run them as such; the identity is
    # checked with the lam and eta computed here
    alg = FedRed(lam=None if kw["lam_factor"] == 2.0 else lam, eta=None if kw["eta_L"] == 1.0 else eta,
                 p=kw.get("p", 0.5), selection=kw.get("selection", "standard"), reset=kw.get("reset", True))
    rng = np.random.default_rng(kw["seed"])
    state = alg.init(problem, c.x_star + rng.standard_normal(problem.dim))
    worst = 0.0
    for _ in range(6):
        Xp, _ = alg.local_step(problem, state)
        g = problem.grads(state.X) + state.H  # the linear term <grad f_i(x_{i,k}) + h_{i,k}, x>

        def psi(Z: np.ndarray) -> np.ndarray:
            return (np.sum(g * Z, axis=1) + 0.5 * lam * np.sum((Z - state.x) ** 2, axis=1)
                    + 0.5 / eta * np.sum((Z - state.X) ** 2, axis=1))

        for _ in range(5):
            Z = Xp + rng.standard_normal(Xp.shape) * np.exp(rng.uniform(-3, 1))
            lhs, rhs = psi(Z) - psi(Xp), 0.5 * (lam + 1 / eta) * np.sum((Z - Xp) ** 2, axis=1)
            scale = np.abs(psi(Z)) + np.abs(psi(Xp)) + rhs
            worst = max(worst, float(np.max(np.abs(lhs - rhs) / scale)))
        state = alg.round(problem, state, rng)[0]
    return Evidence(describe(kw), worst, EXACT_REL, worst <= EXACT_REL)


# ---------------------------------------------------------------------------------------------------------
# Lemmas 15-16 (Nesterov 2018) on the clients of the quadratic and non-convex families
# ---------------------------------------------------------------------------------------------------------

_SMOOTH_SPACE = quadratic_space(
    defaults=(dict(n_clients=6, dim=8, mu=0.5, L=50.0, delta_A=1.0, zeta2=1.0, seed=0),
              dict(n_clients=4, dim=5, mu=0.02, L=500.0, delta_B=10.0, zeta2=0.0, hessians="diagonal", seed=1)),
    thorough=(dict(n_clients=10, dim=12, mu=0.01, L=1000.0, delta_A=3.0, zeta2=5.0, seed=2),))


@claim(cites=("Lemma 15",),
       id="fedred.appendix.descent_lemma", paper="fedred",
       reference="eq. (A.19) (Nesterov 2018, Lemma 1.2.3)",
       statement="For L-smooth f_i: f_i(y) <= f_i(x) + <grad f_i(x), y - x> + L/2 ||y - x||^2 for all x, y, with "
                 "L = max_i L_i, on quadratic clients (equality along the top eigenvector) and on non-convex "
                 "clients of fedtheory's family",
       kind="bound", space=_SMOOTH_SPACE)


def check_descent_lemma(kw: dict) -> Evidence:
    rng = np.random.default_rng(kw["seed"])
    problem = quadratic(**kw)
    nc = nonconvex(kw["n_clients"], kw["dim"], curvature=2.0, nu=0.1, delta_B=1.0, zeta2=1.0, seed=kw["seed"])
    worst, ratio = -np.inf, 0.0
    for prob in (problem, nc):
        L = prob.certificate.L
        n, d = prob.n_clients, prob.dim
        for t in range(30):
            X = 3 * rng.standard_normal((n, d))
            D = rng.standard_normal((n, d)) * np.exp(rng.uniform(-4, 2))
            if t == 0 and prob is problem:  # the equality direction: the top eigenvector of each A_i
                _, V = np.linalg.eigh(client_hessians(problem))
                D = V[:, :, -1] * 0.7
            Y = X + D
            lin = prob.values(X) + np.sum(prob.grads(X) * D, axis=1)
            lhs, quad = prob.values(Y) - lin, 0.5 * L * np.sum(D * D, axis=1)
            scale = np.abs(prob.values(Y)) + np.abs(lin) + quad
            worst = max(worst, float(np.max((lhs - quad) / scale)))
            ratio = max(ratio, float(np.max(lhs / quad)))
    return Evidence(describe(kw), worst, 0.0, worst <= ITERATE_REL, tightness=ratio,
                    details={"max (f(y)-f(x)-<g,y-x>)/(L/2||y-x||^2)": ratio})


def coercivity_lower_bound(mu: np.ndarray, L: np.ndarray, D: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Lemma 16's right side per row: mu L/(mu + L) ||x - y||^2 + 1/(mu + L) ||grad f(x) - grad f(y)||^2."""
    return mu * L / (mu + L) * np.sum(D * D, axis=1) + np.sum(G * G, axis=1) / (mu + L)


@claim(cites=("Lemma 16",),
       id="fedred.appendix.coercivity", paper="fedred",
       reference="eq. (A.20) (Nesterov 2018, Theorem 2.1.12)",
       statement="For mu-convex L-smooth f_i: <grad f_i(x) - grad f_i(y), x - y> >= mu L/(mu + L) ||x - y||^2 + "
                 "1/(mu + L) ||grad f_i(x) - grad f_i(y)||^2, with each client's exact (mu_i, L_i); equality for "
                 "x - y in the span of the extreme eigenvectors",
       kind="bound", space=_SMOOTH_SPACE)


def check_coercivity(kw: dict) -> Evidence:
    rng = np.random.default_rng(kw["seed"])
    problem = quadratic(**kw)
    c = problem.certificate
    mu, L = np.asarray(c.mu_i)[:, None], np.asarray(c.L_i)[:, None]
    _, V = np.linalg.eigh(client_hessians(problem))
    n, d = problem.n_clients, problem.dim
    worst, ratio = -np.inf, 0.0
    for t in range(30):
        X = 3 * rng.standard_normal((n, d))
        if t < 5:  # equality: x - y = a u_min + b u_max of each client
            ab = rng.standard_normal((n, 2))
            D = ab[:, :1] * V[:, :, 0] + ab[:, 1:] * V[:, :, -1]
        else:
            D = rng.standard_normal((n, d)) * np.exp(rng.uniform(-4, 2))
        G = problem.grads(X + D) - problem.grads(X)
        lhs = np.sum(G * D, axis=1)
        rhs = coercivity_lower_bound(mu[:, 0], L[:, 0], D, G)
        worst = max(worst, float(np.max((rhs - lhs) / (np.abs(lhs) + rhs))))
        ratio = max(ratio, float(np.max(rhs / lhs)))
    return Evidence(describe(kw), worst, 0.0, worst <= ITERATE_REL, tightness=ratio)


# ---------------------------------------------------------------------------------------------------------
# Lemma 17: a pointwise Hessian bound implies delta_A-AHD (non-quadratic clients)
# ---------------------------------------------------------------------------------------------------------


def separable_hessian_dissimilarity(E: np.ndarray, C: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
    """sup_x sum_i w_i ||grad^2 f_i(x) - grad^2 f(x)||_2^2 for f_i(x) = 1/2 x^T (Abar + E_i) x + sum_j C_ij
    log(1 + x_j^2), sum_i w_i E_i = 0, exactly: grad^2 f_i - grad^2 f = E_i + diag((C_i - Cbar) s) with
    s_j = phi''(x_j) ranging over [-1/4, 2]; the objective is convex in s, so its sup over the box is at a
    vertex (all 2^d enumerated). Returns (sup, the maximising s)."""
    n, d = C.shape
    M0 = C - w @ C
    verts = np.array(list(itertools.product((-0.25, 2.0), repeat=d)))  # (V, d)
    M = E[None] + np.einsum("ij,vj,jk->vijk", M0, verts, np.eye(d))  # (V, n, d, d)
    ev = np.linalg.eigvalsh(M)
    norms2 = np.max(np.abs(ev), axis=-1) ** 2  # (V, n)
    vals = norms2 @ w
    k = int(np.argmax(vals))
    return float(vals[k]), verts[k]


def _phi_grad(X: np.ndarray) -> np.ndarray:
    return 2 * X / (1 + X * X)


_HESS_SPACE = InstanceSpace(
    params=(Param("n_clients", 2, 10, integer=True), Param("dim", 1, 6, integer=True),
            Param("e_scale", 0.0, 5.0), Param("c_scale", 0.0, 5.0), Param("seed", 0, 10_000, integer=True)),
    defaults=(dict(n_clients=5, dim=4, e_scale=1.0, c_scale=1.0, seed=0),
              dict(n_clients=8, dim=6, e_scale=0.1, c_scale=3.0, seed=1),
              dict(n_clients=3, dim=2, e_scale=2.0, c_scale=0.0, seed=2)),
    thorough=(dict(n_clients=10, dim=6, e_scale=5.0, c_scale=5.0, seed=3),))


@claim(cites=("Lemma 17",),
       id="fedred.appendix.hessian_to_ahd", paper="fedred",
       reference="eqs. (A.21)-(A.22)",
       statement="If each f_i is C^2 and (1/n) sum_i ||grad^2 f_i(x) - grad^2 f(x)||^2 <= delta^2 for every x, "
                 "then (1/n) sum_i ||grad h_i(x) - grad h_i(y)||^2 <= delta^2 ||x - y||^2 (delta-AHD), on "
                 "non-quadratic clients f_i = 1/2 x^T(Abar + E_i)x + sum_j C_ij log(1 + x_j^2) with the exact sup",
       kind="bound", space=_HESS_SPACE)


def check_hessian_to_ahd(kw: dict) -> Evidence:
    """Random pairs (x, y) and pairs near the maximising Hessian (x_j in {0, sqrt 3}, small y - x)."""
    rng = np.random.default_rng(kw["seed"])
    n, d = int(kw["n_clients"]), int(kw["dim"])
    w = np.full(n, 1.0 / n)
    G = rng.standard_normal((n, d, d))
    E = float(kw["e_scale"]) * (G + np.swapaxes(G, 1, 2)) / 2
    E -= np.einsum("i,ijk->jk", w, E)
    C = float(kw["c_scale"]) * rng.standard_normal((n, d))
    delta2, s_star = separable_hessian_dissimilarity(E, C, w)
    M0 = C - w @ C

    def grad_h(x: np.ndarray) -> np.ndarray:
        # grad h_i(x) = grad f(x) - grad f_i(x) = -E_i x - (C_i - Cbar) * phi'(x)  (the common Abar cancels)
        return -np.einsum("ijk,k->ij", E, x) - M0 * _phi_grad(x)[None]

    worst, ratio = -np.inf, 0.0
    x_peak = np.where(s_star > 0, 0.0, math.sqrt(3.0))  # phi''(0) = 2, phi''(sqrt 3) = -1/4
    for t in range(200):
        if t < 100:
            x, y = 3 * rng.standard_normal(d), 3 * rng.standard_normal(d)
        else:
            x = x_peak + 1e-3 * rng.standard_normal(d)
            y = x + 1e-3 * rng.standard_normal(d)
        Dg = grad_h(x) - grad_h(y)
        lhs = weighted_mean_sq(w, Dg)
        rhs = delta2 * float(np.sum((x - y) ** 2))
        if rhs == 0.0:
            worst = max(worst, lhs)
            continue
        worst = max(worst, (lhs - rhs) / rhs)
        ratio = max(ratio, lhs / rhs)
    return Evidence(describe(kw), worst, 0.0, worst <= CERTIFIED_CONSTANT_REL, tightness=ratio, details={"delta^2": delta2})
