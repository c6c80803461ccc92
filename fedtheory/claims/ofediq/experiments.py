"""OFedIQ, the experiments: Figure 2 (the transmission period L at equal communication cost) measured on a
synthetic stream, and Figure 4 (parity at CCR 99%) on a real-data stream (scikit-learn digits). The paper's
are MNIST with a CNN, K = 1000, not available offline; docs/ofediq.md ("Experiments, side by side") sets them
next to the paper's.
"""
from __future__ import annotations

import math

import numpy as np

from ...algorithms.ofediq import FedOGD, OFedIQ
from ...problems.online import online_from_dataset, online_ridge
from ...run import run
from ...theory import ofediq as th
from ..registry import Evidence, claim
from ._shared import describe, truncate

__all__ = []

PAPER = "ofediq"


# ---------------------------------------------------------------------------------------------------------
# Figure 2: the transmission period L at equal communication cost (p/L fixed)
# ---------------------------------------------------------------------------------------------------------

def _figure2_instances(thorough: bool):
    yield dict(K=40, T=240, D=5, rate=0.1, Ls=(1, 2, 4), eta=0.01, seeds=2 if not thorough else 10, seed=40)
    if thorough:
        yield dict(K=100, T=800, D=8, rate=0.05, Ls=(1, 2, 4, 8), eta=0.01, seeds=5, seed=41)


@claim(cites=("Figure 2",),
       id="ofediq.statements.figure2", paper=PAPER,
       reference="Section 5 (OFedIQ for L = 1, 2, 4, ... at fixed p/L, MNIST, K = 1000, CCR 99%) and Section 4.2.1",
       statement="at equal communication cost (p/L fixed, no quantization) L = 1 gives the smallest time-averaged "
                 "loss, the loss grows with L, and the gap narrows as t grows (measured on a synthetic online "
                 "ridge stream with eta = 0.01 as in Section 5; the paper's MNIST stream is not available offline)",
       narrower="a synthetic ridge stream (K = 40, D = 5, T = 240, 2 seeds) instead of a neural network on a "
                "data stream; the experiment in the paper's setting is ofediq.figure2.experiment",
       kind="qualitative", expected="exploratory", instances=_figure2_instances, runs=("ofediq",))
def check_figure2(inst: dict) -> Evidence:
    problem = online_ridge(inst["K"], inst["T"], inst["D"], heterogeneity=1.0, seed=inst["seed"])
    T, K = problem.horizon, problem.n_clients
    early, late = T // 4, T
    avg = {}
    for L in inst["Ls"]:
        alg = OFedIQ(eta=inst["eta"], p=min(1.0, inst["rate"] * L), period=L)
        # cum_loss[t] = sum_{tau <= t} sum_k L_{k,tau}(w_{psi_L(tau)}) after t steps (index 0: before the first)
        curves = [np.asarray(run(alg, problem, T, seed=s).cum_loss, dtype=float)[1:] for s in range(inst["seeds"])]
        mean = np.mean(curves, axis=0)
        avg[L] = {"early": float(mean[early - 1] / (early * K)), "late": float(mean[late - 1] / (late * K))}
    Ls = list(inst["Ls"])
    ordered = all(avg[a]["early"] <= avg[b]["early"] and avg[a]["late"] <= avg[b]["late"] for a, b in zip(Ls, Ls[1:]))
    narrowing = all(avg[L]["late"] - avg[1]["late"] <= avg[L]["early"] - avg[1]["early"] for L in Ls[1:])
    return Evidence(f"ridge K={K} D={problem.dim} T={T} p/L={inst['rate']}", avg[Ls[-1]]["late"] - avg[1]["late"], 0.0,
                    bool(ordered and narrowing),
                    details={"time_averaged_loss": {str(k): v for k, v in avg.items()}, "L1_best_and_ordered": ordered,
                             "gap_narrows": narrowing})


# ---------------------------------------------------------------------------------------------------------
# Figure 4 (Section 4.2): OFedIQ at CCR 99% against FedOGD
# ---------------------------------------------------------------------------------------------------------

def parity_rows(dataset: str, K: int, Ts, gamma: float, seeds: int, seed: int, make_ofediq=OFedIQ) -> dict:
    """Per horizon T: the time-averaged losses of FedOGD and of OFedIQ (mean over ``seeds`` runs) at Algorithm
    3's parameters for ``gamma``, with matched eta_T = (1/(4 beta)) sqrt(T_0/T), and OFedIQ's uplink bits over
    FedOGD's. ``make_ofediq(eta=, p=, s=, b=)`` builds the algorithm under test (tests pass a broken one)."""
    full = online_from_dataset(dataset, K, max(Ts), loss="ridge", seed=seed)
    cfg = th.algorithm3_corrected(gamma, full.dim)
    rows = {}
    for T in Ts:
        prob = truncate(full, T)
        eta = 1 / (4 * prob.beta) * math.sqrt(min(Ts) / T)  # the paper uses one fixed eta for all methods
        tr_f = run(FedOGD(eta=eta), prob, T, seed=0, record_every=T)
        tr_q = [run(make_ofediq(eta=eta, p=cfg.p, s=cfg.s, b=cfg.b), prob, T, seed=s, record_every=T)
                for s in range(seeds)]
        avg_f = float(tr_f.cum_loss[-1]) / (prob.n_clients * T)
        avg_q = float(np.mean([t.cum_loss[-1] for t in tr_q])) / (prob.n_clients * T)
        rows[T] = {"avg_loss_fedogd": avg_f, "avg_loss_ofediq": avg_q,
                   "bits_ratio": float(np.mean([t.uplink_bits.sum() for t in tr_q]) / tr_f.uplink_bits.sum()),
                   "regret_over_T_fedogd": float(tr_f.regret[-1]) / T,
                   "regret_over_T_ofediq": float(np.mean([t.regret[-1] for t in tr_q])) / T,
                   "config": [cfg.p, cfg.s, cfg.b, cfg.gamma_actual]}
    return rows


def _parity_instances(thorough: bool):
    yield dict(dataset="digits", K=10, Ts=(50, 200, 800), gamma=0.01, seeds=2, seed=0)
    if thorough:
        yield dict(dataset="breast_cancer", K=50, Ts=(100, 400, 1600, 6400), gamma=0.01, seeds=5, seed=1)


@claim(cites=("Figure 4",),
       id="ofediq.parity99.exploratory", paper=PAPER, reference="Section 4.2 (CCR 99%)",
       statement="On a real-data stream (scikit-learn digits, ridge), FedOGD and OFedIQ at gamma = 0.01 (Algorithm 3"
                 " parameters, corrected so b >= 1 for the small D) with matched eta_T = (1/(4 beta)) sqrt(T_0/T): "
                 "the gap in time-averaged loss shrinks as T grows while OFedIQ uses ~1% of FedOGD's uplink bits",
       kind="qualitative", expected="exploratory", instances=_parity_instances, runs=("ofediq",))
def check_parity(inst: dict) -> Evidence:
    rows = parity_rows(inst["dataset"], inst["K"], inst["Ts"], inst["gamma"], inst["seeds"], inst["seed"])
    gaps = [r["avg_loss_ofediq"] - r["avg_loss_fedogd"] for r in rows.values()]
    shrinking = all(abs(b) < abs(a) for a, b in zip(gaps, gaps[1:]))
    return Evidence(describe(inst), gaps[-1], gaps[0], shrinking,
                    details={"config": rows[inst["Ts"][0]]["config"], "per_T": rows})


#: Figure 4, asserted over data seeds: the mean gap at the longest horizon is at most this fraction of the mean
#: gap at the shortest (measured 0.58 over data seeds 0-5; on one seed of six, seed 5, the gap does not shrink:
#: 0.0034 at T = 50, 0.0040 at T = 800, so the comparison is on the mean, not per seed), and OFedIQ's uplink is
#: at most 1.25% of FedOGD's (CCR 99%: 1%, measured 1.01-1.06% with the corrected b >= 1).
PARITY_SHRINK, PARITY_BITS = 0.75, 0.0125


def _parity_asserted_instances(thorough: bool):
    yield dict(dataset="digits", K=10, Ts=(50, 800), gamma=0.01, seeds=2, data_seeds=list(range(6)))


@claim(cites=("Figure 4",),
       id="ofediq.parity99", paper=PAPER, reference="Section 4.2 (CCR 99%), Figure 4",
       statement=f"with Algorithm 3's parameters at gamma = 0.01 and matched eta_T, the gap in time-averaged loss "
                 f"between OFedIQ and FedOGD shrinks as T grows: its mean over data seeds at T = 800 is at most "
                 f"{PARITY_SHRINK:g}x the one at T = 50, while OFedIQ sends at most {100 * PARITY_BITS:g}% of "
                 f"FedOGD's uplink bits",
       narrower="on a stand-in: a ridge stream of scikit-learn digits (K = 10, six data seeds, two OFedIQ seeds "
                "each) instead of MNIST with a CNN and K = 1000; the shrinking is asserted on the mean over data "
                "seeds (one seed of six does not shrink), parity itself is not asserted",
       kind="qualitative", instances=_parity_asserted_instances, runs=("ofediq",))
def check_parity_asserted(inst: dict, make_ofediq=OFedIQ) -> Evidence:
    per_seed = {s: parity_rows(inst["dataset"], inst["K"], inst["Ts"], inst["gamma"], inst["seeds"], s, make_ofediq)
                for s in inst["data_seeds"]}
    first, last = inst["Ts"][0], inst["Ts"][-1]
    gap = {T: float(np.mean([r[T]["avg_loss_ofediq"] - r[T]["avg_loss_fedogd"] for r in per_seed.values()]))
           for T in (first, last)}
    bits = max(r[T]["bits_ratio"] for r in per_seed.values() for T in (first, last))
    ratio = gap[last] / gap[first] if gap[first] > 0 else math.inf
    return Evidence(f"digits ridge K={inst['K']} T={inst['Ts']} data seeds={inst['data_seeds']}", ratio,
                    PARITY_SHRINK, bool(ratio <= PARITY_SHRINK and bits <= PARITY_BITS),
                    details={"mean_gap": {str(k): v for k, v in gap.items()}, "max_bits_ratio": bits,
                             "per_seed_gap": {str(s): {str(T): r[T]["avg_loss_ofediq"] - r[T]["avg_loss_fedogd"]
                                                       for T in (first, last)} for s, r in per_seed.items()}})
