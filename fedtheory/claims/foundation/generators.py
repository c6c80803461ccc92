"""Claims about the logistic, non-convex and special quadratic generators (fedtheory's constructions,
docs/problems.md).

Each check takes one instance (a dict of generator keyword arguments) and rebuilds the problem, so tests
call the same function on hypothesis-drawn instances.
"""
from __future__ import annotations

import numpy as np

from ...problems.constructions import general_convex_quadratic, outlier_quadratic, vary_delta, vary_L
from ...problems.logistic import logistic, logistic_perturbed
from ...problems.nonconvex import nonconvex
from ...problems.quadratic import quadratic
from ...prox_l1 import kkt_residual_l1
from ..registry import Evidence, claim
from ..tolerances import EXACT_REL, IDENTITY_TOL, SUM_REL, Z_MONTE_CARLO

__all__: list[str] = []


def _describe(name: str, kw: dict) -> str:
    return f"{name}(" + ", ".join(f"{k}={v}" for k, v in kw.items()) + ")"


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b) if b else abs(a)


def _rel_floor(a: float, b: float, floor: float) -> float:
    """Relative error, or 0 when |a - b| is below an absolute floating-point floor (e.g. 1e-12 L for a
    dissimilarity requested as 0, which rounding cannot reproduce exactly)."""
    return 0.0 if abs(a - b) <= floor else _rel(a, b)


def _zeta2_floor(p, dx: float = 0.0) -> float:
    """Absolute resolution of zeta2 = sum_i w_i ||g_i||^2 with g_i = grad f_i(x*): each g_i is known to
    eps = L ||x* error|| + 1e-14 (L max(1, ||x*||) + max_i ||c_i||), so zeta2 to 2 sqrt(zeta2) eps + eps^2."""
    c = p.certificate
    lin = 0.0 if getattr(p, "c", None) is None else float(np.linalg.norm(p.c, axis=1).max())
    eps = c.L * dx + 1e-14 * (c.L * max(1.0, float(np.linalg.norm(c.x_star))) + lin)
    return 2.0 * np.sqrt(c.zeta2) * eps + eps * eps


def _zeta2_error(p, want: float, dx: float = 0.0) -> float:
    """Relative error of zeta2, or 0 when the difference is below the floating-point floor."""
    got = p.certificate.zeta2
    return 0.0 if abs(got - want) <= _zeta2_floor(p, dx) else _rel(got, want)


# ----- logistic -----

def _logistic_instances(thorough: bool):
    yield dict(source="synthetic", n_clients=5, dim=10, samples=40, alpha=1.0, beta=1.0, reg=1e-2, seed=0)
    yield dict(source="breast_cancer", n_clients=8, partition="dirichlet", dirichlet_alpha=0.5, reg=1e-3, seed=1)
    yield dict(source="digits", n_clients=10, partition="shards", reg=1e-2, seed=2)
    yield dict(source="digits", n_clients=4, digits="two_class", partition="lognormal", sigma=1.0, reg=1e-4,
               weights="uniform", seed=3)
    if thorough:
        yield dict(source="synthetic", n_clients=30, alpha=1.0, beta=1.0, reg=1e-3, seed=4)  # paper's sizes
        yield dict(source="synthetic", n_clients=10, dim=60, samples=100, alpha=0.0, beta=0.0, reg=1e-4, seed=5)


@claim(id="foundation.logistic.certificate_residual", paper="foundation", reference="fedtheory's Newton "
       "certificate (docs/problems.md) for the logistic problems of Jiang, Rodomanov & Stich 2024, Section 5",
       statement="logistic(): Newton's x* has relative gradient residual ||grad f(x*)|| / max(1, ||grad f(0)||) "
                 "<= 1e-12, recorded in certificate.kkt_residual and reproduced by the oracles",
       kind="identity", instances=_logistic_instances)
def check_logistic_residual(kw: dict) -> Evidence:
    p = logistic(**kw)
    c = p.certificate
    recomputed = float(np.linalg.norm(p.grad(c.x_star)) / max(1.0, float(np.linalg.norm(p.grad(np.zeros(p.dim))))))
    ok = c.kkt_residual <= EXACT_REL and recomputed <= EXACT_REL
    return Evidence(_describe("logistic", kw), max(c.kkt_residual, recomputed), EXACT_REL, ok,
                    details={"recorded": c.kkt_residual, "recomputed": recomputed, "sizes": p.sizes.tolist()})


@claim(id="foundation.logistic.smoothness_exact", paper="foundation", reference="the logistic loss's "
       "curvature is at most 1/4: L_i = ||Z_i||^2/(4 m_i) + reg (docs/problems.md)",
       statement="logistic(): L_i = ||Z_i||_2^2/(4 m_i) + reg equals lambda_max(Hess f_i(0)) and bounds "
                 "lambda_max(Hess f_i(x)) at sampled x; mu = reg bounds lambda_min from below",
       kind="identity", instances=_logistic_instances)
def check_logistic_smoothness(kw: dict) -> Evidence:
    p = logistic(**kw)
    c = p.certificate
    H0 = p.hessians(np.zeros((p.n_clients, p.dim)))
    top0 = np.linalg.eigvalsh(H0)[:, -1]
    err0 = float(np.max(np.abs(top0 - c.L_i) / c.L_i))
    rng = np.random.default_rng(0)
    worst_ratio, worst_low = 0.0, np.inf
    for _ in range(3):
        X = c.x_star + rng.standard_normal((p.n_clients, p.dim))
        ev = np.linalg.eigvalsh(p.hessians(X))
        worst_ratio = max(worst_ratio, float(np.max(ev[:, -1] / c.L_i)))
        worst_low = min(worst_low, float(np.min(ev[:, 0] - c.mu_i)))
    ok = err0 <= IDENTITY_TOL and worst_ratio <= 1 + EXACT_REL and worst_low >= -EXACT_REL * c.L
    return Evidence(_describe("logistic", kw), err0, IDENTITY_TOL, ok, tightness=worst_ratio,
                    details={"max lambda_max(H(x))/L_i at sampled x": worst_ratio,
                             "min lambda_min(H(x)) - mu_i": worst_low})


def _solve_instances(thorough: bool):
    for l1 in (0.0, 0.05):
        yield dict(problem=dict(source="synthetic", n_clients=6, dim=8, samples=30, reg=1e-2, seed=7), lam=0.3, l1=l1)
        yield dict(problem=dict(source="digits", n_clients=5, partition="dirichlet", reg=1e-3, seed=8), lam=1.0, l1=l1)
    if thorough:
        yield dict(problem=dict(source="breast_cancer", n_clients=20, partition="shards", reg=1e-4, seed=9),
                   lam=1e-3, l1=0.01)


@claim(id="foundation.logistic.solve_local_kkt", paper="foundation", reference="the solve_local contract "
       "(fedtheory.problems.base.Problem.solve_local; docs/problems.md)",
       statement="LogisticProblem.solve_local (batched damped Newton, or proximal Newton for l1 > 0) returns "
                 "points whose relative (l1-)KKT residual is <= 1e-12 for every client",
       kind="identity", instances=_solve_instances)
def check_logistic_solve_local(inst: dict) -> Evidence:
    p = logistic(**inst["problem"])
    lam, l1 = inst["lam"], inst["l1"]
    rng = np.random.default_rng(1)
    lin = rng.standard_normal((p.n_clients, p.dim))
    center = rng.standard_normal((p.n_clients, p.dim))
    X = p.solve_local(lin, center, lam, l1=l1)
    G0 = p.grads(center) + lin
    G = p.grads(X) + lin + lam * (X - center)
    if l1 == 0.0:
        scale = np.maximum.reduce([np.ones(p.n_clients), np.linalg.norm(G0, axis=1), np.linalg.norm(lin, axis=1),
                                   lam * np.linalg.norm(center, axis=1)])
        res = np.linalg.norm(G, axis=1) / scale
    else:
        scale = np.maximum.reduce([np.ones(p.n_clients), np.abs(G0).max(axis=1), np.full(p.n_clients, l1),
                                   np.abs(lin).max(axis=1), lam * np.abs(center).max(axis=1)])
        res = kkt_residual_l1(G, X - center, l1) / scale
    return Evidence(_describe("solve_local", {**inst["problem"], "lam": lam, "l1": l1}), float(res.max()), EXACT_REL,
                    bool(res.max() <= EXACT_REL))


def _perturbed_instances(thorough: bool):
    yield dict(n_clients=6, dim=5, reg=0.1, delta_B=0.3, zeta2=2.0, seed=1)
    yield dict(n_clients=10, dim=4, reg=1e-2, delta_A=0.05, zeta2=0.5, samples=100, seed=2)
    yield dict(n_clients=3, dim=6, reg=1.0, delta_B=2.0, zeta2=0.0, seed=3)
    if thorough:
        yield dict(n_clients=50, dim=20, reg=1e-3, delta_A=0.01, zeta2=1.0, samples=500, seed=4)


@claim(id="foundation.logistic_perturbed.constants_exact", paper="foundation", reference="fedtheory's exact-delta "
       "logistic construction (docs/problems.md)",
       statement="logistic + quadratic perturbations (sum_i w_i E_i = 0) reproduce the requested delta_A or "
                 "delta_B and zeta2 to 1e-10 relative (zeta2 above its floating-point floor given x*'s Newton "
                 "residual), with delta_A <= delta_B <= sqrt(n) delta_A",
       kind="identity", instances=_perturbed_instances)
def check_logistic_perturbed(kw: dict) -> Evidence:
    p = logistic_perturbed(**kw)
    c = p.certificate
    errors = {}
    for name in ("delta_A", "delta_B"):
        if name in kw:
            errors[name] = _rel(getattr(c, name), kw[name])
    # x* is known to its Newton residual: ||x* error|| <= ||grad f(x*)|| / mu_f
    dx = c.kkt_residual * max(1.0, float(np.linalg.norm(p.grad(np.zeros(p.dim))))) / c.mu_f
    errors["zeta2"] = _zeta2_error(p, kw["zeta2"], dx)
    sandwich = (c.delta_A <= c.delta_B * (1 + EXACT_REL)
                and c.delta_B <= np.sqrt(p.n_clients) * c.delta_A * (1 + EXACT_REL))
    ok = (all(v <= IDENTITY_TOL for v in errors.values()) and sandwich
          and c.exact["delta_A"] and c.kkt_residual <= EXACT_REL)
    return Evidence(_describe("logistic_perturbed", kw), max(errors.values()), IDENTITY_TOL, ok,
                    details={"relative_errors": errors, "kkt_residual": c.kkt_residual})


# ----- non-convex -----

def _nonconvex_instances(thorough: bool):
    yield dict(n_clients=5, dim=4, curvature=1.0, nu=0.1, delta_B=0.3, zeta2=1.0, seed=0)
    yield dict(n_clients=8, dim=6, curvature=2.0, nu=0.05, delta_A=0.5, zeta2=0.0, mean_linear=3.0, seed=1)
    yield dict(n_clients=2, dim=1, curvature=0.5, nu=1.0, delta_B=0.1, zeta2=0.2, seed=2)
    if thorough:
        yield dict(n_clients=40, dim=30, curvature=1.0, nu=0.01, delta_A=1.0, zeta2=3.0, mean_linear=5.0, seed=3)


@claim(id="foundation.nonconvex.constants_exact", paper="foundation", reference="fedtheory's non-convex "
       "construction (docs/problems.md)",
       statement="nonconvex(): requested delta and zeta2 reproduced (1e-10 rel.), mu_i = nu - c/4 + "
                 "lambda_min(E_i) and L_i = 2c + nu + lambda_max(E_i) attained (at x_j = sqrt 3 and x = 0), "
                 "lower_bound <= f* <= multi-start estimate, grad f(x*) = 0",
       kind="identity", instances=_nonconvex_instances)
def check_nonconvex(kw: dict) -> Evidence:
    p = nonconvex(**kw)
    c = p.certificate
    errors = {}
    for name in ("delta_A", "delta_B"):
        if name in kw:
            errors[name] = _rel(getattr(c, name), kw[name])
    errors["zeta2"] = _zeta2_error(p, kw["zeta2"])
    n, d = p.n_clients, p.dim
    top = np.linalg.eigvalsh(p.hessians(np.zeros((n, d))))[:, -1]
    low = np.linalg.eigvalsh(p.hessians(np.full((n, d), np.sqrt(3.0))))[:, 0]
    errors["L_i attained"] = float(np.max(np.abs(top - c.L_i))) / c.L
    errors["mu_i attained"] = float(np.max(np.abs(low - c.mu_i))) / c.L
    est = p.f_inf_multistart
    scale = max(1.0, abs(c.f_star))
    order = p.lower_bound <= c.f_star + EXACT_REL * scale and c.f_star <= est + IDENTITY_TOL * scale
    ok = all(v <= IDENTITY_TOL for v in errors.values()) and order and c.kkt_residual <= EXACT_REL
    return Evidence(_describe("nonconvex", kw), max(errors.values()), IDENTITY_TOL, ok,
                    details={"relative_errors": errors, "f_star": c.f_star, "lower_bound": p.lower_bound,
                             "multistart_estimate": est, "kkt_residual": c.kkt_residual})


# ----- special quadratic constructions -----

def _vary_instances(thorough: bool):
    yield dict(base=dict(n_clients=6, dim=5, mu=0.1, L=2.0, delta_A=0.3, zeta2=1.0, seed=2), L=7.0, scale=0.5)
    yield dict(base=dict(n_clients=4, dim=3, mu=1.0, L=10.0, delta_B=2.0, zeta2=0.0, hessians="diagonal", seed=3),
               L=100.0, scale=0.1)
    yield dict(base=dict(n_clients=10, dim=8, mu=0.01, L=1.0, delta_B=0.2, zeta2=3.0, seed=4), L=1.5, scale=0.9)


@claim(id="foundation.constructions.vary_L_keeps_delta", paper="foundation",
       reference="fedtheory's construction (docs/problems.md, Special constructions)",
       statement="vary_L adds s q q^T to every A_i: L becomes exactly the requested value while delta_A, "
                 "delta_B, x* and zeta2 are unchanged (1e-10 relative) and mu does not decrease",
       kind="invariant", derived=True, instances=_vary_instances)
def check_vary_L(inst: dict) -> Evidence:
    base = quadratic(**inst["base"])
    p = vary_L(base, inst["L"])
    b, c = base.certificate, p.certificate
    fl = EXACT_REL * c.L
    errors = {"L": _rel(c.L, inst["L"]), "delta_A": _rel_floor(c.delta_A, b.delta_A, fl),
              "delta_B": _rel_floor(c.delta_B, b.delta_B, fl), "zeta2": _rel_floor(c.zeta2, b.zeta2, _zeta2_floor(p)),
              "x_star": float(np.linalg.norm(c.x_star - b.x_star) / max(1.0, np.linalg.norm(b.x_star)))}
    ok = all(v <= IDENTITY_TOL for v in errors.values()) and c.mu >= b.mu * (1 - EXACT_REL) - SUM_REL
    return Evidence(_describe("vary_L", {**inst["base"], "L_new": inst["L"]}), max(errors.values()), IDENTITY_TOL, ok,
                    details={"relative_errors": errors, "mu_before": b.mu, "mu_after": c.mu})


@claim(id="foundation.constructions.vary_delta_scales", paper="foundation",
       reference="fedtheory's construction (docs/problems.md, Special constructions)",
       statement="vary_delta(t) scales delta_A and delta_B exactly by t, keeps Abar, x* and zeta2, and keeps "
                 "per-client mu and L inside the original [mu, L]",
       kind="invariant", derived=True, instances=_vary_instances)
def check_vary_delta(inst: dict) -> Evidence:
    base = quadratic(**inst["base"])
    t = inst["scale"]
    p = vary_delta(base, t)
    b, c = base.certificate, p.certificate
    fl = EXACT_REL * b.L
    errors = {"delta_A": _rel_floor(c.delta_A, t * b.delta_A, fl), "delta_B": _rel_floor(c.delta_B, t * b.delta_B, fl),
              "zeta2": _rel_floor(c.zeta2, b.zeta2, _zeta2_floor(p)),
              "x_star": float(np.linalg.norm(c.x_star - b.x_star) / max(1.0, np.linalg.norm(b.x_star)))}
    window = c.mu >= b.mu - EXACT_REL * b.L and c.L <= b.L * (1 + EXACT_REL)
    ok = all(v <= IDENTITY_TOL for v in errors.values()) and window
    return Evidence(_describe("vary_delta", {**inst["base"], "t": t}), max(errors.values()), IDENTITY_TOL, ok,
                    details={"relative_errors": errors, "mu": [b.mu, c.mu], "L": [b.L, c.L]})


def _general_convex_instances(thorough: bool):
    yield dict(n_clients=5, dim=6, L=2.0, delta_B=0.5, zeta2=1.0, seed=1)
    yield dict(n_clients=8, dim=10, L=1.0, mu_range=1e-3, delta_A=0.1, zeta2=0.0, null_dim=3, seed=2)
    if thorough:
        yield dict(n_clients=30, dim=25, L=10.0, delta_A=1.0, zeta2=5.0, null_dim=5, seed=3)


@claim(id="foundation.constructions.general_convex_minimiser", paper="foundation",
       reference="fedtheory's construction (docs/problems.md, Special constructions)",
       statement="general_convex_quadratic: mu = mu_f = 0 exactly, every A_i annihilates the common null space, "
                 "bbar is orthogonal to it and the minimum-norm x* has ||grad f(x*)|| <= 1e-12 (relative)",
       kind="identity", derived=True, instances=_general_convex_instances)
def check_general_convex(kw: dict) -> Evidence:
    p = general_convex_quadratic(**kw)
    c = p.certificate
    k = kw.get("null_dim", 1)
    null_leak = float(np.abs(p.A[:, :, -k:]).max() + np.abs(p.b_bar[-k:]).max())
    ok = c.mu == 0.0 and c.mu_f == 0.0 and null_leak == 0.0 and c.kkt_residual <= EXACT_REL
    return Evidence(_describe("general_convex_quadratic", kw), c.kkt_residual, EXACT_REL, ok,
                    details={"mu": c.mu, "mu_f": c.mu_f, "null_leak": null_leak, "L": c.L})


def _outlier_instances(thorough: bool):
    yield dict(n_clients=2, dim=3, mu=0.1, L=1.0, delta_B=0.4, zeta2=0.5, seed=0)
    yield dict(n_clients=7, dim=4, mu=0.1, L=1.0, delta_B=0.4, zeta2=0.5, seed=1)
    yield dict(n_clients=26, dim=5, mu=1.0, L=50.0, delta_A=2.0, zeta2=0.0, seed=2)
    if thorough:
        yield dict(n_clients=401, dim=10, mu=0.01, L=1.0, delta_A=0.01, zeta2=1.0, seed=3)


@claim(id="foundation.constructions.outlier_ratio", paper="foundation",
       reference="fedtheory's construction (docs/problems.md, Special constructions)",
       statement="outlier_quadratic: delta_B / delta_A = sqrt(n - 1) with mu, L and the requested delta exact "
                 "(1e-10 relative)",
       kind="identity", derived=True, instances=_outlier_instances)
def check_outlier(kw: dict) -> Evidence:
    p = outlier_quadratic(**kw)
    c = p.certificate
    n = p.n_clients
    ratio = c.delta_B / c.delta_A
    which = "delta_A" if "delta_A" in kw else "delta_B"
    errors = {"ratio": _rel(ratio, np.sqrt(n - 1)), "mu": _rel_floor(c.mu, kw["mu"], EXACT_REL * c.L),
              "L": _rel(c.L, kw["L"]),
              which: _rel(getattr(c, which), kw[which])}
    return Evidence(_describe("outlier_quadratic", kw), ratio, float(np.sqrt(n - 1)),
                    all(v <= IDENTITY_TOL for v in errors.values()), details={"relative_errors": errors})


# ----- stochastic oracle -----

def _minibatch_instances(thorough: bool):
    yield dict(problem=dict(source="synthetic", n_clients=4, dim=5, samples=20, reg=1e-2, seed=0),
               batch_size=3, draws=4000)
    yield dict(problem=dict(source="digits", n_clients=3, partition="iid", reg=1e-2, seed=1), batch_size=8,
               draws=2000)


@claim(id="foundation.logistic.minibatch_unbiased", paper="foundation", reference="Jiang, Rodomanov & Stich "
       "2024, Assumption 1, eq. (5)",
       statement="minibatch gradients are unbiased with E||g_i - grad f_i||^2 = minibatch_variance (exact formula); "
                 "Monte Carlo z-scores of both stay below 5",
       kind="statistical", instances=_minibatch_instances)
def check_minibatch(inst: dict) -> Evidence:
    p = logistic(**inst["problem"]).with_minibatch(inst["batch_size"])
    rng = np.random.default_rng(0)
    X = p.certificate.x_star + rng.standard_normal((p.n_clients, p.dim))
    exact = p.grads(X)
    var = p.minibatch_variance(X)
    K = inst["draws"]
    S = np.stack([p.stochastic_grads(X, rng) for _ in range(K)])  # (K, n, d)
    dev = S - exact
    # mean: each coordinate's average deviation against its own standard error (sample sd / sqrt K)
    sd = dev.std(axis=0, ddof=1)
    z_mean = float(np.max(np.abs(dev.mean(axis=0)) / np.maximum(sd / np.sqrt(K), 1e-300)))
    sq = np.sum(dev * dev, axis=2)  # (K, n)
    z_var = float(np.max(np.abs(sq.mean(axis=0) - var) / (sq.std(axis=0, ddof=1) / np.sqrt(K))))
    z = max(z_mean, z_var)
    return Evidence(_describe("minibatch", {**inst["problem"], "batch_size": inst["batch_size"]}), z, Z_MONTE_CARLO, z < Z_MONTE_CARLO,
                    details={"z_mean": z_mean, "z_variance": z_var, "variance_exact": var})
