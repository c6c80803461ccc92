"""One-round identities and draw laws of DANE / DANE+ (Algorithm 1) and FedRed-GD (Algorithm 2) (Jiang, Rodomanov
& Stich 2024): one round against the paper's update written independently (unequal client weights, both coin
outcomes, each selected client, a desynchronised state), and the random draws against the laws that the exact
expectations enumerate (see fedtheory/claims/round_identities.py for the reference instance).
"""
from __future__ import annotations

import math

import numpy as np

from ...algorithms.dane import DANE, DANEDraw, DANEPlus
from ...algorithms.fedred import FedRed, FedRedDraw
from ...problems.quadratic import QuadraticProblem
from ..patterns import relative_error
from ..registry import Evidence, claim
from ..round_identities import client_grads, law_against_draws, reference_problem
from ..tolerances import EXACT_REL, ROUND_IDENTITY_RTOL, Z_MONTE_CARLO

__all__: list[str] = []


def _dissimilarity(problem: QuadraticProblem) -> tuple[float, float]:
    """(delta_A, delta_B) from the Hessians directly: sqrt(lambda_max(sum_i w_i E_i^2)) and max_i ||E_i||_2."""
    E = problem.A - np.einsum("n,nij->ij", problem.weights, problem.A)
    delta_A = math.sqrt(max(np.linalg.eigvalsh(np.einsum("n,nij,njk->ik", problem.weights, E, E))[-1], 0.0))
    delta_B = max(float(np.max(np.abs(np.linalg.eigvalsh(E_i)))) for E_i in E)
    return delta_A, delta_B


def _dane_instances(thorough: bool):
    yield "standard"
    yield "random"
    yield "dane"          # the DANE class itself (its default lam)
    yield "scaffnew_cv"   # DANE+ with control variate (B.84) and m != lam, from a state with h != 0
    yield "semi_implicit"  # the authors' code's local step lr: explicit GD on F_i with step lr/(1 + lam lr)


@claim(cites=("Algorithm 1",),
       id="fedred.rounds.dane_reference", paper="fedred",
       reference="the control variate of eq. (1), or the state of eq. (B.84)",
       statement="one round of DANE / DANE+ with the default lam (2 delta_A for standard averaging, 2 delta_B for a "
                 "randomly selected client) equals the exact update x_i = argmin f_i + <h_i, x> + lam/2 ||x - x^r||^2 "
                 "(h_i = grad f - grad f_i, or the (B.84) state h_i <- h_i + m (x_i - x^{r+1}) with m != lam) "
                 "followed by sum_i w_i x_i (or x_xi), on unequal client weights, to 1e-9; and the authors' code's "
                 "semi-implicit local step replayed",
       kind="identity", instances=_dane_instances, runs=("dane", "dane+"))
def check_dane_reference(variant: str) -> Evidence:
    problem = reference_problem()
    averaging = "random" if variant == "random" else "standard"
    delta_A, delta_B = _dissimilarity(problem)
    lam = 2.0 * (delta_A if averaging == "standard" else delta_B)
    rows = np.arange(problem.n_clients)
    x = np.array([0.5, -1.0, 2.0])
    if variant == "semi_implicit":
        return _semi_implicit_identity(problem, lam)
    if variant == "dane":
        alg = DANE()
    elif variant == "scaffnew_cv":
        alg = DANEPlus(control_variate="scaffnew", m=0.7, solver="exact")
    else:
        alg = DANEPlus(averaging=averaging, solver="exact")
    state = alg.init(problem, x)
    if variant == "scaffnew_cv":  # two rounds move h away from its start
        state = alg.round_given(problem, alg.round_given(problem, state, DANEDraw(None))[0], DANEDraw(None))[0]
        x, H = state.x, state.h
    else:
        G = client_grads(problem, np.tile(x, (problem.n_clients, 1)), rows)
        H = problem.weights @ G - G
    X = np.linalg.solve(problem.A + lam * np.eye(problem.dim), (problem.b - H + lam * x)[..., None])[..., 0]
    draws = [(DANEDraw(None), problem.weights @ X)] if averaging == "standard" else \
        [(DANEDraw(i), X[i]) for i in range(problem.n_clients)]
    worst = 0.0
    for draw, want in draws:
        new, _ = alg.round_given(problem, state, draw)
        worst = max(worst, relative_error(new.x, want))
        if variant == "scaffnew_cv":
            worst = max(worst, relative_error(new.h, H + 0.7 * (X - want)))
    return Evidence(f"{variant}: lam={lam:.4g}", worst, ROUND_IDENTITY_RTOL, worst <= ROUND_IDENTITY_RTOL,
                    details={"lam": lam, "lam_used": alg.lam_for(problem)})


def _semi_implicit_identity(problem, lam: float) -> Evidence:
    """The code's z+ = (z/lr + lam x^r - (grad f_i(z) + h_i))/(1/lr + lam), replayed here for K = 3 steps from
    z = x^r, against DANE+(local_step=lr, step_convention="semi_implicit", K fixed steps, last iterate)."""
    lr, K, x = 0.2, 3, np.array([0.5, -1.0, 2.0])
    alg = DANEPlus(lam=lam, solver="gd", stopping="steps", local_steps=K, local_output="last", local_step=lr,
                   step_convention="semi_implicit")
    rows = np.arange(problem.n_clients)
    G = client_grads(problem, np.tile(x, (problem.n_clients, 1)), rows)
    H = problem.weights @ G - G
    Z = np.tile(x, (problem.n_clients, 1))
    for _ in range(K):
        Z = (Z / lr + lam * x - (client_grads(problem, Z, rows) + H)) / (1.0 / lr + lam)
    new, _ = alg.round_given(problem, alg.init(problem, x), DANEDraw(None))
    err = relative_error(new.x, problem.weights @ Z)
    return Evidence(f"semi_implicit: lr={lr}, K={K}, lam={lam:.4g}", err, ROUND_IDENTITY_RTOL, err <= ROUND_IDENTITY_RTOL)


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


def _fedred_instances(thorough: bool):
    for reset in (True, False):
        for selection in ("standard", "random"):
            yield {"reset": reset, "selection": selection}


@claim(cites=("Algorithm 2",),
       id="fedred.rounds.fedred_gd_reference", paper="fedred",
       statement="one FedRed-GD round (both coin outcomes, each selected client, reset on and off) equals the "
                 "paper's update written independently, on unequal weights and desynchronised local models, to 1e-9",
       kind="identity", instances=_fedred_instances, runs=("fedred",))
def check_fedred_reference(inst: dict) -> Evidence:
    problem = reference_problem()
    lam, eta = 1.5, 0.1
    alg = FedRed(lam=lam, eta=eta, p=0.5, reset=inst["reset"], selection=inst["selection"])
    state = alg.init(problem, np.array([0.5, -1.0, 2.0]))
    rng = np.random.default_rng(5)
    for _ in range(4):  # desynchronise the local models (some rounds skip communication)
        state, _ = alg.round(problem, state, rng)
    rows = np.arange(problem.n_clients)
    G = client_grads(problem, state.X, rows)
    X_loc = (state.X + lam * eta * state.x - eta * (G + state.H)) / (1.0 + lam * eta)
    clients = [None] if inst["selection"] == "standard" else list(range(problem.n_clients))
    worst = 0.0
    for communicate in (False, True):
        for client in (clients if communicate else [None]):
            new, _ = alg.round_given(problem, state, FedRedDraw(communicate, client))
            if not communicate:
                want = {"X": X_loc, "x": state.x}
            else:
                x_ref = problem.weights @ X_loc if client is None else X_loc[client]
                G_ref = client_grads(problem, np.tile(x_ref, (problem.n_clients, 1)), rows)
                want = {"x": x_ref, "H": problem.weights @ G_ref - G_ref,
                        "X": np.tile(x_ref, (problem.n_clients, 1)) if inst["reset"] else X_loc}
            worst = max([worst] + [relative_error(getattr(new, key), val) for key, val in want.items()])
    return Evidence(f"FedRed-GD reset={inst['reset']} selection={inst['selection']}", worst, ROUND_IDENTITY_RTOL, worst <= ROUND_IDENTITY_RTOL)


# --- Algorithms 1 and 2 (and EFL's Algorithm 1): the outcome laws of the draws ---

def _outcome_law_instances(thorough: bool):
    yield "dane+ standard"
    yield "dane+ random"
    yield "fedred standard"
    yield "fedred random"
    yield "efl"


@claim(cites=("Algorithm 1", "Algorithm 2", "efl:Algorithm 1"),
       id="fedred.rounds.outcome_law", paper="fedred",
       statement="the outcome laws that exact expectations enumerate (outcomes()) are the laws of the draws: "
                 "probabilities sum to 1, every drawn outcome is enumerated, and each frequency is within 5 "
                 "standard errors (4000 draws) -- for DANE+ (standard, random selection), FedRed (both "
                 "selections) and EFL with heterogeneous participation, a departure and an arrival",
       kind="statistical", instances=_outcome_law_instances, runs=("efl",))
def check_outcome_law(which: str) -> Evidence:
    from ...algorithms.efl import EFL

    problem = reference_problem()
    if which.startswith("dane+"):
        alg = DANEPlus(lam=1.0, averaging=which.split()[1])
        key = lambda d: d.client  # noqa: E731
    elif which.startswith("fedred"):
        alg = FedRed(lam=1.0, eta=0.1, p=0.35, selection=which.split()[1])
        key = lambda d: (d.communicate, d.client)  # noqa: E731
    else:  # client 3 departs after round 1, client 0 arrives at round 2: the law must follow the schedule
        alg = EFL(E=3, s_min=1, s_max=(1, 2, 3, 2), participation=(0.9, 0.5, 0.7, 0.6), departures={3: 1},
                  arrivals={0: 2})
        key = lambda d: tuple(d.steps.tolist())  # noqa: E731
    state = alg.init(problem, np.zeros(problem.dim))
    if which == "efl":
        state = alg.round(problem, state, np.random.default_rng(0))[0]  # the next round is round 2
    law, worst_z, unknown = law_against_draws(alg, problem, state, key)
    total = sum(law.values())
    ok = not unknown and worst_z <= Z_MONTE_CARLO and abs(total - 1.0) <= EXACT_REL
    return Evidence(which, worst_z, Z_MONTE_CARLO, ok, details={"outcomes": len(law), "sum_probabilities": total,
                                                      "outcomes_not_enumerated": [str(k) for k in unknown[:3]]})


# --- Algorithm 1 (DANE / DANE+ with eq. (1) or (B.84)), Theorems 1 and 3 (lam = 2 delta): one round ---
