"""Figure 3 (Dorfman, Vargaftik, Ben-Itzhak & Levy, DoCoFL, ICML 2023, Sec. 5, "Hyperparameters ablation") on a
synthetic stand-in: DoCoFL's final train performance over the anchor deployment rate K in {10, 50, 100, 500} and
the queue capacity V in {3, 5, 10}, under two bandwidth configurations.

The paper (CIFAR-100, ResNet-9) reports that DoCoFL works over a wide range of K and V, that "when the
multiplication K V is too large, the norm of the correction becomes sizable, which can hinder the final accuracy
and even convergence", and that a larger correction budget b_c allows a larger K V. The mechanism is eq. (23):
a client's estimation error is E||w_hat - w_t||^2 <= omega^2 ||w_t - y||^2 with y its anchor, K (V - 1) to
KV - 1 rounds old, so a staler anchor means a longer correction and, at a fixed b_c, a larger error.

Stand-in (:func:`fedtheory.claims.docofl._shared.standin_problem`): Synthetic(1, 1) logistic regression,
N = 100, d = 60, S = 10, minibatches of 16, eta = 1/L, T = 300 rounds, every client notified K (V - 1) rounds
ahead. Train performance is the loss gap f(w_t) - f* averaged over the last fifth of the rounds (the paper plots
train accuracy; the gap is its smooth counterpart, and the accuracy of a 60-parameter logistic model moves by
less than its seed-to-seed spread). With T = 300, every K V >= 300 in the paper's grid (K = 100, 500 with
V >= 3) keeps the anchor of round 0 for the whole run: the "too large" end of the grid.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...algorithms.docofl import DoCoFL, TwoClassParticipation
from ..registry import Evidence, claim
from ._shared import STANDIN, anchor_compressor, correction_compressor, gap_path, standin_problem

__all__ = ["DEGRADATION", "FIGURE3_CONFIGS", "FIGURE3_GRID", "degradation", "figure3_evidence", "figure3_table",
           "final_gap", "final_rounds", "standin_docofl"]

#: The paper's grid of anchor deployment rates K and queue capacities V.
FIGURE3_GRID = tuple((K, V) for K in (10, 50, 100, 500) for V in (3, 5, 10))
#: The two bandwidth configurations (b_w, b_c): b_c = 2 is the paper's CIFAR-100 configuration 1 (Table 3,
#: (2, 2, 1)); b_c = 4 is the larger correction budget the paper proposes for a large K V. The paper's figure does
#: not print its two configurations in the text; these are our choice.
FIGURE3_CONFIGS = ((2.0, 2.0), (2.0, 4.0))
#: "Degrades when K V is too large", read with a margin: at b_c = 2 the mean final gap at the largest K V is at
#: least 1.2 times that at the smallest, and that degradation factor is at least 1.2 times the one at b_c = 4
#: ("a larger b_c allows a larger K V"). The margin 0.2 is about a third of the measured excess (factor 1.56 with
#: 4 seeds and 1.46 with 8 at b_c = 2; 1.04 and 1.02 at b_c = 4); a run whose anchors are never refreshed has
#: factor exactly 1 at both budgets and fails both (tests/claims/docofl/test_figure3.py).
DEGRADATION = 1.2


def standin_docofl(K: int, V: int, b_w: float, b_c: float, cls: type = DoCoFL) -> DoCoFL:
    """DoCoFL on the stand-in: eta = 1/L (the certificate's), S = 10, ECUQ anchors at b_w bits, the b_c-bit
    correction stand-in, no uplink compression, every client notified K (V - 1) rounds ahead (the queue's widest
    window). ``cls`` lets a test substitute a broken variant of the algorithm."""
    return cls(step=None, n_sampled=STANDIN["n_sampled"], period=K, queue_size=V,
               anchor_compressor=anchor_compressor(b_w), correction_compressor=correction_compressor(b_c),
               participation=TwoClassParticipation(lead_strong=K * (V - 1)))


def final_rounds(rounds: int) -> range:
    """The last fifth of the rounds, t in (4T/5, T]."""
    return range(rounds - rounds // 5 + 1, rounds + 1)


def final_gap(alg: DoCoFL, rounds: int, seed: int) -> float:
    """Mean of f(w_t) - f* over the last fifth of the rounds (:func:`final_rounds`) on the stand-in: the 'final'
    train loss, averaged over rounds so that one round's SGD noise does not decide it."""
    return float(np.mean(gap_path(alg, standin_problem(), rounds, seed, at=final_rounds(rounds))))


def figure3_table(grid: Sequence[tuple[int, int]], configs: Sequence[tuple[float, float]], seeds: int,
                  rounds: int = STANDIN["rounds"], cls: type = DoCoFL) -> dict[tuple[float, float], list[dict]]:
    """Per configuration (b_w, b_c), per (K, V) of ``grid``: the final gap per seed and its mean over seeds
    (seeds 0..seeds-1, paired across the grid and the configurations)."""
    out: dict[tuple[float, float], list[dict]] = {}
    for b_w, b_c in configs:
        rows = []
        for K, V in grid:
            alg = standin_docofl(K, V, b_w, b_c, cls)
            per_seed = [final_gap(alg, rounds, s) for s in range(seeds)]
            rows.append({"K": K, "V": V, "KV": K * V, "final_gap": float(np.mean(per_seed)),
                         "per_seed": [round(g, 5) for g in per_seed]})
        out[(b_w, b_c)] = rows
    return out


def degradation(rows: Sequence[dict]) -> float:
    """Mean final gap at the largest K V over that at the smallest (the grid's extremes)."""
    lo = min(rows, key=lambda r: r["KV"])
    hi = max(rows, key=lambda r: r["KV"])
    return hi["final_gap"] / lo["final_gap"]


def _instances(thorough: bool):
    grid = FIGURE3_GRID if thorough else ((10, 3), (500, 10))
    yield {"grid": grid, "configs": FIGURE3_CONFIGS, "seeds": 8 if thorough else 4, "rounds": STANDIN["rounds"]}


def figure3_evidence(inst: dict, cls: type = DoCoFL) -> Evidence:
    """The verdict of :func:`check_figure3` for the algorithm class ``cls``."""
    table = figure3_table(inst["grid"], inst["configs"], inst["seeds"], inst["rounds"], cls)
    (low_cfg, high_cfg) = sorted(table, key=lambda c: c[1])
    d_low, d_high = degradation(table[low_cfg]), degradation(table[high_cfg])
    ok = d_low >= DEGRADATION and d_low >= DEGRADATION * d_high
    details: dict[str, Any] = {f"(b_w, b_c) = {cfg}": rows for cfg, rows in table.items()}
    details.update({"degradation b_c low": d_low, "degradation b_c high": d_high,
                    "initial gap": standin_problem().gap(np.zeros(STANDIN["dim"]))})
    return Evidence(f"stand-in {STANDIN}, (K, V) in {list(inst['grid'])}, {inst['seeds']} seeds", d_low,
                    DEGRADATION, bool(ok), details=details)


@claim(cites=("Figure 3",),
       id="docofl.appendix.figure3", paper="docofl",
       reference="Sec. 5, hyperparameters ablation; K in {10, 50, 100, 500}, V in {3, 5, 10}",
       statement="DoCoFL's final train loss degrades when K V is too large, and a larger correction budget allows "
                 "a larger K V: at (b_w, b_c) = (2, 2) the mean final gap f - f* at the largest K V is >= 1.2 x that "
                 "at the smallest, and that factor is >= 1.2 x the one at (b_w, b_c) = (2, 4) (Synthetic(1, 1) "
                 "logistic stand-in, N = 100, S = 10, T = 300, paired seeds)",
       narrower="on a synthetic logistic-regression stand-in instead of CIFAR-100 / ResNet-9 (loss gap instead of "
                "train accuracy; stochastic uniform quantizers instead of EDEN for the correction; our two "
                "bandwidth configurations); the default run takes the grid's extremes (K, V) = (10, 3) and (500, 10), "
                "the thorough run the full 4 x 3 grid with 8 seeds",
       kind="monotonicity", instances=_instances, runs=("docofl",))
def check_figure3(inst: dict) -> Evidence:
    return figure3_evidence(inst)
