"""OFedIQ (Kwon, Park & Hong, IEEE TPAMI 2023), Algorithms 1 (FedOGD) and 2 (OFedIQ) against their printed
updates, eqs. (4)-(5) and (6)-(9) with the (s, b)-quantizer of Definition 2 as transcribed in fedtheory/references/compression.py, and the
reductions of Section 3.2 (OFedIQ subsumes the benchmarks).
"""
from __future__ import annotations

import numpy as np

from ...algorithms.ofediq import FedOGD, OFedIQ, OnlineDraw
from ...problems.online import online_logistic, online_ridge
from ...references.compression import sb_quantize_row as printed_quantizer  # Definition 2, one home
from ...run import run
from ...theory import ofediq as th
from ..patterns import relative_error
from ..registry import Evidence, claim
from ..tolerances import EXACT_REL, IDENTITY_TOL
from ._shared import describe, stream_problem

__all__ = ["per_sample_grads", "printed_quantizer"]

PAPER = "ofediq"


# ---------------------------------------------------------------------------------------------------------
# Algorithms 1 and 2 written from the paper
# ---------------------------------------------------------------------------------------------------------

def per_sample_grads(problem, t: int, W: np.ndarray) -> np.ndarray:
    """grad L(f(x_{k,t}; w_k), y_{k,t}) for every client, from the stream's data (eq. 21), written here:
    ridge 1/2 (x^T w - y)^2 + lam/2 ||w||^2, logistic log(1 + exp(-y x^T w)) + lam/2 ||w||^2."""
    X, y = problem.features[t], problem.labels[t]
    z = np.einsum("kd,kd->k", X, W)
    if problem.loss == "ridge":
        dz = z - y
    else:
        dz = -y / (1.0 + np.exp(y * z))
    return dz[:, None] * X + problem.lam * W


# ---------------------------------------------------------------------------------------------------------
# Algorithm 1 (FedOGD), eqs. (4)-(5)
# ---------------------------------------------------------------------------------------------------------

def _alg1_instances(thorough: bool):
    yield dict(loss="ridge", K=5, T=40, D=4, eta=0.05, seed=0)
    yield dict(loss="logistic", K=4, T=40, D=3, eta=0.2, seed=1)
    if thorough:
        yield dict(loss="ridge", K=30, T=300, D=8, eta=0.02, seed=2)


def _stream(inst: dict):
    make = online_ridge if inst["loss"] == "ridge" else online_logistic
    return make(inst["K"], inst["T"], inst["D"], heterogeneity=1.0, seed=inst["seed"])


@claim(cites=("Algorithm 1",),
       id="ofediq.statements.algorithm1", paper=PAPER,
       reference="Section 3.1, eqs. (4)-(5)",
       statement="fedtheory's FedOGD reproduces Algorithm 1: w_{k,t+1} = w_t - eta grad L(f(x_{k,t}; w_t), y_{k,t}) "
                 "(eq. 4), w_{t+1} = (1/K) sum_k w_{k,t+1} (eq. 5), every step to 1e-12 relative, and sends "
                 "m_{k,t} from all K clients: 32 K D bits per step",
       kind="identity", instances=_alg1_instances, runs=("ofediq",))
def check_algorithm1(inst: dict) -> Evidence:
    problem = _stream(inst)
    K, D, T, eta = problem.n_clients, problem.dim, problem.horizon, inst["eta"]
    alg = FedOGD(eta=eta)
    state = alg.init(problem, np.zeros(D))
    rng = np.random.default_rng(0)
    w = np.zeros(D)
    worst = 0.0
    for t in range(T):
        state, _ = alg.round(problem, state, rng)
        local = w - eta * per_sample_grads(problem, t, np.broadcast_to(w, (K, D)))  # eq. (4)
        w = local.sum(axis=0) / K  # eq. (5)
        worst = max(worst, float(np.max(np.abs(state.x - w))) / max(1.0, float(np.max(np.abs(w)))))
    bits = run(alg, problem, min(T, 5), seed=0).uplink_bits[1:]
    bits_ok = bool(np.all(bits == 32 * K * D))
    return Evidence(f"{inst['loss']} K={K} D={D} T={T} eta={eta:g}", worst, EXACT_REL, worst <= EXACT_REL and bits_ok,
                    details={"bits_32KD": bits_ok})


# ---------------------------------------------------------------------------------------------------------
# Algorithm 2 (OFedIQ), eqs. (6)-(9)
# ---------------------------------------------------------------------------------------------------------

def _alg2_instances(thorough: bool):
    yield dict(loss="ridge", K=6, T=24, D=5, eta=0.05, L=3, p=(0.3, 0.5, 0.7, 0.9, 1.0, 0.6), s=3, b=2, seed=3)
    yield dict(loss="ridge", K=5, T=20, D=4, eta=0.05, L=1, p=0.5, s=None, b=None, seed=4)
    yield dict(loss="logistic", K=4, T=24, D=6, eta=0.2, L=2, p=0.8, s=2, b=4, seed=5)
    if thorough:
        yield dict(loss="ridge", K=20, T=200, D=12, eta=0.02, L=4, p=0.4, s=5, b=5, seed=6)
        yield dict(loss="logistic", K=10, T=120, D=7, eta=0.1, L=1, p=0.3, s=1, b=1, seed=7)


@claim(cites=("Algorithm 2", "Definition 2"),
       id="ofediq.statements.algorithm2", paper=PAPER,
       reference="Section 3.2, eqs. (6)-(9) and (12)",
       statement="fedtheory's OFedIQ(L, p, s, b) reproduces Algorithm 2 given the same participation coins and "
                 "quantizer uniforms: g_{k,t} = w_t at the start of a period, theta_{k,t} otherwise (eq. 6); "
                 "theta_{k,t+1} = g_{k,t} - eta grad (eq. 7); at t in [T]_L, m_{k,t} = Q_{s,b}(-(theta_{k,t+1} - "
                 "g_{k,t-L+1})/(eta p_k)) (eq. 8, first form) and w_{t+1} = w_{t-L+1} - (eta/K) sum_{S_t} m_{k,t} "
                 "(eq. 9); the model in use is w_{psi_L(t)}; every step to 1e-10 relative",
       kind="identity", instances=_alg2_instances, runs=("ofediq",))
def check_algorithm2(inst: dict) -> Evidence:
    problem = _stream(inst)
    K, D, T, eta, L = problem.n_clients, problem.dim, problem.horizon, inst["eta"], inst["L"]
    p = np.broadcast_to(np.asarray(inst["p"], dtype=float), (K,)).copy()
    alg = OFedIQ(eta=eta, p=inst["p"], period=L, s=inst["s"], b=inst["b"])
    state = alg.init(problem, np.zeros(D))
    rng = np.random.default_rng(inst["seed"])
    w = np.zeros(D)  # w_{t-L+1}: the model in use during the period
    theta = np.zeros((K, D))
    worst = 0.0
    for t in range(T):  # 0-based t is the paper's time t + 1
        g = np.broadcast_to(w, (K, D)) if t % L == 0 else theta  # eq. (6)
        theta = g - eta * per_sample_grads(problem, t, g)  # eq. (7)
        draw = OnlineDraw(None, None)
        if (t + 1) % L == 0:  # t + 1 in [T]_L
            coins = rng.random(K) < p
            U = rng.random((K, D)) if inst["s"] is not None else None
            draw = OnlineDraw(None if np.all(p == 1.0) else coins, U)
            S = coins if not np.all(p == 1.0) else np.ones(K, dtype=bool)
            v = -(theta - w) / (eta * p[:, None])  # eq. (8), first form: g_{k,t-L+1} = w_{t-L+1}
            m = v if inst["s"] is None else np.array([printed_quantizer(v[k], U[k], inst["s"], inst["b"])
                                                      for k in range(K)])
            w = w - eta / K * m[S].sum(axis=0)  # eq. (9)
        state, _ = alg.round_given(problem, state, draw)
        worst = max(worst, float(np.max(np.abs(state.x - w))) / max(1.0, float(np.max(np.abs(w)))))
    return Evidence(f"{inst['loss']} K={K} D={D} T={T} L={L} s={inst['s']} b={inst['b']}", worst, IDENTITY_TOL,
                    worst <= IDENTITY_TOL)


# ---------------------------------------------------------------------------------------------------------
# Section 3.2: OFedIQ subsumes the benchmarks (eqs. (1), (5)-(8))
# ---------------------------------------------------------------------------------------------------------

def _reduction_instances(thorough: bool):
    yield dict(K=5, T=60, D=4, L=3, heterogeneity=1.0, seed=19)
    yield dict(K=3, T=40, D=3, L=4, heterogeneity=0.5, loss="logistic", seed=20)


@claim(id="ofediq.reductions", paper=PAPER, reference="Section 3.2 ('subsumes the benchmarks'), eqs. (1), (5)-(8)",
       statement="OFedIQ(1,1,inf) reproduces FedOGD's eq. (5) iterates to 1e-12; OFedIQ(L,1,inf) is local OGD with "
                 "periodic averaging (FedOMD); the two forms of eq. (8) agree to 1e-10; the model used at t is "
                 "w_{psi_L(t)} with psi_L(t) = floor((t-1)/L) L + 1",
       kind="metamorphic", instances=_reduction_instances, runs=("ofediq",))
def check_reductions(inst: dict) -> Evidence:
    problem = stream_problem(inst)
    K, T, L = problem.n_clients, problem.horizon, inst["L"]
    eta = 0.4 / problem.beta
    # FedOGD, eq. (5), written independently of the implementation
    w = np.zeros(problem.dim)
    ref = []
    for t in range(T):
        w = w - eta / K * problem.grads_at(t, w).sum(axis=0)
        ref.append(w)
    alg = OFedIQ(eta=eta)
    st = alg.init(problem, np.zeros(problem.dim))
    rng = np.random.default_rng(0)
    err_ogd = 0.0
    for t in range(T):
        st, _ = alg.round(problem, st, rng)
        err_ogd = max(err_ogd, relative_error(st.x, ref[t]))
    # FedOMD(L): local OGD from the global model, averaged every L steps; predictions use w_{psi_L(t)}
    alg = OFedIQ(eta=eta, period=L)
    st = alg.init(problem, np.zeros(problem.dim))
    theta = np.zeros((K, problem.dim))
    w = np.zeros(problem.dim)
    err_omd, err_forms, psi_ok = 0.0, 0.0, True
    used = {}
    for t in range(T):  # 0-based t is the paper's t + 1
        used[t + 1] = st.x.copy()
        if t % L == 0:
            theta = np.broadcast_to(w, theta.shape).copy()
        theta = theta - eta * problem.grads_at(t, theta)
        before = st
        st, log = alg.round(problem, st, rng)
        if (t + 1) % L == 0:
            first = -(theta - before.x) / eta  # first form of (8) with p = 1
            err_forms = max(err_forms, relative_error(first, st.acc))
            w = theta.mean(axis=0)
        err_omd = max(err_omd, relative_error(st.x, w))
    for t1 in range(1, T + 1):
        psi_ok &= bool(np.array_equal(used[t1], used[th.psi(t1, L)]))
    worst = max(err_ogd, err_omd)
    ok = err_ogd <= EXACT_REL and err_omd <= EXACT_REL and err_forms <= IDENTITY_TOL and psi_ok
    return Evidence(describe(inst), worst, EXACT_REL, ok, details={"fedogd_err": err_ogd, "fedomd_err": err_omd,
                                                          "eq8_forms_err": err_forms, "psi_ok": psi_ok})
