"""scaffold's properties: the five the stateful families share (:mod:`fedtheory.conformance.stateful`), declared
with this paper's source."""
from __future__ import annotations

from typing import Any, Mapping

from ... import stateful
from ...kit import Outcome, prop

__all__ = ["HYPER"]

HYPER: Mapping[str, Any] = {"local_steps": 5, "local_step": 0.1, "server_step": 1.0, "weighting": "uniform"}
KARIMIREDDY = "Karimireddy et al. 2020, Alg. 1 (option II eq. (5)); Thm III"


def _cases(hyper: Mapping[str, Any]):
    return stateful.stateful_cases(hyper, "scaffold")


@prop(id="scaffold.converges", family="scaffold", core=True, reference=KARIMIREDDY,
      statement="converges to x* exactly (1e-6 relative) under heterogeneity", cases=_cases, expensive=True)
def converges(impl, case, hyper, rtol) -> Outcome:
    return stateful.converges(impl, case, hyper, rtol, "scaffold")


@prop(id="scaffold.one_round", family="scaffold", reference=KARIMIREDDY,
      statement="one round from a consistent state equals the closed form", cases=_cases)
def one_round(impl, case, hyper, rtol) -> Outcome:
    return stateful.one_round(impl, case, hyper, rtol, "scaffold")


@prop(id="scaffold.fixed_point", family="scaffold", reference=KARIMIREDDY,
      statement="x* with control variates grad f_i(x*) is a fixed point", cases=_cases)
def fixed_point(impl, case, hyper, rtol) -> Outcome:
    return stateful.fixed_point(impl, case, hyper, rtol, "scaffold")


@prop(id="scaffold.server_state", family="scaffold", reference=KARIMIREDDY,
      statement="server state invariant: c = 1/N sum c_i", cases=_cases)
def server_state(impl, case, hyper, rtol) -> Outcome:
    return stateful.server_state(impl, case, hyper, rtol, "scaffold")


@prop(id="scaffold.multi_round", family="scaffold", core=True, reference="Karimireddy et al. 2020, Alg. 1 (option II, eq. (5))",
      statement=f"{stateful.ROUNDS} rounds from the implementation's own state (zero start, random participants) "
                "equal the closed-form recursion; a readable state equals it too", cases=_cases)
def multi_round(impl, case, hyper, rtol) -> Outcome:
    return stateful.multi_round(impl, case, hyper, rtol, "scaffold")
