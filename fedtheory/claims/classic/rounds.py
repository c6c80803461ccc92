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

from dataclasses import replace
from typing import Any

import numpy as np

from ...algorithms.fedavg import FedAvg
from ...algorithms.feddyn import FedDyn
from ...algorithms.fedprox import FedProx
from ...algorithms.scaffnew import Scaffnew
from ...algorithms.scaffold import Scaffold
from ...participation import Bernoulli, Full, UniformSubset
from ...problems.quadratic import QuadraticProblem
from ..patterns import relative_error
from ..registry import Evidence, claim
from ..round_identities import client_grads, law_against_draws, reference_problem
from ..tolerances import EXACT_REL, ROUND_IDENTITY_RTOL, Z_MONTE_CARLO

__all__: list[str] = []

PARTICIPATIONS = {"full": Full(), "subset2": UniformSubset(2), "bernoulli": Bernoulli((0.3, 0.6, 0.9, 0.5))}


def _local_gd(problem, x, rows, K, eta, lin):
    """K steps of y <- y - eta (A_i y - b_i + lin_i) from y = x (lin: a linear correction per client)."""
    return _local_steps(x, len(rows), K, eta, None, lambda Y: Y - eta * (client_grads(problem, Y, rows) + lin))


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
                     lambda Y: Y - eta * client_grads(problem, Y, S))
    return _aggregate(alg, problem, state.x, S, Y)


def _ref_fedprox(alg: FedProx, problem, state, S):
    """FedElasticNet Alg. 1 / FedProx: exact prox solve, or K (sub)gradient / ISTA steps from y = x."""
    x, lam2, lam1 = state.x, alg.prox, alg.l1
    if alg.solver == "exact":  # l1 = 0 here: (A_i + lam2 I) y = b_i + lam2 x
        Y = np.linalg.solve(problem.A[S] + lam2 * np.eye(problem.dim), (problem.b[S] + lam2 * x)[..., None])[..., 0]
    else:
        eta = alg.local_step if alg.local_step is not None else _default_step(problem, lam2)

        def step(Y):
            g = client_grads(problem, Y, S) + lam2 * (Y - x)
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
    C_new = client_grads(problem, np.tile(x, (len(S), 1)), S) if alg.option == "I" else C[S] - c + (x - Y) / (K * eta)
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
            Z = theta_hat - eta * (client_grads(problem, theta_hat, S) - G[S] + alpha * (theta_hat - x)) - x
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
    X_hat = state.X - gamma * (client_grads(problem, state.X, rows) - state.H)
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


_CLASSES: dict[str, Any] = {"fedavg": FedAvg, "fedprox": FedProx, "scaffold": Scaffold, "feddyn": FedDyn,
                            "scaffnew": Scaffnew}


def _describe(inst: dict) -> str:
    return f"{inst['alg']}({', '.join(f'{k}={v}' for k, v in inst['kw'].items())}), participation={inst['part']}"


@claim(id="classic.rounds.reference_identity", paper="classic",
       reference="McMahan 2017, Karimireddy 2020, Acar 2021, Mishchenko 2022: Alg. 1 of each",
       statement="for every participation/coin outcome, one round of FedAvg, FedProx/FedElasticNet Alg. 1 (exact, "
                 "sub-gradient, ISTA), SCAFFOLD (I, II), FedDyn, FedElasticNet Alg. 3 (ISTA, threshold) and Scaffnew "
                 "equals the paper's update written independently, to 1e-9 relative, on 4 clients with unequal "
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
            reference = {"fedavg": _ref_fedavg, "fedprox": _ref_fedprox, "scaffold": _ref_scaffold,
                         "feddyn": _ref_feddyn}[inst["alg"]]
            ref = reference(alg, problem, state, S)
        new, _log = alg.round_given(problem, state, draw)
        worst = max([worst] + [relative_error(getattr(new, key), want) for key, want in ref.items()])
    return Evidence(_describe(inst), worst, ROUND_IDENTITY_RTOL, worst <= ROUND_IDENTITY_RTOL,
                    details={"max_relative_error": worst})


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

