"""One-round identities of the classic algorithms against independent reference updates, on the structural
features a single default instance would miss: unequal client weights, partial and Bernoulli participation,
server steps != 1, each option (SCAFFOLD I/II, FedAvg's weighting/normalisation/threshold), auxiliary states
away from zero, both coin outcomes; and the participation/coin draws against their enumerated law.

These claims were added after mutation testing (benchmarks/mutation, docs/verification-power.md) showed that
slips such as a dropped server step or an unweighted average passed every other claim: the algorithms were
only ever run with eta_g = 1 and (near-)uniform weights. The reference updates below are written from the
papers' equations in plain NumPy and share no helper with :mod:`fedtheory.algorithms` (the expected side is
computed independently of the code under test, so a bug in a shared helper cannot hide).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...algorithms.fedavg import FedAvg
from ...algorithms.feddyn import FedDyn
from ...algorithms.fedprox import FedProx
from ...algorithms.scaffnew import Scaffnew
from ...algorithms.scaffold import Scaffold
from ...participation import Bernoulli, Full, UniformSubset
from ...problems.quadratic import QuadraticProblem
from ..registry import Evidence, claim
from ..round_identities import law_against_draws, reference_problem, round_against_reference
from ..tolerances import EXACT_REL, ROUND_IDENTITY_RTOL, Z_MONTE_CARLO

__all__: list[str] = []

PARTICIPATIONS = {"full": Full(), "subset2": UniformSubset(2), "bernoulli": Bernoulli((0.3, 0.6, 0.9, 0.5))}


def _round_instances(thorough: bool):
    for part in PARTICIPATIONS:
        yield {"alg": "fedavg", "part": part, "kw": dict(local_steps=3, local_step=0.1, server_step=0.6)}
        yield {"alg": "scaffold", "part": part, "kw": dict(local_steps=3, local_step=0.1, server_step=0.7, option="I")}
        yield {"alg": "scaffold", "part": part, "kw": dict(local_steps=3, local_step=0.1, option="II")}
        yield {"alg": "feddyn", "part": part, "kw": dict(alpha=0.8)}
        # FedElasticNet Alg. 3; the threshold 0.03 zeroes some (not all) of the non-zero local updates
        yield {"alg": "feddyn", "part": part, "kw": dict(alpha=0.8, l1=0.02, threshold=0.03, solver="gd",
                                                          local_steps=3, local_step=0.1, l1_mode="proximal")}
        yield {"alg": "scaffnew", "part": part, "kw": dict(step=0.15, p=0.4)}
        yield {"alg": "scaffnew", "part": part, "kw": dict(step=0.15, p=0.4, round_unit="communication")}
        yield {"alg": "fedprox", "part": part, "kw": dict(prox=0.5, server_step=0.8)}
        for mode in ("subgradient", "proximal"):
            yield {"alg": "fedprox", "part": part, "kw": dict(prox=0.5, l1=0.05, solver="gd", l1_mode=mode,
                                                               local_steps=3, local_step=0.1)}
    yield {"alg": "fedavg", "part": "subset2", "kw": dict(local_steps=2, local_step=0.1, weighting="uniform",
                                                          normalize="all")}
    yield {"alg": "fedavg", "part": "bernoulli", "kw": dict(local_steps=2, local_step=0.1, normalize="all")}
    yield {"alg": "fedprox", "part": "subset2", "kw": dict(prox=0.5, weighting="uniform", normalize="all",
                                                           threshold=0.02)}
    # the default local step (no local_step given)
    yield {"alg": "fedavg", "part": "full", "kw": dict(local_steps=3)}
    yield {"alg": "fedprox", "part": "full", "kw": dict(prox=0.5, solver="gd", local_steps=3)}
    # local stopping: a tolerance between the clients' first-step gradient norms stops some clients early
    yield {"alg": "fedavg", "part": "full", "kw": dict(local_steps=6, local_step=0.1, local_tol=2.0)}
    yield {"alg": "fedprox", "part": "full", "kw": dict(prox=0.5, l1=0.05, solver="gd", local_steps=6,
                                                        local_step=0.1, local_tol=2.0)}


_CLASSES: dict[str, Any] = {"fedavg": FedAvg, "fedprox": FedProx, "scaffold": Scaffold, "feddyn": FedDyn,
                            "scaffnew": Scaffnew}


def _describe(inst: dict) -> str:
    return f"{inst['alg']}({', '.join(f'{k}={v}' for k, v in inst['kw'].items())}), participation={inst['part']}"


@claim(id="classic.rounds.reference_identity", paper="classic",
       reference="McMahan 2017, Karimireddy 2020, Acar 2021, Mishchenko 2022: Alg. 1 of each",
       statement="for every participation/coin outcome, one round of FedAvg, FedProx/FedElasticNet Alg. 1 (exact, "
                 "sub-gradient, ISTA), SCAFFOLD (I, II), FedDyn, FedElasticNet Alg. 3 (ISTA, threshold) and Scaffnew "
                 "equals the paper's update transcribed client by client (fedtheory/references/classic.py), in the "
                 "state and every logged quantity, to 1e-9 relative, on 4 clients with unequal "
                 "weights, from a state with non-zero control variates; without a local step, the documented "
                 "default 1/(L + prox) is used",
       kind="identity", instances=_round_instances, runs=("fedavg", "feddyn", "fedprox", "scaffnew", "scaffold"))
def check_round_identity(inst: dict) -> Evidence:
    problem = reference_problem()
    alg = _CLASSES[inst["alg"]](participation=PARTICIPATIONS[inst["part"]], **inst["kw"])
    state = alg.init(problem, np.array([0.5, -1.0, 2.0]))
    rng = np.random.default_rng(7)
    for _ in range(3):  # move the auxiliary states (c, C, h, G, H) away from zero
        state, _ = alg.round(problem, state, rng)
    worst, where, first = 0.0, "", None
    per_communication = inst["kw"].get("round_unit") == "communication"
    # a communication round has a geometric number of local steps: sampled draws instead of every outcome
    draws = ([(alg.draw(problem, state, rng), None) for _ in range(5)] if per_communication
             else alg.outcomes(problem, state))
    for draw, _prob in draws:
        new, log = alg.round_given(problem, state, draw)
        err, field, mismatch = round_against_reference(alg, problem, state, draw, new, log, 3)
        if err > worst or not where:
            worst, where = err, f"{field} (clients {draw.clients.tolist()}, coin {draw.coin})"
        first = first or mismatch
    ok = worst <= ROUND_IDENTITY_RTOL and first is None
    return Evidence(_describe(inst), worst, ROUND_IDENTITY_RTOL, ok,
                    details={"max_relative_error": worst, "worst_field": where, "mismatch": first})


def _threshold_instances(thorough: bool):
    yield {"eps": 0.125}


@claim(id="classic.rounds.threshold_inclusive", paper="classic",
       reference="Kim et al. (FedElasticNet), Section 3 (T_eps(v)_i = 0 iff |v_i| <= eps)",
       statement="FedAvg's transmit operator zeroes a coordinate whose update equals eps exactly (inclusive)",
       kind="identity", instances=_threshold_instances, runs=("fedavg",))
def check_threshold_inclusive(inst: dict) -> Evidence:
    # Dyadic data, so every number below is exact in binary floating point on any CPU: A = I, x = 0,
    # one step of size 1/2 gives y_i = b_i / 2 = (0.125, 0.5) exactly, and |0.125| <= eps = 0.125.
    eps = inst["eps"]
    problem = QuadraticProblem(np.stack([np.eye(2)] * 2), np.array([[0.25, 1.0], [0.25, 1.0]]))
    alg = FedAvg(local_steps=1, local_step=0.5, threshold=eps)
    state = alg.init(problem, np.zeros(2))
    new, log = alg.round(problem, state, np.random.default_rng(0))
    want = np.array([0.0, 0.5])
    err = float(np.max(np.abs(new.x - want)))
    return Evidence(f"threshold eps={eps}", err, 0.0, err == 0.0 and log.uplink_nnz == 2,
                    details={"x_new": new.x, "uplink_nnz": log.uplink_nnz})


def _draw_instances(thorough: bool):
    for part in PARTICIPATIONS:
        yield {"alg": "scaffnew", "part": part, "kw": dict(step=0.15, p=0.3)}
        yield {"alg": "fedavg", "part": part, "kw": dict(local_steps=1, local_step=0.1)}


@claim(id="classic.rounds.draw_law", paper="classic",
       reference="Mishchenko et al. 2022 Alg. 1 (coin w.p. p); Karimireddy et al. 2020 (S uniform without "
                 "replacement); Bernoulli(p_i) participation",
       statement="the random draws (coin, participants) follow the law that outcomes() enumerates: every drawn "
                 "outcome is enumerated and each frequency is within 5 standard errors of its probability "
                 "(4000 draws)",
       kind="statistical", instances=_draw_instances)
def check_draw_law(inst: dict) -> Evidence:
    problem = reference_problem()
    alg = _CLASSES[inst["alg"]](participation=PARTICIPATIONS[inst["part"]], **inst["kw"])
    state = alg.init(problem, np.zeros(problem.dim))
    law, worst_z, unknown = law_against_draws(alg, problem, state, lambda d: (d.coin, tuple(d.clients.tolist())))
    total = sum(law.values())
    # the scheme's stated inclusion probabilities against the marginals of its enumerated law
    marginal = np.zeros(problem.n_clients)
    for (_coin, clients), p in law.items():
        marginal[list(clients)] += p
    marginal /= total
    incl = alg.participation.inclusion_probabilities(problem.n_clients)
    incl_err = float(np.max(np.abs(marginal - incl)))
    ok = (not unknown and worst_z <= Z_MONTE_CARLO and abs(total - 1.0) <= EXACT_REL
          and incl_err <= EXACT_REL)
    return Evidence(_describe(inst), worst_z, Z_MONTE_CARLO, ok,
                    details={"outcomes_not_enumerated": [str(k) for k in unknown[:3]], "sum_probabilities": total,
                             "inclusion_probability_error": incl_err})

