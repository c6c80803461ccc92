"""Instance spaces: a claim's theorem class as parameters with ranges and the theorem's regime.

A claim declares *where its statement is supposed to hold* -- the parameters of the theorem's class (n, d,
mu, L, delta, step sizes, ...) with their ranges, the regime constraints of the theorem, and how a point of
the space becomes the instance its check takes -- instead of only a list of default instances. The ledger's
default instances (``fedtheory verify``) and the adversarial worst-case search (:mod:`fedtheory.worstcase`)
both derive from this one declaration (docs/worst-case.md).

Points are plain dicts (JSON-serialisable), so an instance found by a search is reproducible in one call:
``claim(space.build(point))``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

__all__ = ["Param", "InstanceSpace"]


@dataclass(frozen=True)
class Param:
    """One continuous or integer parameter on [low, high] (log scale when ``log``)."""

    name: str
    low: float
    high: float
    log: bool = False
    integer: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low <= self.high):
            raise ValueError(f"parameter {self.name}: need finite low <= high, got [{self.low}, {self.high}]")
        if self.log and self.low <= 0:
            raise ValueError(f"parameter {self.name}: a log-scale range needs low > 0, got {self.low}")

    def from_unit(self, u: float) -> float | int:
        """The value at position u in [0, 1] (clipped) of the range."""
        u = min(max(float(u), 0.0), 1.0)
        if self.log:
            value = math.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low)))
        else:
            value = self.low + u * (self.high - self.low)
        value = min(max(value, self.low), self.high)
        return int(round(value)) if self.integer else value


@dataclass(frozen=True)
class InstanceSpace:
    """The theorem's instance class of a claim.

    Attributes
    ----------
    params:
        The searched parameters.
    build:
        point (dict) -> the instance the claim's check takes (default: the point itself, for checks that take
        a keyword dict).
    regime:
        point -> True when the point satisfies the theorem's assumptions (None: every point does).
    fixed:
        Values merged into every point (e.g. the problem seed held fixed during a local search).
    defaults, thorough:
        The ledger's default points (``thorough`` adds these under ``--thorough``).
    max_evaluations:
        A cap on the adversarial search's budget of check evaluations for claims whose check is slow (at most
        60 s per claim, docs/worst-case.md); None: the caller's budget.
    """

    params: Sequence[Param]
    build: Callable[[dict], Any] = dict
    regime: Callable[[dict], bool] | None = None
    fixed: Mapping[str, Any] = field(default_factory=dict)
    defaults: Sequence[Mapping[str, Any]] = ()
    thorough: Sequence[Mapping[str, Any]] = ()
    max_evaluations: int | None = None

    def point(self, u: Sequence[float], **extra: Any) -> dict:
        """The point at unit-cube coordinates ``u`` (one per parameter), plus ``fixed`` and ``extra``."""
        if len(u) != len(self.params):
            raise ValueError(f"u must have {len(self.params)} coordinates, got {len(u)}")
        return {**self.fixed, **{p.name: p.from_unit(x) for p, x in zip(self.params, u)}, **extra}

    def check_defaults(self, owner: str = "space") -> None:
        """ValueError naming ``owner`` and the point when a default (or thorough) point lacks a parameter, has a
        key that is neither a parameter nor fixed, puts a parameter outside its range, or is outside the regime.

        For spaces whose default points are parameter points (a researcher's claims); some built-in spaces list
        their defaults in the check's own keywords instead and do not call this.
        """
        names = {p.name for p in self.params}
        known = names | set(self.fixed)
        for point in [*self.defaults, *self.thorough]:
            if not isinstance(point, Mapping):
                raise TypeError(f"{owner}: a default point must be a dict of the parameters, got {point!r}")
            missing = sorted(names - set(point))
            unknown = sorted(set(point) - known)
            if missing or unknown:
                raise ValueError(f"{owner}: default point {dict(point)} "
                                 + (f"lacks the parameter(s) {missing}" if missing else "")
                                 + ("; " if missing and unknown else "")
                                 + (f"has key(s) {unknown} that are not parameters of the space "
                                    f"({sorted(names)}) nor fixed" if unknown else ""))
            for p in self.params:
                v = point[p.name]
                if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                        or not (p.low <= v <= p.high):
                    raise ValueError(f"{owner}: default point {dict(point)} has {p.name}={v!r}, outside its range "
                                     f"[{p.low}, {p.high}]")
            if not self.admissible(point):
                raise ValueError(f"{owner}: default point {dict(point)} is outside the theorem's regime")

    def admissible(self, point: Mapping[str, Any]) -> bool:
        return self.regime is None or bool(self.regime(dict(point)))

    def instances(self, thorough: bool = False) -> Iterator[Any]:
        """The ledger's default instances (every default point must satisfy the regime)."""
        for point in list(self.defaults) + (list(self.thorough) if thorough else []):
            if not self.admissible(point):
                raise ValueError(f"default point {dict(point)} is outside the theorem's regime")
            yield self.build(dict(point))

    def random_unit(self, rng: np.random.Generator) -> np.ndarray:
        return rng.random(len(self.params))

    def strategy(self) -> Any:
        """A hypothesis strategy of admissible points: each parameter in its range (integers uniform, floats
        uniform or log-uniform when ``log``), ``fixed`` merged in, points outside ``regime`` filtered out.

        The same declaration as the ledger's defaults and the adversarial search, so a property test draws
        from exactly the theorem's class. hypothesis is imported here, not at module import: the
        core package does not require it.
        """
        from hypothesis import strategies as st

        fields = {p.name: _param_strategy(st, p) for p in self.params}
        fixed = dict(self.fixed)
        return st.fixed_dictionaries(fields).map(lambda drawn: {**fixed, **drawn}).filter(self.admissible)


def _param_strategy(st: Any, p: Param) -> Any:
    """hypothesis strategy for one parameter (``st`` is ``hypothesis.strategies``)."""
    if p.log:
        # Log-uniform: uniform in log space, mapped back and clipped (exp(log(high)) may round past high).
        lo, hi = math.log(p.low), math.log(p.high)
        values = st.floats(lo, hi, allow_nan=False, allow_infinity=False).map(
            lambda x: min(max(math.exp(x), p.low), p.high))
        return values.map(lambda v: int(round(v))) if p.integer else values
    if p.integer:
        return st.integers(int(math.ceil(p.low)), int(math.floor(p.high)))
    return st.floats(p.low, p.high, allow_nan=False, allow_infinity=False)


def quadratic_space(*, defaults: Sequence[Mapping[str, Any]], thorough: Sequence[Mapping[str, Any]] = (),
                    extra: Sequence[Param] = (), dissimilarity: str = "delta_A", mu_low: float = 1e-2,
                    max_condition: float = 1e3, regime: Callable[[dict], bool] | None = None,
                    min_delta_fraction: float = 0.01, make: Callable[[dict], Any] | None = None) -> InstanceSpace:
    """The class of heterogeneous federated quadratics of :func:`fedtheory.problems.quadratic` as a space.

    Parameters: n_clients in [2, 10], dim in [2, 12], mu in [mu_low, 1] (log), kappa = L/mu in
    [1 + 1e-3, max_condition] (log), the dissimilarity as a fraction of its always-feasible range
    (delta_B <= 0.4 (L - mu), delta_A <= 0.4 (L - mu)/sqrt(n); see :func:`fedtheory.strategies.quadratic_params`),
    bounded below by ``min_delta_fraction`` so the instance is heterogeneous, and zeta2 in [0, 10]; plus
    ``extra`` algorithm parameters. A point builds the keyword dict the claims' checks take (the problem's
    generator arguments plus the extra parameters; the default points are such dicts already), passed through
    ``make`` when the check takes something else (e.g. the generated problem).
    """
    def build(point: dict) -> Any:
        kw = _keywords(point)
        return kw if make is None else make(kw)

    def _keywords(point: dict) -> dict:
        if "kappa" not in point:  # a default point: already the check's keyword dict
            return dict(point)
        n = int(point["n_clients"])
        mu = float(point["mu"])
        L = mu * float(point["kappa"])
        cap = 0.4 * (L - mu) / (math.sqrt(n) if dissimilarity == "delta_A" else 1.0)
        out = {"n_clients": n, "dim": int(point["dim"]), "mu": mu, "L": L,
               dissimilarity: float(point["delta_fraction"]) * cap, "zeta2": float(point["zeta2"]),
               "seed": int(point.get("seed", 0))}
        out.update({p.name: point[p.name] for p in extra})
        return out

    params = (Param("n_clients", 2, 10, integer=True), Param("dim", 2, 12, integer=True),
              Param("mu", mu_low, 1.0, log=True), Param("kappa", 1.0 + 1e-3, max_condition, log=True),
              Param("delta_fraction", min_delta_fraction, 1.0), Param("zeta2", 0.0, 10.0), *extra)
    return InstanceSpace(params=params, build=build, regime=regime, fixed={"seed": 0}, defaults=tuple(defaults),
                         thorough=tuple(thorough))
