"""Claims of Kwon, Park & Hong, "Tighter Regret Analysis and Optimization of Online Federated Learning"
(FedOGD / OFedAvg / OFedIQ, items 1-20).

Problems are online ridge / logistic streams (:mod:`fedtheory.problems.online`) with w_1 = 0, exact prefix
comparators and sigma2_diff. Stochastic methods are checked by Monte Carlo means over seeds (the theorems bound
the expected regret; we report tightness = mean / bound and the standard error); sampling and quantization
expectations of one step are computed exactly by enumerating the draws through ``round_given``.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..algorithms.online import FedOGD, OFedAvg, OFedIQ, OnlineDraw
from ..compressors.sb_quantizer import SBQuantizer, sb_bits, sb_sigma2
from ..problems.online import OnlineProblem, online_from_dataset, online_logistic, online_ridge
from ..problems.quadratic import QuadraticProblem
from ..run import run
from ..theory import ofediq as th
from .patterns import relative_error
from .registry import Evidence, claim
from .space import InstanceSpace, Param

__all__: list[str] = []

PAPER = "ofediq"
#: One-sided z threshold for Monte Carlo comparisons (DESIGN.md).
Z = 5.0


def _kw(d: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.items())


def _problem(d: dict) -> OnlineProblem:
    kw = {k: v for k, v in d.items() if k in ("heterogeneity", "drift", "noise", "lam", "seed")}
    maker = online_logistic if d.get("loss") == "logistic" else online_ridge
    return maker(d["K"], d["T"], d["D"], **kw)


def _truncate(problem: OnlineProblem, T: int) -> OnlineProblem:
    return OnlineProblem(problem.features[:T], problem.labels[:T], loss=problem.loss, lam=problem.lam)


# =============================================================================================== quantizer
def _quantizer_instances(thorough: bool):
    rng = np.random.default_rng(0)
    for D in (1, 5, 37, 1000):
        for s in (1, 2, 3, 17):
            for b in sorted({1, 3, max(1, D // 10), D}):
                if b <= D and (thorough or D <= 37 or (s == 17 and b in (1, 100))):
                    u = rng.standard_normal(D) * rng.exponential(size=D)
                    yield {"D": D, "s": s, "b": b, "u": u}


@claim(cites=("Definition 2",),
       id="ofediq.quantizer.unbiased", paper=PAPER, reference="eq. (12)",
       statement="E[Q_{s,b}(u)] = u: analytically E[xi_i] = r_i for every coordinate, and the Monte Carlo mean "
                 "is within 5 SE per coordinate; Q(0) = 0 and b = D is lossless",
       kind="identity", instances=_quantizer_instances)
def check_quantizer_unbiased(inst: dict) -> Evidence:
    q = SBQuantizer(inst["s"], inst["b"])
    u = inst["u"][None]
    norms, r, m, p_up = q.decompose(u)
    mean_exact = norms * np.sign(u) * (m + p_up) / q.s
    err = relative_error(mean_exact, u)
    draws = 2000 if u.shape[1] >= 1000 else 10000
    rng = np.random.default_rng(1)
    Y = q.compress(np.repeat(u, draws, axis=0), rng)[0]
    # exact standard error of the two-point xi (an empirical SE is 0 when a rare round-up never occurs)
    se = (norms * np.sqrt(p_up * (1 - p_up)) / q.s)[0] / math.sqrt(draws)
    z = np.abs(Y.mean(axis=0) - u[0])
    # the normal approximation behind a z-test needs enough expected round-ups and round-downs per coordinate
    tested = (draws * p_up * (1 - p_up))[0] >= 10
    mc_ok = bool(np.all(z[tested] <= Z * se[tested]))
    z = np.where(tested, z, 0.0)
    zero_ok = bool(np.all(q.compress(np.zeros_like(u), rng)[0] == 0.0))
    lossless = SBQuantizer(q.s, u.shape[1]).compress(u, rng)[0]
    lossless_ok = bool(np.max(np.abs(lossless - u)) <= 4e-16 * np.max(np.abs(u)))
    ok = err <= 1e-12 and mc_ok and zero_ok and lossless_ok
    return Evidence(f"D={u.shape[1]} s={q.s} b={q.b}", err, 1e-12, ok,
                    details={"max_z": float(np.max(np.where(se > 0, z / np.where(se > 0, se, 1.0), 0.0))),
                             "coordinates_z_tested": int(tested.sum()), "zero_ok": zero_ok,
                             "lossless_b_eq_D": lossless_ok})


def _quantizer_build(point: dict) -> dict:
    """A point of the quantizer's class as the check's instance: an explicit vector ``u`` (the default points,
    stored as lists so a reported point stays JSON), or one drawn from ``seed``: a heavy-tailed random part
    (|N(0,1)| x Exp(1)^tail) mixed with a flat part of weight ``flat`` (flat vectors use the sigma_q^2 term fully,
    cf. ``_second_moment_instances``)."""
    if "u" in point:
        return {"D": int(point["D"]), "s": int(point["s"]), "b": int(point["b"]),
                "u": np.asarray(point["u"], dtype=np.float64)}
    D = int(point["D"])
    rng = np.random.default_rng(point["seed"])
    u = rng.standard_normal(D) * rng.exponential(size=D) ** point["tail"]
    u = (1 - point["flat"]) * u / max(float(np.linalg.norm(u)), 1e-300) + point["flat"] * np.ones(D) / math.sqrt(D)
    return {"D": D, "s": int(point["s"]), "b": int(point["b"]), "u": u}


def _quantizer_points(thorough: bool) -> list[dict]:
    return [{**inst, "u": inst["u"].tolist()} for inst in _quantizer_instances(thorough)]


_QUANTIZER_DEFAULTS = _quantizer_points(False)
_QUANTIZER_KEYS = {(pt["D"], pt["s"], pt["b"]) for pt in _QUANTIZER_DEFAULTS}
#: Q_{s,b}'s class: any u in R^D, any s >= 1 and block size b <= D (Definition 2). The default points are
#: ``_quantizer_instances(False)`` (same vectors); the thorough ones add the (D, s, b) that run adds (their
#: vectors come from the thorough run's draw sequence).
_QUANTIZER_SPACE = InstanceSpace(
    params=(Param("D", 1, 1000, log=True, integer=True), Param("s", 1, 20, integer=True),
            Param("b", 1, 1000, log=True, integer=True), Param("tail", 0.0, 2.0), Param("flat", 0.0, 1.0)),
    fixed={"seed": 0}, build=_quantizer_build, regime=lambda pt: int(pt["b"]) <= int(pt["D"]),
    defaults=tuple(_QUANTIZER_DEFAULTS),
    thorough=tuple(pt for pt in _quantizer_points(True) if (pt["D"], pt["s"], pt["b"]) not in _QUANTIZER_KEYS))


@claim(id="ofediq.quantizer.variance", paper=PAPER, reference="Section 3.3 (variance of Q_{s,b})",
       statement="E||Q(u) - u||^2 equals sum_l ||u_I||^2 sum_i (r_i - m_i/s)((m_i+1)/s - r_i) (Monte Carlo within "
                 "5 SE) and is <= sigma_q^2 ||u||^2, sigma_q^2 = min(ceil(D/b)/s^2, sqrt(ceil(D/b))/s); one-hot "
                 "u has zero error",
       kind="bound", space=_QUANTIZER_SPACE)
def check_quantizer_variance(inst: dict) -> Evidence:
    q = SBQuantizer(inst["s"], inst["b"])
    u = inst["u"][None]
    D = u.shape[1]
    exact = float(q.variance(u)[0])
    bound = q.omega(D) * float(np.sum(u * u))
    draws = 2000 if D >= 1000 else 10000
    rng = np.random.default_rng(2)
    err2 = ((q.compress(np.repeat(u, draws, axis=0), rng)[0] - u) ** 2).sum(axis=1)
    se = err2.std() / math.sqrt(draws)
    mc_ok = abs(err2.mean() - exact) <= Z * se + 1e-12 * bound
    onehot = np.zeros((1, D))
    onehot[0, D // 2] = 3.0
    onehot_ok = float(q.variance(onehot)[0]) == 0.0
    ok = exact <= bound * (1 + 1e-12) and mc_ok and onehot_ok
    return Evidence(f"D={D} s={q.s} b={q.b}", exact, bound, ok, tightness=exact / bound if bound > 0 else None,
                    details={"mc_mean": float(err2.mean()), "mc_se": float(se), "onehot_zero": onehot_ok})


@claim(cites=("Definition 2",),
       id="ofediq.quantizer.support_bits", paper=PAPER, reference="eq. (13)",
       statement="every output entry is ||u_I|| sign(u_i) j/s with j in {m_i, m_i+1} within {0..s}, and "
                 "q = 32b + D(1 + log2(s+1)) (D=34826, s=3, b=777: 129,342 bits)",
       kind="identity", instances=_quantizer_instances)
def check_quantizer_support(inst: dict) -> Evidence:
    q = SBQuantizer(inst["s"], inst["b"])
    u = inst["u"][None]
    norms, _, m, _ = q.decompose(u)
    Y, bits = q.compress(np.repeat(u, 200, axis=0), np.random.default_rng(3))
    with np.errstate(invalid="ignore", divide="ignore"):
        j = np.where(norms > 0, np.abs(Y) * q.s / np.where(norms > 0, norms, 1.0), 0.0)
    j_int = np.rint(j)
    level_ok = bool(np.all(np.abs(j - j_int) <= 1e-9) and np.all((j_int == m) | (j_int == m + 1))
                    and np.all((j_int >= 0) & (j_int <= q.s)))
    sign_ok = bool(np.all((Y == 0) | (np.sign(Y) == np.sign(u))))
    D = u.shape[1]
    want = 32 * q.b + D * (1 + math.log2(q.s + 1))
    bits_ok = bool(np.all(bits == want)) and sb_bits(34826, 3, 777) == 129342.0
    return Evidence(f"D={D} s={q.s} b={q.b}", float(bits[0]), want, level_ok and sign_ok and bits_ok,
                    details={"levels_ok": level_ok, "signs_ok": sign_ok})


# =============================================================================================== Theorem 1
_STREAM = (Param("K", 1, 20, integer=True), Param("T", 10, 300, integer=True), Param("D", 1, 6, integer=True),
           Param("frac", 0.01, 0.99), Param("heterogeneity", 0.0, 3.0), Param("drift", 0.0, 2.0))
#: Theorem 1's class (p_min = 1): ridge streams of any heterogeneity and drift, eta = frac/(2 beta) < 1/(2 beta).
_FEDOGD_SPACE = InstanceSpace(
    params=_STREAM, fixed={"seed": 0},
    defaults=(dict(K=1, T=50, D=3, frac=0.99, heterogeneity=0.0, drift=1.0, seed=0),
              dict(K=5, T=500, D=4, frac=0.5, heterogeneity=1.0, drift=0.5, seed=1),
              dict(K=20, T=200, D=6, frac=0.1, heterogeneity=2.0, seed=2),
              dict(K=5, T=100, D=3, frac=0.9, heterogeneity=1.0, loss="logistic", seed=3),
              # FedOGD() with its default step (half the bound, so frac is 0.5 by construction)
              dict(K=4, T=100, D=3, frac=0.5, heterogeneity=1.0, drift=0.5, seed=11, default_step=True)),
    thorough=tuple(dict(K=K, T=T, D=5, frac=f, heterogeneity=1.0, drift=0.5, seed=7)
                   for K in (1, 5, 20) for T in (50, 500, 5000) for f in (0.1, 0.5, 0.99)))


@claim(cites=("Theorem 1",),
       id="ofediq.thm1.fedogd", paper=PAPER, reference="p_min = 1",
       statement="FedOGD with eta < 1/(2 beta), w_1 = 0: regret_T' <= K ||w*_T'||^2/(2 eta) + eta K T' "
                 "sigma2_diff(T') deterministically for every prefix T' <= T",
       kind="bound", space=_FEDOGD_SPACE)
def check_fedogd_regret(inst: dict) -> Evidence:
    problem = _problem(inst)
    alg = FedOGD() if inst.get("default_step") else FedOGD(eta=inst["frac"] / (2 * problem.beta))
    eta = alg.step_size(problem)
    trace = run(alg, problem, problem.horizon, seed=0)
    regret = trace.regret[1:]
    W = problem.prefix_minimizers
    T = np.arange(1, problem.horizon + 1)
    bound = problem.n_clients * np.einsum("td,td->t", W, W) / (2 * eta) + eta * problem.n_clients * T * \
        problem.prefix_sigma2
    ratio = regret / bound
    worst = int(np.argmax(ratio))
    ok = bool(np.all(regret <= bound * (1 + 1e-10))) and eta < 1 / (2 * problem.beta)  # the theorem's regime
    return Evidence(_kw(inst), float(regret[worst]), float(bound[worst]), ok, tightness=float(ratio[worst]),
                    details={"worst_prefix": worst + 1, "final_ratio": float(ratio[-1]), "eta": eta})


@claim(cites=("Theorem 1",),
       id="ofediq.thm1.per_step.derived", paper=PAPER, reference="Section 4.3.1 (proof of Theorem 1)",
       statement="(derived by fedtheory) FedOGD, eta < 1/(2 beta), every t: sum_k [L_kt(w_t) - L_kt(w*)] <= K/(2 eta)(||w_t - w*||^2 "
                 "- ||w_{t+1} - w*||^2) + eta sum_k ||grad L_kt(w*)||^2",
       kind="bound", derived=True, space=_FEDOGD_SPACE)
def check_fedogd_per_step(inst: dict) -> Evidence:
    problem = _problem(inst)
    eta = inst["frac"] / (2 * problem.beta)
    alg = FedOGD(eta=eta)
    w_star = problem.comparator()
    state = alg.init(problem, np.zeros(problem.dim))
    rng = np.random.default_rng(0)
    worst, worst_t, ok = -np.inf, 0, True
    K = problem.n_clients
    for t in range(problem.horizon):
        x = state.x
        state, _ = alg.round(problem, state, rng)
        lhs = float(np.sum(problem.losses_at(t, x) - problem.losses_at(t, w_star)))
        gs = problem.grads_at(t, w_star)
        d0, d1 = x - w_star, state.x - w_star
        rhs = K / (2 * eta) * (float(d0 @ d0) - float(d1 @ d1)) + eta * float(np.einsum("kd,kd->", gs, gs))
        scale = K / (2 * eta) * float(d0 @ d0) + float(np.sum(np.abs(problem.losses_at(t, x))))
        slack = lhs - rhs
        if slack > 1e-9 * scale:
            ok = False
        if slack / max(scale, 1e-300) > worst:
            worst, worst_t = slack / max(scale, 1e-300), t + 1
    return Evidence(_kw(inst), worst, 1e-9, ok, details={"worst_t": worst_t,
                                                          "note": "measured = max (lhs - rhs)/scale"})


def _mc_regret(alg, problem: OnlineProblem, seeds: int) -> tuple[float, float]:
    finals = np.array([run(alg, problem, problem.horizon, seed=s).regret[-1] for s in range(seeds)])
    return float(finals.mean()), float(finals.std(ddof=1) / math.sqrt(seeds))


#: Theorem 1 for OFedAvg (p_k in [0.1, 1], eta < p_min/(2 beta)); the mean regret is over ``seeds`` runs.
_OFEDAVG_SPACE = InstanceSpace(
    params=(Param("K", 2, 12, integer=True), *_STREAM[1:]), fixed={"seed": 0, "seeds": 8},
    defaults=(dict(K=10, T=200, D=5, frac=0.5, heterogeneity=1.0, seeds=20, seed=4),
              dict(K=6, T=150, D=3, frac=0.9, heterogeneity=0.5, drift=1.0, seeds=20, seed=5),
              # OFedAvg() with its defaults (p = 0.5, half the step bound); frac does not apply
              dict(K=6, T=150, D=3, frac=0.5, heterogeneity=1.0, seeds=20, seed=12, default_config=True)),
    thorough=(dict(K=20, T=400, D=10, frac=0.9, heterogeneity=2.0, seeds=100, seed=6),))


@claim(cites=("Theorem 1",),
       id="ofediq.thm1.ofedavg", paper=PAPER,
       statement="OFedAvg with heterogeneous p_k in [0.1, 1], eta < p_min/(2 beta): mean regret_T over seeds <= "
                 "K ||w*||^2/(2 eta) + eta K T sigma2_diff / p_min",
       kind="bound", space=_OFEDAVG_SPACE)
def check_ofedavg_regret(inst: dict) -> Evidence:
    problem = _problem(inst)
    K = problem.n_clients
    if inst.get("default_config"):  # the class defaults: p = 0.5 for every client, half the step bound
        alg, p_min = OFedAvg(), 0.5
    else:
        alg, p_min = OFedAvg(eta=inst["frac"] * 0.1 / (2 * problem.beta), p=tuple(np.linspace(0.1, 1.0, K))), 0.1
    eta = alg.step_size(problem)
    mean, se = _mc_regret(alg, problem, inst["seeds"])
    w = problem.comparator()
    bound = th.theorem1_bound(K, float(w @ w), eta, problem.horizon, problem.sigma2_diff(), p_min)
    ok = mean <= bound and eta < p_min / (2 * problem.beta)  # the theorem's regime
    return Evidence(_kw(inst), mean, bound, ok, tightness=mean / bound, details={"se": se, "eta": eta})


_QUANTIZED = (Param("K", 2, 12, integer=True), *_STREAM[1:], Param("s", 1, 4, integer=True),
              Param("b", 1, 6, integer=True))
#: Theorem 2's class, L = 1: (s, b) quantizer (b <= D), p_k in [0.2, 1], eta = frac * the theorem's step bound.
_THM2_SPACE = InstanceSpace(
    params=_QUANTIZED, fixed={"seed": 0, "seeds": 8, "L": 1}, regime=lambda pt: pt["b"] <= pt["D"],
    defaults=(dict(K=20, T=200, D=10, L=1, s=3, b=2, frac=0.5, heterogeneity=1.0, seeds=12, seed=8),
              dict(K=8, T=120, D=6, L=1, s=1, b=1, frac=0.9, heterogeneity=2.0, drift=1.0, seeds=20, seed=9),
              # OFedIQ's default step (half the bound, so frac is 0.5 by construction)
              dict(K=8, T=120, D=6, L=1, s=2, b=2, frac=0.5, heterogeneity=1.0, seeds=12, seed=13,
                   default_step=True)),
    thorough=(dict(K=20, T=400, D=10, L=1, s=2, b=5, frac=0.9, heterogeneity=1.0, seeds=100, seed=10),))


def _thm2_check(inst: dict) -> Evidence:
    problem = _problem(inst)
    K, D, L = problem.n_clients, problem.dim, inst["L"]
    p = tuple(np.linspace(0.2, 1.0, K))
    sq2 = sb_sigma2(D, inst["s"], inst["b"])
    eta_max = th.step_bound(problem.beta, p, sigma_q2=sq2, period=L)
    # the proof's condition (40), transcribed here: eta < p_min/(4 beta L R), R = 1 + sigma_q^2 (p_sum - p_min + 1)/K
    R_paper = 1.0 + sq2 * (sum(p) - min(p) + 1.0) / K
    condition_40 = min(p) / (4.0 * problem.beta * L * R_paper)
    alg = OFedIQ(eta=None if inst.get("default_step") else inst["frac"] * eta_max, p=p, period=L, s=inst["s"],
                 b=inst["b"])
    eta = alg.step_size(problem)
    mean, se = _mc_regret(alg, problem, inst["seeds"])
    w = problem.comparator()
    b = th.theorem2_bound(K, float(w @ w), eta, problem.horizon, problem.sigma2_diff(), p, sigma_q2=sq2, L=L,
                          beta=problem.beta)
    ok = mean <= b.value and eta < eta_max and abs(eta_max - condition_40) <= 1e-12 * condition_40
    return Evidence(_kw(inst), mean, b.value, ok, tightness=mean / b.value,
                    details={"se": se, "label": b.label, "terms": [b.initial, b.variance, b.drift], "eta": eta,
                             "eta_max": eta_max, "condition_40": condition_40})


@claim(cites=("Theorem 2",),
       id="ofediq.thm2.L1", paper=PAPER, reference="L = 1 (rigorous case)",
       statement="OFedIQ(L=1) with the (s,b) quantizer, heterogeneous p_k, eta < p_min/(4 beta R) (the library's "
                 "step bound must equal it): mean regret_T "
                 "<= K||w*||^2/(2 eta) + 2 eta K T sigma2_diff R / p_min",
       kind="bound", space=_THM2_SPACE)
def check_thm2_l1(inst: dict) -> Evidence:
    return _thm2_check(inst)


#: Theorem 2, L > 1 (the period L divides T: the point's T is rounded down to a multiple of L).
_THM2_L_SPACE = InstanceSpace(
    params=(*_QUANTIZED, Param("L", 2, 8, integer=True)), fixed={"seed": 0, "seeds": 8},
    regime=lambda pt: pt["b"] <= pt["D"] and pt["T"] >= pt["L"],
    build=lambda pt: {**pt, "T": pt["T"] - pt["T"] % pt["L"]},
    defaults=(dict(K=20, T=200, D=10, L=2, s=3, b=2, frac=0.5, heterogeneity=1.0, seeds=15, seed=11),
              dict(K=10, T=160, D=5, L=4, s=2, b=1, frac=0.9, heterogeneity=1.0, drift=1.0, seeds=15, seed=12)),
    thorough=(dict(K=20, T=400, D=10, L=8, s=3, b=2, frac=0.9, heterogeneity=2.0, seeds=60, seed=13),))


@claim(cites=("Theorem 2",),
       id="ofediq.thm2.L_gt_1", paper=PAPER, reference="L > 1 (the paper's approximate bound)",
       statement="OFedIQ(L in {2,4,8}, L | T), eta < p_min/(4 beta L R) (the proof's condition (40), which the "
                 "library's step bound must equal): mean regret_T "
                 "<= Theorem 2's full bound incl. 3 beta eta^2 L(L-1) K T sigma2 (soft: the L > 1 proof approximates)",
       kind="bound", space=_THM2_L_SPACE)
def check_thm2_l(inst: dict) -> Evidence:
    return _thm2_check(inst)


# =============================================================================================== Corollary 1
def _sublinear_instances(thorough: bool):
    yield dict(K=10, D=4, Ts=(100, 400, 1600), heterogeneity=1.0, noise=1.0, seed=14, method="fedogd")
    yield dict(K=10, D=4, Ts=(200, 800), heterogeneity=1.0, noise=4.0, seed=14, method="ofediq",
               p=0.5, s=2, b=2, seeds=2)
    if thorough:
        yield dict(K=10, D=4, Ts=(200, 800, 3200), heterogeneity=1.0, noise=4.0, seed=16, method="ofediq",
                   p=0.3, s=3, b=2, seeds=10)
        yield dict(K=20, D=6, Ts=(100, 1000, 10000), heterogeneity=2.0, noise=1.0, seed=15, method="fedogd")


@claim(cites=("Corollary 1", "Table 1"),
       id="ofediq.cor1.sublinear", paper=PAPER,
       statement="with Corollary 1's eta_T (FedOGD: sqrt(||w*||^2/(2 sigma2 T)), alpha = 2; OFedIQ(1, p, s, b): "
                 "sqrt(p ||w*||^2/(4 sigma2 M T)), alpha = 4M/p), regret_T/T decreases over T and (mean) "
                 "regret_T/sqrt(T) <= sqrt(alpha ||w*||^2 K^2 sigma2_diff) (T skipped when eta_T violates the "
                 "theorem's step condition)",
       kind="rate", instances=_sublinear_instances)
def check_sublinear(inst: dict) -> Evidence:
    full = online_ridge(inst["K"], max(inst["Ts"]), inst["D"], heterogeneity=inst["heterogeneity"],
                        noise=inst["noise"], seed=inst["seed"])
    per_T, ok, worst = {}, True, 0.0
    for T in inst["Ts"]:
        prob = _truncate(full, T)
        w2, s2 = float(prob.comparator() @ prob.comparator()), prob.sigma2_diff()
        if inst["method"] == "fedogd":
            eta, alpha = th.corollary1_ofedavg(1.0, w2, s2, T)
            alg, seeds = FedOGD(eta=eta), 1
        else:
            M = th.corollary_m(inst["p"], 1, prob.dim, inst["s"], inst["b"], prob.n_clients)
            eta, alpha = th.corollary1_ofediq(inst["p"], 1, M, w2, s2, T)
            alg, seeds = OFedIQ(eta=eta, p=inst["p"], s=inst["s"], b=inst["b"]), inst["seeds"]
        if eta >= alg.step_bound(prob):
            per_T[T] = "skipped (eta_T violates the step condition)"
            continue
        reg = float(np.mean([run(alg, prob, T, seed=s, record_every=T).regret[-1] for s in range(seeds)]))
        cap = math.sqrt(alpha * w2 * prob.n_clients**2 * s2)
        per_T[T] = {"eta": eta, "regret_over_T": reg / T, "regret_over_sqrtT": reg / math.sqrt(T), "cap": cap}
        ok &= reg / math.sqrt(T) <= cap * (1 + 1e-12)
        worst = max(worst, reg / math.sqrt(T) / cap)
    rates = [v["regret_over_T"] for v in per_T.values() if isinstance(v, dict)]
    decreasing = len(rates) >= 2 and all(b < a for a, b in zip(rates, rates[1:]))
    return Evidence(_kw(inst), worst, 1.0, bool(ok and decreasing), tightness=worst,
                    details={"per_T": per_T, "decreasing": decreasing})


def _parity_instances(thorough: bool):
    yield dict(dataset="digits", K=10, Ts=(50, 200, 800), gamma=0.01, seeds=2, seed=0)
    if thorough:
        yield dict(dataset="breast_cancer", K=50, Ts=(100, 400, 1600, 6400), gamma=0.01, seeds=5, seed=1)


@claim(cites=("Figure 4",),
       id="ofediq.parity99.exploratory", paper=PAPER, reference="Section 4.2 (CCR 99%)",
       statement="On a real-data stream (scikit-learn digits, ridge), FedOGD and OFedIQ at gamma = 0.01 (Algorithm 3"
                 " parameters, corrected so b >= 1 for the small D) with matched eta_T = (1/(4 beta)) sqrt(T_0/T): "
                 "the gap in time-averaged loss shrinks as T grows while OFedIQ uses ~1% of FedOGD's uplink bits",
       kind="qualitative", expected="exploratory", instances=_parity_instances)
def check_parity(inst: dict) -> Evidence:
    full = online_from_dataset(inst["dataset"], inst["K"], max(inst["Ts"]), loss="ridge", seed=inst["seed"])
    cfg = th.algorithm3_corrected(inst["gamma"], full.dim)
    rows, gaps = {}, []
    for T in inst["Ts"]:
        prob = _truncate(full, T)
        eta = 1 / (4 * prob.beta) * math.sqrt(min(inst["Ts"]) / T)  # the paper uses one fixed eta for all methods
        tr_f = run(FedOGD(eta=eta), prob, T, seed=0, record_every=T)
        tr_q = [run(OFedIQ(eta=eta, p=cfg.p, s=cfg.s, b=cfg.b), prob, T, seed=s, record_every=T)
                for s in range(inst["seeds"])]
        avg_f = float(tr_f.cum_loss[-1]) / (prob.n_clients * T)
        avg_q = float(np.mean([t.cum_loss[-1] for t in tr_q])) / (prob.n_clients * T)
        bits_ratio = float(np.mean([t.uplink_bits.sum() for t in tr_q]) / tr_f.uplink_bits.sum())
        gaps.append(avg_q - avg_f)
        rows[T] = {"avg_loss_fedogd": avg_f, "avg_loss_ofediq": avg_q, "bits_ratio": bits_ratio,
                   "regret_over_T_fedogd": float(tr_f.regret[-1]) / T,
                   "regret_over_T_ofediq": float(np.mean([t.regret[-1] for t in tr_q])) / T}
    shrinking = all(abs(b) < abs(a) for a, b in zip(gaps, gaps[1:]))
    return Evidence(_kw(inst), gaps[-1], gaps[0], shrinking,
                    details={"config": [cfg.p, cfg.s, cfg.b, cfg.gamma_actual], "per_T": rows})


# =============================================================================================== aggregation
def _agg_instances(thorough: bool):
    yield dict(K=3, D=3, L=1, s=2, b=2, p=(0.3, 0.6, 1.0), seed=16)
    yield dict(K=3, D=4, L=3, s=1, b=1, p=(0.5, 0.25, 0.8), seed=17)
    if thorough:
        yield dict(K=4, D=5, L=2, s=3, b=5, p=(0.2, 0.4, 0.6, 0.9), seed=18)


def _expected_after(alg: OFedIQ, problem: OnlineProblem, state) -> np.ndarray:
    """E[w_{t+1}] over participation coins and quantizer rounding, by exact enumeration through round_given.

    Given the coins, the update is affine in the rounding indicators B (B_i = 1 iff U_i < p_up_i), so
    E_B[w] = w(B=0) + sum_i p_up_i (w(e_i) - w(B=0)); coins are enumerated over all 2^K subsets.
    """
    K, D = problem.n_clients, problem.dim
    p = alg.probabilities(K)
    q = alg.quantizer(D)
    # the vector each client would quantize (second form of eq. 8) is needed for p_up
    probe_state, _ = alg.round_given(problem, state, OnlineDraw(np.ones(K, bool), np.ones((K, D))))
    U = probe_state.acc / p[:, None]
    _, _, _, p_up = q.decompose(U)
    total = np.zeros(D)
    for subset in itertools.product((False, True), repeat=K):
        mask = np.array(subset)
        prob = float(np.prod(np.where(mask, p, 1 - p)))
        if prob == 0:
            continue
        base = alg.round_given(problem, state, OnlineDraw(mask, np.ones((K, D))))[0].x
        e = base.copy()
        for k in range(K):
            for i in range(D):
                Ui = np.ones((K, D))
                Ui[k, i] = 0.0
                e += p_up[k, i] * (alg.round_given(problem, state, OnlineDraw(mask, Ui))[0].x - base)
        total += prob * e
    return total


@claim(id="ofediq.aggregation.unbiased", paper=PAPER, reference="eqs. (8)-(9), (33)",
       statement="given w_{t-L+1} and the local trajectories, E[w_{t+1}] = w_{t-L+1} - (eta/K) sum_k sum_l "
                 "grad_{k,t-L+l} exactly (enumeration of all client subsets and rounding outcomes; the server "
                 "divides by K, not |S_t|)",
       kind="identity", instances=_agg_instances)
def check_aggregation(inst: dict) -> Evidence:
    problem = online_ridge(inst["K"], 2 * inst["L"], inst["D"], heterogeneity=1.0, seed=inst["seed"])
    alg = OFedIQ(eta=0.05, p=inst["p"], period=inst["L"], s=inst["s"], b=inst["b"])
    state = alg.init(problem, np.zeros(problem.dim))
    rng = np.random.default_rng(0)
    state, _ = alg.round(problem, state, rng)  # one full step (L = 1) or part of the first period
    while (state.t + 1) % inst["L"] != 0:
        state, _ = alg.round(problem, state, rng)  # deterministic local steps (no draws before transmission)
    expected = _expected_after(alg, problem, state)
    # reference: the period's local gradient sums, recomputed from the local trajectory
    anchor = state.x
    G = np.zeros((problem.n_clients, problem.dim))
    start = state.t - (state.t % inst["L"])
    g = np.broadcast_to(anchor, G.shape).copy()
    for t in range(start, state.t + 1):
        grads = problem.grads_at(t, g)
        G += grads
        g = g - alg.eta * grads
    want = anchor - alg.eta / problem.n_clients * G.sum(axis=0)
    err = relative_error(expected, want)
    return Evidence(_kw(inst), err, 1e-12, err <= 1e-12)


# =============================================================================================== reductions
def _reduction_instances(thorough: bool):
    yield dict(K=5, T=60, D=4, L=3, heterogeneity=1.0, seed=19)
    yield dict(K=3, T=40, D=3, L=4, heterogeneity=0.5, loss="logistic", seed=20)


@claim(id="ofediq.reductions", paper=PAPER, reference="Section 3.2 ('subsumes the benchmarks'), eqs. (1), (5)-(8)",
       statement="OFedIQ(1,1,inf) reproduces FedOGD's eq. (5) iterates to 1e-12; OFedIQ(L,1,inf) is local OGD with "
                 "periodic averaging (FedOMD); the two forms of eq. (8) agree to 1e-10; the model used at t is "
                 "w_{psi_L(t)} with psi_L(t) = floor((t-1)/L) L + 1",
       kind="metamorphic", instances=_reduction_instances)
def check_reductions(inst: dict) -> Evidence:
    problem = _problem(inst)
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
    ok = err_ogd <= 1e-12 and err_omd <= 1e-12 and err_forms <= 1e-10 and psi_ok
    return Evidence(_kw(inst), worst, 1e-12, ok, details={"fedogd_err": err_ogd, "fedomd_err": err_omd,
                                                          "eq8_forms_err": err_forms, "psi_ok": psi_ok})


# =============================================================================================== bits
def _bits_instances(thorough: bool):
    yield dict(K=10, T=400, D=20, L=2, s=3, b=4, p=0.3, seed=21)
    yield dict(K=6, T=300, D=8, L=1, s=None, b=None, p=(0.1, 0.3, 0.5, 0.7, 0.9, 1.0), seed=22)
    yield dict(K=4, T=50, D=5, L=1, s=None, b=None, p=1.0, seed=23)


@claim(cites=("Table 1",), id="ofediq.bits", paper=PAPER, reference="eq. (13), gamma and CCR (Section 5)",
       statement="each transmission step sends |S_t| q bits (q = 32D unquantized, 32b + D(1+log2(s+1)) "
                 "quantized), none otherwise; the mean bits per step is (sum_k p_k / L) q within 5 SE; FedOGD costs "
                 "32KD exactly; gamma = p q/(32 D L)",
       kind="statistical", instances=_bits_instances)
def check_bits(inst: dict) -> Evidence:
    problem = online_ridge(inst["K"], inst["T"], inst["D"], seed=inst["seed"])
    alg = OFedIQ(eta=0.01, p=inst["p"], period=inst["L"], s=inst["s"], b=inst["b"])
    tr = run(alg, problem, inst["T"], seed=0)
    q = alg.vector_bits(problem.dim)
    bits, parts = tr.uplink_bits[1:], tr.participants[1:]
    per_step_ok = bool(np.all(bits == parts * q))
    off = (np.arange(1, inst["T"] + 1) % inst["L"]) != 0
    per_step_ok &= bool(np.all(bits[off] == 0))
    p = alg.probabilities(problem.n_clients)
    want = p.sum() / inst["L"] * q
    n_tx = inst["T"] // inst["L"]
    var_mean = n_tx * q**2 * float(np.sum(p * (1 - p))) / inst["T"] ** 2
    mean = float(bits.mean())
    z = abs(mean - want) / math.sqrt(var_mean) if var_mean > 0 else (0.0 if mean == want else math.inf)
    gamma_ok = True
    if np.all(p == p[0]):
        s, b = inst["s"], inst["b"]
        table = (th.table1_bits("ofediq", K=problem.n_clients, D=problem.dim, p=float(p[0]), L=inst["L"], s=s, b=b)
                 if s else th.table1_bits("ofedavg", K=problem.n_clients, D=problem.dim, p=float(p[0]))
                 / inst["L"])
        gamma_ok = math.isclose(table, want, rel_tol=1e-12)
        if s:
            gamma_ok &= math.isclose(th.ofediq_gamma(float(p[0]), s, b, problem.dim, inst["L"]),
                                     float(p[0]) * q / (32 * problem.dim * inst["L"]), rel_tol=1e-12)
    ogd = run(FedOGD(eta=0.01), problem, 5, seed=0).uplink_bits[1:]
    ogd_ok = bool(np.all(ogd == 32 * problem.n_clients * problem.dim))
    ok = per_step_ok and z <= Z and gamma_ok and ogd_ok
    return Evidence(_kw(inst), mean, want, ok, details={"z": z, "per_step_ok": per_step_ok, "gamma_ok": gamma_ok,
                                                        "fedogd_32KD": ogd_ok})


# =============================================================================================== Section 4.2
def _periodic_instances(thorough: bool):
    yield dict(Ls=tuple(range(1, 51)), ps=(0.01, 0.1, 0.5, 1.0), ss=(1, 3, 17), bs=(1, 100, 34826), D=34826,
               Ks=(1, 1000))


@claim(id="ofediq.periodic.never_better", paper=PAPER, reference="Section 4.2.1",
       statement="at equal cost, alpha(L = 1, p/L) <= alpha(L, p) (Table I's constant), with equality iff L = 1",
       kind="monotonicity", instances=_periodic_instances)
def check_periodic(inst: dict) -> Evidence:
    worst, ok = -np.inf, True
    for L, p, s, b, K in itertools.product(inst["Ls"], inst["ps"], inst["ss"], inst["bs"], inst["Ks"]):
        a1, aL = th.periodic_vs_subsampling(L, p, inst["D"], s, b, K)
        # equal cost (Table I)
        c1 = th.table1_bits("ofediq", K=K, D=inst["D"], p=p / L, L=1, s=s, b=b)
        cL = th.table1_bits("ofediq", K=K, D=inst["D"], p=p, L=L, s=s, b=b)
        ok &= math.isclose(c1, cL, rel_tol=1e-12)
        ok &= (a1 == aL) if L == 1 else (a1 < aL)
        worst = max(worst, a1 / aL if L > 1 else -np.inf)
    return Evidence("grid L<=50", worst, 1.0, bool(ok), details={"max_ratio_L_gt_1": worst})


def _cor_algebra_instances(thorough: bool):
    rng = np.random.default_rng(24)
    for _ in range(30 if thorough else 8):
        yield dict(K=int(rng.integers(1, 2000)), w2=float(rng.exponential(3)), sigma2=float(rng.exponential(2)),
                   T=int(rng.integers(1, 10**5)), p=float(rng.uniform(0.01, 1)), L=int(rng.integers(1, 9)),
                   M=float(1 + rng.exponential(2)), beta=float(rng.exponential(3) + 0.1))


def _golden(f, lo: float, hi: float, iters: int = 200) -> float:
    g = (math.sqrt(5) - 1) / 2
    a, b = math.log(lo), math.log(hi)
    for _ in range(iters):
        c, d = b - g * (b - a), a + g * (b - a)
        if f(math.exp(c)) < f(math.exp(d)):
            b = d
        else:
            a = c
    return math.exp((a + b) / 2)


@claim(cites=("Corollary 1",),
       id="ofediq.cor1.algebra", paper=PAPER, reference="consistent form M; the printed version has a typo",
       statement="eta* = sqrt((p/L)||w*||^2/(4 sigma2 M T)) minimises B(eta) = K||w*||^2/(2 eta) + 2 eta L K T "
                 "sigma2 M/p and B(eta*) = sqrt((4LM/p)||w*||^2 K^2 sigma2 T); OFedAvg's eta gives alpha = 2/p; "
                 "3 beta eta^2 L(L-1) K T sigma2 <= (3p^2(L-1)/8) 2 eta L K T sigma2/p for eta < p/(4 beta)",
       kind="identity", instances=_cor_algebra_instances)
def check_cor_algebra(d: dict) -> Evidence:
    K, w2, s2, T, p, L, M, beta = (d[k] for k in ("K", "w2", "sigma2", "T", "p", "L", "M", "beta"))
    eta, alpha = th.corollary1_ofediq(p, L, M, w2, s2, T)

    def B(e: float) -> float:
        return K * w2 / (2 * e) + 2 * e * L * K * T * s2 * M / p

    closed = math.sqrt(alpha * w2 * K**2 * s2 * T)
    ident = abs(B(eta) - closed) / closed
    argmin = _golden(B, eta * 1e-3, eta * 1e3)
    min_ok = abs(argmin / eta - 1) <= 1e-6
    eta_a, alpha_a = th.corollary1_ofedavg(p, w2, s2, T)
    Ba = K * w2 / (2 * eta_a) + eta_a * K * T * s2 / p
    avg_ok = abs(Ba - math.sqrt(alpha_a * w2 * K**2 * s2 * T)) <= 1e-12 * Ba and alpha_a == 2 / p
    e = 0.999 * p / (4 * beta)
    drift_ok = 3 * beta * e**2 * L * (L - 1) * K * T * s2 <= (3 * p**2 * (L - 1) / 8) * 2 * e * L * K * T * s2 / p \
        * (1 + 1e-12)
    ok = ident <= 1e-12 and min_ok and avg_ok and drift_ok
    return Evidence(_kw({k: round(v, 4) if isinstance(v, float) else v for k, v in d.items()}), ident, 1e-12, ok,
                    details={"argmin_over_eta_star": argmin / eta, "ofedavg_ok": avg_ok, "drift_ok": drift_ok})


PAPER_ALG3 = {0.1: dict(s=17, b=1134, p=0.5151, rho=0.0326), 0.01: dict(s=3, b=777, p=0.086)}


def _alg3_value_instances(thorough: bool):
    yield dict(gamma=0.1, D=34826)
    yield dict(gamma=0.01, D=34826)


@claim(cites=("Algorithm 3", "Figure 3"),
       id="ofediq.alg3.paper_values", paper=PAPER, reference="Section 4.2.2 worked example",
       statement="Algorithm 3 (log base 2) gives gamma = 0.1 -> s = 17, rho = 0.0326, b = 1134, p = 0.5151 and "
                 "gamma = 0.01 -> OFedIQ(1, 0.086, 3, 777) for D = 34,826, with gamma - p/D <= gamma_actual <= gamma",
       kind="identity", instances=_alg3_value_instances)
def check_alg3_values(inst: dict) -> Evidence:
    cfg = th.algorithm3(inst["gamma"], inst["D"])
    want = PAPER_ALG3[inst["gamma"]]
    digits = len(str(want["p"]).split(".")[1])
    ok = cfg.s == want["s"] and cfg.b == want["b"] and round(cfg.p, digits) == want["p"]
    if "rho" in want:
        ok &= round(cfg.rho, 4) == want["rho"]
    ok &= inst["gamma"] - cfg.p / inst["D"] <= cfg.gamma_actual <= inst["gamma"]
    return Evidence(f"gamma={inst['gamma']} D={inst['D']}", cfg.p, want["p"], bool(ok),
                    details={"s": cfg.s, "b": cfg.b, "rho": cfg.rho, "gamma_actual": cfg.gamma_actual})


def _alg3_valid_instances(thorough: bool):
    yield dict(D=34826, grid=300 if not thorough else 5000)
    yield dict(D=4548, grid=300 if not thorough else 5000)


def _gamma_grid(n: int) -> np.ndarray:
    return np.unique(np.concatenate([np.geomspace(1e-9, 1.0, n), np.linspace(1e-3, 1.0, n)]))


def _first_invalid_p(D: int) -> float:
    """Smallest gamma with p > 1 (bisection between a valid and an invalid grid point)."""
    grid = _gamma_grid(300)
    bad = [g for g in grid if th.algorithm3_raw(g, D).p > 1]
    hi = min(bad)
    lo = max(g for g in grid if g < hi)
    for _ in range(60):
        mid = (lo + hi) / 2
        if th.algorithm3_raw(mid, D).p > 1:
            hi = mid
        else:
            lo = mid
    return hi


@claim(cites=("Algorithm 3",),
       id="ofediq.alg3.valid_all_gamma", paper=PAPER, reference="input 0 < gamma <= 1",
       statement="Algorithm 3 as printed returns a valid configuration (0 < p <= 1, 1 <= b <= D) with "
                 "gamma_actual <= gamma for every gamma in (0, 1]",
       kind="counterexample", expected="violated", instances=_alg3_valid_instances)
def check_alg3_valid(inst: dict) -> Evidence:
    D = inst["D"]
    bad = [g for g in _gamma_grid(inst["grid"]) if not th.algorithm3_raw(float(g), D).valid]
    g_p = _first_invalid_p(D)
    cfg = th.algorithm3_raw(g_p, D)
    small = [g for g in bad if th.algorithm3_raw(float(g), D).b < 1]
    return Evidence(f"D={D}", float(len(bad)), 0.0, not bad,
                    details={"minimal_gamma_with_p_gt_1": g_p, "config_there": [cfg.s, cfg.b, cfg.p],
                             "largest_gamma_with_b_eq_0": float(max(small)) if small else None,
                             "p_at_gamma_1": th.algorithm3_raw(1.0, D).p})


@claim(cites=("Algorithm 3",),
       id="ofediq.alg3.valid_all_gamma.corrected", paper=PAPER, reference="corrected by fedtheory",
       statement="algorithm3_corrected (b clipped to [1, D], p recomputed from the realised b and capped at 1) "
                 "returns 0 < p <= 1, 1 <= b <= D and gamma_actual <= gamma for every gamma in (0, 1], and equals "
                 "Algorithm 3 wherever the printed one is valid",
       kind="invariant", derived=True, instances=_alg3_valid_instances)
def check_alg3_corrected(inst: dict) -> Evidence:
    D = inst["D"]
    bad, differs = [], []
    for g in _gamma_grid(inst["grid"]):
        c = th.algorithm3_corrected(float(g), D)
        if not c.valid:
            bad.append(float(g))
        raw = th.algorithm3_raw(float(g), D)
        if raw.valid and (raw.s, raw.b) != (c.s, c.b):
            differs.append(float(g))
    return Evidence(f"D={D}", float(len(bad) + len(differs)), 0.0, not bad and not differs,
                    details={"invalid": bad[:5], "differs": differs[:5]})


def _alpha_instances(thorough: bool):
    yield dict(D=34826, K=1000, gammas=tuple(np.geomspace(1e-3, 0.2, 200 if thorough else 60)))


def _gamma_build(point: dict) -> dict:
    """A searched point is one gamma (the check then tests that gamma); a default point is the gamma grid."""
    if "gammas" in point:
        return dict(point)
    return dict(D=point["D"], K=point["K"], gammas=(point["gamma"],))


#: The statement is about the paper's D = 34826 and K = 1000 (its 4.536 is checked at gamma = 0.1 on every
#: instance), "for every gamma in [0.001, 0.2]": the searched parameter is gamma. The check enumerates its
#: ``gammas`` internally; the default point is the log grid the ledger ran (thorough adds the finer grid).
_GAMMA_SPACE = InstanceSpace(
    params=(Param("gamma", 1e-3, 0.2, log=True),), fixed={"D": 34826, "K": 1000}, build=_gamma_build,
    defaults=tuple(_alpha_instances(False)), thorough=tuple(_alpha_instances(True)))


@claim(id="ofediq.alg3.alpha_vs_ofedavg", paper=PAPER, reference="Section 4.2.2 ('4.536 vs 20')",
       statement="at gamma = 0.1, Algorithm 3's alpha = (2/p)[1 + sqrt(D/(b s^2))(p + 1/K)] = 4.536 (K = 1000) < "
                 "OFedAvg's 2/gamma = 20; and for every gamma in [0.001, 0.2] alpha_IQ < 2/gamma under both the "
                 "factor-2 and Table I's factor-4 convention",
       kind="bound", space=_GAMMA_SPACE)
def check_alpha(inst: dict) -> Evidence:
    D, K = inst["D"], inst["K"]
    c = th.algorithm3(0.1, D)
    a01 = th.alpha_ofediq_factor2(c.p, D, c.s, c.b, K)
    ok = abs(a01 - 4.536) <= 0.002 and 2 * a01 < 20
    worst = 0.0
    for g in inst["gammas"]:
        c = th.algorithm3(float(g), D)
        a2 = th.alpha_ofediq_factor2(c.p, D, c.s, c.b, K)
        a4 = th.table1_alpha("ofediq", p=c.p, L=1, D=D, s=c.s, b=c.b, K=K)
        ok &= a2 < 2 / g and a4 < 2 / g
        worst = max(worst, a4 / (2 / g))
    return Evidence(f"D={D} K={K}", a01, 4.536, bool(ok), tightness=worst,
                    details={"alpha_factor4_at_0.1": 2 * a01, "max_alpha4_over_2_per_gamma": worst})


def _eq15_instances(thorough: bool):
    yield dict(K=1000, ps=tuple(np.geomspace(1e-4, 0.12, 400 if thorough else 120)))


#: Eq. (15)'s class: OFedAvg rates p in (0, 0.12] (docs/online.md; searched down to 1e-8 on a log
#: scale), K = 1000 as in the paper's statement. A searched point is one p; a default point is the grid the
#: ledger ran (the check enumerates ``ps`` internally).
_EQ15_SPACE = InstanceSpace(
    params=(Param("p", 1e-8, 0.12, log=True),), fixed={"K": 1000},
    build=lambda pt: dict(pt) if "ps" in pt else dict(K=pt["K"], ps=(pt["p"],)),
    defaults=tuple(_eq15_instances(False)), thorough=tuple(_eq15_instances(True)))


@claim(id="ofediq.eq15.alpha", paper=PAPER, reference="Section 4.2.2 (i), eq. (15)",
       statement="for p in (0, 0.12], s = ceil(40p), b = D/100, p' = 32p/(1.32 + log2(1+s)): p' <= 1 and "
                 "(2/p')[1 + (10/s)(p' + 1/K)] < 1.357/p (K = 1000): quantization beats OFedAvg's 2/p",
       kind="bound", space=_EQ15_SPACE)
def check_eq15(inst: dict) -> Evidence:
    worst, ok = 0.0, True
    for p in inst["ps"]:
        a, pp, _ = th.eq15_alpha(float(p), inst["K"])
        ok &= pp <= 1 and a < 1.357 / p
        worst = max(worst, a * p / 1.357)
    return Evidence("p in [1e-4, 0.12]", worst * 1.357, 1.357, bool(ok), tightness=worst,
                    details={"max_alpha_times_p": worst * 1.357})


def _eq15_range_instances(thorough: bool):
    yield dict(K=1000, ps=tuple(np.linspace(0.005, 0.995, 199)))


@claim(id="ofediq.eq15.feasible_all_p", paper=PAPER, reference="Section 4.2.2 (i), eq. (14)-(15) ('p < 1')",
       statement="for every OFedAvg rate p in (0, 1) the equal-cost OFedIQ(1, p', ceil(40p), D/100) of eq. (14) "
                 "is feasible (p' <= 1), as step (c) of eq. (15) assumes",
       kind="counterexample", expected="violated", instances=_eq15_range_instances)
def check_eq15_feasible(inst: dict) -> Evidence:
    bad = [float(p) for p in inst["ps"] if th.eq15_alpha(float(p), inst["K"])[1] > 1]
    lo, hi = 0.01, min(bad) if bad else 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if th.eq15_alpha(mid, inst["K"])[1] > 1:
            hi = mid
        else:
            lo = mid
    return Evidence("p grid in (0, 1)", float(len(bad)), 0.0, not bad,
                    details={"minimal_p_with_p_prime_gt_1": hi, "p_prime_there": th.eq15_alpha(hi, inst["K"])[1]})


@claim(id="ofediq.eq15.feasible_all_p.corrected", paper=PAPER, reference="Section 4.2.2 (i), corrected by fedtheory",
       statement="eq. (14)'s p' <= 1 holds for p in (0, 0.12]",
       kind="bound", derived=True, space=_EQ15_SPACE)
def check_eq15_feasible_corrected(inst: dict) -> Evidence:
    worst = max(th.eq15_alpha(float(p), inst["K"])[1] for p in inst["ps"])
    return Evidence("p in (0, 0.12]", worst, 1.0, worst <= 1.0, tightness=worst)


# =============================================================================================== lemmas
def _lemma_instances(thorough: bool):
    for i in range(12 if thorough else 4):
        yield dict(K=1 + 3 * i, D=2 + i % 4, loss="ridge" if i % 2 == 0 else "logistic", seed=100 + i)


def _lemma_build(point: dict) -> dict:
    loss = point["loss"]
    return {**point, "loss": loss if isinstance(loss, str) else ("ridge", "logistic")[int(loss)]}


#: Lemmas 1-2: any vectors / any convex beta-smooth per-client losses. Lemma 1's check draws its 50 triples
#: (v_i, v_j, a) from ``seed`` internally, so only D and the seed matter to it; Lemma 2's takes ridge or
#: logistic streams (``loss`` 0 = ridge, 1 = logistic) of K clients in R^D at 20 time steps, with random w_t and
#: comparators drawn from ``seed``. The seed is searched too: it is what moves the points the lemmas are
#: evaluated at.
_LEMMA_SPACE = InstanceSpace(
    params=(Param("K", 1, 40, integer=True), Param("D", 1, 8, integer=True), Param("loss", 0, 1, integer=True),
            Param("seed", 0, 10**6, integer=True)),
    build=_lemma_build, defaults=tuple(_lemma_instances(False)),
    thorough=tuple(_lemma_instances(True))[4:])


@claim(cites=("Lemma 1",),
       id="ofediq.lemma1", paper=PAPER,
       statement="||v_i + v_j||^2 <= (1 + a)||v_i||^2 + (1 + 1/a)||v_j||^2 for a > 0, with equality at "
                 "sqrt(a) v_i = v_j / sqrt(a)",
       kind="bound", space=_LEMMA_SPACE)
def check_lemma1(inst: dict) -> Evidence:
    rng = np.random.default_rng(inst["seed"])
    worst, ok = 0.0, True
    for _ in range(50):
        vi, vj = rng.standard_normal(inst["D"]), rng.standard_normal(inst["D"]) * rng.exponential()
        a = float(rng.exponential())
        lhs, rhs = float((vi + vj) @ (vi + vj)), th.lemma1_rhs(vi, vj, a)
        ok &= lhs <= rhs * (1 + 1e-12)
        worst = max(worst, lhs / rhs)
        eq = th.lemma1_rhs(vi, a * vi, a)  # v_j = a v_i attains equality
        ok &= abs(float((vi + a * vi) @ (vi + a * vi)) - eq) <= 1e-12 * eq
    return Evidence(f"D={inst['D']}", worst, 1.0, bool(ok), tightness=worst)


@claim(cites=("Lemma 2",),
       id="ofediq.lemma2", paper=PAPER, reference="eqs. (22)-(23)",
       statement="for convex beta-smooth per-client losses at a time step, any w_t and any comparator w*: "
                 "(1/K) sum ||grad_k(w_t)||^2 <= (4 beta/K) sum [L_k(w*) - L_k(w_t)] + (4 beta/K) sum "
                 "grad_k(w_t)^T (w_t - w*) + (2/K) sum ||grad_k(w*)||^2",
       kind="bound", space=_LEMMA_SPACE)
def check_lemma2(inst: dict) -> Evidence:
    problem = online_ridge(inst["K"], 20, inst["D"], heterogeneity=1.0, seed=inst["seed"]) \
        if inst["loss"] == "ridge" else online_logistic(inst["K"], 20, inst["D"], heterogeneity=1.0,
                                                        seed=inst["seed"])
    rng = np.random.default_rng(inst["seed"])
    worst, ok = 0.0, True
    for t in range(problem.horizon):
        w = rng.standard_normal(problem.dim) * 3
        u = problem.comparator() if t % 2 == 0 else rng.standard_normal(problem.dim)
        lhs, rhs = th.lemma2_sides(problem.grads_at(t, w), problem.grads_at(t, u), problem.losses_at(t, w),
                                   problem.losses_at(t, u), w, u, problem.beta)
        ok &= lhs <= rhs + 1e-9 * max(1.0, abs(rhs))
        worst = max(worst, lhs / rhs if rhs > 0 else 0.0)
    return Evidence(f"{inst['loss']} K={inst['K']} D={inst['D']}", worst, 1.0, bool(ok), tightness=worst)


def _static_instances(thorough: bool):
    yield {"alg": "fedogd", "T": 12, "seed": 0}
    yield {"alg": "ofedavg", "T": 12, "seed": 1}


@claim(id="ofediq.static_problem.regret", paper=PAPER, reference="eqs. (3)-(5) (regret, FedOGD) on a static stream",
       statement="on a static federated problem (L_{k,t} = n w_k f_k for every t), FedOGD and OFedAvg (p = 1) are "
                 "GD on f and the logged regret after t + 1 rounds is n sum_{tau <= t} (f(w_tau) - f*), with f and "
                 "f* computed independently (weighted quadratic, linear solve), to 1e-10 relative",
       kind="identity", instances=_static_instances)
def check_static_regret(inst: dict) -> Evidence:
    rng = np.random.default_rng(inst["seed"])
    n, d = 4, 3
    M = rng.standard_normal((n, d, d))
    A = np.einsum("nij,nkj->nik", M, M) + np.eye(d)
    b = rng.standard_normal((n, d))
    weights = np.array([0.1, 0.2, 0.3, 0.4])
    problem = QuadraticProblem(A, b, weights=weights)
    A_bar, b_bar = np.einsum("n,nij->ij", weights, A), weights @ b
    f = lambda w: 0.5 * w @ A_bar @ w - b_bar @ w  # noqa: E731
    f_star = f(np.linalg.solve(A_bar, b_bar))
    eta = 0.5 / float(np.linalg.eigvalsh(A_bar).max())
    alg = FedOGD(eta=eta) if inst["alg"] == "fedogd" else OFedAvg(eta=eta, p=1.0)
    state = alg.init(problem, np.zeros(d))
    w, total, worst = np.zeros(d), 0.0, 0.0
    for _ in range(inst["T"]):
        state, log = alg.round(problem, state, rng)
        total += n * (f(w) - f_star)
        w = w - eta * (A_bar @ w - b_bar)
        worst = max(worst, abs(log.extra["regret"] - total) / max(1.0, abs(total)),
                    relative_error(state.x, w))
    return Evidence(f"{inst['alg']} n={n} d={d} T={inst['T']} unequal weights", worst, 1e-10, worst <= 1e-10)


def _second_moment_instances(thorough: bool):
    # K = 1, p = 1, s = 1, one block, a flat vector: the quantizer's error is (sqrt(D) - 1) ||g||^2, the
    # largest relative error a single client can produce, so the sigma_q^2 term of R is fully used
    yield {"p": [1.0], "D": 16, "s": 1, "b": 1, "flat": True, "seed": 0}
    yield {"p": [0.3, 0.6, 0.9, 0.5], "D": 10, "s": 2, "b": 2, "seed": 1}
    yield {"p": [0.5, 0.5, 0.5], "D": 8, "s": 1, "b": 1, "seed": 2}
    if thorough:
        yield {"p": [0.1, 1.0, 0.7, 0.2], "D": 32, "s": 4, "b": 4, "seed": 3}


def _second_moment_build(point: dict) -> dict:
    """A searched point: K clients with rates spread evenly over [p_min, p_min + spread (1 - p_min)], an (s, b)
    quantizer on R^D, gradients random from ``seed`` or (``flat`` = 1) all-ones."""
    if "p" in point:
        return dict(point)
    K, p_min = int(point["K"]), float(point["p_min"])
    p = np.linspace(p_min, p_min + point["spread"] * (1.0 - p_min), K)
    return {"p": [float(x) for x in p], "D": int(point["D"]), "s": int(point["s"]), "b": int(point["b"]),
            "flat": bool(point["flat"]), "seed": int(point["seed"])}


#: The class of the proof's step (34)-(35): any K, rates p_k in (0, 1], an (s, b) quantizer with b <= D, any
#: gradients. K <= 8 keeps the exact 2^K enumeration cheap.
_SECOND_MOMENT_SPACE = InstanceSpace(
    params=(Param("K", 1, 8, integer=True), Param("p_min", 1e-3, 1.0, log=True), Param("spread", 0.0, 1.0),
            Param("D", 1, 32, integer=True), Param("s", 1, 8, integer=True), Param("b", 1, 32, integer=True),
            Param("flat", 0, 1, integer=True)),
    fixed={"seed": 0}, build=_second_moment_build, regime=lambda pt: int(pt["b"]) <= int(pt["D"]),
    defaults=tuple(_second_moment_instances(False)), thorough=tuple(_second_moment_instances(True))[3:])


@claim(cites=("Theorem 2",),
       id="ofediq.thm2.aggregate_second_moment", paper=PAPER, reference="proof, eqs. (34)-(35)",
       statement="with Bernoulli(p_k) participation and the IPW-quantized gradients Q(grad_k / p_k): "
                 "E||(1/K) sum_{k in S} Q(grad_k / p_k)||^2 <= (2/p_min) R (1/K) sum_k ||grad_k||^2, "
                 "R = 1 + sigma_q^2 (p_sum - p_min + 1)/K; the expectation is exact (all 2^K participation "
                 "outcomes, the quantizer's two-point variance)",
       kind="bound", space=_SECOND_MOMENT_SPACE)
def check_aggregate_second_moment(inst: dict) -> Evidence:
    p = np.asarray(inst["p"], dtype=float)
    K, D = p.size, inst["D"]
    rng = np.random.default_rng(inst["seed"])
    g = np.ones((K, D)) if inst.get("flat") else rng.standard_normal((K, D)) * rng.exponential(size=(K, 1))
    q = SBQuantizer(inst["s"], inst["b"])
    # Q(g/p) - g/p has zero mean, is independent over clients and has variance q(g)/p^2 (Q is positively
    # homogeneous), so conditional on S: E||.||^2 = ||(1/K) sum_S g_k/p_k||^2 + (1/K^2) sum_S q(g_k)/p_k^2
    quant = q.variance(g) / p**2
    lhs = 0.0
    for mask in itertools.product((False, True), repeat=K):
        S = np.array(mask)
        prob = float(np.prod(np.where(S, p, 1.0 - p)))
        mean = (g[S] / p[S, None]).sum(axis=0) / K
        lhs += prob * (float(mean @ mean) + float(quant[S].sum()) / K**2)
    R = th.r_factor(q.omega(D), p)
    rhs = 2.0 / float(p.min()) * R * float(np.sum(g * g)) / K
    return Evidence(f"K={K} p={inst['p']} D={D} s={q.s} b={q.b}", lhs, rhs, lhs <= rhs * (1 + 1e-12),
                    tightness=lhs / rhs, details={"R": R, "sigma_q2": q.omega(D)})


def _drift_data(inst: dict) -> tuple[float, float, float, float, int]:
    """Run one period of local OGD (one client) on a ridge stream; return (drift, sum ||grad||^2, beta, eta, L).

    ``x``/``y`` give the stream explicitly (shape (L, D) and (L,)); otherwise a synthetic one is drawn.
    """
    L = inst["L"]
    if "x" in inst:
        problem = OnlineProblem(np.asarray(inst["x"], float)[:, None, :], np.asarray(inst["y"], float)[:, None],
                                loss="ridge", lam=inst.get("lam", 0.0))
    else:
        problem = online_ridge(1, L, inst["D"], heterogeneity=1.0, lam=inst.get("lam", 0.0), seed=inst["seed"])
    eta = inst["frac"] / (2 * problem.beta)
    g = np.zeros(problem.dim)
    w = g.copy()
    drift, gsum = 0.0, 0.0
    for t in range(L):
        drift += float((w - g) @ (w - g))
        grad = problem.grads_at(t, g)[0]
        gsum += float(grad @ grad)
        g = g - eta * grad
    return drift, gsum, problem.beta, eta, L


def _lemma3_build(point: dict) -> dict:
    """A point of Lemma 3's class (one client, a ridge stream of L samples in R^D, eta = frac/(2 beta)) as the
    instance :func:`_drift_data` takes: explicit samples, a Gaussian stream of the given feature and label
    scales, or (``stream="synthetic"``) fedtheory's ``online_ridge`` stream."""
    if "x" in point or point.get("stream") == "synthetic":
        return {k: v for k, v in point.items() if k != "stream"}
    rng = np.random.default_rng(point["seed"])
    L, D = int(point["L"]), int(point["D"])
    x = point["feature_scale"] * rng.standard_normal((L, D))
    y = point["label_scale"] * rng.standard_normal(L)
    return dict(L=L, x=x.tolist(), y=y.tolist(), frac=point["frac"])


#: Lemma 3's class: any ridge stream (features and labels of any scale), any period L >= 2, eta < 1/(2 beta).
_LEMMA3_SPACE = InstanceSpace(
    params=(Param("L", 2, 8, integer=True), Param("D", 1, 4, integer=True),
            Param("feature_scale", 1e-2, 10.0, log=True), Param("label_scale", 1e-1, 1e2, log=True),
            Param("frac", 0.05, 0.99)),
    fixed={"seed": 0}, build=_lemma3_build,
    # Minimal counterexample: one client, D = 1, L = 2, the sample (x, y) = (0.1, 10) twice, lam = 0 (beta = 0.01)
    defaults=(dict(L=2, x=[[0.1], [0.1]], y=[10.0, 10.0], frac=0.5), dict(stream="synthetic", L=4, D=3, frac=0.9,
                                                                             seed=31)),
    thorough=tuple(dict(stream="synthetic", L=L, D=4, frac=f, seed=32 + L) for L in (2, 3, 8) for f in (0.1, 0.99)))


@claim(cites=("Lemma 3",),
       id="ofediq.lemma3.stated", paper=PAPER, reference="eq. (45) as stated",
       statement="sum_l ||w_{t-L+1} - g_{k,t-L+l}||^2 <= (3 beta eta^2 L(L-1)/2) sum_l ||grad_{k,t-L+l}||^2",
       kind="counterexample", expected="violated", space=_LEMMA3_SPACE)
def check_lemma3_stated(inst: dict) -> Evidence:
    drift, gsum, beta, eta, L = _drift_data(inst)
    rhs = th.lemma3_stated_rhs(beta, eta, L, gsum)
    return Evidence(_kw(inst), drift, rhs, drift <= rhs * (1 + 1e-12), tightness=drift / rhs if rhs else None,
                    details={"beta": beta, "eta": eta, "why": "the stated bound scales with beta; the drift does "
                             "not (beta < 1/6 with L = 2 breaks it)"})


@claim(cites=("Lemma 3",),
       id="ofediq.lemma3.stated.corrected", paper=PAPER, reference="proof, eq. (46)",
       statement="sum_l ||w_{t-L+1} - g_{k,t-L+l}||^2 <= 3 eta^2 L(L-1) sum_l ||grad_{k,t-L+l}||^2 (the proof's "
                 "version; also <= eta^2 (L-1)^2 sum ||grad||^2)",
       kind="bound", derived=True, space=_LEMMA3_SPACE)
def check_lemma3_corrected(inst: dict) -> Evidence:
    drift, gsum, beta, eta, L = _drift_data(inst)
    rhs = th.lemma3_proof_rhs(eta, L, gsum)
    tight = eta**2 * (L - 1) ** 2 * gsum
    ok = drift <= tight * (1 + 1e-12) and tight <= rhs * (1 + 1e-12)
    return Evidence(_kw(inst), drift, rhs, ok, tightness=drift / rhs if rhs else None,
                    details={"eta2_(L-1)^2_bound": tight})


def _lemma4_instances(thorough: bool):
    for L in (2, 3, 5, 8) if not thorough else range(2, 17):
        yield dict(L=L, D=3, seed=40 + L)


#: Lemma 4's class: local OGD on any ridge stream of L + 1 samples, any period L >= 2 and any step (the lemma is
#: Lemma 1 with a = 1/(L-1) applied along the iterates: it assumes nothing about eta); the step is
#: eta = eta_beta / beta (the default points' 0.4 / beta).
_LEMMA4_SPACE = InstanceSpace(
    params=(Param("L", 2, 16, integer=True), Param("D", 1, 6, integer=True), Param("eta_beta", 0.01, 2.0, log=True)),
    fixed={"seed": 0}, defaults=tuple(_lemma4_instances(False)),
    thorough=tuple(pt for pt in _lemma4_instances(True) if pt["L"] not in (2, 3, 5, 8)))


@claim(cites=("Lemma 4", "Lemma 3"),
       id="ofediq.lemma4", paper=PAPER,
       statement="A||w_t - g_{k,t+l-2}||^2 + B||grad_{t+l-2}||^2 <= sum_{tau=0}^{l-2} B ||grad_{t+l-2-tau}||^2 A^tau "
                 "for 2 <= l <= L+1, A = 1 + 1/(L-1), B = L eta^2, along local OGD",
       kind="bound", space=_LEMMA4_SPACE)
def check_lemma4(inst: dict) -> Evidence:
    L = inst["L"]
    problem = online_ridge(1, L + 1, inst["D"], heterogeneity=1.0, seed=inst["seed"])
    eta = inst.get("eta_beta", 0.4) / problem.beta
    g = np.zeros(problem.dim)
    w = g.copy()
    gsq, ok, worst = [], True, 0.0
    for ell in range(2, L + 2):
        grad = problem.grads_at(ell - 2, g)[0]
        gsq.append(float(grad @ grad))
        lhs, rhs = th.lemma4_sides(float((w - g) @ (w - g)), np.array(gsq), L, eta)
        ok &= lhs <= rhs * (1 + 1e-12)
        worst = max(worst, lhs / rhs if rhs else 0.0)
        g = g - eta * grad
    return Evidence(f"L={L}", worst, 1.0, bool(ok), tightness=worst)


# =============================================================================================== Theorem 2, L > 1, stated step
def _thm2_stated_instances(thorough: bool):
    grid = [dict(K=1, T=16, D=1, L=4, frac=0.99, seed=4), dict(K=2, T=104, D=1, L=8, frac=0.5, seed=24),
            dict(K=4, T=128, D=2, L=16, frac=0.99, heterogeneity=2.0, drift=1.0, seed=0),
            dict(K=5, T=144, D=2, L=8, frac=0.99, heterogeneity=1.0, loss="logistic", seed=1)]
    if thorough:
        grid += [dict(K=K, T=16 * L, D=3, L=L, frac=0.99, heterogeneity=3.0, drift=2.0, seed=50 + L + K)
                 for K in (1, 5) for L in (2, 4, 8, 16)]
    yield from grid


def _fedomd_build(point: dict) -> dict:
    """A searched point: T = L x periods (L | T), ``loss`` 0 = ridge, 1 = logistic."""
    if "periods" not in point:
        return dict(point)
    out = {k: v for k, v in point.items() if k not in ("periods", "loss")}
    out["T"] = int(point["L"]) * int(point["periods"])
    if int(point["loss"]) == 1:
        out["loss"] = "logistic"
    return out


#: FedOMD's class in Theorem 2 as stated: any K, any period L >= 2 dividing T, ridge or logistic streams of
#: any heterogeneity and drift, eta = frac/(4 beta) < 1/(4 beta) (p = 1, no quantization: R = 1).
_FEDOMD_SPACE = InstanceSpace(
    params=(Param("K", 1, 8, integer=True), Param("L", 2, 16, integer=True), Param("periods", 1, 20, integer=True),
            Param("D", 1, 6, integer=True), Param("frac", 0.01, 0.99), Param("heterogeneity", 0.0, 3.0),
            Param("drift", 0.0, 2.0), Param("loss", 0, 1, integer=True)),
    fixed={"seed": 0}, build=_fedomd_build,
    regime=lambda pt: 0 < pt["frac"] < 1 and ("periods" in pt or pt["T"] % pt["L"] == 0),
    defaults=tuple(_thm2_stated_instances(False)), thorough=tuple(_thm2_stated_instances(True))[4:])


@claim(cites=("Theorem 2",),
       id="ofediq.thm2.L_gt_1.stated_step", paper=PAPER,
       reference="as stated (eta < p_min/(4 beta R), without the proof's extra 1/L)",
       statement="FedOMD = OFedIQ(L, p = 1, no quantization; deterministic, so the regret is exact) with the step "
                 "condition exactly as Theorem 2 states it, eta < 1/(4 beta): regret_T <= K||w*||^2/(2 eta) + "
                 "2 eta L K T sigma2 + 3 beta eta^2 L(L-1) K T sigma2 (L | T)",
       kind="bound", space=_FEDOMD_SPACE,
       notes="The L > 1 proof needs eta < p_min/(4 beta L R) and an approximation; this claim probes whether the "
             "stated (weaker) condition already breaks the bound. No violation found so far (hypothesis search in "
             "tests/test_ofediq.py).")
def check_thm2_stated_step(inst: dict) -> Evidence:
    return _fedomd_vs_theorem2(inst, factor=2.0)


def _fedomd_vs_theorem2(inst: dict, factor: float) -> Evidence:
    problem = _problem(inst)
    L = inst["L"]
    eta = inst["frac"] / (4 * problem.beta)
    tr = run(OFedIQ(eta=eta, period=L), problem, problem.horizon, seed=0, record_every=problem.horizon)
    w = problem.comparator()
    b = th.theorem2_bound(problem.n_clients, float(w @ w), eta, problem.horizon, problem.sigma2_diff(), 1.0,
                          sigma_q2=0.0, L=L, beta=problem.beta, factor=factor)
    reg = float(tr.regret[-1])
    return Evidence(_kw(inst), reg, b.value, reg <= b.value * (1 + 1e-10), tightness=reg / b.value,
                    details={"label": b.label, "factor": factor})


@claim(cites=("Theorem 2",),
       id="ofediq.thm2.remark_no_quantization", paper=PAPER,
       reference="the remark after it ('with no quantization the constant 2 can be removed')",
       statement="FedOMD = OFedIQ(L, 1, no quantization), eta < 1/(4 beta): regret_T <= K||w*||^2/(2 eta) + "
                 "eta L K T sigma2 + 3 beta eta^2 L(L-1) K T sigma2 (the factor-1 form; exact regret, deterministic)",
       kind="bound", space=_FEDOMD_SPACE)
def check_thm2_remark(inst: dict) -> Evidence:
    return _fedomd_vs_theorem2(inst, factor=1.0)
