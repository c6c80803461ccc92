"""Public hypothesis strategies for fedtheory's problems and parameters.

Users property-test their own algorithms with the same generators fedtheory's tests use::

    from hypothesis import given
    from fedtheory.strategies import quadratic_problems

    @given(quadratic_problems(max_clients=6, max_dim=5))
    def test_my_method_converges(problem):
        ...

Every strategy draws the *request* (n, d, mu, L, delta, zeta2, seed) and builds the instance with the exact
generator; the certificate then holds the constants the instance really has. Points of a claim's own instance
space come from ``space.strategy()`` (:class:`fedtheory.extend.InstanceSpace`).
"""
from __future__ import annotations

from typing import Literal

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover
    raise ImportError("fedtheory.strategies needs hypothesis: pip install 'fedtheory[test]'") from exc

from .problems.logistic import logistic
from .problems.nonconvex import nonconvex
from .problems.quadratic import QuadraticProblem, quadratic

__all__ = ["quadratic_params", "quadratic_problems", "logistic_perturbed_params", "logistic_params",
           "logistic_problems", "nonconvex_params", "nonconvex_problems"]


@st.composite
def quadratic_params(draw, *, min_clients: int = 2, max_clients: int = 8, min_dim: int = 2, max_dim: int = 6,
                     max_condition: float = 100.0, dissimilarity: Literal["delta_A", "delta_B"] | None = None,
                     max_zeta2: float = 10.0, hessians: tuple[str, ...] = ("dense", "diagonal")) -> dict:
    """Keyword arguments for :func:`fedtheory.problems.quadratic` in a feasible region.

    The dissimilarity is drawn as a fraction of (L - mu) small enough to be provably feasible for the
    generator: as its scale t grows, the generator reaches delta / (L - mu) -> delta(G) / (spread of G's
    eigenvalues) >= 1/2 for delta_B and >= 1/(2 sqrt(n)) for delta_A (spread <= 2 delta_B(G) <= 2 sqrt(n)
    delta_A(G)). So delta_B <= 0.4 (L - mu) and delta_A <= 0.4 (L - mu) / sqrt(n) are always feasible.
    (The earlier bound 0.4 (L - mu) for delta_A was not: n=4, d=2, diagonal, delta_A=0.375 is infeasible.)
    """
    n = draw(st.integers(min_clients, max_clients))
    d = draw(st.integers(min_dim, max_dim))
    mu = draw(st.floats(1e-2, 1.0))
    # kappa >= 1 + 1e-3: a spread L - mu of a few eps (kappa = 1 + 2e-16) would make every delta <= L - mu a
    # rounding-level number, which the certificate's rounding policy reports as 0 (not a heterogeneous instance).
    kappa = draw(st.floats(1.0 + 1e-3, max_condition)) if max_condition > 1.0 + 1e-3 else 1.0
    L = mu * kappa
    which = dissimilarity or draw(st.sampled_from(["delta_A", "delta_B"]))
    frac_max = 0.4 if which == "delta_B" else 0.4 / n ** 0.5
    frac = draw(st.one_of(st.just(0.0), st.floats(1e-3, frac_max))) if n > 1 else 0.0
    zeta2 = draw(st.one_of(st.just(0.0), st.floats(1e-3, max_zeta2))) if n > 1 else 0.0
    return {"n_clients": n, "dim": d, "mu": mu, "L": L, which: frac * (L - mu), "zeta2": zeta2,
            "hessians": draw(st.sampled_from(list(hessians))), "seed": draw(st.integers(0, 2**31 - 1))}


@st.composite
def quadratic_problems(draw, **kwargs) -> QuadraticProblem:
    """Exact heterogeneous quadratics (see :func:`quadratic_params` for the keyword arguments)."""
    return quadratic(**draw(quadratic_params(**kwargs)))


# ----- logistic and non-convex families (foundation helper) -----

@st.composite
def logistic_perturbed_params(draw, *, min_clients: int = 2, max_clients: int = 6, min_dim: int = 2,
                              max_dim: int = 5) -> dict:
    """Keyword arguments for :func:`fedtheory.problems.logistic_perturbed` (exact-delta logistic)."""
    n = draw(st.integers(min_clients, max_clients))
    which = draw(st.sampled_from(["delta_A", "delta_B"]))
    return {"n_clients": n, "dim": draw(st.integers(min_dim, max_dim)), "reg": draw(st.floats(1e-2, 1.0)),
            which: draw(st.one_of(st.just(0.0), st.floats(1e-3, 2.0))),
            "zeta2": draw(st.one_of(st.just(0.0), st.floats(1e-3, 5.0))),
            "samples": draw(st.integers(5, 40)), "seed": draw(st.integers(0, 2**31 - 1))}


@st.composite
def logistic_params(draw, *, min_clients: int = 1, max_clients: int = 6, max_dim: int = 5,
                    max_samples: int = 30) -> dict:
    """Keyword arguments for :func:`fedtheory.problems.logistic` on small Synthetic(alpha, beta) data."""
    n = draw(st.integers(min_clients, max_clients))
    return {"source": "synthetic", "n_clients": n, "dim": draw(st.integers(1, max_dim)),
            "alpha": draw(st.floats(0.0, 1.0)), "beta": draw(st.floats(0.0, 1.0)),
            "samples": draw(st.integers(1, max_samples)), "reg": draw(st.floats(1e-3, 1.0)),
            "weights": draw(st.sampled_from(["size", "uniform"])), "seed": draw(st.integers(0, 2**31 - 1))}


@st.composite
def logistic_problems(draw, **kwargs):
    """Small federated logistic regressions (Synthetic data) with their Newton certificates."""
    return logistic(**draw(logistic_params(**kwargs)))


@st.composite
def nonconvex_params(draw, *, min_clients: int = 1, max_clients: int = 6, min_dim: int = 1,
                     max_dim: int = 5) -> dict:
    """Keyword arguments for :func:`fedtheory.problems.nonconvex` (exact-delta non-convex family)."""
    n = draw(st.integers(min_clients, max_clients))
    which = draw(st.sampled_from(["delta_A", "delta_B"]))
    return {"n_clients": n, "dim": draw(st.integers(min_dim, max_dim)), "curvature": draw(st.floats(0.1, 2.0)),
            "nu": draw(st.floats(1e-2, 1.0)), which: draw(st.floats(1e-3, 2.0)) if n > 1 else 0.0,
            "zeta2": draw(st.floats(0.0, 5.0)) if n > 1 else 0.0, "mean_linear": draw(st.floats(0.0, 3.0)),
            "seed": draw(st.integers(0, 2**31 - 1))}


@st.composite
def nonconvex_problems(draw, **kwargs):
    """Non-convex problems with exact delta, mu (weak convexity), L and f*."""
    return nonconvex(**draw(nonconvex_params(**kwargs)))
