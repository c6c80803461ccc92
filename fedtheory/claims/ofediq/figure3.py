"""OFedIQ, Figure 3 (Section 5, CCR 99%): the optimised OFedIQ against a single-block quantizer and against
OFedAvg at the same uplink cost, measured on a stand-in for the paper's MNIST CNN.

The paper's panel: OFedIQ(1, 0.086, 3, 777), Algorithm 3's (p, s, b) for gamma = 0.01 and D = 34,826, reaches a
higher accuracy than OFedIQ(1, 0.086, 7, 1) (the QSGD-style quantizer, one block) and OFedAvg(0.01) (no
quantization), "all three at the same communication cost".

**Stand-in.** MNIST and the CNN are not available offline, and a linear model on scikit-learn's digits has
D = 65, where Algorithm 3 gives b = floor((gamma/s)^{2/3} D) = 1 block: the optimised quantizer would *be* the
single-block one and Figure 3 would compare a method with itself. The stand-in is a two-layer network on digits
whose first layer is random and frozen (random ReLU features, Rahimi & Recht 2007): x -> max(W x, 0)/sqrt(D)
with W standard normal of shape (D, 65), rows then projected into the unit ball. Only the D output weights are
learnt, so the loss is the online ridge loss of Section 5's convex setting, and D is free: D = 256 gives b = 5
blocks of ~51 coordinates (the paper's MNIST blocks hold ~45).

**Equal cost** (Table I, bits of one transmitted vector, uplink only, 32-bit reals):

    q(s, b) = 32 b + D (1 + log2(s + 1)),   unquantized: 32 D;   expected bits per step p K q.

* optimised: Algorithm 3 for (gamma, D) (:func:`fedtheory.theory.ofediq.algorithm3_corrected`), (p, s, b);
* one block: the same p, b = 1, and the smallest s with q(s, 1) >= q(s_opt, b_opt), so it is never given
  fewer bits (on MNIST's D this rule gives s = 6, 2.5% more bits; the paper's s = 7 spends 7.7% more);
* OFedAvg: p' = p q(s_opt, b_opt)/(32 D), the same expected bits exactly; this is the paper's OFedAvg(gamma),
  since algorithm3_corrected sets p from the realised b, so that the optimised method spends the budget exactly.

The check reads the realised bits back from the runs' ``uplink_bits``: every transmitted vector costs its q,
and each method's realised cost gamma = bits/(32 K D T) is its expected p q/(32 D) within Z_MONTE_CARLO binomial
standard errors of the number of transmissions.

**Protocol, fixed before the held-out seeds.** One step size for all three, as in Section 5: Corollary 1's
optimised step for FedOGD on the stream, eta = sqrt(||w*||^2/(2 T sigma_diff^2)) (Theorem 1 minimised, tuned for
none of the compared methods). A seed is one draw of every method's randomness (participation coins and
quantizer uniforms) on the same stream (the optimised and the single-block methods, with the same p, then draw
the same participation coins, which come first in a step: their comparison is paired); the time-averaged loss is (1/(K T)) sum_t sum_k L_{k,t}(w_t), and the
time-averaged regret is that minus the hindsight minimum (1/(K T)) min_w sum_t sum_k L_{k,t}(w) (eq. 3), which is
the same for the three methods. The optimised OFedIQ "beats" a comparator when it has the smaller loss on every
seed and the comparator's mean time-averaged regret is at least FIGURE3_MARGIN times its own.
"""
from __future__ import annotations

import math

import numpy as np

from ...algorithms.ofediq import OFedAvg, OFedIQ
from ...problems.online import OnlineProblem, online_from_dataset
from ...run import run
from ...theory import ofediq as th
from ..registry import Evidence, claim
from ..tolerances import EXACT_REL, Z_MONTE_CARLO

__all__ = ["FIGURE3_MARGIN", "random_feature_digits", "figure3_configs", "figure3_table"]

PAPER = "ofediq"

#: "Beats" is read as better than a tie: the comparator's mean time-averaged regret (time-averaged loss minus
#: the hindsight minimum, the part of the loss an algorithm controls) must be at least 1.02 times the optimised
#: OFedIQ's. Fixed on development seeds 0-4 of the default instance, where the ratios were 1.059 (one block) and
#: 2.68 (OFedAvg), before any held-out seed was run: 2% is about a third of the smaller effect. (The sizes and
#: the step rule were chosen on those development seeds too; the step sizes tried, 0.25/beta to 2/beta, all
#: ranked the three methods the same way.) Held out, seeds 5-24 of the same stream: 1.049 and 2.66, the optimised
#: method winning all 20 paired seeds against both. Its quantizer made to ignore its blocks gives 0.87 against
#: the single-block comparator (tests/claims/ofediq/test_figure3.py).
FIGURE3_MARGIN = 1.02

#: Table I counts a real number as 32 bits.
FLOAT_BITS = 32


def random_feature_digits(n_clients: int, horizon: int, dim: int, *, seed: int = 0) -> OnlineProblem:
    """The stand-in stream: scikit-learn digits (:func:`~fedtheory.problems.online.online_from_dataset`, ridge,
    labels digit/9) through a frozen random ReLU layer, x -> max(W x, 0)/sqrt(dim), W ~ N(0, 1)^{dim x 65}
    drawn from ``seed``, each row then projected into the unit ball (so beta <= 1 + lam, as for the base stream).
    """
    base = online_from_dataset("digits", n_clients, horizon, loss="ridge", seed=seed)
    W = np.random.default_rng(seed).normal(size=(base.dim, dim))
    H = np.maximum(base.features @ W, 0.0) / math.sqrt(dim)
    H /= np.maximum(1.0, np.linalg.norm(H, axis=-1))[..., None]
    return OnlineProblem(H, base.labels, loss="ridge", lam=base.lam)


def _vector_bits(D: int, s: int | None, b: int | None) -> float:
    """q = 32 b + D (1 + log2(s + 1)) (eq. 13), or 32 D unquantized; written here from Table I, independently of
    the algorithms' own count (which the check reads back from the runs)."""
    return float(FLOAT_BITS * D) if s is None else float(FLOAT_BITS * b + D * (1 + math.log2(s + 1)))


def figure3_configs(gamma: float, D: int) -> dict[str, dict]:
    """The three methods at equal uplink cost: ``{name: {"p", "s", "b", "q"}}`` (s = b = None: no quantization).

    optimised = Algorithm 3's (p, s, b); one_block = (p, s', 1) with s' the smallest level count whose q is at
    least the optimised q; ofedavg = (p q_opt/(32 D), None, None). ValueError when Algorithm 3 gives one block
    (then the optimised method *is* the single-block one).
    """
    cfg = th.algorithm3_corrected(gamma, D)
    if cfg.b < 2:
        raise ValueError(f"Algorithm 3 gives b = {cfg.b} block(s) for gamma = {gamma}, D = {D}: the single-block "
                         "comparator would be the optimised method itself; use a larger D")
    q_opt = _vector_bits(D, cfg.s, cfg.b)
    s_one = 1
    while _vector_bits(D, s_one, 1) < q_opt:
        s_one += 1
    return {"optimised": {"p": cfg.p, "s": cfg.s, "b": cfg.b, "q": q_opt},
            "one_block": {"p": cfg.p, "s": s_one, "b": 1, "q": _vector_bits(D, s_one, 1)},
            "ofedavg": {"p": cfg.p * q_opt / (FLOAT_BITS * D), "s": None, "b": None, "q": float(FLOAT_BITS * D)}}


def _algorithm(eta: float, c: dict):
    if c["s"] is None:
        return OFedAvg(eta=eta, p=c["p"])
    return OFedIQ(eta=eta, p=c["p"], s=c["s"], b=c["b"])


def figure3_table(inst: dict) -> dict:
    """Run the three methods of :func:`figure3_configs` on :func:`random_feature_digits` for seeds
    ``seed0 .. seed0 + seeds - 1``: per method its configuration, the per-seed time-averaged losses, transmitted
    vectors and uplink bits; and the common step size."""
    K, T, D = inst["K"], inst["T"], inst["D"]
    prob = random_feature_digits(K, T, D, seed=inst["seed"])
    w_star = prob.certificate.x_star  # the hindsight comparator of the whole stream
    sigma2 = prob.sigma2_diff(w=w_star)
    eta, _ = th.corollary1_ofedavg(1.0, float(w_star @ w_star), sigma2, T)
    seeds = range(inst.get("seed0", 0), inst.get("seed0", 0) + inst["seeds"])
    methods = {}
    for name, c in figure3_configs(inst["gamma"], D).items():
        alg = _algorithm(eta, c)
        traces = [run(alg, prob, T, seed=s, record_every=T) for s in seeds]
        methods[name] = {**c, "loss": [float(tr.cum_loss[-1]) / (K * T) for tr in traces],
                         "vectors": [float(np.sum(tr.participants)) for tr in traces],
                         "bits": [float(np.sum(tr.uplink_bits)) for tr in traces]}
    return {"eta": eta, "eta_theorem1_max": 1 / (2 * prob.beta), "beta": prob.beta,
            "floor": float(prob.prefix_min_values[-1]) / (K * T), "methods": methods}


def _bits_matched(table: dict, K: int, T: int, D: int) -> tuple[bool, dict]:
    """Whether the runs spent the bits the matching says: each vector its q (relative 1e-12), each method's
    realised cost within Z_MONTE_CARLO binomial standard errors of p q/(32 D), OFedAvg's expected cost equal to
    the optimised one's and the single-block one's at least it."""
    out, ok = {}, True
    full = FLOAT_BITS * K * D * T
    for name, m in table["methods"].items():
        vec, bits = np.asarray(m["vectors"]), np.asarray(m["bits"])
        per_vector = bits[vec > 0] / vec[vec > 0]
        exact = bool(np.all(np.abs(per_vector - m["q"]) <= EXACT_REL * m["q"]))
        n = len(vec)
        z = abs(vec.mean() - K * T * m["p"]) / math.sqrt(K * T * m["p"] * (1 - m["p"]) / n)
        out[name] = {"gamma_expected": m["p"] * m["q"] / (FLOAT_BITS * D), "gamma_realised": float(bits.mean() / full),
                     "bits_per_vector_exact": exact, "z_transmissions": float(z)}
        ok &= exact and z <= Z_MONTE_CARLO
    g = {k: v["gamma_expected"] for k, v in out.items()}
    ok &= abs(g["ofedavg"] - g["optimised"]) <= EXACT_REL * g["optimised"] and g["one_block"] >= g["optimised"]
    return bool(ok), out


def _figure3_instances(thorough: bool):
    # 5 seeds: if the optimised method and a comparator were exchangeable, winning all five paired seeds would
    # happen with probability 2^-5 = 3%; and the five runs of three methods keep the claim near 2 s.
    yield dict(K=30, T=160, D=256, gamma=0.01, seeds=5, seed=0)
    if thorough:
        yield dict(K=30, T=160, D=512, gamma=0.01, seeds=10, seed=1)


@claim(cites=("Figure 3",),
       id="ofediq.statements.figure3", paper=PAPER,
       reference="Section 5, CCR 99% (gamma = 0.01); the stand-in and the bit matching are in docs/ofediq.md",
       statement="at the same uplink cost (gamma = 0.01), the optimised OFedIQ (Algorithm 3's (p, s, b), L = 1) "
                 "has a smaller time-averaged loss than OFedIQ with the same p, one block and the s that spends at "
                 "least its bits, and than OFedAvg with the p that spends its bits: on every seed, and each "
                 "comparator's mean time-averaged regret is at least 1.02 times its own",
       narrower="on a stand-in: a ridge stream of scikit-learn digits through a frozen random ReLU layer (D = 256, "
                "b = 5 blocks; D = 512 in the thorough run), K = 30, T = 160, one step size for all (Corollary 1's "
                "for FedOGD), 5 seeds; the paper's MNIST CNN (D = 34,826, b = 777, K = 1000) is not available "
                "offline, and its accuracy curves are read as time-averaged loss",
       kind="qualitative", instances=_figure3_instances, runs=("ofediq",))
def check_figure3(inst: dict) -> Evidence:
    table = figure3_table(inst)
    matched, bits = _bits_matched(table, inst["K"], inst["T"], inst["D"])
    floor = table["floor"]
    opt = np.asarray(table["methods"]["optimised"]["loss"])
    ratios, every = {}, {}
    for name in ("one_block", "ofedavg"):
        other = np.asarray(table["methods"][name]["loss"])
        # the floor is common to the three: the ratio of the mean time-averaged regrets
        ratios[name] = float((other.mean() - floor) / (opt.mean() - floor))
        every[name] = bool(np.all(opt < other))
    worst = min(ratios.values())
    holds = matched and all(every.values()) and worst >= FIGURE3_MARGIN
    configs = {k: [round(v["p"], 5), v["s"], v["b"]] for k, v in table["methods"].items()}
    return Evidence(f"digits random features K={inst['K']} T={inst['T']} D={inst['D']} gamma={inst['gamma']}, "
                    f"{inst['seeds']} seeds", worst, FIGURE3_MARGIN, holds,
                    details={"configs (p, s, b)": configs, "eta": table["eta"],
                             "eta_theorem1_max": table["eta_theorem1_max"], "hindsight_floor": floor,
                             "mean_loss": {k: float(np.mean(v["loss"])) for k, v in table["methods"].items()},
                             "regret_ratio": ratios, "wins_every_seed": every, "bits_matched": matched, "bits": bits})
