"""DANE, DANE+ (Algorithm 1) and FedRed, FedRed-GD, FedRed-SGD (Algorithms 2 and 3), transcribed client by client
from Jiang, Rodomanov & Stich, "Federated Optimization with Doubly Regularized Drift Correction", ICML 2024.

Every reference below is a plain loop over the clients written from the paper's equations; it reads the
implementation's hyperparameters as attributes (``alg.lam``, ``alg.eta``, ...) and resolves their ``None``
defaults from the problem's certificate itself (the defaults are documented in fedtheory/algorithms/dane.py and
fedtheory/algorithms/fedred.py: lam = 2 delta_A for standard averaging, 2 delta_B for a single selected client,
m = lam, eta = 1/L). It shares no code with :mod:`fedtheory.algorithms`, :mod:`fedtheory.local` or
:mod:`fedtheory.compressors`: the local solvers (exact argmin, GD / Nesterov's fast GD with the paper's accuracy
rules, the authors' code's last-iterate GD and its stopping rule, local SGD) are written out again here, one
client at a time.

Only the problem's public oracles are used (``grads``, ``stochastic_grads``, ``hessians``, ``values`` and the
certificate's constants): the problems are certified separately (docs/design.md).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..problems.quadratic import QuadraticProblem
from .registry import Expected, reference

__all__ = ["dane_round", "fedred_round", "exact_local_argmin"]

#: Bits of one uncompressed float64 coordinate (the accounting of fedtheory/algorithms/base.py's dense_log).
FLOAT_BITS = 64
#: The absolute term that the authors' code (mlolab/S-DANE, ``src/optimizers/fedred.py``, ``test_critertion``)
#: adds to the squared tolerance of its DANE+ stopping rule.
AUTHORS_FLOOR = 1e-6


# ----------------------------------------------------------------------------------------------------------------
# one client's oracles
# ----------------------------------------------------------------------------------------------------------------

def _grad(problem: Any, i: int, y: np.ndarray) -> np.ndarray:
    """grad f_i(y), from the problem's oracle for client i alone."""
    return problem.grads(np.asarray(y, dtype=float)[None, :], np.array([i]))[0]


def _hessian(problem: Any, i: int, y: np.ndarray) -> np.ndarray:
    """nabla^2 f_i(y): the problem's ``hessians`` oracle when it has one, else central differences of the gradient
    (exact up to rounding on quadratics; on other problems Newton below still converges to the exact root, since the
    residual it drives to zero is the exact gradient)."""
    oracle = getattr(problem, "hessians", None)
    if callable(oracle):
        return oracle(np.asarray(y, dtype=float)[None, :], np.array([i]))[0]
    d = len(y)
    H = np.empty((d, d))
    for j in range(d):
        step = 1e-4 * max(1.0, abs(float(y[j])))
        e = np.zeros(d)
        e[j] = step
        H[:, j] = (_grad(problem, i, y + e) - _grad(problem, i, y - e)) / (2.0 * step)
    return 0.5 * (H + H.T)


def exact_local_argmin(problem: Any, i: int, lin: np.ndarray, prox: float, center: np.ndarray) -> np.ndarray:
    """argmin_x f_i(x) + <lin, x> + prox/2 ||x - center||^2 (strongly convex: prox + mu_i > 0).

    Quadratics f_i = 1/2 x^T A_i x - b_i^T x: the linear system (A_i + prox I) x = b_i - lin + prox center, solved
    with ``np.linalg.solve``. Other problems: Newton's method on the gradient from x = center with Armijo
    backtracking, until ||grad|| <= 1e-13 of the terms' scale (the implementation documents 1e-12) or stagnation.
    """
    d = problem.dim
    if isinstance(problem, QuadraticProblem):
        A_i = problem.A[i] if problem.A.ndim == 3 else np.diag(problem.A[i])
        return np.linalg.solve(A_i + prox * np.eye(d), problem.b[i] - lin + prox * center)

    def F(x: np.ndarray) -> float:
        return float(problem.values(x[None, :], np.array([i]))[0] + lin @ x + 0.5 * prox * (x - center) @ (x - center))

    def dF(x: np.ndarray) -> np.ndarray:
        return _grad(problem, i, x) + lin + prox * (x - center)

    x = np.array(center, dtype=float)
    g = dF(x)
    scale = max(1.0, float(np.linalg.norm(g)), float(np.linalg.norm(lin)), prox * float(np.linalg.norm(center)))
    best = (float(np.linalg.norm(g)), x.copy())
    for _ in range(200):
        if np.linalg.norm(g) <= 1e-13 * scale:
            break
        direction = np.linalg.solve(_hessian(problem, i, x) + prox * np.eye(d), g)
        t, f0, slope = 1.0, F(x), float(g @ direction)
        while t > 1e-12 and F(x - t * direction) > f0 - 1e-4 * t * slope and slope > 1e-14 * abs(f0):
            t *= 0.5
        x = x - t * direction
        g = dF(x)
        if np.linalg.norm(g) < best[0]:
            best = (float(np.linalg.norm(g)), x.copy())
        elif best[0] <= 1e-12 * scale:
            break
    return best[1]


# ----------------------------------------------------------------------------------------------------------------
# inexact local solvers on F(y) = f_i(y) + <lin, y> + prox/2 ||y - center||^2, one client
# ----------------------------------------------------------------------------------------------------------------

def _descent(problem: Any, i: int, lin: np.ndarray, prox: float, center: np.ndarray, start: np.ndarray, *,
             step: float, momentum: float, rule: str, tol: float, floor: float, max_steps: int
             ) -> tuple[np.ndarray, int, bool]:
    """(Fast) GD y_{k+1} = z_k - s grad F(z_k), z_{k+1} = y_{k+1} + beta (y_{k+1} - y_k), z_0 = start, checking the
    accuracy rule at every evaluated point z_k (Algorithm 1's local condition, Theorems 3/4, Corollary 2):

    * ``"relative"`` ||grad F(z)|| <= tol ||z - start||  or  ||grad F(z)|| <= floor   (Thm 4, tol = e_r)
    * ``"absolute"`` ||grad F(z)|| <= max(tol, floor)                                 (Thm 3)
    * ``"steps"``    exactly ``max_steps`` updates, returning the evaluated point of least ||grad F|| (Cor 2).

    ``max_steps`` caps the first two rules. Returns (point, updates made, rule met)."""
    z = np.array(start, dtype=float)
    y_prev = z.copy()
    best = (math.inf, z.copy())
    for k in range(max_steps + 1):
        g = _grad(problem, i, z) + lin + prox * (z - center)
        gnorm = float(np.linalg.norm(g))
        if gnorm < best[0]:
            best = (gnorm, z.copy())
        finite = bool(np.all(np.isfinite(z)) and np.all(np.isfinite(g)))
        if rule == "relative":
            met = gnorm <= tol * float(np.linalg.norm(z - start)) or gnorm <= floor
        elif rule == "absolute":
            met = gnorm <= max(tol, floor)
        else:
            met = False
        met = met and finite
        if met or k == max_steps or not finite:
            if rule == "steps":
                return best[1], k, finite
            return z, k, met
        y = z - step * g
        z = y + momentum * (y - y_prev)
        y_prev = y
    raise AssertionError("unreachable")


def _last_iterate_gd(problem: Any, i: int, lin: np.ndarray, prox: float, center: np.ndarray, *, step: float,
                     max_steps: int, stop_tol: float | None) -> tuple[np.ndarray, int, bool]:
    """The authors' code's local GD (mlolab/S-DANE ``src/optimizers/fedred.py``): from z_0 = center,

        g_k = grad f_i(z_k) + lin,  z_{k+1} = z_k - s (g_k + prox (z_k - center)),
        stop if ||g_k + prox (z_{k+1} - center)||^2 < stop_tol^2 ||z_{k+1} - center||^2 + 1e-6,

    returning z_{k+1} (``stop_tol=None``: exactly ``max_steps`` steps, the last iterate). Returns (point, steps,
    rule met; True without a rule)."""
    z = np.array(center, dtype=float)
    for k in range(max_steps):
        g = _grad(problem, i, z) + lin
        z_next = z - step * (g + prox * (z - center))
        if stop_tol is not None:
            D = g + prox * (z_next - center)
            if D @ D < stop_tol ** 2 * float((z_next - center) @ (z_next - center)) + AUTHORS_FLOOR:
                return z_next, k + 1, True
        z = z_next
    return z, max_steps, stop_tol is None


def _dense_log(problem: Any, up: float, down: float, participants: int, evals: int,
               extra: dict[str, float]) -> dict[str, float]:
    """The logged accounting of uncompressed float64 vectors (``up``/``down`` vectors of dimension d in total)."""
    d = problem.dim
    log = {"uplink_bits": FLOAT_BITS * d * up, "downlink_bits": FLOAT_BITS * d * down, "uplink_nnz": d * up,
           "downlink_nnz": d * down, "vectors_up": up, "vectors_down": down, "local_grad_evals": evals,
           "participants": participants, "communicated": 1.0}
    log.update({f"extra.{k}": v for k, v in extra.items()})
    return log


# ----------------------------------------------------------------------------------------------------------------
# Algorithm 1: DANE / DANE+
# ----------------------------------------------------------------------------------------------------------------

def _dane_lam(alg: Any, problem: Any) -> float:
    if alg.lam is not None:
        return float(alg.lam)
    c = problem.certificate
    return 2.0 * (c.delta_A if alg.averaging == "standard" else c.delta_B)


@reference("dane", "dane+")
def dane_round(alg: Any, problem: Any, state: Any, draw: Any) -> Expected:
    """One round r of DANE+ (Algorithm 1; DANE is its exact-solve, control-variate (1), averaged case).

    Control variate, for every client i (n = problem.n_clients, w the weights):
        (1)     h_i = grad f(x^r) - grad f_i(x^r) = sum_j w_j grad f_j(x^r) - grad f_i(x^r), recomputed each round;
        (B.84)  h_i is the state's, updated after the round as h_i <- h_i + m (x_{i,r+1} - x^{r+1}).
    Local model of each running client (all clients, or the one selected client xi_r of ``draw.client``):
        x_{i,r+1} ~ argmin F_i(x) = f_i(x) + <h_i, x> + lam/2 ||x - x^r||^2
    by the exact argmin, by (fast) GD from x^r with the accuracy rule e_r = tol lam/(r+1) (Thm 4, relative),
    tol/(r+1)^q (Thm 3, absolute) or K steps (Cor 2, min-gradient point), by the authors' code's last-iterate GD
    (fixed K or its post-step rule), or by K steps of local SGD from x^r (DANE+-SGD). Step sizes: ``local_step``
    (read as the semi-implicit lr of the authors' code when asked: explicit step lr/(1 + lam lr)), else 1/(L_i + lam)
    (1/(L + lam) for SGD). Fast GD's momentum (sqrt(kappa_i) - 1)/(sqrt(kappa_i) + 1), kappa_i = (L_i + lam)/(mu_i +
    lam) (Nesterov 2004, 2.2.19).
    Server: x^{r+1} = sum_i w_i x_{i,r+1} (standard averaging), or x_{xi_r, r+1} (random or fixed selection).

    Randomness: the selected client comes from the draw under random averaging (a fixed schedule's client is
    schedule[r mod len], read from the algorithm, not the draw); DANE+-SGD regenerates its local noise from
    ``default_rng(draw.seed)``: one call of ``problem.stochastic_grads`` per local step, with the running clients'
    points stacked in client order (the problem's oracle fixes the order within a call).

    Logged (fedtheory's accounting, docs in fedtheory/algorithms/dane.py): vectors up n + n (n + 1 with one
    selected client) and down 2n with CV (1), n and n with (B.84); bits 64 d per vector; every client counted as a
    participant; local gradient evaluations: n for CV (1) plus, for each running client, K_i further ones for the
    paper's solvers (the start's gradient is CV (1)'s, K_i + 1 in all with (B.84)), K_i - 1 (K_i) for the last-iterate
    solvers, K for SGD; the local step counts (max, mean over running clients) and the clients whose rule was not
    met.
    """
    n = problem.n_clients
    w = problem.weights
    cert = problem.certificate
    lam = _dane_lam(alg, problem)
    x = np.asarray(state.x, dtype=float)
    r = int(state.r)
    gradient_cv = alg.control_variate == "gradient"
    if gradient_cv:
        G = [_grad(problem, i, x) for i in range(n)]
        grad_f = sum(w[j] * G[j] for j in range(n))
        h = [grad_f - G[i] for i in range(n)]
        evals = n
    else:
        h = [np.asarray(state.h[i], dtype=float) for i in range(n)]
        evals = 0
    # The selected client: drawn (xi_r ~ w) under random averaging; predetermined, schedule[r mod len], under fixed
    # selection (not random, so not taken from the draw); none under standard averaging.
    if alg.averaging == "random":
        selected: int | None = int(draw.client)
    elif alg.averaging == "fixed":
        selected = int(alg.schedule[r % len(alg.schedule)])
    else:
        selected = None
    running = list(range(n)) if selected is None else [selected]

    if alg.local_step is None:
        steps_of = [None] * n
    elif alg.step_convention == "semi_implicit":
        steps_of = [alg.local_step / (1.0 + lam * alg.local_step)] * n
    else:
        steps_of = [alg.local_step] * n

    local: dict[int, np.ndarray] = {}
    counts: list[int] = []
    met_all: list[bool] = []
    extra: dict[str, float] = {}
    if alg.solver == "exact":
        for i in running:
            local[i] = exact_local_argmin(problem, i, h[i], lam, x)
        extra = {"local_steps_max": 0.0, "local_steps_mean": 0.0}
    elif alg.stochastic:
        step = steps_of[0] if steps_of[0] is not None else 1.0 / (cert.L + lam)
        rng = np.random.default_rng(draw.seed)
        Z = {i: x.copy() for i in running}
        rows = None if len(running) == n else np.array(running)
        for _ in range(alg.local_steps):
            noisy = problem.stochastic_grads(np.array([Z[i] for i in running]), rng, rows)
            for row, i in enumerate(running):
                Z[i] = Z[i] - step * (noisy[row] + h[i] + lam * (Z[i] - x))
        local = Z
        evals += len(running) * alg.local_steps
        extra = {"local_steps_max": float(alg.local_steps), "local_steps_mean": float(alg.local_steps)}
    else:
        last_iterate = alg.stopping == "authors" or (alg.stopping == "steps" and alg.local_output == "last")
        for i in running:
            step = steps_of[i] if steps_of[i] is not None else 1.0 / (cert.L_i[i] + lam)
            if last_iterate:
                stop_tol = alg.tol * lam / (r + 1) if alg.stopping == "authors" else None
                local[i], k, met = _last_iterate_gd(problem, i, h[i], lam, x, step=step, max_steps=alg.local_steps,
                                                    stop_tol=stop_tol)
                evals += k - (1 if gradient_cv else 0)
            else:
                momentum = 0.0
                if alg.solver == "fgd":
                    kappa = (cert.L_i[i] + lam) / (cert.mu_i[i] + lam)
                    momentum = (math.sqrt(kappa) - 1.0) / (math.sqrt(kappa) + 1.0)
                if alg.stopping == "relative":
                    rule, tol = "relative", alg.tol * lam / (r + 1)
                elif alg.stopping == "absolute":
                    rule, tol = "absolute", alg.tol / (r + 1) ** alg.tol_decay
                else:
                    rule, tol = "steps", 0.0
                local[i], k, met = _descent(problem, i, h[i], lam, x, x, step=step, momentum=momentum, rule=rule,
                                            tol=tol, floor=alg.tol_floor * state.grad0_norm,
                                            max_steps=alg.local_steps)
                evals += k + (0 if gradient_cv else 1)
            counts.append(k)
            met_all.append(met)
        extra = {"local_steps_max": float(max(counts)), "local_steps_mean": float(np.mean(counts)),
                 "local_not_converged": float(sum(not m for m in met_all))}

    x_new = sum(w[i] * local[i] for i in range(n)) if selected is None else local[selected]
    fields: dict[str, Any] = {"x": x_new, "r": r + 1}
    if gradient_cv:
        up, down = n + (1 if selected is not None else n), 2 * n
    else:
        m = float(alg.m) if alg.m is not None else lam
        fields["h"] = np.array([h[i] + m * (local[i] - x_new) for i in range(n)])
        up, down = n, n
    return Expected(state=fields, log=_dense_log(problem, up, down, n, evals, extra))


# ----------------------------------------------------------------------------------------------------------------
# Algorithms 2 and 3: FedRed, FedRed-GD, FedRed-SGD
# ----------------------------------------------------------------------------------------------------------------

@reference("fedred")
def fedred_round(alg: Any, problem: Any, state: Any, draw: Any) -> Expected:
    """Iteration k of FedRed (Algorithm 2) / FedRed-GD and FedRed-SGD (Algorithm 3).

    For every client i, with reference point x~ = ``state.x``, local iterate x_i = ``state.X[i]`` and control
    variate h_i = ``state.H[i]`` (eq. (4): grad f(x~) - grad f_i(x~)):
        F_i(x) = f_i(x) + <h_i, x> + lam/2 ||x - x~||^2 + 1/(2 eta) ||x - x_i||^2
        Alg. 2: x_i+ = argmin F_i (exact), or (fast) GD on F_i from x_i with step 1/(L_i + lam + 1/eta), stopping at
                ||grad F_i|| <= local_tol or after K = local_steps steps (min-gradient point); 1/eta = 0 at eta = inf
        Alg. 3: x_i+ = 1/(1 + lam eta) x_i + lam eta/(1 + lam eta) x~ - eta/(1 + lam eta) (g_i + h_i),
                g_i = grad f_i(x_i) (FedRed-GD) or the draw's stochastic gradient (FedRed-SGD).
    The shared coin theta_k (``draw.communicate``):
        theta_k = 1: x~+ = sum_i w_i x_i+ (or x_xi+ for the selected client xi = ``draw.client``); with the reset
                     option every x_i+ <- x~+; h_i+ = grad f(x~+) - grad f_i(x~+) (eq. (4) at the new point);
        theta_k = 0: x~+ = x~, h_i+ = h_i, and nothing is sent.
    Defaults (fedtheory/algorithms/fedred.py): lam = 2 delta_A (standard) or 2 delta_B (random), eta = 1/L.

    Randomness: the coin, the client and FedRed-SGD's stochastic gradients are the draw's (drawn by the
    implementation's ``draw`` before the round; they are used as given).

    Logged (Table 1, footnote 5; fedtheory's accounting in fedtheory/algorithms/fedred.py): nothing sent when
    theta_k = 0; else n + n vectors up (1 + n with one selected client) and 2n down. Local gradients: n per
    iteration for Alg. 3 (a gradient cached after a reset is charged when used), sum_i (K_i + 1) for Alg. 2's
    inexact solvers, 0 for its exact solves; plus the n control-variate gradients on communication unless a reset
    hands them to the next local step (deterministic local steps only). ``extra["exact_solves"]`` = n for Alg. 2's
    exact solves. The cached gradients (``G``) are compared too: they must be grad f_i at the new x_i.
    """
    n = problem.n_clients
    w = problem.weights
    cert = problem.certificate
    lam = float(alg.lam) if alg.lam is not None else \
        2.0 * (cert.delta_A if alg.selection == "standard" else cert.delta_B)
    eta = float(alg.eta) if alg.eta is not None else 1.0 / cert.L
    inv_eta = 0.0 if eta == math.inf else 1.0 / eta
    x_ref = np.asarray(state.x, dtype=float)
    X = [np.asarray(state.X[i], dtype=float) for i in range(n)]
    H = [np.asarray(state.H[i], dtype=float) for i in range(n)]

    new_X: list[np.ndarray] = []
    evals = 0
    for i in range(n):
        if alg.solver == "linearized":
            g = np.asarray(draw.grads[i], dtype=float) if alg.stochastic else _grad(problem, i, X[i])
            new_X.append(X[i] / (1.0 + lam * eta) + lam * eta / (1.0 + lam * eta) * x_ref
                         - eta / (1.0 + lam * eta) * (g + H[i]))
            evals += 1
            continue
        # lam/2 ||x - x~||^2 + 1/(2 eta) ||x - x_i||^2 = (lam + 1/eta)/2 ||x - c_i||^2 + const
        total = lam + inv_eta
        center = (lam * x_ref + inv_eta * X[i]) / total if total > 0 else X[i]
        if alg.solver == "exact":
            new_X.append(exact_local_argmin(problem, i, H[i], total, center))
            continue
        momentum = 0.0
        if alg.solver == "fgd":
            kappa = (cert.L_i[i] + total) / (cert.mu_i[i] + total)
            momentum = (math.sqrt(kappa) - 1.0) / (math.sqrt(kappa) + 1.0)
        rule = "absolute" if alg.local_tol > 0 else "steps"
        xi, k, _ = _descent(problem, i, H[i], total, center, X[i], step=1.0 / (cert.L_i[i] + total),
                            momentum=momentum, rule=rule, tol=alg.local_tol, floor=0.0, max_steps=alg.local_steps)
        new_X.append(xi)
        evals += k + 1
    extra = {"exact_solves": float(n if alg.solver == "exact" else 0)}

    if not draw.communicate:
        log = {"local_grad_evals": evals, "participants": n, "communicated": 0.0, "uplink_bits": 0.0,
               "downlink_bits": 0.0, "extra.exact_solves": extra["exact_solves"]}
        return Expected(state={"x": x_ref, "X": np.array(new_X), "H": np.array(H), "k": state.k + 1}, log=log)

    selected = int(draw.client) if alg.selection == "random" else None  # xi_k ~ w, drawn only on communication
    x_new = new_X[selected] if selected is not None else sum(w[i] * new_X[i] for i in range(n))
    G_ref = [_grad(problem, i, x_new) for i in range(n)]
    grad_f = sum(w[j] * G_ref[j] for j in range(n))
    fields: dict[str, Any] = {"x": x_new, "H": np.array([grad_f - G_ref[i] for i in range(n)]), "k": state.k + 1}
    fields["X"] = np.array([x_new] * n) if alg.reset else np.array(new_X)
    if alg.reset and alg.solver != "exact" and not alg.stochastic:
        fields["G"] = np.array(G_ref)  # handed to the next local step, charged there
    else:
        evals += n
    up = (1 if selected is not None else n) + n
    return Expected(state=fields, log=_dense_log(problem, up, 2 * n, n, evals, extra))
