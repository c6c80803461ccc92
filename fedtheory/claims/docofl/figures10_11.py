"""Figures 10 and 11 (Dorfman, Vargaftik, Ben-Itzhak & Levy, DoCoFL, ICML 2023, App. G.2, "Bandwidth budget
ablation") on the synthetic stand-in of Figure 3 (:mod:`fedtheory.claims.docofl.figure3`): K = 10, V = 3,
train performance against rounds and against downlink bits for

* Figure 10: anchor budgets b_w in {32, 3, 2, 1.5} bits per coordinate with b_c = 2. The paper: b_w = 2 (16x less
  anchor bandwidth) costs no validation accuracy, and "less bandwidth typically results in lower train accuracy";
* Figure 11: correction budgets b_c in {32, 4, 2, 1, 0.5} with b_w = 2. The paper: "similar trends, where less
  bandwidth leads to lower train accuracy", and a sub-bit correction (b_c = 0.5) is usable.

Both figures' right panels plot the same runs against the downlink bits, where the low budgets are far ahead:
each participant downloads (b_w + b_c) d bits per round (Sec. 7.3's accounting, the anchor offline and the
correction online), so the full-precision run (32 + 2 bits) has done 4/34 of the rounds when the (2, 2) run has
spent its budget of T rounds.

Measured on the stand-in: train loss gap f - f* (the paper plots accuracy; validation accuracy, where the paper
sees low budgets help, has no stand-in here). The bits are the paper's nominal b per coordinate, computed from
the budgets alone (independent of the compressors' own counts, which the RoundLog keeps: ECUQ's Huffman code
runs up to ~0.1 bit above b_w, docofl.ecuq.huffman_budget, and the quantizers add a 128-bit range header).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...algorithms.docofl import DoCoFL
from ..registry import Evidence, claim
from ._shared import FULL_PRECISION, STANDIN, gap_path, standin_problem
from .figure3 import final_rounds, standin_docofl

__all__ = ["BITS_ADVANTAGE", "CLOSE", "FIGURE10_BUDGETS", "FIGURE11_BUDGETS", "LOWER", "budget_table",
           "figure10_evidence", "figure11_evidence", "rounds_at_equal_bits"]

#: Figure 10's anchor budgets b_w (b_c = 2) and Figure 11's correction budgets b_c (b_w = 2).
FIGURE10_BUDGETS = (32.0, 3.0, 2.0, 1.5)
FIGURE11_BUDGETS = (32.0, 4.0, 2.0, 1.0, 0.5)
#: The paper's K and V for both figures.
PERIOD, QUEUE = 10, 3

#: "No degradation" at fixed rounds, read with a margin: the mean final gap of the named low budget is at most
#: 1.1 x that of full precision (measured: 1.01-1.05 for b_w = 3, 2 and 0.99-1.01 for b_c = 4). Correcting against the
#: uncompressed anchor, a plausible slip of footnote 3, leaves the anchor's quantization error as a bias and fails
#: it (tests/claims/docofl/test_figures10_11.py).
CLOSE = 1.1
#: "Less bandwidth, lower train accuracy", read with a margin: the named lower budget's mean final gap is at least
#: 1.05 x the reference's (b_w = 1.5 against 32: measured 1.11-1.14; b_c = 1 against 2 and 0.5 against 1: 1.63-1.66
#: and 1.36-1.39). b_w = 3 and 2 against 32 are within 5% either way over seeds, so no ordering is asserted there.
#: A run that drops the correction, or ignores the budget, has no such ordering and fails it.
LOWER = 1.05
#: Against downlink bits: at the bits the (2, 2) run spends in T rounds (the full-precision run's round 35 of 300),
#: the full-precision run's gap is at least 1.3 x the (2, 2) run's final gap (measured 1.62 / 1.56 for Figures
#: 10 / 11 with 4 seeds, 1.77 / 1.54 with 8; a run without the correction measures 0.11).
BITS_ADVANTAGE = 1.3


def bits_per_round(b_w: float, b_c: float) -> float:
    """Nominal downlink bits per round, S d (b_w + b_c) (Sec. 7.3: every participant downloads an anchor and a
    correction)."""
    return STANDIN["n_sampled"] * STANDIN["dim"] * (b_w + b_c)


def rounds_at_equal_bits(rounds: int, low: tuple[float, float], high: tuple[float, float]) -> int:
    """The round at which a run at budgets ``high`` has spent the downlink bits a run at ``low`` spends in
    ``rounds`` rounds: floor(rounds (b_w + b_c)_low / (b_w + b_c)_high)."""
    return int(np.floor(rounds * (low[0] + low[1]) / (high[0] + high[1])))


def budget_table(pairs: Sequence[tuple[float, float]], seeds: int, rounds: int = STANDIN["rounds"],
                 checkpoint: int | None = None, cls: type = DoCoFL) -> list[dict]:
    """Per budget pair (b_w, b_c): the mean over seeds (and per seed) of the final gap (:func:`final_rounds`)
    and, if ``checkpoint`` is given, of the gap at that round; K = 10, V = 3, paired seeds 0..seeds-1."""
    problem = standin_problem()
    tail = list(final_rounds(rounds))
    at = tail if checkpoint is None else sorted(set(tail) | {checkpoint})
    rows = []
    for b_w, b_c in pairs:
        alg = standin_docofl(PERIOD, QUEUE, b_w, b_c, cls)
        finals, checks = [], []
        for s in range(seeds):
            g = dict(zip(at, gap_path(alg, problem, rounds, s, at=at)))
            finals.append(float(np.mean([g[t] for t in tail])))
            if checkpoint is not None:
                checks.append(float(g[checkpoint]))
        row: dict[str, Any] = {"b_w": b_w, "b_c": b_c, "final_gap": float(np.mean(finals)),
                               "per_seed": [round(v, 5) for v in finals],
                               "downlink_bits_per_round": bits_per_round(b_w, b_c)}
        if checkpoint is not None:
            row.update({"checkpoint": checkpoint, "gap_at_checkpoint": float(np.mean(checks))})
        rows.append(row)
    return rows


def _instances(thorough: bool):
    yield {"seeds": 8 if thorough else 4, "rounds": STANDIN["rounds"]}


def _evidence(inst: dict, rows: list[dict], checks: dict[str, tuple[float, float, bool]], what: str) -> Evidence:
    """One verdict from named one-sided comparisons (value, threshold, holds); measured is the first."""
    first = next(iter(checks.values()))
    return Evidence(f"stand-in {STANDIN}, K = {PERIOD}, V = {QUEUE}, {what}, {inst['seeds']} seeds", first[0],
                    first[1], all(c[2] for c in checks.values()),
                    details={"rows": rows, "checks (value, threshold, holds)": checks,
                             "initial gap": standin_problem().gap(np.zeros(STANDIN["dim"]))})


def _ratio_checks(by: dict[float, dict], close: Sequence[float], lower: Sequence[tuple[float, float]]
                  ) -> dict[str, tuple[float, float, bool]]:
    out = {}
    for b in close:
        r = by[b]["final_gap"] / by[FULL_PRECISION]["final_gap"]
        out[f"gap({b:g}) / gap(32) <= {CLOSE}"] = (r, CLOSE, r <= CLOSE)
    for lo, ref in lower:
        r = by[lo]["final_gap"] / by[ref]["final_gap"]
        out[f"gap({lo:g}) / gap({ref:g}) >= {LOWER}"] = (r, LOWER, r >= LOWER)
    return out


def _bits_check(by: dict[float, dict], low: float) -> dict[str, tuple[float, float, bool]]:
    r = by[FULL_PRECISION]["gap_at_checkpoint"] / by[low]["final_gap"]
    return {f"at equal downlink bits: gap(32) / gap({low:g}) >= {BITS_ADVANTAGE}": (r, BITS_ADVANTAGE,
                                                                                     r >= BITS_ADVANTAGE)}


def figure10_evidence(inst: dict, cls: type = DoCoFL) -> Evidence:
    """The verdict of :func:`check_figure10` for the algorithm class ``cls``."""
    T = inst["rounds"]
    cp = rounds_at_equal_bits(T, (2.0, 2.0), (FULL_PRECISION, 2.0))
    rows = budget_table([(b, 2.0) for b in FIGURE10_BUDGETS], inst["seeds"], T, cp, cls)
    by = {r["b_w"]: r for r in rows}
    checks = _ratio_checks(by, close=(3.0, 2.0), lower=((1.5, FULL_PRECISION),))
    checks.update(_bits_check(by, 2.0))
    return _evidence(inst, rows, checks, "b_c = 2, b_w in {32, 3, 2, 1.5}")


def figure11_evidence(inst: dict, cls: type = DoCoFL) -> Evidence:
    """The verdict of :func:`check_figure11` for the algorithm class ``cls``."""
    T = inst["rounds"]
    cp = rounds_at_equal_bits(T, (2.0, 2.0), (2.0, FULL_PRECISION))
    rows = budget_table([(2.0, b) for b in FIGURE11_BUDGETS], inst["seeds"], T, cp, cls)
    by = {r["b_c"]: r for r in rows}
    checks = _ratio_checks(by, close=(4.0,), lower=((1.0, 2.0), (0.5, 1.0)))
    checks.update(_bits_check(by, 2.0))
    return _evidence(inst, rows, checks, "b_w = 2, b_c in {32, 4, 2, 1, 0.5}")


@claim(cites=("Figure 10",),
       id="docofl.appendix.figure10", paper="docofl", reference="App. G.2; K = 10, V = 3, b_c = 2",
       statement="anchor budgets b_w in {32, 3, 2, 1.5} with b_c = 2: at fixed rounds b_w = 3 and 2 stay within "
                 "1.1 x the full-precision mean final gap f - f*, and b_w = 1.5 is >= 1.05 x it (fewer anchor "
                 "bits, higher train loss); against downlink bits, at the bits (2, 2) spends in T rounds the "
                 "full-precision run's gap is >= 1.3 x (2, 2)'s (Synthetic(1, 1) logistic stand-in, N = 100, "
                 "S = 10, T = 300, paired seeds)",
       narrower="on the synthetic logistic-regression stand-in of Figure 3 instead of CIFAR-100 / ResNet-9: train "
                "loss gap instead of train accuracy, no validation curve (the paper's 'b_w = 2 costs no validation "
                "accuracy' is about generalisation, which the stand-in does not measure), stochastic uniform "
                "quantizers instead of EDEN for the correction, nominal b bits per coordinate",
       kind="monotonicity", instances=_instances, runs=("docofl",))
def check_figure10(inst: dict) -> Evidence:
    return figure10_evidence(inst)


@claim(cites=("Figure 11",),
       id="docofl.appendix.figure11", paper="docofl", reference="App. G.2; K = 10, V = 3, b_w = 2",
       statement="correction budgets b_c in {32, 4, 2, 1, 0.5} with b_w = 2: at fixed rounds b_c = 4 stays within "
                 "1.1 x the full-precision mean final gap f - f*, and less correction bandwidth gives a higher "
                 "train loss (gap(1) >= 1.05 gap(2), gap(0.5) >= 1.05 gap(1)); against downlink bits, at the bits "
                 "(2, 2) spends in T rounds the b_c = 32 run's gap is >= 1.3 x (2, 2)'s (Synthetic(1, 1) "
                 "logistic stand-in, N = 100, S = 10, T = 300, paired seeds)",
       narrower="on the synthetic logistic-regression stand-in of Figure 3 instead of CIFAR-100 / ResNet-9: train "
                "loss gap instead of train accuracy, no validation curve, stochastic uniform quantizers (and a "
                "half-coordinate 1-bit quantizer for b_c = 0.5) instead of EDEN, nominal b bits per coordinate",
       kind="monotonicity", instances=_instances, runs=("docofl",))
def check_figure11(inst: dict) -> Evidence:
    return figure11_evidence(inst)
