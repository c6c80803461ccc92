"""ProxSkip / Scaffnew (Mishchenko et al. 2022): the expected Lyapunov contraction of Theorem 3.6, computed exactly
over both coin outcomes, and the measured behaviour of the partial-participation variant.

Theorem 3.6's factor 1 - min(gamma mu, p^2) against the exact worst case: over every n-client problem with
mu-strongly convex L-smooth f_i and gamma <= 1/L, the worst E[Psi_{t+1}] / Psi_t is max(1 - p^2, (1 - gamma mu)^2)
(:func:`fedtheory.pep.proxskip_lyapunov`), so the factor is tight exactly when p^2 <= gamma mu and strictly loose
otherwise. ``tests/test_pep.py`` asserts both over a grid of (gamma, p); it is a test rather than a claim because
it needs the optional PEPit, and the claim below declares the same formulation (``pep=``) for
``verify --worst-case``."""
from __future__ import annotations

import numpy as np

from ... import pep
from ...algorithms.scaffnew import Scaffnew, ScaffnewState
from ...participation import Bernoulli, UniformSubset
from ...problems.base import Problem
from ...problems.quadratic import quadratic
from ...theory.classic import proxskip_contraction, proxskip_lyapunov
from ..patterns import expectation, trajectory
from ..registry import Evidence, claim
from ..space import Param, quadratic_space
from ..tolerances import EXACT_REL, IDENTITY_TOL
from ._shared import PAPER, SMALL_QUADRATICS, describe, heterogeneous, iterate, scale_of

__all__: list[str] = []

def proxskip_instance(kw: dict) -> tuple[Problem, float, float, str]:
    problem = quadratic(**{k: v for k, v in kw.items() if k not in ("gamma_L", "p", "h_init")})
    return problem, kw["gamma_L"] / problem.certificate.L, kw["p"], kw.get("h_init", "zero")


#: Theorem 3.6's class: mu-strongly convex L-smooth clients (quadratics), gamma <= 1/L, p in (0, 1]; any start
#: (h_init="gradient" is the authors' code's h^0; docs/fedred.md, "fedtheory vs the authors' code").
PROXSKIP_SPACE = quadratic_space(
    defaults=tuple({**kw, "gamma_L": 1.0, "p": p} for kw in SMALL_QUADRATICS for p in (0.2, 0.5, 1.0))
    + ({**SMALL_QUADRATICS[0], "gamma_L": 1.0, "p": 0.5, "h_init": "gradient"},),
    thorough=tuple({**kw, "gamma_L": 0.3, "p": 0.1} for kw in SMALL_QUADRATICS),
    extra=(Param("gamma_L", 0.05, 1.0), Param("p", 0.02, 1.0, log=True)), make=proxskip_instance)


def proxskip_worst_case(instance: tuple[Problem, float, float, str]) -> tuple[float, float]:
    """(PEP value, bound) at a point of Theorem 3.6's class: the exact worst E[Psi_{t+1}] / Psi_t over every
    n-client problem with mu-strongly convex L-smooth f_i (:func:`fedtheory.pep.proxskip_lyapunov`), against the
    theorem's factor 1 - min(gamma mu, p^2)."""
    problem, gamma, p = instance[0], instance[1], instance[2]
    c = problem.certificate
    return pep.proxskip_lyapunov(c.mu, c.L, gamma, p, problem.n_clients), proxskip_contraction(c.mu, c.L, gamma, p)


@claim(id="classic.scaffnew.expected_contraction", paper=PAPER,
       reference="Mishchenko et al. 2022, Thm 3.6 (ProxSkip) applied to Scaffnew",
       statement="For mu-strongly convex L-smooth f_i, gamma <= 1/L, p in (0, 1]: E[Psi_{t+1} | state_t] <= "
                 "(1 - min{gamma mu, p^2}) Psi_t, Psi = sum_i w_i ||x_i - x*||^2 + (gamma/p)^2 sum_i w_i "
                 "||h_i - grad f_i(x*)||^2; expectation computed exactly over both coin outcomes at 60 states "
                 "along a sampled trajectory (full participation)",
       kind="bound", space=PROXSKIP_SPACE, pep=proxskip_worst_case, runs=("scaffnew",))
def check_scaffnew_contraction(instance: tuple[Problem, float, float, str]) -> Evidence:
    problem, gamma, p, h_init = instance
    c = problem.certificate
    alg = Scaffnew(step=gamma, p=p, h_init=h_init)
    q = proxskip_contraction(c.mu, c.L, gamma, p)
    xs = c.x_star
    H_star = problem.grads(problem.broadcast(xs))
    w = problem.weights

    def psi(state: ScaffnewState) -> float:
        return proxskip_lyapunov(state.X, state.H, xs, H_star, gamma, p, w)

    worst = 0.0
    for state in trajectory(alg, problem, alg.init(problem, np.zeros(problem.dim)), 60, np.random.default_rng(0),
                            potential=psi):
        worst = max(worst, expectation(alg, problem, state, psi) / psi(state))
    start = "" if h_init == "zero" else f" h_init={h_init}"
    return Evidence(f"{describe(problem)} gamma={gamma:.3g} p={p}{start}", worst, q, worst <= q * (1 + EXACT_REL),
                    tightness=worst / q)


@claim(id="classic.scaffnew.partial_participation", paper=PAPER, reference="this library's variant "
       "(fedtheory.algorithms.scaffnew); no theorem",
       statement="Scaffnew with partial participation (participants average among themselves at a communication "
                 "and update their h_i) -- measured: final ||x - x*|| (relative) after 6000 iterations; with a "
                 "single participant no information is exchanged, so it cannot converge",
       kind="qualitative", instances=heterogeneous, expected="exploratory", runs=("scaffnew",))
def check_scaffnew_partial(problem: Problem) -> Evidence:
    """Measured only (no theorem); the default instances are the quadratics."""
    scale = scale_of(problem)
    errs = {}
    for scheme in (UniformSubset(max(1, problem.n_clients // 2)), UniformSubset(min(2, problem.n_clients)),
                   Bernoulli(0.5)):
        alg = Scaffnew(step=1.0 / problem.certificate.L, p=0.5, participation=scheme)
        state = iterate(alg, problem, 6000, stop_dist=1e-12 * scale)
        errs[repr(scheme)] = float(np.linalg.norm(state.x - problem.certificate.x_star)) / scale
    worst = max(errs.values())
    return Evidence(describe(problem), worst, IDENTITY_TOL, worst <= IDENTITY_TOL, details=errs)
