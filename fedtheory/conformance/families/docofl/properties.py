"""Conformance properties of DoCoFL (Dorfman, Vargaftik, Ben-Itzhak & Levy 2023, Algs. 1-2).

Contract (docs/conformance.md): ``impl(w, clients, *, state=None, rng=None, **hyper) -> (w, state)`` runs round
t (the implementation counts rounds in its state; ``state=None`` is round 0 with an empty queue) with the
participants S_t = ``clients``, ``step`` (eta), ``period`` (K), ``queue_size`` (V), ``num_clients`` (N),
``weighting`` (p_i), the kit's notification leads ``draw={"leads": {cid: L_i}}`` (0 <= L_i <= K (V - 1)) and
the kit's compressors ``grid={"anchor": h_w, "correction": h_c, "gradient": h_g}``: C(x) = h round(x / h),
h = 0 the identity. Full-batch gradients (the kit checks identities).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from hypothesis import strategies as st

from ...kit import Outcome, instance_of, instance_params, outcome, round_hyper, run_round, scale_of
from ..registry import prop
from . import expected as edc

__all__ = ["HYPER"]

HYPER: Mapping[str, Any] = {"step": 0.1, "period": 2, "queue_size": 3, "weighting": "uniform"}
_REF = "Dorfman et al. 2023 (DoCoFL), Alg. 1 lines 3-9 and Alg. 2 lines 2-4"
ROUNDS = 8
#: The paper's ranges the kit also draws hyperparameters from (fedtheory.conformance.families.varied_hyper): a
#: slip invisible at the user's values (a server step ignored at 1.0) shows at another.
RANGES: Mapping[str, tuple] = {"step": (0.02, 0.2), "period": (1, 4), "queue_size": (2, 4)}


def horizon(hyper: Mapping[str, Any]) -> int:
    """Rounds of the multi-round properties: the queue of V anchors, one every K rounds, is first full at round
    K (V - 1) and first evicts at round K V; K V + 2 K rounds see two more periods after that (8 at least)."""
    K, V = int(hyper["period"]), int(hyper["queue_size"])
    return max(ROUNDS, K * V + 2 * K)


def _cases(hyper: Mapping[str, Any]) -> st.SearchStrategy:
    K, V = int(hyper["period"]), int(hyper["queue_size"])
    R = horizon(hyper)

    @st.composite
    def cases(draw):
        p = draw(instance_params(hyper, L_max=min(20.0, 1.0 / hyper["step"]), max_dim=10, min_clients=1))
        rng_seed = draw(st.integers(0, 2**16))
        rng = np.random.default_rng(rng_seed)
        p["rounds"] = [{"S": sorted(rng.choice(p["n"], size=rng.integers(1, p["n"] + 1), replace=False).tolist()),
                        "leads": rng.integers(0, K * (V - 1) + 1, size=p["n"]).tolist()} for _ in range(R)]
        # grid steps with no common ratio: commensurate grids (0.01 and 0.1) make exact half-way ties, which
        # rounding then breaks differently in two correct implementations
        p["grid"] = {"anchor": draw(st.sampled_from([0.0, 0.0537, 0.493])),
                     "correction": draw(st.sampled_from([0.0, 0.00913, 0.0971])),
                     "gradient": draw(st.sampled_from([0.0, 0.00731]))}
        return p
    return cases()


def _run(impl, case, hyper, rounds, grid=None):
    """Run the implementation and the recursion side by side; return the first (round, error) above rtol."""
    inst = instance_of(case)
    grid = case["grid"] if grid is None else grid
    h = dict(round_hyper(hyper, inst), grid=dict(grid))
    w_want = w_got = inst.x0
    anchors, state, err = {}, None, 0.0
    for t, rnd in enumerate(case["rounds"][:rounds]):
        S = np.asarray(rnd["S"])
        leads = np.asarray(rnd["leads"])[S]
        w_want, anchors = edc.docofl_round(inst, w_want, t, anchors, S, leads, step=hyper["step"],
                                           period=int(hyper["period"]), queue_size=int(hyper["queue_size"]), h=grid)
        draw = {"leads": {int(inst.clients[i].cid): int(L) for i, L in zip(S, leads)}}
        w_got, state = run_round(impl, inst, w_got, S, dict(h, draw=draw), state, seed=t)
        err = float(np.linalg.norm(w_got - w_want)) / scale_of(inst, inst.x0, w_want)
        yield t, err, inst, S, leads


@prop(id="docofl.one_round", family="docofl", core=True,
      reference=_REF,
      statement="round 0 equals the closed form with the kit's compressors",
      cases=_cases)
def one_round(impl, case, hyper, rtol) -> Outcome:
    """Round 0: every client's anchor is C_w(w_0); w_1 = w_0 - eta/S sum N p_i C_g(grad f_i(y + C_c(w_0 - y)))."""
    for _t, err, *_ in _run(impl, case, hyper, 1):
        return outcome(err <= rtol, err, rtol, "" if err <= rtol else
                       "round 0 differs (anchor C_w(w_0), correction C_c(w_0 - y), or the 1/S N p_i scaling)")
    return outcome(True, 0.0, rtol)


@prop(id="docofl.no_compression", family="docofl",
      reference="Dorfman et al. 2023, Alg. 1 with C_w = C_c = C_g = id",
      statement="max(8, K V + 2 K) rounds, each the SGD step w - eta/S sum N p_i grad f_i(w)",
      cases=_cases)
def no_compression(impl, case, hyper, rtol) -> Outcome:
    """With C_w = C_c = C_g = id every estimate is w_t: 8 rounds of w - eta/S sum N p_i grad f_i(w) (Section 3:
    DoCoFL reduces to minibatch SGD without compression)."""
    worst = 0.0
    for t, err, *_ in _run(impl, case, hyper, horizon(hyper), grid={"anchor": 0.0, "correction": 0.0, "gradient": 0.0}):
        worst = max(worst, err)
        if err > rtol:
            return outcome(False, err, rtol, f"without compression round {t} is not the SGD step on the participants")
    return outcome(True, worst, rtol)


@prop(id="docofl.multi_round", family="docofl", core=True,
      reference=f"{_REF}; footnote 3 (correction against the compressed anchor)",
      statement="max(8, K V + 2 K) rounds with anchors, queue and leads equal the recursion",
      cases=_cases)
def multi_round(impl, case, hyper, rtol) -> Outcome:
    """max(8, K V + 2 K) rounds (the queue full and evicting for two periods) from the implementation's own state with the kit's leads and grid compressors: anchors enqueued
    every K rounds, a queue of V, each client's anchor from its notification round, corrections against the
    compressed anchor."""
    worst = 0.0
    R = horizon(hyper)
    for t, err, _inst, S, leads in _run(impl, case, hyper, R):
        worst = max(worst, err)
        if err > rtol:
            return outcome(False, err, rtol, f"round {t} of {R} (participants {S.tolist()}, leads "
                           f"{leads.tolist()}, grid {case['grid']}) differs from the recursion"
                           + (" (earlier rounds match: anchors, queue or round counter)" if t else ""))
    return outcome(True, worst, rtol)
