"""FedProx's properties (Li et al. 2020, Alg. 2, eq. (2)): FedAvg's one round, fixed point and sampling with
N_i of f_i + lam/2 ||. - x||^2, and the two limits of the proximal weight lam (Sec. 3)."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ... import expected as ex
from ...kit import Outcome, cases_with, instance_of, prop, round_hyper, run_round, verdict, identity
from ..fedavg import properties as fedavg

__all__ = ["HYPER"]

HYPER: Mapping[str, Any] = {"local_steps": 5, "local_step": 0.1, "prox": 1.0, "server_step": 1.0,
                            "weighting": "num_examples"}
LI = "Li et al. 2020 (FedProx), Alg. 2, eq. (2)"
_plain = cases_with(lambda draw, p: {})
#: The paper's ranges the kit also draws hyperparameters from (fedtheory.conformance.kit.varied_hyper): a
#: slip invisible at the user's values (a server step ignored at 1.0) shows at another.
RANGES: Mapping[str, tuple] = {"server_step": (0.3, 2.0), "local_steps": (1, 8), "local_step": (0.02, 0.2), "prox": (0.1, 3.0)}


@prop(id="fedprox.one_round", family="fedprox", core=True, reference=f"{LI}; closed form derived by fedtheory (docs/classic.md)",
      statement="one round equals the closed form with N_i for f_i + lam/2||. - x||^2", cases=_plain)
def one_round(impl, case, hyper, rtol) -> Outcome:
    return fedavg.one_round(impl, case, hyper, rtol, family="fedprox")


@prop(id="fedprox.fixed_point", family="fedprox",
      reference="closed-form FedProx fixed point, derived by fedtheory (docs/classic.md)",
      statement="[sum a_i N_i A_i]^{-1} sum a_i N_i b_i is a fixed point", cases=_plain)
def fixed_point(impl, case, hyper, rtol) -> Outcome:
    return fedavg.fixed_point(impl, case, hyper, rtol)


@prop(id="fedprox.large_prox", family="fedprox", reference=f"{LI}: lam -> inf",
      statement="lam (x+ - x) -> -eta_g grad f(x)", cases=_plain)
def large_prox(impl, case, hyper, rtol) -> Outcome:
    """lam -> inf: lam (x+ - x) -> -eta_g grad f_S(x) (Li et al. 2020, Sec. 3: mu -> inf freezes the model)."""
    inst = instance_of(case)
    lam = 1e4 * max(case["L"], 1.0)
    over = {"prox": lam}
    if hyper.get("local_steps") is not None:
        over["local_step"] = 1.0 / (case["L"] + lam)  # stable local GD on the prox objective: a near-exact solve
    h = round_hyper(hyper, inst, **over)
    got, _ = run_round(impl, inst, inst.x0, np.arange(inst.n), h)
    g = ex.global_grad(inst, inst.x0, np.arange(inst.n), h["weighting"])
    err = float(np.linalg.norm(lam * (got - inst.x0) + h.get("server_step", 1.0) * g) / max(np.linalg.norm(g), 1e-300))
    # exact: lam (x+ - x) = -eta_g sum a_i lam (A_i + lam I)^{-1} grad_i; the correction is O(L / lam) = 1e-4
    tol = 1e-2
    return verdict(err <= tol, err, tol, "" if err <= tol else "does not approach a gradient step of size 1/lam as "
                                                              "lam grows (prox term sign or centre)")


@prop(id="fedprox.zero_prox", family="fedprox", reference=f"{LI}: lam = 0 is FedAvg",
      statement="with prox = 0 one round is FedAvg's closed form", cases=_plain)
def zero_prox(impl, case, hyper, rtol) -> Outcome:
    """lam = 0 is FedAvg with the same local solver (Li et al. 2020, Sec. 3: mu = 0 recovers FedAvg)."""
    inst = instance_of(case)
    h = round_hyper(hyper, inst, prox=0.0)
    S = np.arange(inst.n)
    got, _ = run_round(impl, inst, inst.x0, S, h)
    want = ex.round_map(inst, inst.x0, S, **dict(fedavg.prox_hyper(hyper), prox=0.0))
    return identity(inst, got, want, inst.x0, rtol, "with prox = 0 it is not FedAvg")


@prop(id="fedprox.expected_sampling", family="fedprox", reference=f"{LI}, uniform sampling",
      statement="the mean over all size-S subsets equals the mean of the closed-form rounds",
      cases=fedavg.subset_cases)
def expected_sampling(impl, case, hyper, rtol) -> Outcome:
    return fedavg.expected_sampling(impl, case, hyper, rtol, family="fedprox")


@prop(id="fedprox.multi_round", family="fedprox", reference=f"{LI}: a round depends on x and its participants only",
      statement=f"{fedavg.ROUNDS} consecutive rounds (random participants, each from the previous output) each equal "
                "the closed form: no state hidden across calls", cases=fedavg.rounds_cases)
def multi_round(impl, case, hyper, rtol) -> Outcome:
    return fedavg.multi_round(impl, case, hyper, rtol, family="fedprox")
