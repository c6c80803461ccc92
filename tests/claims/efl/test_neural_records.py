"""EFL Table 2 and Figure 2 in the neural setting: the verdicts follow the records, choose settings on the
development seeds only, and fail when EFL (or its elastic term) is broken."""
from __future__ import annotations

import numpy as np

from fedtheory.claims.efl.figure2 import check_figure2
from fedtheory.claims.efl.table2 import EFL_METHODS, FEDPROX_METHODS, check_table2

DEV, HELD = (100, 101), (0, 1, 2, 3, 4)


def _record(best: dict[str, float], final: dict[str, float] | None = None,
            tail_swing: dict[str, float] | None = None, per_seed: dict[int, dict[str, float]] | None = None) -> dict:
    """A record of efl.table2's methods: each run's test-accuracy curve peaks at ``best[m]`` (plus a per-seed
    jitter) and ends at ``final[m]``; its training loss ends with an oscillation of amplitude ``tail_swing[m]``."""
    names = (*EFL_METHODS, "FedAvg", *FEDPROX_METHODS)
    methods: dict = {m: {} for m in names}
    for seed in (*DEV, *HELD):
        jitter = 0.002 * ((seed * 7) % 5)
        for m in names:
            b = best[m] + jitter + (per_seed or {}).get(seed, {}).get(m, 0.0)
            f = (final or {}).get(m, b - 0.01)
            swing = (tail_swing or {}).get(m, 0.05)
            acc = [0.1, b / 2, b, f]
            loss = [2.3, 1.5] + [1.0 + swing * (-1) ** r for r in range(12)]
            methods[m][str(seed)] = {"final": {"test_accuracy": f, "train_loss": loss[-1]},
                                     "curve": {"round": list(range(len(loss))), "test_accuracy": acc + [f] * 10,
                                               "train_loss": loss}}
    return {"experiment": "efl.table2", "scale": "full", "clients": 20, "rounds": 150, "dev_seeds": list(DEV),
            "held_seeds": list(HELD), "setting": "s", "seconds": 0.0, "methods": methods}


BASE = {**{m: 0.40 for m in EFL_METHODS}, "FedAvg": 0.30, **{m: 0.32 for m in FEDPROX_METHODS}}


def test_table2_holds_when_efl_is_more_accurate_and_fails_when_efl_is_broken() -> None:
    ev = check_table2(_record(BASE))
    assert ev.holds
    # the held-out effects are the peaks' differences: EFL 0.40 against FedProx's 0.32 on every seed
    shapes = {s["name"]: s for s in ev.details["shapes"]}
    assert np.allclose(shapes[f"{ev.details['chosen_on_dev_seeds']['EFL']} above FedAvg"]["held_out_effects"], 0.10)
    # a broken EFL (its server does not learn: accuracy at chance) fails
    broken = {**BASE, **{m: 0.10 for m in EFL_METHODS}}
    assert not check_table2(_record(broken)).holds
    # EFL only tied with FedProx fails too (the effect must exceed half its development size)
    tied = {**BASE, **{m: 0.32 for m in EFL_METHODS}}
    assert not check_table2(_record(tied)).holds


def test_table2_chooses_each_method_s_setting_on_the_development_seeds_only() -> None:
    # lambda = 0.3 is the best on the development seeds, lambda = 0.1 on the held-out ones: 0.3 is chosen
    per_seed = {s: {"EFL lambda=0.3": 0.05} for s in DEV} | {s: {"EFL lambda=0.1": 0.05} for s in HELD}
    ev = check_table2(_record(BASE, per_seed=per_seed))
    assert ev.details["chosen_on_dev_seeds"]["EFL"] == "EFL lambda=0.3"


def test_figure2_needs_both_a_higher_final_accuracy_and_a_steadier_loss() -> None:
    final = {m: 0.35 for m in BASE} | {"EFL lambda=0.1": 0.40}
    swing = {"EFL lambda=0": 0.10, "EFL lambda=0.1": 0.02, "EFL lambda=0.3": 0.10}
    ev = check_figure2(_record(BASE, final=final, tail_swing=swing))
    assert ev.holds and ev.details["best_lambda_on_dev_seeds"] == "EFL lambda=0.1"
    late = {s["name"]: s for s in ev.details["shapes"]}["EFL lambda=0.1 steadier late training loss than lambda = 0"]
    assert np.allclose(late["held_out_effects"], 1 - 0.02 / 0.10)  # the std of +-a is a
    # an elastic term that changes nothing (the same spread as lambda = 0) fails the stability effect
    assert not check_figure2(_record(BASE, final=final, tail_swing={**swing, "EFL lambda=0.1": 0.10})).holds
    # a steadier but less accurate lambda fails the accuracy effect
    assert not check_figure2(_record(BASE, final={**final, "EFL lambda=0.1": 0.30}, tail_swing=swing)).holds
