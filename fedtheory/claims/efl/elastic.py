"""EFL, the elastic term (eqs. (2)-(4), §1, §3, §5.3): its algebra, the Fisher fallback for general problems, the
readings of U and V, and its effect on drift and on the limit.
"""
from __future__ import annotations

import numpy as np

from ...algorithms.efl import EFL, elastic_grad, elastic_objective, fisher_diagonal
from ...problems.quadratic import QuadraticProblem
from ...run import run
from ..patterns import relative_error
from ..registry import Evidence, claim
from ..tolerances import APPROX_REL, EXACT_REL, IDENTITY_TOL, PRESENT_REL
from ._shared import distance, final_model, harness_instances
from .harness import efl_harness

__all__ = []

PAPER = "efl"


# ---------------------------------------------------------------------------------------------------------
# Eqs. (2)-(3): the elastic term's algebra
# ---------------------------------------------------------------------------------------------------------

def _elastic_instances(thorough: bool):
    return [dict(N=4, d=5, lam=0.3, seed=0), dict(N=1, d=3, lam=2.0, seed=1), dict(N=7, d=8, lam=0.01, seed=2)] + (
        [dict(N=20, d=30, lam=1.0, seed=s) for s in range(3, 6)] if thorough else [])


@claim(id="efl.elastic.algebra", paper=PAPER, reference="eqs. 2-3",
       statement="eq. (2) equals eq. (3) with Z = lam/2 sum_i w_i^T diag(I_i) w_i; its gradient is "
                 "grad f_k + lam (U o w - V) with U = sum u^i, V = sum v^i the transmitted sums, and EFL's U, V "
                 "are the sums of the reporters' diag(I_k) and diag(I_k) w_end^k",
       kind="identity", instances=_elastic_instances, runs=("efl",))
def check_elastic_algebra(inst: dict) -> Evidence:
    rng = np.random.default_rng(inst["seed"])
    N, d, lam = inst["N"], inst["d"], inst["lam"]
    anchors = rng.standard_normal((N, d)) * 2
    fishers = rng.uniform(0, 3, (N, d))
    W = rng.standard_normal((6, d))
    a, c = rng.uniform(0.5, 2, d), rng.standard_normal(d)
    f = 0.5 * np.sum(a * (W - c) ** 2, axis=1)
    fgrad = a * (W - c)
    eq2 = elastic_objective(f, W, anchors, fishers, lam)
    U, V = fishers.sum(axis=0), (fishers * anchors).sum(axis=0)
    Z = 0.5 * lam * np.sum(anchors * fishers * anchors)
    eq3 = f + 0.5 * lam * np.sum(W * U * W, axis=1) - lam * W @ V + Z
    err_value = float(np.max(np.abs(eq2 - eq3) / np.maximum(1.0, np.abs(eq2))))
    h = 1e-6
    fd = np.empty_like(W)
    for j in range(d):  # finite differences, one coordinate at a time (a check, not a hot path)
        e = np.zeros(d)
        e[j] = h
        fp = 0.5 * np.sum(a * (W + e - c) ** 2, axis=1)
        fm = 0.5 * np.sum(a * (W - e - c) ** 2, axis=1)
        fd[:, j] = (elastic_objective(fp, W + e, anchors, fishers, lam)
                    - elastic_objective(fm, W - e, anchors, fishers, lam)) / (2 * h)
    grad = elastic_grad(fgrad, W, U, V, lam)
    err_grad = relative_error(fd, grad)
    # Inside EFL: after one round with full participation, U = sum_k diag(A_k) and V = sum_k diag(A_k) w_end^k.
    problem = efl_harness(seed=inst["seed"], n=max(N, 2), d=d)
    # u, v are only computed and sent when lam > 0 (they are unused otherwise), so the in-algorithm part
    # uses lam = 1 when the instance's lam is 0.
    alg = EFL(E=2, step=0.02, lam=lam if lam > 0 else 1.0)
    state, _ = alg.round(problem, alg.init(problem, np.ones(d)), np.random.default_rng(0))
    err_uv = float(max(np.max(np.abs(state.U - problem.A.sum(axis=0))),
                       np.max(np.abs(state.V - (problem.A * state.client_end).sum(axis=0)))))
    worst = max(err_value, err_grad / 1e-4 * 1e-10, err_uv)
    ok = err_value <= IDENTITY_TOL and err_grad <= APPROX_REL and err_uv <= EXACT_REL
    return Evidence(f"N={N} d={d} lam={lam}", max(err_value, err_uv), IDENTITY_TOL, ok,
                    details={"value_error": err_value, "fd_gradient_error": err_grad, "uv_error": err_uv,
                             "worst_scaled": worst})


# ---------------------------------------------------------------------------------------------------------
# Eqs. (3)-(4): the Fisher fallback and the readings of U, V
# ---------------------------------------------------------------------------------------------------------

class _GradientsOnly:
    """A quadratic seen only through its gradient oracle (no A, no Hessians): EFL must fall back on central
    differences for the Fisher diagonal."""

    def __init__(self, problem: QuadraticProblem) -> None:
        self._problem, self.n_clients, self.dim = problem, problem.n_clients, problem.dim

    def grads(self, X: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
        return self._problem.grads(X, clients)


@claim(id="efl.elastic.fisher_fallback.derived", paper=PAPER, reference="§3, eq. 3 (I_k = the Fisher diagonal); "
       "docs/efl.md",
       statement="(derived by fedtheory) for a client known only through its gradients, the Fisher diagonal EFL uses (central "
                 "differences of the gradient) equals the Hessian diagonal diag(A_k) of a quadratic to 1e-6 "
                 "relative, at points of size 1 to 100",
       kind="identity", derived=True, instances=lambda thorough: [0, 1])
def check_fisher_fallback(seed: int) -> Evidence:
    problem = efl_harness(seed=seed)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((problem.n_clients, problem.dim)) * np.logspace(0, 2, problem.dim)
    clients = np.arange(problem.n_clients)
    want = problem.A if problem.A.ndim == 2 else np.diagonal(problem.A, axis1=1, axis2=2)
    err = relative_error(fisher_diagonal(_GradientsOnly(problem), X, clients), want)
    return Evidence(f"harness seed={seed}, finite differences", err, APPROX_REL, err <= APPROX_REL)


def _uv_instances(thorough: bool):
    yield 0


@claim(id="efl.elastic.uv_sum_readings.derived", paper=PAPER, reference="§3, eq. 3-4 (U, V)",
       statement="(derived by fedtheory) with full participation the two readings of the elastic sums U = sum_k u^k, V = sum_k v^k "
                 "(the last round's reporters, or every client's latest report) give the same trajectory "
                 "(bitwise: the same sums in the same order); under partial participation they differ",
       kind="identity", derived=True, instances=_uv_instances, runs=("efl",))
def check_uv_sum_readings(seed: int) -> Evidence:
    problem = efl_harness(seed=seed)
    kw = dict(E=3, step=0.05, lam=0.5, s_min=1, s_max=3)
    same = distance(final_model(EFL(uv_sum="reporters", **kw), problem, 20, seed=seed),
                 final_model(EFL(uv_sum="cached", **kw), problem, 20, seed=seed))
    kw["participation"] = 0.5
    apart = distance(final_model(EFL(uv_sum="reporters", **kw), problem, 20, seed=seed),
                  final_model(EFL(uv_sum="cached", **kw), problem, 20, seed=seed))
    return Evidence(f"harness seed={seed} lam=0.5, 20 rounds", same, 0.0, same == 0.0 and apart > PRESENT_REL,
                    details={"distance_partial_participation": apart})


# ---------------------------------------------------------------------------------------------------------
# §1, §3.1, §5.3: the elastic term's effect on drift and on the limit
# ---------------------------------------------------------------------------------------------------------

def _drift_instances(thorough: bool):
    return [0] + ([1, 2, 3] if thorough else [])


@claim(id="efl.elastic.drift.derived", paper=PAPER, reference="§1, §3.1 ('most informative parameters less "
       "volatile')",
       statement="across-client std of local end models is non-increasing in lam (0, .05, .2, .5) on every "
                 "coordinate, and falls relatively more on high-Fisher coordinates than on low-Fisher ones",
       kind="monotonicity", derived=True, instances=_drift_instances, runs=("efl",))
def check_elastic_drift(seed: int) -> Evidence:
    problem = efl_harness(seed=seed, fisher=(4, 4, 4, 0.5, 0.5, 0.5))
    stds = []
    for lam in (0.0, 0.05, 0.2, 0.5):
        alg = EFL(E=10, step=0.02, lam=lam)
        U_max = problem.n_clients * problem.A.max()
        if 0.02 * (problem.A.max() + lam * U_max) >= 1:
            raise ValueError("instance violates the local step-size stability condition ()")
        state = run(alg, problem, 300, seed=0, record_every=300).state
        stds.append(state.client_end.std(axis=0))
    stds = np.array(stds)
    mono = bool(np.all(np.diff(stds, axis=0) <= EXACT_REL))
    red = 1 - stds[-1] / stds[0]
    hi, lo = float(red[:3].mean()), float(red[3:].mean())
    return Evidence(f"harness seed={seed} fisher=(4,4,4,.5,.5,.5)", hi, lo, mono and hi > lo,
                    details={"std_by_lambda": stds.tolist(), "relative_reduction_high": hi,
                             "relative_reduction_low": lo})


@claim(id="efl.elastic.limit.derived", paper=PAPER, reference="§5.3 (effects of the elastic term); docs/efl.md",
       statement="lam > 0 leaves the eta -> 0 limit at argmin sum p^k f_k: with decaying eta the distance to w* "
                 "goes below 1e-2; with constant eta the bias is O(eta) (halves with eta)",
       kind="fixed_point", derived=True, instances=harness_instances, runs=("efl",))
def check_elastic_limit(seed: int) -> Evidence:
    problem = efl_harness(seed=seed)
    n = problem.n_clients
    s = tuple(range(1, n + 1))
    xs = problem.certificate.x_star
    lam = 0.1
    x_dec = final_model(EFL(E=n, step=0.5, decay=20, lam=lam, s_min=s, s_max=s), problem, 1500)
    d = [distance(final_model(EFL(E=n, step=eta, lam=lam, s_min=s, s_max=s), problem, int(8 / eta)), xs)
         for eta in (0.01, 0.005)]
    ratio = d[1] / d[0]
    ok = distance(x_dec, xs) < 1e-2 and 0.4 <= ratio <= 0.6
    return Evidence(f"harness seed={seed} lam={lam}", distance(x_dec, xs), 1e-2, ok,
                    details={"constant_eta_dists": d, "halving_ratio": ratio})
