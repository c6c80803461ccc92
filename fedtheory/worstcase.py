"""Adversarial worst-case search: how close can *any* instance of a theorem's class get to its bound?

For a claim that declares its instance space (:class:`~fedtheory.claims.space.InstanceSpace`), maximise
measured / bound over the space: random admissible starts in the unit cube of the parameters, each refined by
Nelder-Mead (derivative-free; integer parameters are rounded, so the search moves between them through its
simplex) from the best random points, with a fixed budget of check evaluations. The budget is counted in evaluations, not seconds, so a
search is deterministic given its seed (on one machine). A found ratio > 1 is a counterexample to the
statement, reported with the point that attains it (reproducible in one call: ``claim(space.build(point))``).

The worst cases over whole function classes (performance estimation; for DANE and FedRed-GD a two-client
relaxation) are a separate module.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize

from .claims.registry import Claim, Evidence, NotAVerdict, judged_evidence
from .pep import claim_pep_tightness
from .validation import check_int

__all__ = ["SearchResult", "adversarial_search", "ratio_of"]


@dataclass(frozen=True)
class SearchResult:
    """The largest measured / bound found, the point attaining it, and what the search spent."""

    claim_id: str
    ratio: float
    point: dict[str, Any] | None
    evaluations: int
    seconds: float
    #: The claim's own verdict at ``point`` (its check compares with its stated tolerance, so a ratio of
    #: 1 + 1e-10 from rounding is not a counterexample; the verdict decides).
    holds_at_point: bool = True
    history: list[float] = field(default_factory=list)
    #: Evaluations whose check raised ValueError (an infeasible request, e.g. a delta the generator cannot
    #: reach): scored -inf and counted here, with the first such error, so a search that mostly failed says so.
    raised: int = 0
    first_error: str | None = None

    @property
    def counterexample(self) -> bool:
        return not self.holds_at_point

    def as_dict(self) -> dict[str, Any]:
        return {"claim": self.claim_id, "adversarial_tightness": self.ratio if math.isfinite(self.ratio) else None,
                "adversarial_instance": self.point, "holds_at_adversarial_instance": self.holds_at_point,
                "evaluations": self.evaluations, "raised_evaluations": self.raised, "first_error": self.first_error,
                "seconds": self.seconds}


def ratio_of(evidence: Evidence) -> float:
    """measured / bound of one piece of evidence: its tightness (-inf when the check reports none, e.g. an
    identity or a rate claim, which has no bound to approach)."""
    if evidence.tightness is not None and math.isfinite(evidence.tightness):
        return float(evidence.tightness)
    return -math.inf


def adversarial_search(claim: Claim, *, evaluations: int = 200, starts: int = 4, seed: int = 0,
                       include_defaults: bool = True) -> SearchResult:
    """Maximise measured / bound of ``claim`` over its instance space with ``evaluations`` checks.

    The default points are scored first (when ``include_defaults``); a third of the budget then goes to random
    points spread over ``starts`` problem seeds, and the rest to Nelder-Mead refinements from the best point of
    each seed. Points outside the theorem's regime, and points whose check raises ValueError (an infeasible
    request, e.g. a delta the generator cannot reach), score -inf.
    """
    space = claim.space
    if space is None:
        raise ValueError(f"claim {claim.id!r} declares no instance space (space=...): nothing to search")
    evaluations = check_int("evaluations", evaluations, low=1)
    if space.max_evaluations is not None:  # a slow check declares its own cap (60 s per claim)
        evaluations = min(evaluations, space.max_evaluations)
    starts = check_int("starts", starts, low=1)
    rng = np.random.default_rng(check_int("seed", seed, low=0))
    start_time = time.perf_counter()
    best: tuple[float, dict | None] = (-math.inf, None)
    history: list[float] = []
    used = 0
    raised: list[str] = []

    def evaluate_point(point: dict) -> float:
        nonlocal best, used
        used += 1
        try:
            value = ratio_of(claim.check(space.build(dict(point))))
        except ValueError as exc:
            raised.append(f"{type(exc).__name__} at {point}: {exc}")
            return -math.inf
        history.append(value)
        if value > best[0]:
            best = (value, point)
        return value

    def score(u: np.ndarray, extra: dict) -> float:
        nonlocal used
        point = space.point(np.clip(u, 0.0, 1.0), **extra)
        if not space.admissible(point):
            used += 1  # an inadmissible point spends budget too, as before
            return -math.inf
        return evaluate_point(point)

    if include_defaults:
        for point in space.defaults:
            if space.admissible(dict(point)):
                evaluate_point(dict(point))
    # Phase 1, exploration: a third of the budget on random points, each with one of ``starts`` problem seeds.
    # Phase 2, refinement: Nelder-Mead from the best point of each seed, the seed held fixed (so the objective
    # is a deterministic function of the continuous parameters), sharing the rest of the budget.
    seeds = list(range(starts)) if "seed" in space.fixed else [None] * starts
    best_start: dict[int, tuple[float, np.ndarray]] = {}
    for i in range(max(0, evaluations // 3 - used)):
        k = i % starts
        extra = {} if seeds[k] is None else {"seed": seeds[k]}
        u = space.random_unit(rng)
        value = score(u, extra)
        if k not in best_start or value > best_start[k][0]:
            best_start[k] = (value, u)
    ranked = sorted(best_start.items(), key=lambda item: -item[1][0])
    per_start = max(1, (evaluations - used) // max(1, len(ranked)))
    for k, (_, u0) in ranked:
        if used >= evaluations:
            break
        extra = {} if seeds[k] is None else {"seed": seeds[k]}
        budget = min(per_start, evaluations - used)
        optimize.minimize(lambda u: -score(u, extra), u0, method="Nelder-Mead",
                          options={"maxfev": budget, "xatol": 1e-4, "fatol": 1e-9})
    holds = True if best[1] is None else _holds(claim, best[1])
    return SearchResult(claim.id, best[0], best[1], used, time.perf_counter() - start_time, holds, history,
                        raised=len(raised), first_error=raised[0] if raised else None)


def _holds(claim: Claim, point: dict) -> bool:
    """The claim's verdict at ``point`` as the ledger judges it (:func:`fedtheory.claims.registry.judged_evidence`):
    a bound claim saying "holds" with measured above its bound does not hold here either."""
    try:
        return bool(judged_evidence(claim, claim.check(claim.space.build(dict(point)))).holds)
    except NotAVerdict:
        return False


def pep_worst_case(claim: Claim) -> float | None:
    """The worst case over the whole function class (performance estimation, :mod:`fedtheory.pep`; exact, or for
    DANE and FedRed-GD an upper bound over the two-client relaxation) as a
    fraction of the claim's bound: the largest PEP value / bound over the claim's default points. None where no
    PEP formulation applies or the optional ``worst-case`` extra (PEPit) is not installed."""
    return claim_pep_tightness(claim)
