"""Claims about the problem generators and certificates (the ground every other claim stands on)."""
from __future__ import annotations

import numpy as np

from ...problems.quadratic import QuadraticProblem, quadratic
from ..registry import Evidence, claim
from ..space import quadratic_space
from ..tolerances import EXACT_REL, IDENTITY_TOL, ITERATE_REL

__all__: list[str] = []


#: The quadratic generator's class (uniform weights): any feasible (n, d, mu, L, delta, zeta2).
_QUAD_SPACE = quadratic_space(
    defaults=(dict(n_clients=5, dim=4, mu=0.1, L=1.0, delta_B=0.2, zeta2=1.0, seed=0),
              dict(n_clients=8, dim=6, mu=1.0, L=100.0, delta_A=10.0, zeta2=5.0, seed=1),
              dict(n_clients=3, dim=5, mu=0.5, L=2.0, delta_B=0.6, zeta2=0.0, hessians="diagonal", seed=2),
              dict(n_clients=20, dim=10, mu=0.01, L=1.0, delta_A=0.05, zeta2=3.0, seed=3)),
    thorough=tuple(dict(n_clients=50, dim=20, mu=1e-3, L=10.0, delta_B=2.0, zeta2=1.0, seed=s) for s in range(5)))


#: The same class with any client weights (the sandwich below is a uniform-weight statement): constants and
#: optimality are claimed for every weight vector, so one instance has unequal weights.
_QUAD_WEIGHTED_SPACE = quadratic_space(
    defaults=(*_QUAD_SPACE.defaults,
              dict(n_clients=4, dim=5, mu=0.2, L=3.0, delta_A=0.5, zeta2=2.0, weights=(0.1, 0.2, 0.3, 0.4), seed=4)),
    thorough=_QUAD_SPACE.thorough)


def _describe(kw: dict) -> str:
    return "quadratic(" + ", ".join(f"{k}={v}" for k, v in kw.items()) + ")"


@claim(id="foundation.quadratic.constants_exact", paper="foundation",
       reference="Jiang, Rodomanov & Stich 2024, Defs. 1-2 specialised to quadratics; the construction and closed "
                 "forms are fedtheory's (docs/problems.md)",
       statement="quadratic() builds instances whose certified mu, L, delta_A or delta_B and zeta2 equal the "
                 "requested values to 1e-10 relative, for any client weights",
       kind="identity", space=_QUAD_WEIGHTED_SPACE)
def check_quadratic_constants(kw: dict) -> Evidence:
    problem = quadratic(**kw)
    c = problem.certificate
    errors = {}
    for name in ("mu", "L", "delta_A", "delta_B", "zeta2"):
        if name in kw:
            want = kw[name]
            errors[name] = abs(getattr(c, name) - want) / max(abs(want), 1e-300) if want else abs(getattr(c, name))
    worst = max(errors.values())
    # Absolute floors: a requested zero cannot survive floating-point arithmetic (1e-12 of L), and
    # grad f_i(x*) = A_i x* - b_i is resolved only to ~1e-16 ||A_i x*||, so zeta2 has an absolute floor too.
    floor = {k: EXACT_REL * c.L for k in errors}
    floor["zeta2"] = (1e-14 * c.L * max(1.0, float(np.linalg.norm(c.x_star)))) ** 2
    ok = all(errors[k] <= IDENTITY_TOL or abs(getattr(c, k) - kw[k]) <= floor[k] for k in errors)
    return Evidence(_describe(kw), worst, IDENTITY_TOL, ok,
                    details={"relative_errors": errors})


@claim(id="foundation.quadratic.kkt", paper="foundation",
       reference="quadratic optimality, x* = Abar^{-1} bbar (docs/problems.md)",
       statement="the certificate's x* is a minimiser: ||grad f(x*)|| <= 1e-12 (relative) and "
                 "f(x) - f* = 1/2 (x-x*)^T Abar (x-x*) >= 0, for any client weights",
       kind="identity", space=_QUAD_WEIGHTED_SPACE)
def check_quadratic_kkt(kw: dict) -> Evidence:
    problem = quadratic(**kw)
    c = problem.certificate
    rng = np.random.default_rng(0)
    x = c.x_star + rng.standard_normal(problem.dim)
    direct = problem.value(x) - c.f_star
    closed = problem.gap(x)
    agree = abs(direct - closed) <= ITERATE_REL * max(1.0, abs(c.f_star), closed)
    return Evidence(_describe(kw), c.kkt_residual, EXACT_REL, c.kkt_residual <= EXACT_REL and agree,
                    details={"gap_closed_form": closed, "gap_direct": direct})


@claim(id="foundation.dissimilarity.sandwich", paper="foundation",
       reference="Jiang, Rodomanov & Stich 2024, Section 3 after Def. 2 (delta_A up to sqrt(n) times smaller than "
                 "delta_B); the two-sided bound is derived by fedtheory (not stated in the paper)",
       statement="delta_A <= delta_B <= sqrt(n) delta_A (uniform weights), and delta_B <= L - mu",
       kind="bound", derived=True, space=_QUAD_SPACE)
def check_sandwich(kw: dict) -> Evidence:
    problem = quadratic(**kw)
    c = problem.certificate
    n = problem.n_clients
    upper = np.sqrt(n) * c.delta_A
    ok = (c.delta_A <= c.delta_B * (1 + EXACT_REL) and c.delta_B <= upper * (1 + EXACT_REL)
          and c.delta_B <= (c.L - c.mu) * (1 + EXACT_REL))
    return Evidence(_describe(kw), c.delta_B, upper, ok, tightness=c.delta_B / upper if upper > 0 else None)


def _outlier_instances(thorough: bool):
    for n in ([2, 5, 17] + ([50, 200] if thorough else [])):
        yield n


@claim(id="foundation.dissimilarity.outlier_ratio", paper="foundation",
       reference="fedtheory's outlier construction (docs/problems.md), attaining the sqrt(n) gap of Jiang, "
                 "Rodomanov & Stich 2024, Section 3",
       statement="one outlier client (G_1 = (n-1)M, G_j = -M) gives delta_B / delta_A = sqrt(n-1) exactly",
       kind="identity", derived=True, instances=_outlier_instances)
def check_outlier_ratio(n: int) -> Evidence:
    d = 3
    M = np.diag([1.0, 0.5, -0.25])
    E = np.stack([(n - 1) * M] + [-M] * (n - 1)) * 0.1
    A = E + 2.0 * np.eye(d)
    problem = QuadraticProblem(A, np.ones((n, d)))
    ratio = problem.certificate.delta_B / problem.certificate.delta_A
    want = np.sqrt(n - 1)
    return Evidence(f"outlier n={n}", ratio, want, abs(ratio - want) <= IDENTITY_TOL * want)
