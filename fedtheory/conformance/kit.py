"""The conformance kit's vocabulary: properties, their outcomes, the problems they draw, and how to run a round.

A *property* is a check ``check(impl, case, hyper, rtol) -> Outcome`` declared where it is written::

    @prop(id="fedavg.one_round", family="fedavg", reference="McMahan et al. 2017, Alg. 1",
          statement="one round equals x + eta_g sum a_i N_i (b_i - A_i x) on quadratics", cases=plain_cases)
    def one_round(impl, case, hyper, rtol) -> Outcome:
        ...

``cases(hyper)`` is the hypothesis strategy of its *cases* (instance parameters plus the round's own draws);
``case`` is one drawn dict, ``hyper`` the family's hyperparameters, ``rtol`` the identity tolerance. A family is
a package ``fedtheory/conformance/families/<family>/`` whose ``__init__`` declares ``HYPER`` (the defaults) and
imports the modules that declare its properties (with :func:`fedtheory.conformance.families.registry.prop`);
:func:`fedtheory.conformance.families.properties_of` loads it on first use. This module is the vocabulary only: it
imports nothing that imports it back (the registry and the loader live with the families).

An :class:`Outcome` speaks the claims ledger's words (:class:`fedtheory.claims.registry.Evidence`): a property
*holds* or is *violated* on a case (``Evidence.holds`` True / False), with the two numbers compared
(``measured`` against ``theory``: the tolerance, or the theory's value) and ``details`` (the diagnosis of a
violation); it is *not applicable* when the implementation does not expose what the property needs (an opaque
state, another averaging), like a claim whose ``applies`` is false on an instance. ``instance`` names the case.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover -- hypothesis is the optional test extra
    raise ImportError("fedtheory conform needs hypothesis: pip install 'fedtheory[test]'") from exc

from .contract import call_round
from .instance import ID_SCHEMES, Instance, client_ids, instance_params_of, make_instance
from .tolerances import IDENTITY_RTOL

__all__ = ["HOLDS", "VIOLATED", "NOT_APPLICABLE", "Outcome", "outcome", "not_applicable", "Property", "Variant",
           "instance_params", "one_round_L", "plain_cases", "cases_with", "instance_of", "round_hyper", "run_round",
           "scale_of", "relative_error", "identity", "MAX_CLIENTS"]

HOLDS, VIOLATED, NOT_APPLICABLE = "holds", "violated", "not applicable"
#: The most clients an instance of the kit's plain cases has.
MAX_CLIENTS = 6


@dataclass(frozen=True)
class Outcome:
    """One property on one case: ``status`` is "holds", "violated" or "not applicable"; ``measured`` is compared
    with ``theory``; ``details`` is the diagnosis of a violation or why the property does not apply."""

    status: str
    measured: float
    theory: float
    details: str = ""
    instance: str = ""

    def __post_init__(self) -> None:
        if self.status not in (HOLDS, VIOLATED, NOT_APPLICABLE):
            raise ValueError(f"status must be {HOLDS!r}, {VIOLATED!r} or {NOT_APPLICABLE!r}, got {self.status!r}")

    @property
    def holds(self) -> bool:
        return self.status == HOLDS

    @property
    def violated(self) -> bool:
        return self.status == VIOLATED

    @property
    def applicable(self) -> bool:
        return self.status != NOT_APPLICABLE


def outcome(holds: bool, measured: float, theory: float, diagnosis: str = "") -> Outcome:
    """"holds" or "violated" (with ``diagnosis``, which is dropped when the property holds)."""
    return Outcome(HOLDS, measured, theory) if holds else Outcome(VIOLATED, measured, theory, diagnosis)


def not_applicable(why: str) -> Outcome:
    return Outcome(NOT_APPLICABLE, float("nan"), float("nan"), why)


@dataclass(frozen=True)
class Property:
    """A checkable statement of a paper: its id ("family.name"), source, statement, cases and check.

    ``expensive`` properties (convergence runs, Monte Carlo) get fewer hypothesis examples by default. ``core``
    properties are what a verdict rests on: they compare the implementation's own output with the paper's on every
    implementation the contract allows (an opaque state included); a report whose core property did not apply is
    "inconclusive", never "pass" (:attr:`fedtheory.conformance.search.Report.verdict`)."""

    id: str
    family: str
    reference: str
    statement: str
    cases: Callable[[Mapping[str, Any]], st.SearchStrategy]
    check: Callable[[Any, Mapping[str, Any], Mapping[str, Any], float], Outcome]
    expensive: bool = False
    core: bool = False
    #: How many cases at most, whatever the caller's ``max_examples``: 1 for a statistical test that controls its
    #: own false-rejection rate (each more case would add that rate again).
    examples: int | None = None


@dataclass(frozen=True)
class Variant:
    """An implementation of the power set (``families/<family>/variants.py``): the kit must reject it (``WRONG``)
    or accept it (``CORRECT``) when checked as ``family`` with ``hyper`` and ``rtol``."""

    family: str
    name: str
    impl: Callable[..., Any]
    hyper: Mapping[str, Any] = field(default_factory=dict)
    rtol: float = IDENTITY_RTOL


# ----------------------------------------------------------------- case strategies

@st.composite
def instance_params(draw, hyper: Mapping[str, Any], *, L_max: float, kappa_max: float = 50.0, min_clients: int = 1,
                    max_clients: int = MAX_CLIENTS, max_dim: int = 50, heterogeneous: bool = False) -> dict:
    """Instance parameters: n, d (1..50, small favoured so shrinking goes there), mu, L, delta, zeta2, sizes, and
    the clients' ids (:data:`fedtheory.conformance.instance.ID_SCHEMES`: from 10 on, sparse and shuffled, or the
    positions), so an implementation that uses an id as a list index fails."""
    n = draw(st.integers(min_clients, max_clients))
    d = draw(st.one_of(st.integers(1, 6), st.integers(1, max_dim)))
    L = draw(st.floats(L_max / 4, L_max))
    mu = L / draw(st.floats(1.0, kappa_max))
    lo = 0.05 if heterogeneous else 0.0
    sizes = draw(st.lists(st.integers(d, 3 * d + 10), min_size=n, max_size=n))
    params = {"n": n, "d": d, "mu": mu, "L": L,
              "delta_frac": draw(st.floats(max(lo, 0.0), 0.4)) if n > 1 else 0.0,
              "zeta2": draw(st.floats(max(lo, 0.1 if heterogeneous else 0.0), 4.0)) if n > 1 else 0.0,
              "sizes": sizes, "weighting": hyper.get("weighting", "num_examples"),
              "seed": draw(st.integers(0, 2**31 - 1))}
    params["ids"] = client_ids(n, draw(st.sampled_from(ID_SCHEMES)), params["seed"])
    return params


def one_round_L(hyper: Mapping[str, Any]) -> float:
    """Keep eta L <= 1.9 so local GD does not amplify (it is also what a practitioner would run)."""
    eta = hyper.get("local_step")
    return min(20.0, 1.9 / eta) if eta else 20.0


def plain_cases(hyper: Mapping[str, Any], **kw: Any) -> st.SearchStrategy:
    """Instance parameters only, with L kept in local GD's stable range."""
    return instance_params(hyper, L_max=one_round_L(hyper), **kw)


def cases_with(extra: Callable[[Any, dict], dict]) -> Callable[..., st.SearchStrategy]:
    """A strategy factory ``(hyper, **kw)``: instance params plus per-case draws computed by ``extra(draw, params)``."""
    def factory(hyper: Mapping[str, Any], **kw: Any) -> st.SearchStrategy:
        @st.composite
        def cases(draw):
            params = draw(plain_cases(hyper, **kw) if "L_max" not in kw else instance_params(hyper, **kw))
            params.update(extra(draw, params))
            return params
        return cases()
    return factory


# ----------------------------------------------------------------- instances and rounds

def instance_of(case: Mapping[str, Any]) -> Instance:
    """The problem of a case (its instance parameters; the round's own draws are ignored)."""
    return make_instance(instance_params_of(case))


def round_hyper(hyper: Mapping[str, Any], inst: Instance, **over: Any) -> dict:
    """The hyperparameters passed to the implementation: the family's, the population N, and ``over``."""
    return {**hyper, "num_clients": inst.n, **over}


def run_round(impl: Callable[..., Any], inst: Instance, x: np.ndarray, clients_idx, hyper: Mapping[str, Any],
              state: Any = None, seed: int = 0) -> tuple[np.ndarray, Any]:
    """One round of ``impl`` on the clients ``clients_idx`` of ``inst`` through the contract."""
    clients = [inst.clients[i] for i in clients_idx]
    return call_round(impl, x, clients, state, hyper, np.random.default_rng(seed))


def relative_error(actual: np.ndarray, want: np.ndarray, scale: float) -> float:
    return float(np.linalg.norm(actual - want) / max(scale, 1e-300))


def scale_of(inst: Instance, *xs: np.ndarray) -> float:
    """The iterate scale identities are relative to: max(1, ||x*||, ||x|| for the given iterates)."""
    return max([1.0, float(np.linalg.norm(inst.x_star))] + [float(np.linalg.norm(x)) for x in xs])


def identity(inst: Instance, got: np.ndarray, want: np.ndarray, x: np.ndarray, rtol: float,
             diagnosis: str = "") -> Outcome:
    """``got`` equals ``want`` within ``rtol`` relative to the scale of x, want and x*."""
    err = relative_error(got, want, scale_of(inst, x, want))
    return outcome(err <= rtol, err, rtol, diagnosis)
