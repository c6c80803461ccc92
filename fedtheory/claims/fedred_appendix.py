"""Claims for the appendix statements of Jiang, Rodomanov & Stich (ICML 2024), "Federated Optimization with
Doubly Regularized Drift Correction": the technical lemmas of App. A.2 (Lemmas 10-17) and the proof chain of
DANE+ in App. B.1-B.2 (Lemmas 19, 20, 22, 26, 27, Theorems 23, 24, 29, Corollaries 25, 30).

The text of the paper available to fedtheory lost every formula (docs/fedred.md). Each lemma is therefore
checked in the form fedtheory reconstructs from its hypotheses, from the steps its proof names ("first-order
optimality", "taking the square on both sides", "split into two halves and use lam >= 2 delta_A", ...) and
from the statements that use it; those claims are registered as derived (``derived=True``, "(derived by
fedtheory)" in the statement). Lemmas 14-16 are textbook statements named by their source (Nesterov 2018) and
are checked as such.

Two kinds of checks:

* generic inequalities (Lemmas 10, 12, 13, 14) on random vectors or sequences drawn from a declared space,
  plus the equality cases, so that a changed constant is caught;
* algorithmic lemmas: run DANE+ (``fedtheory.algorithms.dane.DANEPlus``) or FedRed-GD
  (``fedtheory.algorithms.fedred.FedRed``) on quadratics (``fedtheory.problems.quadratic``) or on fedtheory's
  non-convex family (``fedtheory.problems.nonconvex``) and evaluate both sides of the lemma at every round,
  for every client, with every constant computed exactly from the instance.

The expected sides are computed here from the problem's oracles (values, gradients) and the instance's
exact constants, never from the algorithm's own bookkeeping.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..algorithms.dane import DANEPlus
from ..algorithms.fedred import FedRed
from ..problems.nonconvex import NonconvexProblem, nonconvex
from ..problems.quadratic import QuadraticProblem, quadratic
from .registry import Evidence, claim
from .space import InstanceSpace, Param, quadratic_space

__all__ = ["coercivity_lower_bound", "lemma20_sides", "weighted_average_bound", "young_gap", "sqrt_recursion_gap", "weighted_sum_gap", "variance_identity_error",
           "separable_hessian_dissimilarity", "daneplus_convex_run", "daneplus_nonconvex_run",
           "gd_steps_relative_rule", "nonconvex_round_coefficients", "sandwich_coefficients"]

PAPER = "fedred"
REF = "Jiang, Rodomanov & Stich (ICML 2024)"
#: Relative slack for rounding in every inequality: lhs - rhs <= REL * (sum of the terms' magnitudes).
REL = 1e-9


def _describe(kw: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in kw.items())


def _mean_sq(w: np.ndarray, D: np.ndarray) -> float:
    """sum_i w_i ||D_i||^2."""
    return float(w @ np.sum(D * D, axis=1))


# ==========================================================================================================
# Generic inequalities of App. A.2 (Lemmas 10, 12, 13, 14)
# ==========================================================================================================

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
       id="fedred.appendix.young.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. A.2, Lemma 10 (A.3)-(A.4) (form derived by fedtheory)",
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
    holds = worst <= REL and attained <= 1e-12
    return Evidence(_describe(kw), worst, 0.0, holds, details={"equality_case_residual": attained})


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
       id="fedred.appendix.sqrt_recursion.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. A.2, Lemma 12 (A.6) (form derived by fedtheory from its proof (A.7)-(A.10) and "
                 f"its use in Lemma 22)",
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
    return Evidence(_describe(kw), worst, 0.0, worst <= REL, tightness=1.0 + worst,
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
       id="fedred.appendix.weighted_sum.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. A.2, Lemma 13 (A.11) (form derived by fedtheory from its proof (A.12)-(A.14))",
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
    return Evidence(_describe(kw), worst, 0.0, worst <= REL, tightness=1.0 + worst)


def variance_identity_error(w: np.ndarray, X: np.ndarray, x: np.ndarray) -> float:
    """Lemma 14: |sum_i w_i ||x_i - x||^2 - (||xbar - x||^2 + sum_i w_i ||x_i - xbar||^2)| relative to the left
    side, xbar = sum_i w_i x_i."""
    xbar = w @ X
    lhs = _mean_sq(w, X - x)
    rhs = float(np.sum((xbar - x) ** 2)) + _mean_sq(w, X - xbar)
    return abs(lhs - rhs) / max(lhs, 1e-300)


_SET_SPACE = InstanceSpace(
    params=(Param("n", 1, 100, log=True, integer=True), Param("dim", 1, 50, integer=True),
            Param("offset", 0.0, 100.0), Param("weights", 0, 1, integer=True), Param("seed", 0, 10_000, integer=True)),
    defaults=(dict(n=10, dim=5, offset=0.0, weights=0, seed=0), dict(n=50, dim=20, offset=30.0, weights=1, seed=1),
              dict(n=1, dim=3, offset=1.0, weights=0, seed=2)),
    thorough=(dict(n=100, dim=50, offset=100.0, weights=1, seed=3),))


@claim(cites=("Lemma 14",),
       id="fedred.appendix.variance_identity", paper=PAPER,
       reference=f"{REF}, App. A.2, Lemma 14 (A.15)",
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
    return Evidence(_describe(kw), worst, 1e-12, worst <= 1e-12)


# ==========================================================================================================
# Lemma 11: the proximal-linear step (the FedRed-GD subproblem)
# ==========================================================================================================

_FEDRED_SPACE = quadratic_space(
    defaults=(dict(n_clients=6, dim=8, mu=0.5, L=50.0, delta_A=1.0, zeta2=1.0, seed=0, lam_factor=2.0, eta_L=1.0),
              dict(n_clients=4, dim=5, mu=0.05, L=10.0, delta_A=0.5, zeta2=3.0, seed=1, lam_factor=1.0, eta_L=0.3)),
    extra=(Param("lam_factor", 0.0, 10.0), Param("eta_L", 1e-3, 10.0, log=True)))


@claim(cites=("Lemma 11",),
       id="fedred.appendix.prox_step.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. A.2, Lemma 11 (A.5) (form derived by fedtheory: 'follows from the first-order "
                 f"optimality condition'), applied to Alg. 3",
       statement="(derived by fedtheory; the form of Lemma 11) for psi(x) = <g, x> + lam/2||x - u||^2 + 1/(2eta)||x - v||^2 "
                 "and x+ = argmin psi (the FedRed-GD step): psi(x) = psi(x+) + (lam + 1/eta)/2 ||x - x+||^2 for "
                 "every x",
       kind="identity", space=_FEDRED_SPACE)
def check_prox_step(kw: dict) -> Evidence:
    """FedRed-GD runs 6 iterations; at each, every client's step is compared with the identity at 5 random x."""
    problem = quadratic(**{k: kw[k] for k in ("n_clients", "dim", "mu", "L", "delta_A", "zeta2", "seed")})
    c = problem.certificate
    lam, eta = float(kw["lam_factor"]) * c.delta_A, float(kw["eta_L"]) / c.L
    alg = FedRed(lam=lam, eta=eta, p=0.5)
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
    return Evidence(_describe(kw), worst, 1e-12, worst <= 1e-12)


# ==========================================================================================================
# Lemmas 15-16 (Nesterov 2018) on the clients of the quadratic and non-convex families
# ==========================================================================================================

def _client_hessians(problem: QuadraticProblem) -> np.ndarray:
    d = problem.dim
    return problem.A if problem.A.ndim == 3 else np.einsum("nd,de->nde", problem.A, np.eye(d))


_SMOOTH_SPACE = quadratic_space(
    defaults=(dict(n_clients=6, dim=8, mu=0.5, L=50.0, delta_A=1.0, zeta2=1.0, seed=0),
              dict(n_clients=4, dim=5, mu=0.02, L=500.0, delta_B=10.0, zeta2=0.0, hessians="diagonal", seed=1)),
    thorough=(dict(n_clients=10, dim=12, mu=0.01, L=1000.0, delta_A=3.0, zeta2=5.0, seed=2),))


@claim(cites=("Lemma 15",),
       id="fedred.appendix.descent_lemma", paper=PAPER,
       reference=f"{REF}, App. A.2, Lemma 15 (A.19) (Nesterov 2018, Lemma 1.2.3)",
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
                _, V = np.linalg.eigh(_client_hessians(problem))
                D = V[:, :, -1] * 0.7
            Y = X + D
            lin = prob.values(X) + np.sum(prob.grads(X) * D, axis=1)
            lhs, quad = prob.values(Y) - lin, 0.5 * L * np.sum(D * D, axis=1)
            scale = np.abs(prob.values(Y)) + np.abs(lin) + quad
            worst = max(worst, float(np.max((lhs - quad) / scale)))
            ratio = max(ratio, float(np.max(lhs / quad)))
    return Evidence(_describe(kw), worst, 0.0, worst <= REL, tightness=ratio,
                    details={"max (f(y)-f(x)-<g,y-x>)/(L/2||y-x||^2)": ratio})


def coercivity_lower_bound(mu: np.ndarray, L: np.ndarray, D: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Lemma 16's right side per row: mu L/(mu + L) ||x - y||^2 + 1/(mu + L) ||grad f(x) - grad f(y)||^2."""
    return mu * L / (mu + L) * np.sum(D * D, axis=1) + np.sum(G * G, axis=1) / (mu + L)


@claim(cites=("Lemma 16",),
       id="fedred.appendix.coercivity", paper=PAPER,
       reference=f"{REF}, App. A.2, Lemma 16 (A.20) (Nesterov 2018, Theorem 2.1.12)",
       statement="For mu-convex L-smooth f_i: <grad f_i(x) - grad f_i(y), x - y> >= mu L/(mu + L) ||x - y||^2 + "
                 "1/(mu + L) ||grad f_i(x) - grad f_i(y)||^2, with each client's exact (mu_i, L_i); equality for "
                 "x - y in the span of the extreme eigenvectors",
       kind="bound", space=_SMOOTH_SPACE)
def check_coercivity(kw: dict) -> Evidence:
    rng = np.random.default_rng(kw["seed"])
    problem = quadratic(**kw)
    c = problem.certificate
    mu, L = np.asarray(c.mu_i)[:, None], np.asarray(c.L_i)[:, None]
    _, V = np.linalg.eigh(_client_hessians(problem))
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
    return Evidence(_describe(kw), worst, 0.0, worst <= REL, tightness=ratio)


# ==========================================================================================================
# Lemma 17: a pointwise Hessian bound implies delta_A-AHD (non-quadratic clients)
# ==========================================================================================================

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
       id="fedred.appendix.hessian_to_ahd", paper=PAPER,
       reference=f"{REF}, App. A.2, Lemma 17 (A.21)-(A.22)",
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
        lhs = _mean_sq(w, Dg)
        rhs = delta2 * float(np.sum((x - y) ** 2))
        if rhs == 0.0:
            worst = max(worst, lhs)
            continue
        worst = max(worst, (lhs - rhs) / rhs)
        ratio = max(ratio, lhs / rhs)
    return Evidence(_describe(kw), worst, 0.0, worst <= 1e-7, tightness=ratio, details={"delta^2": delta2})


# ==========================================================================================================
# DANE+ convex proof chain (App. B.1): Lemmas 19, 20, 22, Theorems 23, 24, Corollary 25
# ==========================================================================================================

def _quad(kw: dict) -> QuadraticProblem:
    keys = ("n_clients", "dim", "mu", "L", "delta_A", "delta_B", "zeta2", "hessians", "seed")
    return quadratic(**{k: kw[k] for k in keys if k in kw})


def daneplus_convex_run(kw: dict, *, stopping: str, tol: float = 0.0, local_steps: int = 3,
                        rounds: int | None = None, floor: float = 1e-20) -> tuple[QuadraticProblem, float, list[dict]]:
    """Run DANE+ (CV (1), standard averaging, local GD) with lam = lam_factor delta_A and record, per round,
    x^r, every local model x_{i,r+1}, grad F_{i,r}(x_{i,r+1}) (recomputed here from the oracle), x^{r+1}, and
    the local GD steps. Stops early when ||x^r - x*||^2 falls below ``floor`` times its start (rounding; the
    relative rule's own floating-point floor, 1e-12 ||grad f(x^0)||, must stay out of reach)."""
    problem = _quad(kw)
    c = problem.certificate
    lam = float(kw["lam_factor"]) * c.delta_A
    alg = DANEPlus(lam=lam, solver="gd", stopping=stopping, tol=tol, local_steps=local_steps)
    rng = np.random.default_rng(kw["seed"])
    state = alg.init(problem, c.x_star + float(kw.get("x0_scale", 3.0)) * rng.standard_normal(problem.dim))
    d0 = float(np.sum((state.x - c.x_star) ** 2))
    records = []
    for r in range(int(kw.get("rounds", 20) if rounds is None else rounds)):
        if float(np.sum((state.x - c.x_star) ** 2)) <= floor * d0:
            break
        X, h, _, extra = alg.local_models(problem, state)
        G = problem.grads(problem.broadcast(state.x))
        h_ref = problem.weights @ G - G  # control variate (1), recomputed independently of the algorithm
        gradF = problem.grads(X) + h_ref + lam * (X - state.x)
        new, _ = alg.round_given(problem, state, alg.draw(problem, state, rng))
        records.append(dict(x=state.x, X=X, gradF=gradF, h=h_ref, x_new=new.x,
                            steps=extra.get("local_steps_max", 0.0), r=r))
        state = new
    return problem, lam, records


def _convex_space(extra_defaults: dict, lam_low: float = 2.0) -> InstanceSpace:
    base = (dict(n_clients=6, dim=8, mu=0.5, L=50.0, delta_A=1.0, zeta2=1.0, seed=0),
            dict(n_clients=8, dim=10, mu=0.0, L=20.0, delta_A=0.5, zeta2=2.0, seed=1),
            dict(n_clients=5, dim=6, mu=0.05, L=200.0, delta_B=5.0, zeta2=1.0, hessians="diagonal", seed=2))
    return quadratic_space(defaults=tuple({**b, **extra_defaults} for b in base),
                           thorough=(dict(n_clients=10, dim=12, mu=0.01, L=1000.0, delta_A=10.0, zeta2=5.0, seed=3,
                                          **extra_defaults),),
                           extra=(Param("lam_factor", lam_low, 10.0), Param("local_steps", 1, 20, integer=True)),
                           mu_low=1e-3)


_L19_SPACE = _convex_space(dict(lam_factor=2.0, local_steps=2), lam_low=0.0)


@claim(cites=("Lemma 19",),
       id="fedred.appendix.daneplus_strong_convexity.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.1, Lemma 19 (B.1)-(B.2) (form derived by fedtheory from its proof (B.3))",
       statement="(derived by fedtheory; the form of Lemma 19) Alg. 1 with mu-convex f_i, any local outputs: for "
                 "every client, round and x, F_{i,r}(x) >= F_{i,r}(x_{i,r+1}) + <grad F_{i,r}(x_{i,r+1}), x - "
                 "x_{i,r+1}> + (mu + lam)/2 ||x - x_{i,r+1}||^2, F_{i,r}(x) = f_i(x) + <h_{i,r}, x> + "
                 "lam/2||x - x^r||^2; equality along the client's lowest-curvature direction",
       kind="bound", space=_L19_SPACE)
def check_daneplus_strong_convexity(kw: dict) -> Evidence:
    problem, lam, records = daneplus_convex_run(kw, stopping="steps", local_steps=int(kw["local_steps"]), rounds=10)
    mu = problem.certificate.mu
    _, V = np.linalg.eigh(_client_hessians(problem))
    rng = np.random.default_rng(kw["seed"] + 1)
    n, d = problem.n_clients, problem.dim
    worst, ratio = -np.inf, 0.0
    argmin_client = int(np.argmin(problem.certificate.mu_i))
    for rec in records:
        def F(Z: np.ndarray) -> np.ndarray:
            return problem.values(Z) + np.sum(rec["h"] * Z, axis=1) + 0.5 * lam * np.sum((Z - rec["x"]) ** 2, axis=1)

        for t in range(4):
            D = rng.standard_normal((n, d)) * np.exp(rng.uniform(-2, 1))
            if t == 0:  # the client with mu_i = mu along its lowest eigenvector: equality
                D[argmin_client] = V[argmin_client, :, 0]
            Z = rec["X"] + D
            lin = F(rec["X"]) + np.sum(rec["gradF"] * D, axis=1)
            quad = 0.5 * (mu + lam) * np.sum(D * D, axis=1)
            lhs = F(Z)
            scale = np.abs(lhs) + np.abs(lin) + quad
            worst = max(worst, float(np.max((lin + quad - lhs) / scale)))
            ratio = max(ratio, float(np.max(quad / np.maximum(lhs - lin, 1e-300))))
    return Evidence(_describe(kw), worst, 0.0, worst <= REL, tightness=ratio,
                    details={"rounds_checked": len(records), "lam": lam, "mu": mu})


def lemma20_sides(problem: QuadraticProblem, lam: float, rec: dict, x: np.ndarray) -> tuple[float, float, float]:
    """Both sides of fedtheory's Lemma 20 at x, and their scale:

        f(x^{r+1}) - f(x) + (lam + mu)/2 sum_i w_i ||x_{i,r+1} - x||^2 + lam/4 sum_i w_i ||x_{i,r+1} - x^r||^2
            <= lam/2 ||x^r - x||^2 + sum_i w_i <grad F_{i,r}(x_{i,r+1}), x_{i,r+1} - x>.

    f differences are taken as gap differences (f - f*), which is exact for quadratics and avoids
    cancellation."""
    w, mu = problem.weights, problem.certificate.mu
    X = rec["X"]
    df = problem.gap(rec["x_new"]) - problem.gap(x)
    t1 = 0.5 * (lam + mu) * _mean_sq(w, X - x)
    t2 = 0.25 * lam * _mean_sq(w, X - rec["x"])
    r1 = 0.5 * lam * float(np.sum((rec["x"] - x) ** 2))
    r2 = float(w @ np.sum(rec["gradF"] * (X - x), axis=1))
    scale = abs(problem.gap(rec["x_new"])) + abs(problem.gap(x)) + t1 + t2 + r1 + abs(r2)
    return df + t1 + t2, r1 + r2, scale


def lemma20_worst_point(problem: QuadraticProblem, lam: float, rec: dict) -> np.ndarray:
    """The x maximising lhs - rhs of :func:`lemma20_sides` on a quadratic: the stationarity condition
    (Abar - mu I) x = bbar - (lam + mu) xbar + lam x^r + gbar, with xbar = sum_i w_i x_{i,r+1} and gbar =
    sum_i w_i grad F_{i,r}(x_{i,r+1}) (least squares when mu = lambda_min(Abar))."""
    w, mu = problem.weights, problem.certificate.mu
    Abar = problem.A_bar if problem.A_bar.ndim == 2 else np.diag(problem.A_bar)
    bbar = w @ problem.b
    rhs = bbar - (lam + mu) * (w @ rec["X"]) + lam * rec["x"] + w @ rec["gradF"]
    return np.linalg.lstsq(Abar - mu * np.eye(problem.dim), rhs, rcond=None)[0]


_L20_SPACE = _convex_space(dict(lam_factor=2.0, local_steps=2))


@claim(cites=("Lemma 20",),
       id="fedred.appendix.daneplus_one_round.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.1, Lemma 20 (B.4) (form derived by fedtheory from its proof (B.5)-(B.13): Lemma 19, "
                 f"mu-convexity, Lemma 14, splitting the lam term in halves and lam >= 2 delta_A)",
       statement="(derived by fedtheory; the form of Lemma 20) Alg. 1 with CV (1), standard averaging, mu-convex "
                 "f_i with delta_A-AHD and lam >= 2 delta_A, any local outputs: for every round and every x, "
                 "f(x^{r+1}) - f(x) + (lam+mu)/2 mean_i ||x_{i,r+1} - x||^2 + lam/4 mean_i ||x_{i,r+1} - x^r||^2 <= "
                 "lam/2 ||x^r - x||^2 + mean_i <grad F_{i,r}(x_{i,r+1}), x_{i,r+1} - x>",
       kind="bound", space=_L20_SPACE)
def check_daneplus_one_round(kw: dict) -> Evidence:
    """Inexact local solves (``local_steps`` GD steps, so grad F != 0); x = x*, x^r, 4 random points and the
    worst x (lhs - rhs is a concave quadratic in x, maximised by a linear solve)."""
    problem, lam, records = daneplus_convex_run(kw, stopping="steps", local_steps=int(kw["local_steps"]))
    rng = np.random.default_rng(kw["seed"] + 2)
    worst, ratio = -np.inf, 0.0
    for rec in records:
        points = [problem.certificate.x_star, rec["x"]] + [rec["x"] + 3 * rng.standard_normal(problem.dim)
                                                           for _ in range(4)]
        points.append(lemma20_worst_point(problem, lam, rec))
        for x in points:
            lhs, rhs, scale = lemma20_sides(problem, lam, rec, x)
            worst = max(worst, (lhs - rhs) / scale)
            if rhs > 0:
                ratio = max(ratio, lhs / rhs)
    return Evidence(_describe(kw), worst, 0.0, worst <= REL, tightness=ratio,
                    details={"rounds_checked": len(records), "lam/delta_A": kw["lam_factor"]})


def lemma22_terms(problem: QuadraticProblem, lam: float, records: list[dict]) -> dict[str, np.ndarray]:
    """Per round: Delta_{r+1} = f(x^{r+1}) - f*, A_{r+1} = mean_i ||x_{i,r+1} - x*||^2, B = mean_i ||x_{i,r+1} -
    x^r||^2, d_r^2 = ||x^r - x*||^2, eps_r = sqrt(mean_i ||grad F_{i,r}(x_{i,r+1})||^2) and the relative accuracy
    e_r = max_i ||grad F_{i,r}(x_{i,r+1})|| / ||x_{i,r+1} - x^r||."""
    w, xs = problem.weights, problem.certificate.x_star
    out = {k: [] for k in ("Delta", "A", "B", "d2", "eps", "erel")}
    for rec in records:
        out["Delta"].append(problem.gap(rec["x_new"]))
        out["A"].append(_mean_sq(w, rec["X"] - xs))
        out["B"].append(_mean_sq(w, rec["X"] - rec["x"]))
        out["d2"].append(float(np.sum((rec["x"] - xs) ** 2)))
        out["eps"].append(math.sqrt(_mean_sq(w, rec["gradF"])))
        steps = np.linalg.norm(rec["X"] - rec["x"], axis=1)
        out["erel"].append(float(np.max(np.linalg.norm(rec["gradF"], axis=1) / np.maximum(steps, 1e-300))))
    return {k: np.array(v) for k, v in out.items()}


@claim(cites=("Lemma 22",),
       id="fedred.appendix.daneplus_inexact_recursion.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.1, Lemma 22 (B.24) (form derived by fedtheory from its proof (B.25)-(B.30): Lemma 20 "
                 f"at x*, Cauchy-Schwarz, then Lemma 12)",
       statement="(derived by fedtheory; the form of Lemma 22) DANE+ with CV (1), standard averaging, lam >= 2 "
                 "delta_A, any local outputs, eps_r = sqrt(mean_i ||grad F_{i,r}(x_{i,r+1})||^2): (i) f(x^{r+1}) "
                 "- f* + (lam+mu)/2 A_{r+1} + lam/4 mean_i||x_{i,r+1} - x^r||^2 <= lam/2 ||x^r - x*||^2 + eps_r "
                 "sqrt(A_{r+1}), A_{r+1} = mean_i ||x_{i,r+1} - x*||^2; (ii) ||x^R - x*|| <= sqrt(A_R) <= "
                 "||x^0 - x*|| + (2/lam) sum_{r<R} eps_r for every R",
       kind="bound", space=_L20_SPACE)
def check_daneplus_inexact_recursion(kw: dict) -> Evidence:
    problem, lam, records = daneplus_convex_run(kw, stopping="steps", local_steps=int(kw["local_steps"]))
    mu = problem.certificate.mu
    t = lemma22_terms(problem, lam, records)
    lhs = t["Delta"] + 0.5 * (lam + mu) * t["A"] + 0.25 * lam * t["B"]
    rhs = 0.5 * lam * t["d2"] + t["eps"] * np.sqrt(t["A"])
    worst1 = float(np.max((lhs - rhs) / (lhs + rhs)))
    D = math.sqrt(t["d2"][0])
    bound = D + (2 / lam) * np.cumsum(t["eps"])
    dist = np.sqrt(np.array([float(np.sum((rec["x_new"] - problem.certificate.x_star) ** 2)) for rec in records]))
    worst2 = float(np.max((np.maximum(dist, np.sqrt(t["A"])) - bound) / bound))
    jensen = float(np.max(dist ** 2 - t["A"]))
    worst = max(worst1, worst2)
    return Evidence(_describe(kw), worst, 0.0, worst <= REL and jensen <= REL * float(np.max(t["A"])),
                    tightness=float(np.max(lhs / rhs)),
                    details={"per_round_slack": worst1, "distance_bound_slack": worst2, "rounds": len(records)})


def weighted_average_bound(mu: float, lam: float, D: float, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """fedtheory's Theorem 23 bound for R = 1..len(eps), and the weights q^r of the averaged iterate:

        f(xbar_R) - f* <= lam / (2 S_R) [D^2 + (2/lam) Dhat_R sum_{r<R} q^r eps_r],
        q = 1 + mu/lam, S_R = sum_{r<R} q^r (so lam/(2 S_R) = mu / (2((1 + mu/lam)^R - 1)), or lam/(2R) at mu = 0),
        Dhat_R = D + (2/lam) sum_{r<R} eps_r,    xbar_R = sum_{r<R} q^r x^{r+1} / S_R."""
    q = 1.0 + mu / lam
    qr = q ** np.arange(len(eps))
    S = np.cumsum(qr)
    Dhat = D + (2 / lam) * np.cumsum(eps)
    return lam / (2 * S) * (D ** 2 + (2 / lam) * Dhat * np.cumsum(qr * eps)), qr


@claim(cites=("Theorem 23",),
       id="fedred.appendix.daneplus_absolute_accuracy.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.1, Theorem 23 (B.35) (= Theorem 3; form derived by fedtheory from its proof "
                 f"(B.36)-(B.38) on Lemma 22)",
       statement="(derived by fedtheory; the form of Theorem 23) DANE+ with CV (1), standard averaging, lam = 2 "
                 "delta_A, local errors eps_r = sqrt(mean_i ||grad F_{i,r}(x_{i,r+1})||^2): f(xbar_R) - f* <= "
                 "mu/(2[(1+mu/lam)^R - 1]) [D^2 + (2/lam)(D + (2/lam) sum_{r<R} eps_r) sum_{r<R} (1+mu/lam)^r "
                 "eps_r] (lam/(2R) for mu = 0), xbar_R the (1+mu/lam)^r-weighted average of x^1..x^R",
       kind="bound", space=_L20_SPACE)
def check_daneplus_absolute_accuracy(kw: dict) -> Evidence:
    """Absolute rule ||grad F_{i,r}|| <= tol/(r+1) (tol = 0.1 ||grad f(x^0)||), so the errors are summable."""
    problem0 = _quad(kw)
    rng = np.random.default_rng(kw["seed"])
    x0 = problem0.certificate.x_star + float(kw.get("x0_scale", 3.0)) * rng.standard_normal(problem0.dim)
    tol = 0.1 * float(np.linalg.norm(problem0.grad(x0)))
    problem, lam, records = daneplus_convex_run(kw, stopping="absolute", tol=tol, local_steps=200)
    c = problem.certificate
    t = lemma22_terms(problem, lam, records)
    D = math.sqrt(t["d2"][0])
    bound, qr = weighted_average_bound(c.mu, lam, D, t["eps"])
    Xn = np.array([rec["x_new"] for rec in records])
    xbar = np.cumsum(qr[:, None] * Xn, axis=0) / np.cumsum(qr)[:, None]
    gaps = np.array([problem.gap(x) for x in xbar])
    ratio = gaps / bound
    return Evidence(_describe(kw), float(ratio.max()), 1.0, float(ratio.max()) <= 1 + REL, tightness=float(ratio.max()),
                    details={"rounds": len(records), "sum_eps": float(t["eps"].sum()), "D": D})


@claim(cites=("Theorem 24",),
       id="fedred.appendix.daneplus_relative_accuracy.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.1, Theorem 24 (B.39) (= Theorem 4; form derived by fedtheory from its proof "
                 f"(B.40)-(B.43) on Lemma 22)",
       statement="(derived by fedtheory; the form of Theorem 24) DANE+ with CV (1), standard averaging, lam = 2 "
                 "delta_A and the relative rule ||grad F_{i,r}(x_{i,r+1})|| <= e_r ||x_{i,r+1} - x^r||: with q_r "
                 "= 1 + mu/lam - 2 e_r^2/lam^2 > 0 and P_r = prod_{k<r} q_k, f(xbar_R) - f* <= lam D^2 / (2 "
                 "sum_{r<R} P_r), xbar_R the P_r-weighted average of x^1..x^R (e_r = 0 gives Cor. 21's bound)",
       kind="bound", space=_L20_SPACE)
def check_daneplus_relative_accuracy(kw: dict) -> Evidence:
    """Local GD with the relative rule e_r = lam/(2(r+1)) (tol 0.5); the bound uses the realised e_r."""
    problem, lam, records = daneplus_convex_run(kw, stopping="relative", tol=0.5, local_steps=10_000, floor=1e-16)
    c = problem.certificate
    t = lemma22_terms(problem, lam, records)
    q = 1.0 + c.mu / lam - 2.0 * t["erel"] ** 2 / lam ** 2
    if np.any(q <= 0):
        return Evidence(_describe(kw), float(q.min()), 0.0, False, details={"reason": "q_r <= 0: outside the regime"})
    P = np.concatenate(([1.0], np.cumprod(q)[:-1]))
    D2 = t["d2"][0]
    bound = lam * D2 / (2 * np.cumsum(P))
    Xn = np.array([rec["x_new"] for rec in records])
    xbar = np.cumsum(P[:, None] * Xn, axis=0) / np.cumsum(P)[:, None]
    gaps = np.array([problem.gap(x) for x in xbar])
    ratio = float(np.max(gaps / bound))
    return Evidence(_describe(kw), ratio, 1.0, ratio <= 1 + REL, tightness=ratio,
                    details={"rounds": len(records), "min_q_r": float(q.min()), "max_e_r/lam": float(t["erel"].max() / lam)})


def gd_steps_relative_rule(mu: float, L: float, lam: float, e: float) -> int:
    """Local GD steps (step 1/(L_i + lam), from x^r) after which ||grad F(x_K)|| <= e ||x_K - x^r|| is
    guaranteed on a (mu+lam)-strongly convex, (L+lam)-smooth quadratic F (derived by fedtheory, Cor. 25's
    argument (B.47)-(B.54)): with rho = 1 - (mu+lam)/(L+lam), ||x_K - x_F*|| <= rho^K ||x^r - x_F*||,
    ||grad F(x_K)|| <= (L+lam)||x_K - x_F*|| and ||x_K - x^r|| >= (1 - rho^K)||x^r - x_F*||, so
    rho^K <= e/(L + lam + e) suffices: K = ceil(log((L+lam+e)/e) / log(1/rho))."""
    rho = 1.0 - (mu + lam) / (L + lam)
    if rho <= 0:
        return 1
    return max(1, math.ceil(math.log((L + lam + e) / e) / -math.log(rho)))


_C25_SPACE = quadratic_space(
    defaults=(dict(n_clients=6, dim=8, mu=0.5, L=50.0, delta_A=1.0, zeta2=1.0, seed=0, lam_factor=2.0, tol=1.414),
              dict(n_clients=8, dim=10, mu=0.0, L=20.0, delta_A=0.5, zeta2=2.0, seed=1, lam_factor=2.0, tol=0.5)),
    thorough=(dict(n_clients=10, dim=12, mu=0.01, L=1000.0, delta_A=10.0, zeta2=5.0, seed=3, lam_factor=2.0,
                   tol=1.414),),
    extra=(Param("lam_factor", 2.0, 10.0), Param("tol", 0.1, 2.0)), mu_low=1e-3)


@claim(cites=("Corollary 25",),
       id="fedred.appendix.daneplus_gd_local_steps.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.1, Corollary 25 (B.45) (= Corollary 5, DANE+-GD; count derived by fedtheory from "
                 f"its proof (B.47)-(B.54))",
       statement="(derived by fedtheory; the DANE+-GD count of Corollary 25) local GD with step 1/(L_i + lam) "
                 "from x^r meets the relative rule ||grad F_{i,r}|| <= e_r ||x - x^r||, e_r = tol lam/(r+1), "
                 "within K_r = ceil(log((L+lam+e_r)/e_r) / -log(1 - (mu+lam)/(L+lam))) steps at every round "
                 "(about (L+lam)/(mu+lam) log((L+lam)(r+1)/lam))",
       kind="bound", space=_C25_SPACE)
def check_daneplus_gd_local_steps(kw: dict) -> Evidence:
    problem, lam, records = daneplus_convex_run(kw, stopping="relative", tol=float(kw["tol"]), local_steps=100_000,
                                                rounds=15, floor=1e-16)
    c = problem.certificate
    worst = 0.0
    for rec in records:
        e = float(kw["tol"]) * lam / (rec["r"] + 1)
        worst = max(worst, rec["steps"] / gd_steps_relative_rule(c.mu, c.L, lam, e))
    return Evidence(_describe(kw), worst, 1.0, worst <= 1.0, tightness=worst, details={"rounds": len(records)})


# ==========================================================================================================
# DANE+ non-convex proof chain (App. B.2): Lemmas 26, 27, Theorem 29, Corollary 30
# ==========================================================================================================

def _nc(kw: dict) -> NonconvexProblem:
    return nonconvex(int(kw["n_clients"]), int(kw["dim"]), curvature=float(kw.get("c", 4.0)),
                     nu=float(kw.get("nu", 0.1)), delta_B=float(kw["delta_B"]), zeta2=float(kw.get("zeta2", 1.0)),
                     seed=int(kw["seed"]))


def daneplus_nonconvex_run(kw: dict, *, stopping: str = "steps", tol: float = 0.0
                           ) -> tuple[NonconvexProblem, float, list[dict]]:
    """DANE+-GD on the non-convex family with lam = lam_factor delta_B and randomized single-model selection;
    per round: x^r, all local models, their grad F_{i,r} (from the oracle), the selected client, x^{r+1}.
    Stops once ||grad f(x^r)|| <= 1e-8 ||grad f(x^0)|| (the floating-point floor)."""
    problem = _nc(kw)
    lam = float(kw["lam_factor"]) * problem.certificate.delta_B
    alg = DANEPlus(lam=lam, solver="gd", stopping=stopping, tol=tol, local_steps=int(kw.get("local_steps", 5)),
                   averaging="random")
    rng = np.random.default_rng(kw["seed"])
    state = alg.init(problem, 3.0 * rng.standard_normal(problem.dim))
    g0 = float(np.linalg.norm(problem.grad(state.x)))
    records = []
    for r in range(int(kw.get("rounds", 20))):
        if float(np.linalg.norm(problem.grad(state.x))) <= 1e-8 * g0:
            break  # a stationary point to rounding: the inequalities' sides are rounding noise below this
        X, _, _, extra = alg.local_models(problem, state)
        G = problem.grads(problem.broadcast(state.x))
        h = problem.weights @ G - G
        gradF = problem.grads(X) + h + lam * (X - state.x)
        draw = alg.draw(problem, state, rng)
        new, _ = alg.round_given(problem, state, draw)
        records.append(dict(x=state.x, X=X, h=h, gradF=gradF, client=draw.client, x_new=new.x,
                            steps=extra.get("local_steps_max", 0.0), r=r))
        state = new
    return problem, lam, records


_NC_SPACE = InstanceSpace(
    params=(Param("n_clients", 2, 10, integer=True), Param("dim", 1, 10, integer=True),
            Param("delta_B", 0.05, 5.0, log=True), Param("c", 0.5, 10.0, log=True), Param("nu", 0.01, 2.0, log=True),
            Param("zeta2", 0.0, 10.0), Param("lam_factor", 1.0, 10.0), Param("local_steps", 1, 30, integer=True),
            Param("rounds", 2, 40, integer=True)),
    fixed={"seed": 0},
    defaults=(dict(n_clients=6, dim=5, delta_B=0.5, c=4.0, nu=0.1, zeta2=1.0, lam_factor=2.0, local_steps=5,
                   rounds=20, seed=0),
              dict(n_clients=4, dim=3, delta_B=2.0, c=1.0, nu=0.05, zeta2=3.0, lam_factor=1.2, local_steps=20,
                   rounds=20, seed=1)),
    thorough=(dict(n_clients=10, dim=8, delta_B=0.2, c=8.0, nu=0.02, zeta2=1.0, lam_factor=3.0, local_steps=30,
                   rounds=40, seed=2),))


@claim(cites=("Lemma 26",),
       id="fedred.appendix.gradient_transfer.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.2, Lemma 26 (B.57) (form derived by fedtheory from its proof (B.58)-(B.60))",
       statement="(derived by fedtheory; the form of Lemma 26) with delta_B-BHD: grad f(x) = grad F_{i,r}(x) + "
                 "[grad h_i(x) - grad h_i(x^r)] - lam (x - x^r), hence ||grad f(x)|| <= ||grad F_{i,r}(x)|| + "
                 "(lam + delta_B) ||x - x^r||, for every client, round and x (local models and random points)",
       kind="bound", space=_NC_SPACE)
def check_gradient_transfer(kw: dict) -> Evidence:
    problem, lam, records = daneplus_nonconvex_run(kw)
    dB = problem.certificate.delta_B
    rng = np.random.default_rng(kw["seed"] + 3)
    worst, ratio, ident = -np.inf, 0.0, 0.0
    for rec in records:
        for Z in (rec["X"], rec["X"] + rng.standard_normal(rec["X"].shape)):
            gradF = problem.grads(Z) + rec["h"] + lam * (Z - rec["x"])
            gf = np.array([problem.grad(z) for z in Z])
            dist = np.linalg.norm(Z - rec["x"], axis=1)
            lhs = np.linalg.norm(gf, axis=1)
            rhs = np.linalg.norm(gradF, axis=1) + (lam + dB) * dist
            worst = max(worst, float(np.max((lhs - rhs) / (lhs + rhs))))
            ratio = max(ratio, float(np.max(lhs / rhs)))
            # The identity with grad h_i = grad f - grad f_i evaluated independently at x and x^r.
            Gx = problem.grads(problem.broadcast(rec["x"]))
            gh_x = problem.grad(rec["x"])[None] - Gx
            gh_z = gf - problem.grads(Z)
            rebuilt = gradF + (gh_z - gh_x) - lam * (Z - rec["x"])
            ident = max(ident, float(np.max(np.abs(rebuilt - gf)) / max(1.0, float(np.max(np.abs(gf))))))
    holds = worst <= REL and ident <= 1e-10
    return Evidence(_describe(kw), worst, 0.0, holds, tightness=ratio, details={"identity_error": ident})


def sandwich_coefficients(lam: float, delta_B: float) -> tuple[float, float]:
    """Lemma 27's coefficients of ||x - x^r||^2: ((lam - delta_B)/2, (lam + delta_B)/2). F_{i,r} - f differs from
    lam/2||x - x^r||^2 by the Bregman remainder of h_i, at most delta_B/2 ||x - x^r||^2 in size under BHD."""
    return 0.5 * (lam - delta_B), 0.5 * (lam + delta_B)


@claim(cites=("Lemma 27",),
       id="fedred.appendix.model_sandwich.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.2, Lemma 27 (B.61) (form derived by fedtheory from its proof (B.62)-(B.64) and its "
                 f"use in Lemma 28, Corollary 30, Theorems 34 and 37)",
       statement="(derived by fedtheory; the form of Lemma 27) with delta_B-BHD, for every client, round and x: "
                 "f(x) - f(x^r) + (lam - delta_B)/2 ||x - x^r||^2 <= F_{i,r}(x) - F_{i,r}(x^r) <= f(x) - f(x^r) "
                 "+ (lam + delta_B)/2 ||x - x^r||^2",
       kind="bound", space=_NC_SPACE)
def check_model_sandwich(kw: dict) -> Evidence:
    problem, lam, records = daneplus_nonconvex_run(kw)
    dB = problem.certificate.delta_B
    rng = np.random.default_rng(kw["seed"] + 4)
    worst, ratio = -np.inf, 0.0
    for rec in records:
        x = rec["x"]
        fx = problem.value(x)
        Fx = problem.values(problem.broadcast(x)) + rec["h"] @ x
        for Z in (rec["X"], rec["X"] + rng.standard_normal(rec["X"].shape) * np.exp(rng.uniform(-3, 1))):
            d2 = np.sum((Z - x) ** 2, axis=1)
            dF = problem.values(Z) + np.sum(rec["h"] * Z, axis=1) + 0.5 * lam * d2 - Fx
            df = np.array([problem.value(z) for z in Z]) - fx
            c_lo, c_hi = sandwich_coefficients(lam, dB)
            lo, hi = df + c_lo * d2, df + c_hi * d2
            scale = np.abs(dF) + np.abs(df) + 0.5 * (lam + dB) * d2 + abs(fx)
            worst = max(worst, float(np.max(np.maximum(lo - dF, dF - hi) / scale)))
            # How much of the delta_B/2 margin is used on either side (1: a side is attained).
            used = np.abs(dF - df - 0.5 * lam * d2) / np.maximum(0.5 * dB * d2, 1e-300)
            ratio = max(ratio, float(np.max(np.where(d2 > 1e-12 * (1.0 + x @ x), used, 0.0))))
    return Evidence(_describe(kw), worst, 0.0, worst <= REL, tightness=ratio)


def nonconvex_round_coefficients(lam: float, delta_B: float) -> tuple[float, float]:
    """(a, b) of fedtheory's Theorem 29 recurrence f(x^{r+1}) + a ||grad f(x^{r+1})||^2 <= f(x^r) + b e_r:
    Lemma 28 gives (lam - delta_B)/2 ||x_{i,r+1} - x^r||^2 of decrease and Lemma 26 with Lemma 10 gives
    ||grad f||^2 <= 2 e_r + 2(lam + delta_B)^2 ||x_{i,r+1} - x^r||^2, so a = (lam - delta_B)/(4(lam + delta_B)^2)
    and b = 2a (a = 1/(36 delta_B) at lam = 2 delta_B)."""
    a = (lam - delta_B) / (4.0 * (lam + delta_B) ** 2)
    return a, 2.0 * a


@claim(cites=("Theorem 29",),
       id="fedred.appendix.nonconvex_round.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.2, Theorem 29 (B.69)-(B.74) (= Theorem 1; recurrence derived by fedtheory from its "
                 f"proof on Lemmas 28 and 26)",
       statement="(derived by fedtheory; the per-round recurrence of Theorem 29) DANE+ with CV (1), any selected "
                 "local model, delta_B-BHD, lam > delta_B, local outputs with F_{i,r}(x_{i,r+1}) <= F_{i,r}(x^r) and "
                 "e_r = ||grad F_{i_r,r}(x_{i_r,r+1})||^2: f(x^{r+1}) + a ||grad f(x^{r+1})||^2 <= f(x^r) + 2a e_r "
                 "with a = (lam - delta_B)/(4(lam + delta_B)^2) (1/(36 delta_B) at lam = 2 delta_B); summed: "
                 "(1/R) sum ||grad f(x^r)||^2 <= (f(x^0) - f*)/(a R) + (2/R) sum e_r",
       kind="bound", space=_NC_SPACE)
def check_nonconvex_round(kw: dict) -> Evidence:
    problem, lam, records = daneplus_nonconvex_run(kw)
    a, b = nonconvex_round_coefficients(lam, problem.certificate.delta_B)
    worst, ratio = -np.inf, 0.0
    grads, errs = [], []
    for rec in records:
        i = rec["client"]
        e = float(np.sum(rec["gradF"][i] ** 2))
        g2 = float(np.sum(problem.grad(rec["x_new"]) ** 2))
        f0, f1 = problem.value(rec["x"]), problem.value(rec["x_new"])
        lhs, rhs = f1 + a * g2, f0 + b * e
        worst = max(worst, (lhs - rhs) / (abs(f0) + abs(f1) + a * g2 + b * e))
        grads.append(g2)
        errs.append(e)
    F0 = problem.value(records[0]["x"]) - problem.certificate.f_star
    R = len(records)
    summed = float(np.mean(grads))
    bound = F0 / (a * R) + 2 * float(np.mean(errs))
    ratio = summed / bound
    holds = worst <= REL and summed <= bound * (1 + REL)
    return Evidence(_describe(kw), worst, 0.0, holds, tightness=ratio,
                    details={"summed_measured": summed, "summed_bound": bound, "a": a})


@claim(cites=("Corollary 30",),
       id="fedred.appendix.nonconvex_gd_local_steps.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.2, Corollary 30 (B.75)-(B.83) (= Corollary 2; count derived by fedtheory from its "
                 f"proof on Theorem 29, Lemmas 27 and 28)",
       statement="(derived by fedtheory; the form of Corollary 30) DANE+-GD, local GD (step 1/(L_i + lam)) from x^r "
                 "until ||grad F_{i,r}||^2 <= e, lam = lam_factor delta_B > delta_B: every round needs at most "
                 "ceil(2(L + lam)(f(x^r) - f*)/e) <= ceil(2(L + lam)(f(x^0) - f*)/e) local steps, and (1/R) sum "
                 "||grad f(x^r)||^2 <= (f(x^0) - f*)/(a R) + 2e with a of Theorem 29",
       kind="bound", space=_NC_SPACE)
def check_nonconvex_gd_local_steps(kw: dict) -> Evidence:
    """e = 1e-2 ||grad f(x^0)||^2 (absolute rule on ||grad F||, i.e. tol = sqrt(e))."""
    problem0 = _nc(kw)
    rng = np.random.default_rng(kw["seed"])
    x0 = 3.0 * rng.standard_normal(problem0.dim)
    e = 1e-2 * float(np.sum(problem0.grad(x0) ** 2))
    problem, lam, records = daneplus_nonconvex_run({**kw, "local_steps": 1_000_000}, stopping="absolute",
                                                   tol=math.sqrt(e))
    c = problem.certificate
    worst = 0.0
    for rec in records:
        K = math.ceil(2 * (c.L + lam) * max(problem.value(rec["x"]) - c.f_star, 0.0) / e)
        worst = max(worst, rec["steps"] / max(K, 1))
    a, _ = nonconvex_round_coefficients(lam, c.delta_B)
    F0 = problem.value(records[0]["x"]) - c.f_star
    grads = [float(np.sum(problem.grad(rec["x_new"]) ** 2)) for rec in records]
    bound = F0 / (a * len(records)) + 2 * e
    summed = float(np.mean(grads)) / bound
    holds = worst <= 1.0 and summed <= 1 + REL
    return Evidence(_describe(kw), worst, 1.0, holds, tightness=max(worst, summed),
                    details={"steps/bound": worst, "mean grad^2 / bound": summed, "e": e})


# ==========================================================================================================
# FedRed (App. B.5-B.7): Theorem 34 (Alg. 2, non-convex; pathwise, derived) and Theorem 36 (Alg. 3, convex)
# ==========================================================================================================

def fedred_nonconvex_constant(lam: float, delta_B: float, eta: float) -> float:
    """c of fedtheory's pathwise bound for FedRed (Alg. 2, exact local minimisers, reset, any selection):
    at every communication f(x~_{k+1}) + c ||grad f(x~_{k+1})||^2 <= f(x~_k), with
    c = 1 / max{4/eta, 4 (lam + delta_B)^2 / (lam - delta_B)}.

    Derivation (the steps Theorem 34's proof names): with M_j(x) = f_j(x) + <h_j, x> + lam/2||x - x~||^2,
    exact local minimisation decreases M_j by 1/(2 eta)||x_{j,k+1} - x_{j,k}||^2 at every step since the last
    reset, Lemma 27 turns M_j's decrease into f's, and stationarity gives grad M_j(x_{j,k+1}) =
    -(x_{j,k+1} - x_{j,k})/eta, so Lemma 26's identity bounds ||grad f(x~_{k+1})||^2."""
    return 1.0 / max(4.0 / eta, 4.0 * (lam + delta_B) ** 2 / (lam - delta_B))


_FR_NC_SPACE = InstanceSpace(
    params=(Param("n_clients", 2, 8, integer=True), Param("dim", 1, 8, integer=True),
            Param("delta_B", 0.1, 3.0, log=True), Param("c", 0.5, 4.0, log=True), Param("nu", 0.05, 1.0, log=True),
            Param("lam_factor", 1.2, 6.0), Param("eta_delta", 0.05, 100.0, log=True), Param("p", 0.05, 1.0, log=True),
            Param("iterations", 10, 120, integer=True)),
    fixed={"seed": 0, "zeta2": 1.0},
    # The exact local solver needs lam + 1/eta > -min_i mu_i (strongly convex subproblems).
    regime=lambda kw: kw["lam_factor"] * kw["delta_B"] + 1.0 / (kw["eta_delta"] / kw["delta_B"])
    > kw["c"] / 4.0 + kw["delta_B"] * math.sqrt(kw["n_clients"]) - kw["nu"],
    defaults=(dict(n_clients=5, dim=4, delta_B=0.5, c=2.0, nu=0.1, lam_factor=2.0, eta_delta=1 / 9, p=0.3,
                   iterations=60, seed=0, zeta2=1.0),
              dict(n_clients=4, dim=3, delta_B=1.0, c=1.0, nu=0.2, lam_factor=3.0, eta_delta=0.5, p=0.1,
                   iterations=80, seed=1, zeta2=1.0)),
    thorough=(dict(n_clients=8, dim=6, delta_B=0.3, c=3.0, nu=0.05, lam_factor=2.0, eta_delta=0.05, p=0.5,
                   iterations=120, seed=2, zeta2=1.0),))


@claim(cites=("Theorem 34", "Theorem 6"),
       id="fedred.appendix.fedred_nonconvex_pathwise.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.5, Theorem 34 (B.135) (= Theorem 6; a pathwise version derived by fedtheory from "
                 f"the steps of its proof (B.136)-(B.148): Lemma 27, stationarity of the local solution)",
       statement="(derived by fedtheory; a pathwise version of Theorems 6/34) FedRed (Alg. 2, CV (4), exact local "
                 "minimisers, reset, randomized selection), delta_B-BHD, lam > delta_B: at every communication f(x~_"
                 "{k+1}) + c ||grad f(x~_{k+1})||^2 <= f(x~_k) with c = 1/max{4/eta, 4(lam+delta_B)^2/(lam-delta_B)}, "
                 "so after T communications (1/T) sum_t ||grad f(x~^(t))||^2 <= (f(x^0) - f*)/(c T); for eta >= "
                 "(lam-delta_B)/(lam+delta_B)^2 (1/eta <= 9 delta_B at lam = 2 delta_B) this is Theorem 6's "
                 "O(delta_B F_0/eps) communications with the constant 36, on every sample path",
       kind="bound", space=_FR_NC_SPACE)
def check_fedred_nonconvex_pathwise(kw: dict) -> Evidence:
    problem = _nc(kw)
    c = problem.certificate
    lam = float(kw["lam_factor"]) * c.delta_B
    eta = float(kw["eta_delta"]) / c.delta_B
    alg = FedRed(lam=lam, eta=eta, p=float(kw["p"]), solver="exact", selection="random", reset=True)
    rng = np.random.default_rng(kw["seed"])
    state = alg.init(problem, 3.0 * rng.standard_normal(problem.dim))
    cc = fedred_nonconvex_constant(lam, c.delta_B, eta)
    f0 = problem.value(state.x)
    worst, grads, moved = -np.inf, [], 0.0
    for _ in range(int(kw["iterations"])):
        new, log = alg.round(problem, state, rng)
        if log.communicated:
            f_old, f_new = problem.value(state.x), problem.value(new.x)
            g2 = float(np.sum(problem.grad(new.x) ** 2))
            worst = max(worst, (f_new + cc * g2 - f_old) / (abs(f_old) + abs(f_new) + cc * g2 + 1e-300))
            grads.append(g2)
        else:  # between communications the reference point does not move
            moved = max(moved, float(np.max(np.abs(new.x - state.x))))
        state = new
    T = len(grads)
    if T == 0:
        return Evidence(_describe(kw), 0.0, 0.0, True, details={"communications": 0})
    summed = float(np.mean(grads))
    bound = (f0 - c.f_star) / (cc * T)
    holds = worst <= REL and summed <= bound * (1 + REL) and moved == 0.0
    return Evidence(_describe(kw), worst, 0.0, holds, tightness=summed / bound,
                    details={"communications": T, "reference_moved_without_communication": moved, "mean_grad2": summed, "bound": bound, "c": cc})


def _fedred_gd_space() -> InstanceSpace:
    base = dict(zeta2=1.0, lam_factor=2.0, eta_L=1.0, paths=60)
    return quadratic_space(
        defaults=(dict(n_clients=5, dim=6, mu=0.5, L=20.0, delta_A=0.5, seed=0, p=0.3, iterations=60, **base),
                  dict(n_clients=5, dim=6, mu=0.0, L=20.0, delta_A=0.5, seed=1, p=0.1, iterations=60, **base)),
        thorough=(dict(n_clients=8, dim=10, mu=0.1, L=100.0, delta_A=1.0, seed=2, p=0.05, iterations=200,
                       **{**base, "paths": 200}),),
        extra=(Param("lam_factor", 1.0, 4.0), Param("eta_L", 0.1, 1.0), Param("p", 0.02, 1.0, log=True),
               Param("iterations", 5, 80, integer=True), Param("paths", 20, 80, integer=True)),
        mu_low=1e-3)


@claim(cites=("Theorem 36",),
       id="fedred.appendix.fedred_gd_convex.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.6, Theorem 36 (B.180) (= Theorem 9, sigma = 0; form derived by fedtheory by "
                 f"telescoping Lemma 35 and applying Lemma 13)",
       statement="(derived by fedtheory; the form of Theorem 36 with exact gradients) FedRed-GD (Alg. 3, CV (4), "
                 "standard averaging, reset), mu-convex L-smooth f_i with delta_A-AHD, lam >= delta_A, eta <= 1/L: "
                 "for mu > 0, E Phi_K <= (1 - min{mu eta, p mu/(lam+mu)})^K Phi_0 with Phi = mean_i||x_{i,k} - "
                 "x*||^2/(2eta) + (lam+mu)/(2p) ||x~_k - x*||^2; for mu = 0, (1/K) sum_{k=1}^K E[f(xbar_k) - f*] "
                 "<= (1/(2eta) + lam/(2p)) ||x^0 - x*||^2/K, xbar_k = mean_i x_{i,k}",
       kind="statistical", space=_fedred_gd_space())
def check_fedred_gd_convex(kw: dict) -> Evidence:
    """Monte Carlo over ``paths`` sample paths of the coins; violated only when the sample mean exceeds the bound
    by more than 4 standard errors (the verdict is a test, the tightness is mean/bound)."""
    problem = _quad(kw)
    c = problem.certificate
    mu = max(c.mu, 0.0)
    lam, eta, p = float(kw["lam_factor"]) * c.delta_A, float(kw["eta_L"]) / c.L, float(kw["p"])
    alg = FedRed(lam=lam, eta=eta, p=p, solver="linearized", selection="standard", reset=True)
    K = int(kw["iterations"])
    rng = np.random.default_rng(kw["seed"])
    x0 = c.x_star + 3.0 * rng.standard_normal(problem.dim)
    D2 = float(np.sum((x0 - c.x_star) ** 2))
    w = problem.weights
    values = []
    for _ in range(int(kw["paths"])):  # independent sample paths (each a sequential recursion)
        state = alg.init(problem, x0)
        gaps = []
        for _ in range(K):
            state = alg.round(problem, state, rng)[0]
            gaps.append(problem.gap(w @ state.X))
        if mu > 0:
            values.append(_mean_sq(w, state.X - c.x_star) / (2 * eta)
                          + (lam + mu) / (2 * p) * float(np.sum((state.x - c.x_star) ** 2)))
        else:
            values.append(float(np.mean(gaps)))
    values = np.array(values)
    if mu > 0:
        rho = 1.0 - min(mu * eta, p * mu / (lam + mu))
        bound = rho ** K * (1 / (2 * eta) + (lam + mu) / (2 * p)) * D2
    else:
        bound = (1 / (2 * eta) + lam / (2 * p)) * D2 / K
    mean = float(values.mean())
    se = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else 0.0
    return Evidence(_describe(kw), mean, bound, mean - 4 * se <= bound, tightness=mean / bound,
                    details={"standard_error": se, "paths": len(values), "mu": mu})


def fedred_gd_epoch_constant(m: int, *, lam: float, delta_B: float, eta: float, L: float) -> float:
    """C(m) of fedtheory's pathwise bound for FedRed-GD (Alg. 3, exact gradients, reset, any selection): over an
    epoch of m local steps ended by a communication that selects client j,

        sum_{t<m} ||grad f(x_{j,t})||^2 <= C(m) (f(x~_e) - f(x~_{e+1})),
        C(m) = 2 (1 + (lam + delta_B)^2 s^2 m^2) / (s (1 - (L + lam) s / 2)),   s = eta/(1 + lam eta).

    Derivation: Alg. 3's step is gradient descent with step s on M_j(x) = f_j(x) + <h_j, x> + lam/2||x - x~||^2
    (M_j is (L + lam)-smooth from above, so the descent lemma gives M_j(x_{t+1}) <= M_j(x_t) - s(1 - (L+lam)s/2)
    ||grad M_j(x_t)||^2); ||x_t - x~||^2 <= s^2 t sum_{u<t} ||grad M_j(x_u)||^2; Lemma 26's identity gives
    ||grad f(x_t)||^2 <= 2||grad M_j(x_t)||^2 + 2(lam + delta_B)^2 ||x_t - x~||^2; and Lemma 27 (lam >= delta_B)
    turns M_j(x~) - M_j(x_{j,m}) into at most f(x~) - f(x_{j,m}) = f(x~_e) - f(x~_{e+1})."""
    s = eta / (1.0 + lam * eta)
    return 2.0 * (1.0 + (lam + delta_B) ** 2 * s * s * m * m) / (s * (1.0 - (L + lam) * s / 2.0))


_FRGD_NC_SPACE = InstanceSpace(
    params=(Param("n_clients", 2, 8, integer=True), Param("dim", 1, 8, integer=True),
            Param("delta_B", 0.05, 3.0, log=True), Param("c", 0.5, 8.0, log=True), Param("nu", 0.02, 1.0, log=True),
            Param("lam_factor", 1.0, 6.0), Param("eta_L", 0.05, 1.0, log=True), Param("p", 0.02, 1.0, log=True),
            Param("iterations", 20, 400, integer=True)),
    fixed={"seed": 0, "zeta2": 1.0},
    defaults=(dict(n_clients=5, dim=4, delta_B=0.5, c=4.0, nu=0.1, lam_factor=2.0, eta_L=1.0, p=0.1,
                   iterations=300, seed=0, zeta2=1.0),
              dict(n_clients=4, dim=3, delta_B=0.2, c=2.0, nu=0.05, lam_factor=3.0, eta_L=0.5, p=0.05,
                   iterations=300, seed=1, zeta2=1.0)),
    thorough=(dict(n_clients=8, dim=6, delta_B=1.0, c=8.0, nu=0.02, lam_factor=1.5, eta_L=1.0, p=0.3,
                   iterations=400, seed=2, zeta2=1.0),))


@claim(cites=("Theorem 37", "Theorem 8"),
       id="fedred.appendix.fedred_gd_nonconvex_pathwise.derived", paper=PAPER, derived=True,
       reference=f"{REF}, App. B.7, Theorem 37 (B.188) (= Theorem 8, sigma = 0; a pathwise version derived by "
                 f"fedtheory from the steps of its proof (B.189)-(B.215): Lemma 27, the local descent, Lemma 26)",
       statement="(derived by fedtheory; a pathwise version of Theorems 8/37 with exact gradients) FedRed-GD (Alg. 3, "
                 "CV (4), reset, randomized selection), L-smooth f_i with delta_B-BHD, lam >= delta_B, eta <= 1/L: "
                 "over every epoch of m local steps ended by a communication selecting client j, sum_{t<m} ||grad "
                 "f(x_{j,t})||^2 <= C(m) (f(x~_e) - f(x~_{e+1})) with C(m) = 2(1 + (lam+delta_B)^2 s^2 m^2)/(s(1 - "
                 "(L+lam)s/2)), s = eta/(1+lam eta); with m ~ 1/p and p ~ (lam+delta_B)s, C ~ 8(L+lam): GD's "
                 "iteration count O(L F_0/eps) with O(delta_B F_0/eps) communications, on every sample path",
       kind="bound", space=_FRGD_NC_SPACE)
def check_fedred_gd_nonconvex_pathwise(kw: dict) -> Evidence:
    problem = _nc(kw)
    c = problem.certificate
    lam, eta = float(kw["lam_factor"]) * c.delta_B, float(kw["eta_L"]) / c.L
    alg = FedRed(lam=lam, eta=eta, p=float(kw["p"]), solver="linearized", selection="random", reset=True)
    rng = np.random.default_rng(kw["seed"])
    state = alg.init(problem, 3.0 * rng.standard_normal(problem.dim))
    f0 = problem.value(state.x)
    epoch = [state.X]  # the local models x_{i,0} = x~, x_{i,1}, ... of the current epoch
    worst, weighted, epochs, ratio = -np.inf, 0.0, 0, 0.0
    for _ in range(int(kw["iterations"])):
        draw = alg.draw(problem, state, rng)
        new, _ = alg.round_given(problem, state, draw)
        if not draw.communicate:
            epoch.append(new.X)
        else:
            j, m = draw.client, len(epoch)
            path = np.array([X[j] for X in epoch])  # x_{j,0..m-1}: the points where client j took gradients
            g2 = float(sum(np.sum(problem.grad(x) ** 2) for x in path))
            C = fedred_gd_epoch_constant(m, lam=lam, delta_B=c.delta_B, eta=eta, L=c.L)
            f_old, f_new = problem.value(state.x), problem.value(new.x)
            worst = max(worst, (g2 - C * (f_old - f_new)) / (g2 + C * (abs(f_old) + abs(f_new)) + 1e-300))
            if f_old - f_new > 1e-12 * (abs(f_old) + 1.0):  # the per-epoch ratio, above the rounding floor
                ratio = max(ratio, g2 / (C * (f_old - f_new)))
            weighted += g2 / C
            epochs += 1
            epoch = [new.X]
        state = new
    bound = f0 - c.f_star
    holds = (epochs == 0 or worst <= REL) and weighted <= bound * (1 + REL)
    return Evidence(_describe(kw), worst if epochs else 0.0, 0.0, holds, tightness=ratio,
                    details={"communications": epochs, "summed_tightness": weighted / bound, "sum_e sum_t ||grad f||^2 / C(m_e)": weighted,
                             "f(x0) - f*": bound})
