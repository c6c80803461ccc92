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

import math
from dataclasses import replace
from collections import Counter
from typing import Any

import numpy as np

from ..algorithms.dane import DANE, DANEDraw, DANEPlus
from ..algorithms.fedavg import FedAvg
from ..algorithms.feddyn import FedDyn
from ..algorithms.fedprox import FedProx
from ..algorithms.scaffnew import Scaffnew
from ..algorithms.fedred import FedRed, FedRedDraw
from ..algorithms.scaffold import Scaffold
from ..compressors.sb_quantizer import SBQuantizer
from ..participation import Bernoulli, Full, UniformSubset
from ..problems.quadratic import QuadraticProblem
from .patterns import relative_error
from .registry import Evidence, claim

__all__: list[str] = []

PAPERS_REF = {"fedavg": "McMahan et al. 2017 Alg. 1; Kim et al., Alg. 1 line 8 (server step, weights n_k/n)",
              "scaffold": "Karimireddy et al. 2020 Alg. 1 (options I and II, sampled S)",
              "feddyn": "Acar et al. 2021 Alg. 1 (exact local solve, partial participation)",
              "scaffnew": "Mishchenko et al. 2022 Alg. 1 (ProxSkip/Scaffnew), partial-participation variant"}
#: Relative tolerance of an identity: a round is O(K d^2) flops on 3x3 systems with cond <= 12, so the two
#: evaluation orders differ by ~K * cond * eps ~ 1e-13; 1e-9 leaves four orders of margin and is still far
#: below any modelling slip (those change the update at O(1) relative size).
RTOL = 1e-9
PARTICIPATIONS = {"full": Full(), "subset2": UniformSubset(2), "bernoulli": Bernoulli((0.3, 0.6, 0.9, 0.5))}


def _problem() -> QuadraticProblem:
    """4 clients in R^3, unequal weights, heterogeneous well-conditioned SPD Hessians (eigs in [1, 4])."""
    rng = np.random.default_rng(20261124)
    n, d = 4, 3
    Q = np.linalg.qr(rng.standard_normal((n, d, d)))[0]
    eig = rng.uniform(1.0, 4.0, size=(n, d))
    A = np.einsum("nij,nj,nkj->nik", Q, eig, Q)
    A = 0.5 * (A + np.swapaxes(A, 1, 2))
    b = rng.standard_normal((n, d)) * np.array([[1.0], [3.0], [-2.0], [0.5]])
    return QuadraticProblem(A, b, weights=np.array([0.1, 0.2, 0.3, 0.4]))


def _grads(problem: QuadraticProblem, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    return np.einsum("nij,nj->ni", problem.A[rows], X) - problem.b[rows]


def _local_gd(problem, x, rows, K, eta, lin):
    """K steps of y <- y - eta (A_i y - b_i + lin_i) from y = x (lin: a linear correction per client)."""
    return _local_steps(x, len(rows), K, eta, None, lambda Y: Y - eta * (_grads(problem, Y, rows) + lin))


def _local_steps(x, m, K, eta, tol, step):
    """K local updates Y <- step(Y) of m clients from y = x; with a tolerance, a client stops (for good) at the
    first step whose direction (y - y_new)/eta has norm <= tol (fedtheory.local's documented rule)."""
    Y = np.tile(x, (m, 1))
    active = np.ones(m, dtype=bool)
    for _ in range(K):
        Y_new = step(Y)
        if tol is not None:
            active &= np.linalg.norm((Y - Y_new) / eta, axis=1) > tol
        Y = np.where(active[:, None], Y_new, Y)
    return Y


def _aggregate(alg, problem, x, S, Y):
    """The FedAvg-family server step: threshold T_eps, weights n_k/n or 1/n, normalised over S or not, eta_g."""
    D = Y - x
    D = np.where(np.abs(D) <= alg.threshold, 0.0, D) if alg.threshold > 0 else D
    w = problem.weights[S] if alg.weighting == "problem" else np.full(len(S), 1.0 / problem.n_clients)
    a = w / w.sum() if alg.normalize == "participants" else w
    return {"x": x + alg.server_step * (a @ D)}


def _default_step(problem, regularisation: float) -> float:
    """The documented default local step 1/(L + prox): the inverse smoothness of the local objective, L the
    largest client curvature (computed here from the A_i, not read from the certificate)."""
    return 1.0 / (max(float(np.linalg.eigvalsh(A).max()) for A in problem.A) + regularisation)


def _ref_fedavg(alg: FedAvg, problem, state, S):
    eta = alg.local_step if alg.local_step is not None else _default_step(problem, 0.0)
    Y = _local_steps(state.x, len(S), alg.local_steps, eta, alg.local_tol,
                     lambda Y: Y - eta * _grads(problem, Y, S))
    return _aggregate(alg, problem, state.x, S, Y)


def _ref_fedprox(alg: FedProx, problem, state, S):
    """FedElasticNet Alg. 1 / FedProx: exact prox solve, or K (sub)gradient / ISTA steps from y = x."""
    x, lam2, lam1 = state.x, alg.prox, alg.l1
    if alg.solver == "exact":  # l1 = 0 here: (A_i + lam2 I) y = b_i + lam2 x
        Y = np.linalg.solve(problem.A[S] + lam2 * np.eye(problem.dim), (problem.b[S] + lam2 * x)[..., None])[..., 0]
    else:
        eta = alg.local_step if alg.local_step is not None else _default_step(problem, lam2)

        def step(Y):
            g = _grads(problem, Y, S) + lam2 * (Y - x)
            if alg.l1_mode == "subgradient":
                g = g + lam1 * np.sign(Y - x)
            Z = Y - eta * g - x
            return x + (np.sign(Z) * np.maximum(np.abs(Z) - eta * lam1, 0.0) if alg.l1_mode == "proximal" else Z)

        Y = _local_steps(x, len(S), alg.local_steps, eta, alg.local_tol, step)
    return _aggregate(alg, problem, x, S, Y)


def _ref_scaffold(alg: Scaffold, problem, state, S):
    x, c, C = state.x, state.c, state.C
    K, eta = alg.local_steps, alg.local_step
    Y = _local_gd(problem, x, S, K, eta, c - C[S])
    C_new = _grads(problem, np.tile(x, (len(S), 1)), S) if alg.option == "I" else C[S] - c + (x - Y) / (K * eta)
    w = problem.weights[S]
    C_all = C.copy()
    C_all[S] = C_new
    return {"x": x + alg.server_step * ((w / w.sum()) @ (Y - x)), "c": c + w @ (C_new - C[S]), "C": C_all}


def _ref_feddyn(alg: FedDyn, problem, state, S):
    """FedDyn (exact local solve), or FedElasticNet Alg. 3 (FedDyn + l1 + transmit threshold, K ISTA steps,
    the printed sign of the *transmitted* update: G_i <- G_i - alpha Delta_i - l1 sign(Delta_i))."""
    x, h, G = state.x, state.h, state.G
    alpha, d = alg.alpha, problem.dim
    if alg.l1 == 0.0:
        theta_hat = np.linalg.solve(problem.A[S] + alpha * np.eye(d),
                                    (problem.b[S] + G[S] + alpha * x)[..., None])[..., 0]
    else:  # ISTA on f_i(y) - <G_i, y> + alpha/2 ||y - x||^2 + l1 ||y - x||_1
        eta, theta_hat = alg.local_step, np.tile(x, (len(S), 1))
        for _ in range(alg.local_steps):
            Z = theta_hat - eta * (_grads(problem, theta_hat, S) - G[S] + alpha * (theta_hat - x)) - x
            theta_hat = x + np.sign(Z) * np.maximum(np.abs(Z) - eta * alg.l1, 0.0)
    D = theta_hat - x
    D = np.where(np.abs(D) <= alg.threshold, 0.0, D)
    increment = -alpha * D - alg.l1 * np.sign(D)
    w = problem.weights[S]
    G_all = G.copy()
    G_all[S] = G[S] + increment
    h_new = h + w @ increment
    return {"x": (w / w.sum()) @ (x + D) - h_new / alpha, "h": h_new, "G": G_all}


def _ref_scaffnew(alg: Scaffnew, problem, state, S, coin):
    gamma, p = alg.step, alg.p
    rows = np.arange(problem.n_clients)
    X_hat = state.X - gamma * (_grads(problem, state.X, rows) - state.H)
    if not coin or len(S) == 0:
        return {"X": X_hat, "H": state.H}
    w = problem.weights[S]
    xbar = (w / w.sum()) @ X_hat[S]
    X, H = X_hat.copy(), state.H.copy()
    X[S] = xbar
    H[S] = H[S] + (p / gamma) * (xbar - X_hat[S])
    return {"x": xbar, "X": X, "H": H}


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


_CLASSES: dict[str, Any] = {"fedavg": FedAvg, "fedprox": FedProx, "scaffold": Scaffold, "feddyn": FedDyn, "scaffnew": Scaffnew}


def _describe(inst: dict) -> str:
    return f"{inst['alg']}({', '.join(f'{k}={v}' for k, v in inst['kw'].items())}), participation={inst['part']}"


@claim(id="classic.rounds.reference_identity", paper="classic",
       reference="McMahan 2017, Karimireddy 2020, Acar 2021, Mishchenko 2022: Alg. 1 of each",
       statement="for every participation/coin outcome, one round of FedAvg, FedProx/FedElasticNet Alg. 1 (exact, "
                 "sub-gradient, ISTA), SCAFFOLD (I, II), FedDyn, FedElasticNet Alg. 3 (ISTA, threshold) and Scaffnew "
                 "equals the paper's update written independently, to 1e-9 relative, on 4 clients with unequal "
                 "weights, from a state with non-zero control variates; without a local step, the documented "
                 "default 1/(L + prox) is used",
       kind="identity", instances=_round_instances)
def check_round_identity(inst: dict) -> Evidence:
    problem = _problem()
    alg = _CLASSES[inst["alg"]](participation=PARTICIPATIONS[inst["part"]], **inst["kw"])
    state = alg.init(problem, np.array([0.5, -1.0, 2.0]))
    rng = np.random.default_rng(7)
    for _ in range(3):  # move the auxiliary states (c, C, h, G, H) away from zero
        state, _ = alg.round(problem, state, rng)
    worst = 0.0
    per_communication = inst["kw"].get("round_unit") == "communication"
    # a communication round has a geometric number of local steps: sampled draws instead of every outcome
    draws = ([(alg.draw(problem, state, rng), None) for _ in range(5)] if per_communication
             else alg.outcomes(problem, state))
    for draw, _prob in draws:
        S = draw.clients
        if per_communication:  # K - 1 local steps without communication, then one with it
            ref = {"X": state.X, "H": state.H}
            for k in range(draw.local_steps):
                ref = _ref_scaffnew(alg, problem, replace(state, X=ref["X"], H=ref["H"]), S,
                                    k == draw.local_steps - 1)
        elif inst["alg"] == "scaffnew":
            ref = _ref_scaffnew(alg, problem, state, S, draw.coin)
        elif len(S) == 0:
            ref = {"x": state.x}  # nobody participates: nothing changes
        else:
            ref = {"fedavg": _ref_fedavg, "fedprox": _ref_fedprox, "scaffold": _ref_scaffold, "feddyn": _ref_feddyn}[inst["alg"]](
                alg, problem, state, S)
        new, _log = alg.round_given(problem, state, draw)
        worst = max([worst] + [relative_error(getattr(new, key), want) for key, want in ref.items()])
    return Evidence(_describe(inst), worst, RTOL, worst <= RTOL, details={"max_relative_error": worst})


def _threshold_instances(thorough: bool):
    yield {"eps": 0.125}


@claim(id="classic.rounds.threshold_inclusive", paper="classic",
       reference="Kim et al. (FedElasticNet), Section 3 (T_eps(v)_i = 0 iff |v_i| <= eps)",
       statement="FedAvg's transmit operator zeroes a coordinate whose update equals eps exactly (inclusive)",
       kind="identity", instances=_threshold_instances)
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


def _law_against_draws(alg, problem, state, key, n_draws: int = 4000, seed: int = 11):
    """(law, worst z, drawn keys not enumerated): ``outcomes()``'s law by ``key(draw)`` against the frequencies
    of ``n_draws`` calls of ``draw()`` (z = |frequency - probability| / its standard error)."""
    law: dict = {}
    for d, p in alg.outcomes(problem, state):
        law[key(d)] = law.get(key(d), 0.0) + p
    rng = np.random.default_rng(seed)
    counts = Counter(key(alg.draw(problem, state, rng)) for _ in range(n_draws))
    worst_z = max(abs(counts.get(k, 0) / n_draws - p) / math.sqrt(max(p * (1.0 - p), 1e-12) / n_draws)
                  for k, p in law.items())
    return law, worst_z, [k for k in counts if k not in law]


def _outcome_law_instances(thorough: bool):
    yield "dane+ standard"
    yield "dane+ random"
    yield "fedred standard"
    yield "fedred random"
    yield "efl"


@claim(cites=("Algorithm 1",),
       id="fedred.rounds.outcome_law", paper="fedred",
       reference="Jiang et al. 2024, Alg. 1-2 (xi ~ w; communicate w.p. p); EFL (Ma et al.) Alg. 1 (s^k, "
                 "participation, departures and arrivals)",
       statement="the outcome laws that exact expectations enumerate (outcomes()) are the laws of the draws: "
                 "probabilities sum to 1, every drawn outcome is enumerated, and each frequency is within 5 "
                 "standard errors (4000 draws) -- for DANE+ (standard, random selection), FedRed (both "
                 "selections) and EFL with heterogeneous participation, a departure and an arrival",
       kind="statistical", instances=_outcome_law_instances)
def check_outcome_law(which: str) -> Evidence:
    from ..algorithms.efl import EFL

    problem = _problem()
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
    law, worst_z, unknown = _law_against_draws(alg, problem, state, key)
    total = sum(law.values())
    ok = not unknown and worst_z <= 5.0 and abs(total - 1.0) <= 1e-12
    return Evidence(which, worst_z, 5.0, ok, details={"outcomes": len(law), "sum_probabilities": total,
                                                      "outcomes_not_enumerated": [str(k) for k in unknown[:3]]})


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
    problem = _problem()
    alg = _CLASSES[inst["alg"]](participation=PARTICIPATIONS[inst["part"]], **inst["kw"])
    state = alg.init(problem, np.zeros(problem.dim))
    law, worst_z, unknown = _law_against_draws(alg, problem, state, lambda d: (d.coin, tuple(d.clients.tolist())))
    total = sum(law.values())
    # the scheme's stated inclusion probabilities against the marginals of its enumerated law
    marginal = np.zeros(problem.n_clients)
    for (_coin, clients), p in law.items():
        marginal[list(clients)] += p
    marginal /= total
    incl = alg.participation.inclusion_probabilities(problem.n_clients)
    incl_err = float(np.max(np.abs(marginal - incl)))
    ok = not unknown and worst_z <= 5.0 and abs(total - 1.0) <= 1e-12 and incl_err <= 1e-12
    return Evidence(_describe(inst), worst_z, 5.0, ok,
                    details={"outcomes_not_enumerated": [str(k) for k in unknown[:3]], "sum_probabilities": total,
                             "inclusion_probability_error": incl_err})


# ---------------------------------------------------------------- DANE / FedRed (Jiang et al. 2024)
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


@claim(cites=("Algorithm 1", "Theorem 1", "Theorem 3"),
       id="fedred.rounds.dane_reference", paper="fedred",
       reference="Jiang et al. 2024, Alg. 1 with eq. (1) or (B.84); Thm 1 (lam = 2 delta_A), Thm 3 (lam = 2 delta_B)",
       statement="one round of DANE / DANE+ with the default lam (2 delta_A for standard averaging, 2 delta_B for a "
                 "randomly selected client) equals the exact update x_i = argmin f_i + <h_i, x> + lam/2 ||x - x^r||^2 "
                 "(h_i = grad f - grad f_i, or the (B.84) state h_i <- h_i + m (x_i - x^{r+1}) with m != lam) "
                 "followed by sum_i w_i x_i (or x_xi), on unequal client weights, to 1e-9; and the authors' code's "
                 "semi-implicit local step replayed",
       kind="identity", instances=_dane_instances)
def check_dane_reference(variant: str) -> Evidence:
    problem = _problem()
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
        G = _grads(problem, np.tile(x, (problem.n_clients, 1)), rows)
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
    return Evidence(f"{variant}: lam={lam:.4g}", worst, RTOL, worst <= RTOL,
                    details={"lam": lam, "lam_used": alg.lam_for(problem)})


def _semi_implicit_identity(problem, lam: float) -> Evidence:
    """The code's z+ = (z/lr + lam x^r - (grad f_i(z) + h_i))/(1/lr + lam), replayed here for K = 3 steps from
    z = x^r, against DANE+(local_step=lr, step_convention="semi_implicit", K fixed steps, last iterate)."""
    lr, K, x = 0.2, 3, np.array([0.5, -1.0, 2.0])
    alg = DANEPlus(lam=lam, solver="gd", stopping="steps", local_steps=K, local_output="last", local_step=lr,
                   step_convention="semi_implicit")
    rows = np.arange(problem.n_clients)
    G = _grads(problem, np.tile(x, (problem.n_clients, 1)), rows)
    H = problem.weights @ G - G
    Z = np.tile(x, (problem.n_clients, 1))
    for _ in range(K):
        Z = (Z / lr + lam * x - (_grads(problem, Z, rows) + H)) / (1.0 / lr + lam)
    new, _ = alg.round_given(problem, alg.init(problem, x), DANEDraw(None))
    err = relative_error(new.x, problem.weights @ Z)
    return Evidence(f"semi_implicit: lr={lr}, K={K}, lam={lam:.4g}", err, RTOL, err <= RTOL)


def _selection_instances(thorough: bool):
    yield "dane"
    yield "fedred"
    yield "dane_fixed"


@claim(cites=("Algorithm 1", "Algorithm 2"),
       id="fedred.rounds.selection_law", paper="fedred",
       reference="Jiang et al. 2024, Alg. 1 (xi_r ~ w) and Alg. 2 / Thm 7 (communicate w.p. p = (lam + mu) eta)",
       statement="the randomly selected client follows the weights w_i, and FedRed communicates with probability "
                 "(lam + mu) eta (default), within 5 standard errors over 4000 draws; a fixed selection follows its "
                 "schedule round by round",
       kind="statistical", instances=_selection_instances)
def check_selection_law(which: str) -> Evidence:
    problem = _problem()
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
    return Evidence(f"{which} random selection", worst, 5.0, worst <= 5.0,
                    details={"p_expected": p, "communication_rate": comm / n_draws, "client_freq": freq})


def _fedred_instances(thorough: bool):
    for reset in (True, False):
        for selection in ("standard", "random"):
            yield {"reset": reset, "selection": selection}


@claim(cites=("Algorithm 2",),
       id="fedred.rounds.fedred_gd_reference", paper="fedred",
       reference="Jiang et al. 2024, Alg. 2 (FedRed-GD: linearised local step; on communication x~ = sum_i w_i x_i "
                 "or x_xi, new control variates, and x_i <- x~ when resetting)",
       statement="one FedRed-GD round (both coin outcomes, each selected client, reset on and off) equals the "
                 "paper's update written independently, on unequal weights and desynchronised local models, to 1e-9",
       kind="identity", instances=_fedred_instances)
def check_fedred_reference(inst: dict) -> Evidence:
    problem = _problem()
    lam, eta = 1.5, 0.1
    alg = FedRed(lam=lam, eta=eta, p=0.5, reset=inst["reset"], selection=inst["selection"])
    state = alg.init(problem, np.array([0.5, -1.0, 2.0]))
    rng = np.random.default_rng(5)
    for _ in range(4):  # desynchronise the local models (some rounds skip communication)
        state, _ = alg.round(problem, state, rng)
    rows = np.arange(problem.n_clients)
    G = _grads(problem, state.X, rows)
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
                G_ref = _grads(problem, np.tile(x_ref, (problem.n_clients, 1)), rows)
                want = {"x": x_ref, "H": problem.weights @ G_ref - G_ref,
                        "X": np.tile(x_ref, (problem.n_clients, 1)) if inst["reset"] else X_loc}
            worst = max([worst] + [relative_error(getattr(new, key), val) for key, val in want.items()])
    return Evidence(f"FedRed-GD reset={inst['reset']} selection={inst['selection']}", worst, RTOL, worst <= RTOL)


# ---------------------------------------------------------------- OFedIQ's quantizer constant (Park et al.)
def _sb_instances(thorough: bool):
    for D, s, b in ((5, 1, 2), (7, 3, 2), (10, 4, 3), (9, 2, 4)):  # D not divisible by b: ceil != floor
        yield {"D": D, "s": s, "b": b}


@claim(cites=("Definition 2",),
       id="ofediq.quantizer.sigma2_uneven_blocks", paper="ofediq",
       reference="Kwon, Park & Hong, Definition 2 and Section 4.2 (sigma_q^2 = min(ceil(D/b)/s^2, "
                 "sqrt(ceil(D/b))/s))",
       statement="the SB quantizer's sigma_q^2 uses the largest block, ceil(D/b), when b does not divide D; and "
                 "its exact variance on a vector spread over the largest block stays below sigma_q^2 ||u||^2",
       kind="identity", instances=_sb_instances)
def check_sb_sigma2_uneven(inst: dict) -> Evidence:
    D, s, b = inst["D"], inst["s"], inst["b"]
    n_big = -(-D // b)
    want = min(n_big / s**2, math.sqrt(n_big) / s)
    q = SBQuantizer(s=s, b=b)
    got = q.omega(D)
    u = np.zeros((1, D))
    u[0, : n_big] = 1.0  # the first block is a largest one (blocks of size ceil(D/b) come first)
    var = float(q.variance(u)[0]) / float(np.sum(u * u))
    ok = abs(got - want) <= 1e-15 * want and var <= got * (1 + 1e-12)
    return Evidence(f"D={D} s={s} b={b}", got, want, ok, tightness=var / got if got > 0 else None,
                    details={"variance_ratio": var})


# ---------------------------------------------------------------- unbiased compressors: compress() itself
def _unbiased_instances(thorough: bool):
    from ..compressors.quantizers import QSGD, StochasticUniformQuantizer
    from ..compressors.sparsifiers import RandK

    for comp in (StochasticUniformQuantizer(levels=4), QSGD(s=2), RandK(k=2), SBQuantizer(s=2, b=2)):
        yield comp


@claim(id="docofl.compressors.compress_unbiased", paper="docofl",
       reference="Dorfman et al. 2023 (DoCoFL), Section 2.1 (unbiased compression: E C(x) = x); Alistarh et al. "
                 "2017, Lemma 3.1",
       statement="the random compress() of every unbiased compressor averages to x: each coordinate of the "
                 "mean of 4000 independent compressions is within 5 standard errors of x",
       kind="statistical", instances=_unbiased_instances)
def check_compress_unbiased(comp) -> Evidence:
    # Tests the sampling path itself (the exact-law claims enumerate outcomes and never call compress()).
    x = np.array([0.9, -0.35, 0.1, 0.0, -1.3, 0.55])
    n_draws = 4000
    rng = np.random.default_rng(17)
    out, _bits = comp.compress(np.tile(x, (n_draws, 1)), rng)
    mean, sd = out.mean(axis=0), out.std(axis=0)
    # coordinates sent exactly (a row's max/min on the uniform grid) have sd = 0 and a rounding-level mean
    # error; floor the standard error at 1e-12 of the row's scale so rounding is never read as bias
    se = np.maximum(sd / math.sqrt(n_draws), 1e-12 * float(np.max(np.abs(x))))
    z = float(np.max(np.abs(mean - x) / se))
    return Evidence(type(comp).__name__, z, 5.0, z <= 5.0, details={"mean": mean})


# ---------------------------------------------------------------- certificates under unequal weights
def _cert_instances(thorough: bool):
    yield "dense"
    yield "diagonal"


@claim(id="foundation.certificate.unequal_weights", paper="foundation",
       reference="Jiang, Rodomanov & Stich 2024, Sections 2-3 and Defs. 1-2 (x*, mu = min_i mu_i, delta_A, "
                 "delta_B; weighted by w_i here); zeta^2 = sum_i w_i ||grad f_i(x*)||^2 (docs/problems.md)",
       statement="a QuadraticProblem with unequal client weights certifies x*, zeta2, mu, L, delta_A and delta_B "
                 "equal to their definitions computed directly from (A_i, b_i, w_i), to 1e-9 relative",
       kind="identity", instances=_cert_instances)
def check_certificate_unequal_weights(hessians: str) -> Evidence:
    base = _problem()
    if hessians == "diagonal":
        A_diag = np.array([[1.0, 2.0, 4.0], [3.0, 1.5, 1.0], [2.0, 2.0, 0.5], [1.0, 4.0, 3.0]])
        problem = QuadraticProblem(A_diag, base.b, weights=base.weights)
        A = np.einsum("nd,de->nde", A_diag, np.eye(3))
    else:
        problem, A = base, base.A
    w, b = problem.weights, problem.b
    x_star = np.linalg.solve(np.einsum("n,nij->ij", w, A), w @ b)
    r = np.einsum("nij,j->ni", A, x_star) - b
    eigs = np.linalg.eigvalsh(A)
    E = A - np.einsum("n,nij->ij", w, A)
    want = {"zeta2": float(w @ np.sum(r * r, axis=1)), "mu": float(eigs.min()), "L": float(eigs.max()),
            "delta_A": math.sqrt(np.linalg.eigvalsh(np.einsum("n,nij,njk->ik", w, E, E))[-1]),
            "delta_B": max(float(np.max(np.abs(np.linalg.eigvalsh(E_i)))) for E_i in E)}
    c = problem.certificate
    errors = {k: abs(getattr(c, k) - v) / max(abs(v), 1e-12) for k, v in want.items()}
    errors["x_star"] = relative_error(c.x_star, x_star)
    worst = max(errors.values())
    # 3x3 systems with cond <= 16: errors ~1e-15; 1e-9 is far below any formula slip (O(1) relative)
    return Evidence(f"{hessians} Hessians, weights {w.tolist()}", worst, RTOL, worst <= RTOL,
                    details={"relative_errors": errors})
