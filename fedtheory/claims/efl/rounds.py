"""EFL, Algorithms 1 and 2 against their transcription client by client (fedtheory/references/efl.py): every
round of the implementation, from its own state, is the paper's round in fedtheory's reading (docs/efl.md)."""
from __future__ import annotations

import numpy as np

from ...algorithms.efl import EFL
from ...problems import logistic, quadratic
from ...references import certify_run
from ..registry import Evidence, claim
from ..round_identities import law_against_draws, reference_problem
from ..tolerances import EXACT_REL, Z_MONTE_CARLO

__all__: list[str] = []

#: Rounds of each run certified, every one from the implementation's own state.
REFERENCE_ROUNDS = 8

#: Partial participation with per-client rates, a departure, a late arrival, heterogeneous local steps, the elastic
#: term, ST compression and a restarted decaying schedule.
_SCENARIO = dict(E=3, step=0.1, decay=2.0, lam=0.1, q=0.4, s_min=(1, 1, 2, 3, 1, 2), s_max=3,
                 participation=(0.5, 0.9, 1.0, 0.7, 0.6, 1.0), departures={1: 3}, arrivals={4: 2}, restarts=(5,),
                 restart_on_arrival=True)


def _reference_instances(thorough: bool):
    """Every reading option (weighting efl / fedavg / efl_ipw, scaling server / client, variant consistent / printed,
    elastic sums over reporters / cached), idle clients (participation < 1), departures and arrivals (a client that
    missed rounds downloads the server model), ST with q < 1 and q = 1 and no compression, on a quadratic and a
    logistic problem."""
    for problem in ("quadratic", "logistic"):
        yield dict(label="scenario, efl weights", problem=problem, kw=dict(_SCENARIO))
        yield dict(label="scenario, inverse-probability weights, client scaling, cached sums", problem=problem,
                   kw=dict(_SCENARIO, weighting="efl_ipw", scaling="client", uv_sum="cached"))
        yield dict(label="printed variant, FedAvg weights, idle clients", problem=problem,
                   kw=dict(E=2, step=0.05, q=0.3, participation=0.6, weighting="fedavg", variant="printed"))
        yield dict(label="uncompressed, elastic, idle clients", problem=problem,
                   kw=dict(E=4, step=0.03, lam=0.2, s_min=1, participation=0.5))
    yield dict(label="ST with q = 1, full participation, cached sums", problem="quadratic",
               kw=dict(E=2, step=0.05, q=1.0, lam=0.05, uv_sum="cached"))
    yield dict(label="the class defaults (E = 5, constant step)", problem="logistic", kw=dict())


@claim(cites=("Algorithm 1", "Algorithm 2"),
       id="efl.rounds.reference_identity", paper="efl",
       statement=f"{REFERENCE_ROUNDS} rounds of fedtheory's EFL, each from its own state, equal Alg. 1 with the ST "
                 "compressor of Alg. 2 transcribed client by client (eqs. 3-6, docs/efl.md's reading): the server "
                 "and client models, residuals, broadcast, elastic sums and the logged bits, non-zeros, gradient "
                 "evaluations and coefficients, to 1e-7 relative, with idle, departed and late clients and every "
                 "weighting, scaling, variant and elastic-sum option",
       kind="identity", instances=_reference_instances, runs=("efl",))
def check_reference_identity(inst: dict) -> Evidence:
    problem = (quadratic(6, 5, mu=0.5, L=4.0, zeta2=1.0, seed=1) if inst["problem"] == "quadratic"
               else logistic("synthetic", n_clients=6, dim=4))
    alg = EFL(**inst["kw"])
    done, mismatch = certify_run(alg, problem, np.linspace(-0.3, 0.5, problem.dim), REFERENCE_ROUNDS, seed=0)
    return Evidence(f"{inst['label']} ({inst['problem']})", float(mismatch is not None), 0.0, mismatch is None,
                    details={"rounds_certified": done, "difference": mismatch.sentence() if mismatch else ""})


@claim(cites=("Algorithm 1",),
       id="efl.rounds.outcome_law", paper="efl",
       statement="the outcome law that exact expectations enumerate (outcomes()) is the law of EFL's draws with "
                 "heterogeneous participation, a departure and an arrival: probabilities sum to 1, every drawn "
                 "outcome is enumerated, and each frequency is within 5 standard errors (4000 draws)",
       kind="statistical", instances=lambda thorough: ["efl"], runs=("efl",))
def check_outcome_law(which: str) -> Evidence:
    problem = reference_problem()
    # client 3 departs after round 1, client 0 arrives at round 2: the law must follow the schedule
    alg = EFL(E=3, s_min=1, s_max=(1, 2, 3, 2), participation=(0.9, 0.5, 0.7, 0.6), departures={3: 1},
              arrivals={0: 2})
    state = alg.init(problem, np.zeros(problem.dim))
    state = alg.round(problem, state, np.random.default_rng(0))[0]  # the next round is round 2
    law, worst_z, unknown = law_against_draws(alg, problem, state, lambda d: tuple(d.steps.tolist()))
    total = sum(law.values())
    ok = not unknown and worst_z <= Z_MONTE_CARLO and abs(total - 1.0) <= EXACT_REL
    return Evidence(which, worst_z, Z_MONTE_CARLO, ok, details={"outcomes": len(law), "sum_probabilities": total,
                                                      "outcomes_not_enumerated": [str(k) for k in unknown[:3]]})
