"""Draw laws of DANE / DANE+ (Algorithm 1) and FedRed (Algorithms 2 and 3) (Jiang, Rodomanov & Stich 2024): the
random draws against the laws that the exact expectations enumerate (see fedtheory/claims/round_identities.py for
the reference instance). The rounds themselves are certified against the paper's update in
fedtheory/claims/fedred/references.py.
"""
from __future__ import annotations

import math

import numpy as np

from ...algorithms.dane import DANEPlus
from ...algorithms.fedred import FedRed
from ...problems.quadratic import QuadraticProblem
from ..registry import Evidence, claim
from ..round_identities import law_against_draws, reference_problem
from ..tolerances import EXACT_REL, Z_MONTE_CARLO

__all__: list[str] = []


def _dissimilarity(problem: QuadraticProblem) -> tuple[float, float]:
    """(delta_A, delta_B) from the Hessians directly: sqrt(lambda_max(sum_i w_i E_i^2)) and max_i ||E_i||_2."""
    E = problem.A - np.einsum("n,nij->ij", problem.weights, problem.A)
    delta_A = math.sqrt(max(np.linalg.eigvalsh(np.einsum("n,nij,njk->ik", problem.weights, E, E))[-1], 0.0))
    delta_B = max(float(np.max(np.abs(np.linalg.eigvalsh(E_i)))) for E_i in E)
    return delta_A, delta_B


def _selection_instances(thorough: bool):
    yield "dane"
    yield "fedred"
    yield "dane_fixed"


@claim(cites=("Algorithm 1", "Algorithm 2"),
       id="fedred.rounds.selection_law", paper="fedred",
       statement="the randomly selected client follows the weights w_i, and FedRed communicates with probability "
                 "(lam + mu) eta (default), within 5 standard errors over 4000 draws; a fixed selection follows its "
                 "schedule round by round",
       kind="statistical", instances=_selection_instances, runs=("dane+",))
def check_selection_law(which: str) -> Evidence:
    problem = reference_problem()
    rng = np.random.default_rng(3)
    n_draws, n = 4000, problem.n_clients
    counts = np.zeros(n)
    comm = 0
    if which == "dane_fixed":  # the non-convex theorems' predetermined selection: round r uses schedule[r mod len]
        schedule = (2, 0, 3, 3, 1)
        alg = DANEPlus(lam=1.0, averaging="fixed", schedule=schedule, solver="gd", stopping="steps", local_steps=2)
        state = alg.init(problem, np.zeros(problem.dim))
        wrong = 0
        for r in range(12):
            draw = alg.draw(problem, state, rng)
            wrong += draw.client != schedule[r % len(schedule)]
            state = alg.round_given(problem, state, draw)[0]
        return Evidence("dane+ fixed schedule (2, 0, 3, 3, 1), 12 rounds", float(wrong), 0.0, wrong == 0)
    if which == "dane":
        alg = DANEPlus(averaging="random", solver="exact")
        state = alg.init(problem, np.zeros(problem.dim))
        for _ in range(n_draws):
            counts[alg.draw(problem, state, rng).client] += 1
        p = 1.0
        comm = n_draws
    else:
        eta = 0.05
        alg = FedRed(selection="random", eta=eta)
        state = alg.init(problem, np.zeros(problem.dim))
        _, delta_B = _dissimilarity(problem)
        p = min(1.0, (2.0 * delta_B + problem.certificate.mu) * eta)
        for _ in range(n_draws):
            d = alg.draw(problem, state, rng)
            if d.communicate:
                comm += 1
                counts[d.client] += 1
    z_comm = abs(comm / n_draws - p) / math.sqrt(max(p * (1 - p), 1e-12) / n_draws)
    freq = counts / max(comm, 1)
    z_client = float(np.max(np.abs(freq - problem.weights) / np.sqrt(problem.weights * (1 - problem.weights)
                                                                     / max(comm, 1))))
    worst = max(z_comm, z_client)
    return Evidence(f"{which} random selection", worst, Z_MONTE_CARLO, worst <= Z_MONTE_CARLO,
                    details={"p_expected": p, "communication_rate": comm / n_draws, "client_freq": freq})


# --- Algorithms 1 and 2: the outcome laws of the draws (EFL's: fedtheory/claims/efl/rounds.py) ---

def _outcome_law_instances(thorough: bool):
    yield "dane+ standard"
    yield "dane+ random"
    yield "fedred standard"
    yield "fedred random"


@claim(cites=("Algorithm 1", "Algorithm 2"),
       id="fedred.rounds.outcome_law", paper="fedred",
       statement="the outcome laws that exact expectations enumerate (outcomes()) are the laws of the draws: "
                 "probabilities sum to 1, every drawn outcome is enumerated, and each frequency is within 5 "
                 "standard errors (4000 draws) -- for DANE+ (standard, random selection) and FedRed (both "
                 "selections)",
       kind="statistical", instances=_outcome_law_instances)
def check_outcome_law(which: str) -> Evidence:
    problem = reference_problem()
    if which.startswith("dane+"):
        alg = DANEPlus(lam=1.0, averaging=which.split()[1])
        key = lambda d: d.client  # noqa: E731
    else:
        alg = FedRed(lam=1.0, eta=0.1, p=0.35, selection=which.split()[1])
        key = lambda d: (d.communicate, d.client)  # noqa: E731
    state = alg.init(problem, np.zeros(problem.dim))
    law, worst_z, unknown = law_against_draws(alg, problem, state, key)
    total = sum(law.values())
    ok = not unknown and worst_z <= Z_MONTE_CARLO and abs(total - 1.0) <= EXACT_REL
    return Evidence(which, worst_z, Z_MONTE_CARLO, ok, details={"outcomes": len(law), "sum_probabilities": total,
                                                      "outcomes_not_enumerated": [str(k) for k in unknown[:3]]})
