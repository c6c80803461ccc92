"""Algorithms 1 (server) and 2 (client) of DoCoFL: with identity compressors DoCoFL is SGD (Corollary 3.5), the
clients' model estimate is unbiased and its error is eq. (23)'s, the anchor queue keeps every anchor a client may
need, the two-class participation samples every client with probability S/N, and the printed steps of Algorithm 2
reproduce the library's iterates.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import replace
from typing import Any

import numpy as np

from ...algorithms.docofl import DoCoFL, TwoClassParticipation
from ...algorithms.fedavg import FedAvg
from ...compressors.ecuq import ECUQ
from ...compressors.noise import Identity, ScaledRademacher, Zero
from ...compressors.quantizers import QSGD, DeterministicUniformQuantizer
from ...compressors.sparsifiers import RandK
from ...participation import Full, UniformSubset
from ...problems.base import Problem
from ...problems.quadratic import QuadraticProblem, quadratic
from ..registry import Evidence, claim
from ..tolerances import EXACT_REL, FEW_OPS_REL, IDENTITY_TOL, Z_MONTE_CARLO
from ._shared import exact_moments, run_iterates

__all__ = ["sgd_reference", "algorithm2_reference"]


# ---------------------------------------------------------------------------------------------------------
# Corollary 3.5: omega = 0 reproduces SGD / FedAvg iterates
# ---------------------------------------------------------------------------------------------------------


def _identity_instances(thorough: bool):
    anchors = [Identity(), ECUQ(b=2.0), Zero()]
    seeds = range(3) if thorough else range(1)
    for s in seeds:
        for cw in anchors:
            for ref in ("fedavg", "sgd"):
                yield {"anchor": cw, "seed": s, "n": 8, "S": 4, "d": 6, "K": 3, "V": 2, "rounds": 40,
                       "reference": ref}
    # both classes' defaults (every client, K = 10, V = 3, step 1/L, exact gradients) on unequal client weights
    # and a shared Hessian (so FedAvg's default 1/L is DoCoFL's 1/L_f): DoCoFL is then full-batch GD, FedAvg too
    yield {"anchor": Identity(), "seed": 0, "n": 8, "d": 6, "rounds": 40, "reference": "defaults"}


def sgd_reference(problem: Problem, participation: TwoClassParticipation, S: int, step: float, rounds: int,
                  seed: int, x0: np.ndarray) -> np.ndarray:
    """Minibatch SGD with client sampling (FedAvg with one local step) consuming the generator exactly like
    DoCoFL with deterministic compressors: participation draw, noise seed, then gradient noise."""
    rng = np.random.default_rng(seed)
    x = np.array(x0, dtype=np.float64)
    N = problem.n_clients
    xs = [x]
    for _ in range(rounds):
        clients, _ = participation.draw(N, S, rng)
        noise = np.random.default_rng(int(rng.integers(0, 2**63 - 1)))
        G = problem.stochastic_grads(np.broadcast_to(x, (S, x.size)), noise, clients=clients)
        x = x - step * ((N * problem.weights[clients]) @ G / S)
        xs.append(x)
    return np.array(xs)


@claim(cites=("Corollary 3.5",),
       id="docofl.identity_is_sgd", paper="docofl", reference="footnote 3",
       statement="with C_c = C_g = identity, DoCoFL's iterates equal those of the library's FedAvg (one local SGD "
                 "step, uniform subsets) and of minibatch SGD with the two-class sampling (same generator) for any "
                 "anchor compressor C_w (identity, ECUQ 2 bits, C_w = 0): max_t ||w^DoCoFL - w^ref|| <= "
                 "1e-10 (1 + ||w||)",
       kind="metamorphic", instances=_identity_instances, runs=("docofl", "fedavg"))


def check_identity_is_sgd(inst: dict) -> Evidence:
    if inst.get("reference") == "defaults":
        return _identity_at_defaults(inst)
    p = quadratic(n_clients=inst["n"], dim=inst["d"], mu=0.5, L=2.0, zeta2=1.0, seed=inst["seed"]).with_noise(0.3)
    lead = inst["K"] * (inst["V"] - 1)
    x0 = np.full(inst["d"], 2.0)
    reference = inst.get("reference", "sgd")
    if reference == "fedavg":
        # the library's FedAvg with one local SGD step and uniform S-subsets (independent implementation)
        part = TwoClassParticipation(lead_strong=lead)
        fedavg = FedAvg(local_steps=1, local_step=0.2, participation=UniformSubset(inst["S"]), stochastic=True)
        ref, _ = run_iterates(fedavg, p, inst["rounds"], inst["seed"], x0)
    else:
        part = TwoClassParticipation(lead_strong=min(1, lead), lead_weak=lead, strong_fraction=0.5)
        ref = sgd_reference(p, part, inst["S"], 0.2, inst["rounds"], inst["seed"], x0)
    alg = DoCoFL(step=0.2, n_sampled=inst["S"], period=inst["K"], queue_size=inst["V"],
                 anchor_compressor=inst["anchor"], participation=part)
    xs, _ = run_iterates(alg, p, inst["rounds"], inst["seed"], x0)
    dev = float(np.max(np.linalg.norm(xs - ref, axis=1) / (1 + np.linalg.norm(ref, axis=1))))
    return Evidence(f"C_w={inst['anchor'].name} vs {reference} seed={inst['seed']}", dev, IDENTITY_TOL, dev <= IDENTITY_TOL,
                    details={"final_dist_to_opt": float(np.linalg.norm(xs[-1] - p.certificate.x_star))})


def _identity_at_defaults(inst: dict) -> Evidence:
    """DoCoFL and FedAvg with their class defaults (FedAvg with every client) on a shared-Hessian quadratic with
    unequal weights and exact gradients: both are w - (1/L) sum_i p_i grad f_i(w)."""
    n, d = inst["n"], inst["d"]
    rng = np.random.default_rng(inst["seed"])
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    A = Q @ np.diag(np.linspace(0.5, 2.0, d)) @ Q.T
    A = 0.5 * (A + A.T)
    weights = np.linspace(1.0, 3.0, n)
    p = QuadraticProblem(np.broadcast_to(A, (n, d, d)).copy(), rng.normal(size=(n, d)) @ A,
                         weights=weights / weights.sum())
    x0 = np.full(d, 2.0)
    defaults = DoCoFL.__dataclass_fields__
    lead = defaults["period"].default * (defaults["queue_size"].default - 1)  # the widest window the queue allows
    alg = DoCoFL(anchor_compressor=inst["anchor"], correction_compressor=Identity(), uplink_compressor=Identity(),
                 participation=TwoClassParticipation(lead_strong=lead), stochastic=False)
    xs, _ = run_iterates(alg, p, inst["rounds"], inst["seed"], x0)
    ref, _ = run_iterates(FedAvg(participation=Full()), p, inst["rounds"], inst["seed"], x0)
    dev = float(np.max(np.linalg.norm(xs - ref, axis=1) / (1 + np.linalg.norm(ref, axis=1))))
    return Evidence(f"C_w={inst['anchor'].name} vs fedavg, both classes' defaults, unequal weights", dev, IDENTITY_TOL,
                    dev <= IDENTITY_TOL, details={"final_dist_to_opt": float(np.linalg.norm(xs[-1] - p.certificate.x_star))})


# ---------------------------------------------------------------------------------------------------------
# Footnote 3 and eq. (23): the unbiased model estimate with a biased anchor
# ---------------------------------------------------------------------------------------------------------


def _estimate_instances(thorough: bool):
    comps = [ScaledRademacher(scale=0.7), ScaledRademacher(scale=0.4, per_coordinate=True), RandK(k=2), QSGD(s=2)]
    for c in comps:
        yield {"correction": c, "d": 8, "seed": 0, "draws": 20000 if thorough else 4000}


def _fixed_anchor_state(d: int, seed: int, correction: Any, b_w: float = 2.0):
    """A DoCoFL state at round 1 whose queue holds ECUQ(y) for a random y, and the current w != y."""
    rng = np.random.default_rng(seed)
    y = rng.lognormal(size=d)
    w = y + 0.3 * rng.normal(size=d)
    alg = DoCoFL(step=0.1, period=1, queue_size=2, anchor_compressor=ECUQ(b=b_w), correction_compressor=correction,
                 participation=TwoClassParticipation(lead_strong=1))
    prob = quadratic(n_clients=2, dim=d, mu=1.0, L=2.0, seed=seed)
    st = alg.enqueue(alg.init(prob, y), rng)          # anchor of round 0 = ECUQ(y)
    st = replace(st, x=w, t=1)                        # round 1, model moved to w
    return alg, st, y, w


@claim(id="docofl.unbiased_estimate", paper="docofl", reference="footnote 3 (induced compressor)",
       statement="with a biased deterministic anchor ECUQ(y) != y and an unbiased C_c, the client's estimate "
                 "w_hat = ECUQ(y) + C_c(w - ECUQ(y)) is unbiased: E w_hat = w (exact from marginals, and Monte "
                 "Carlo through DoCoFL.client_estimates with z <= 5)",
       kind="identity", instances=_estimate_instances)


def check_unbiased_estimate(inst: dict) -> Evidence:
    comp = inst["correction"]
    alg, st, y, w = _fixed_anchor_state(inst["d"], inst["seed"], comp)
    y_hat = st.anchors[0]
    anchor_bias = float(np.linalg.norm(y_hat - y))
    mean_c, _ = exact_moments(comp, (w - y_hat)[None])
    exact_err = float(np.max(np.abs(y_hat + mean_c[0] - w)) / (1 + np.max(np.abs(w))))
    R = inst["draws"]
    est = alg.client_estimates(st, np.ones(R, dtype=np.int64), np.random.default_rng(inst["seed"] + 1))
    W = est["estimates"]
    se = W.std(0, ddof=1) / math.sqrt(R)
    dev = np.abs(W.mean(0) - w)
    z = float(np.max(np.where(se > 0, dev / np.where(se > 0, se, 1.0), np.where(dev < EXACT_REL, 0.0, np.inf))))
    ok = anchor_bias > 0 and exact_err <= EXACT_REL and z <= Z_MONTE_CARLO
    return Evidence(f"C_c={comp.name} d={inst['d']}", z, Z_MONTE_CARLO, ok,
                    details={"anchor_bias_norm": anchor_bias, "exact_mean_error": exact_err, "mc_draws": R})


@claim(cites=("Assumption 3.3",),
       id="docofl.eq23_correction_error", paper="docofl", reference="eq. (23)",
       statement="E||w_hat - w||^2 = omega^2 ||w - y_hat||^2 exactly for scaled Rademacher and rand-k (omega^2 = "
                 "d/k - 1), and <= for QSGD; exact from marginals and Monte Carlo through DoCoFL (z <= 5)",
       kind="identity", instances=_estimate_instances)


def check_eq23(inst: dict) -> Evidence:
    comp = inst["correction"]
    d = inst["d"]
    alg, st, y, w = _fixed_anchor_state(d, inst["seed"], comp)
    y_hat = st.anchors[0]
    corr2 = float(np.sum((w - y_hat) ** 2))
    nmse = comp.omega(d)
    _, mse = exact_moments(comp, (w - y_hat)[None])
    exact_is_equality = comp.name in ("scaled_rademacher", "rand_k")
    exact_ok = (abs(mse[0] - nmse * corr2) <= IDENTITY_TOL * nmse * corr2) if exact_is_equality else \
        (mse[0] <= nmse * corr2 * (1 + EXACT_REL))
    R = inst["draws"]
    est = alg.client_estimates(st, np.ones(R, dtype=np.int64), np.random.default_rng(inst["seed"] + 2))
    err = np.sum((est["estimates"] - w) ** 2, axis=1)
    # scaled Rademacher (one sign per row) has a deterministic error: its spread is rounding only
    z = (err.mean() - mse[0]) / max(err.std(ddof=1) / math.sqrt(R), 1e-12 * mse[0])
    ok = bool(exact_ok and abs(z) <= Z_MONTE_CARLO)
    return Evidence(f"C_c={comp.name} d={d}", float(mse[0] / corr2), nmse, ok, tightness=float(mse[0] / corr2 / nmse),
                    details={"mc_z": float(z), "equality_expected": exact_is_equality})


# ---------------------------------------------------------------------------------------------------------
# Algorithm 1: queue and staleness invariants; Section 3.2: participation probabilities
# ---------------------------------------------------------------------------------------------------------


def _queue_instances(thorough: bool):
    for K, V in ([(1, 1), (1, 4), (3, 1), (3, 3), (10, 3), (4, 5)] if thorough else [(1, 3), (3, 3), (10, 3)]):
        yield {"K": K, "V": V, "rounds": 4 * K * V + 5, "seed": 0}


@claim(cites=("Algorithm 1", "Algorithm 2"),
       id="docofl.queue_invariants.derived", paper="docofl", reference="derived by fedtheory",
       statement="with notification leads <= K(V-1): every client's anchor is still queued at participation, "
                 "staleness <= KV - 1 (attained), the queue holds exactly the V most recent anchors (rounds K floor(t/K), "
                 "K floor(t/K) - K, ...), the round-0 correction "
                 "is w_0 - C_w(w_0), and a lead > K(V-1) is rejected",
       kind="invariant", derived=True, instances=_queue_instances, runs=("docofl",))


def check_queue(inst: dict) -> Evidence:
    K, V, T = inst["K"], inst["V"], inst["rounds"]
    lead = K * (V - 1)
    p = quadratic(n_clients=8, dim=4, mu=0.5, L=2.0, zeta2=1.0, seed=inst["seed"])
    cw = ECUQ(b=2.0)
    alg = DoCoFL(step=0.1, n_sampled=4, period=K, queue_size=V, anchor_compressor=cw,
                 participation=TwoClassParticipation(lead_strong=0, lead_weak=lead, strong_fraction=0.5))
    x0 = np.array([1.0, -2.0, 0.5, 3.0])
    rng = np.random.default_rng(inst["seed"])
    state = alg.init(p, x0)
    max_st = 0
    ok = True
    for t in range(T):
        state1 = alg.enqueue(state, rng)
        rounds = state1.anchor_rounds
        # Alg. 1 lines 3-5: after round t's enqueue the queue holds exactly the V most recent anchors
        newest = t // K
        held = sorted(int(r) for r in rounds[rounds >= 0])
        queue_ok = held == [K * j for j in range(max(0, newest - V + 1), newest + 1)]
        ok &= queue_ok and bool(np.count_nonzero(rounds >= 0) <= V)
        if not queue_ok:
            break  # a verdict now: the next round would need an anchor that has left the queue
        state, log = alg.round(p, state, rng)       # raises if an anchor has left the queue
        max_st = max(max_st, int(log.extra["max_staleness"]))
        if t == 0:
            c0 = np.sum((x0 - cw.compress(x0[None])[0][0]) ** 2)
            ok &= bool(abs(log.extra["correction_norm2"] - c0) <= EXACT_REL * (1 + c0))
    ok &= max_st <= K * V - 1
    try:
        DoCoFL(period=K, queue_size=V, participation=TwoClassParticipation(lead_strong=lead + 1))
        rejected = False
    except ValueError:
        rejected = True
    ok &= rejected
    return Evidence(f"K={K} V={V} lead={lead}", float(max_st), float(K * V - 1), bool(ok),
                    tightness=max_st / (K * V - 1) if K * V > 1 else None, details={"lead_rejected": rejected})


def _part_instances(thorough: bool):
    yield {"N": 12, "S": 4, "strong_fraction": 0.25, "rounds": 30000 if thorough else 6000, "seed": 0}
    yield {"N": 10, "S": 5, "strong_fraction": 0.6, "rounds": 30000 if thorough else 6000, "seed": 1}


@claim(id="docofl.participation", paper="docofl", reference="Sec. 3.2",
       statement="the two-class (strong/weak) process with proportional sampling gives |S_t| = S distinct clients "
                 "and P(i in S_t) = S/N for every client (exactly S_s/N_s = S_w/N_w; empirical z <= 5)",
       kind="statistical", instances=_part_instances)


def check_participation(inst: dict) -> Evidence:
    N, S, R = inst["N"], inst["S"], inst["rounds"]
    part = TwoClassParticipation(lead_strong=1, lead_weak=3, strong_fraction=inst["strong_fraction"])
    N_s, N_w, S_s, S_w = part.class_sizes(N, S)
    exact_ok = abs(S_s / N_s - S / N) < FEW_OPS_REL and abs(S_w / N_w - S / N) < FEW_OPS_REL
    rng = np.random.default_rng(inst["seed"])
    counts = np.zeros(N)
    sizes_ok = True
    for _ in range(R):
        c, _ = part.draw(N, S, rng)
        sizes_ok &= c.size == S and np.unique(c).size == S
        counts[c] += 1
    q = S / N
    z = float(np.max(np.abs(counts / R - q) / math.sqrt(q * (1 - q) / R)))
    ok = bool(exact_ok and sizes_ok and z <= Z_MONTE_CARLO)
    return Evidence(f"N={N} S={S} N_s={N_s}", z, Z_MONTE_CARLO, ok,
                    details={"max_freq": float(counts.max() / R), "S/N": q})


# ---------------------------------------------------------------------------------------------------------
# Algorithm 2 (client) with Algorithm 1 (server): the printed steps, by hand
# ---------------------------------------------------------------------------------------------------------


def algorithm2_reference(A: np.ndarray, b: np.ndarray, w0: np.ndarray, step: float, K: int, V: int,
                         draws: list[tuple[np.ndarray, np.ndarray]], C_w: Any, C_c: Any, C_g: Any
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Algorithms 1 and 2 of Dorfman et al. (2023) as printed, one client at a time, on f_i(w) = 1/2 w^T A_i w
    - b_i^T w with exact gradients and deterministic compressors:

    server, round t: if t mod K == 0: Q.enqueue(C_w(w_t)) (dequeue when full, capacity V);
    client i notified at s = max(t - lead_i, 0): y <- Q.top() at round s; at round t: Delta = C_c(w_t - y),
    w_hat = y + Delta, g = grad f_i(w_hat), sends C_g(g); server: w_{t+1} = w_t - eta (1/S) sum_i C_g(g_i).

    Returns the iterates (T+1, d) and the per-round mean ||w_hat - w_t||^2. The per-client loop is the printed
    algorithm on a tiny instance (a reference, not a hot path)."""
    Q: deque = deque(maxlen=V)
    top_at: dict[int, tuple[int, np.ndarray]] = {}
    w = np.array(w0, dtype=np.float64)
    xs, errs = [w.copy()], []
    for t, (clients, leads) in enumerate(draws):
        if t % K == 0:
            y_new, _ = C_w.compress(w[None, :], None)
            Q.append((t, y_new[0].copy()))
        top_at[t] = Q[-1]
        us, e = [], []
        for i, lead in zip(clients, leads):
            s = max(t - int(lead), 0)
            r, y = top_at[s]
            if not any(r == rr for rr, _ in Q):
                raise AssertionError(f"round {t}: client {i}'s anchor (round {r}) left the queue")
            delta, _ = C_c.compress((w - y)[None, :], None)
            w_hat = y + delta[0]
            g = A[i] @ w_hat - b[i]
            u, _ = C_g.compress(g[None, :], None)
            us.append(u[0])
            e.append(float(np.sum((w_hat - w) ** 2)))
        w = w - step * np.mean(us, axis=0)
        xs.append(w.copy())
        errs.append(float(np.mean(e)))
    return np.array(xs), np.array(errs)


def _alg2_instances(thorough: bool):
    yield {"N": 6, "S": 4, "d": 5, "K": 2, "V": 3, "lead_strong": 1, "lead_weak": 4, "rounds": 25, "seed": 0}
    yield {"N": 4, "S": 4, "d": 3, "K": 3, "V": 2, "lead_strong": 0, "lead_weak": 3, "rounds": 20, "seed": 1}


@claim(cites=("Algorithm 2", "Algorithm 1"),
       id="docofl.appendix.algorithm2", paper="docofl", reference="footnote 3",
       statement="DoCoFL's iterates and clients' estimation errors equal those of Algorithms 1-2 executed as "
                 "printed (queue of capacity V, anchor = Q.top() at the notification round, Delta = C_c(w_t - y), "
                 "w_hat = y + Delta, uplink C_g(grad f_i(w_hat)), w_{t+1} = w_t - eta mean), with two notification "
                 "leads and deterministic ECUQ / uniform quantizers (to 1e-12)",
       kind="identity", instances=_alg2_instances, runs=("docofl",))


def check_algorithm2(inst: dict) -> Evidence:
    N, S, d, K, V, T = (inst[k] for k in ("N", "S", "d", "K", "V", "rounds"))
    rng = np.random.default_rng(inst["seed"])
    Qm = rng.normal(size=(N, d, d))
    A = np.einsum("nij,nkj->nik", Qm, Qm) / d + 0.5 * np.eye(d)
    b = rng.normal(size=(N, d)) * 2.0
    p = QuadraticProblem(A, b)
    C_w, C_c, C_g = ECUQ(b=2.0), DeterministicUniformQuantizer(levels=16), DeterministicUniformQuantizer(levels=8)
    alg = DoCoFL(step=0.2, n_sampled=S, period=K, queue_size=V, anchor_compressor=C_w, correction_compressor=C_c,
                 uplink_compressor=C_g, stochastic=False,
                 participation=TwoClassParticipation(lead_strong=inst["lead_strong"], lead_weak=inst["lead_weak"],
                                                     strong_fraction=0.5))
    w0 = rng.normal(size=d) + 3.0
    state = alg.init(p, w0)
    draws, xs, errs = [], [state.x], []
    for _ in range(T):
        dr = alg.draw(p, state, rng)
        draws.append((dr.clients, dr.leads))
        state, log = alg.round_given(p, state, dr)
        xs.append(state.x)
        errs.append(log.extra["estimation_error"])
    ref_x, ref_e = algorithm2_reference(A, b, w0, 0.2, K, V, draws, C_w, C_c, C_g)
    dx = float(np.max(np.abs(np.array(xs) - ref_x)) / max(1.0, np.max(np.abs(ref_x))))
    de = float(np.max(np.abs(np.array(errs) - ref_e)) / max(1e-300, np.max(np.abs(ref_e))))
    leads_seen = sorted({int(v) for _, ld in draws for v in ld})
    return Evidence(f"N={N} S={S} d={d} K={K} V={V} leads={leads_seen}", max(dx, de), EXACT_REL,
                    bool(max(dx, de) <= EXACT_REL and float(np.max(ref_e)) > 0),
                    details={"max_rel_iterate_diff": dx, "max_rel_estimation_error_diff": de,
                             "max_estimation_error": float(np.max(ref_e))})
