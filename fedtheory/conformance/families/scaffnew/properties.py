"""scaffnew's properties: the five the stateful families share (:mod:`fedtheory.conformance.stateful`), declared
with this paper's source."""
from __future__ import annotations

from typing import Any, Mapping

from ... import stateful
from ...kit import Outcome, prop

__all__ = ["HYPER"]

HYPER: Mapping[str, Any] = {"step": 0.5, "p": 0.5, "weighting": "uniform"}
MISHCHENKO = "Mishchenko et al. 2022, Alg. 2 (ProxSkip); Thm 3.6"
#: The paper's ranges the kit also draws hyperparameters from (fedtheory.conformance.kit.varied_hyper): a
#: slip invisible at the user's values (a server step ignored at 1.0) shows at another.
RANGES: Mapping[str, tuple] = {"step": (0.05, 0.9), "p": (0.1, 0.9)}


def _cases(hyper: Mapping[str, Any]):
    return stateful.stateful_cases(hyper, "scaffnew")


@prop(id="scaffnew.converges", family="scaffnew", core=True, reference=MISHCHENKO,
      statement="converges to x* exactly (1e-6 relative) under heterogeneity", cases=_cases, expensive=True)
def converges(impl, case, hyper, rtol) -> Outcome:
    return stateful.converges(impl, case, hyper, rtol, "scaffnew")


@prop(id="scaffnew.one_round", family="scaffnew", reference=MISHCHENKO,
      statement="one round from a consistent state equals the closed form", cases=_cases)
def one_round(impl, case, hyper, rtol) -> Outcome:
    return stateful.one_round(impl, case, hyper, rtol, "scaffnew")


@prop(id="scaffnew.fixed_point", family="scaffnew", reference=MISHCHENKO,
      statement="x* with control variates grad f_i(x*) is a fixed point", cases=_cases)
def fixed_point(impl, case, hyper, rtol) -> Outcome:
    return stateful.fixed_point(impl, case, hyper, rtol, "scaffnew")


@prop(id="scaffnew.server_state", family="scaffnew", reference=MISHCHENKO,
      statement="server state invariant: sum h_i = 0", cases=_cases)
def server_state(impl, case, hyper, rtol) -> Outcome:
    return stateful.server_state(impl, case, hyper, rtol, "scaffnew")


@prop(id="scaffnew.multi_round", family="scaffnew", core=True, reference="Mishchenko et al. 2022, Alg. 2 (ProxSkip)",
      statement=f"{stateful.ROUNDS} rounds from the implementation's own state (zero start, random participants) "
                "equal the closed-form recursion; a readable state equals it too", cases=_cases)
def multi_round(impl, case, hyper, rtol) -> Outcome:
    return stateful.multi_round(impl, case, hyper, rtol, "scaffnew")
