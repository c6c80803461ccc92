"""DoCoFL Table 3 in the closest shipped setting: DoCoFL's best validation accuracy stays within the table's own
gap of FedAvg's.

The experiment (fedtheory/experiments/docofl.py; docs/torch.md) transposes the EMNIST / LeNet task of Table 3
(10% i.i.d. + 90% two-class clients, K = 10, V = 3, configurations (4, 4, 3) and (2, 2, 3)) to MNIST-1D with an
MLP, 50 clients and S = 10, 2 development and 5 held-out seeds. Table 3's differences between DoCoFL and FedAvg
are all within 0.98 points; the shape is non-inferiority at that margin: the effect on each seed is DoCoFL's best
accuracy minus FedAvg's plus 0.98 points, and it holds when its one-sided 95% lower bound over the held-out seeds
is positive (fedtheory/claims/neural/shapes.py, a stated margin). A DoCoFL that loses more than 0.98 points
fails. The development seeds' rule (the effect beyond half its development size) is reported next to it: for a
non-inferiority effect it would ask DoCoFL to beat FedAvg by half of what it did on the development seeds, which
Table 3 does not claim.
"""
from __future__ import annotations

from dataclasses import replace

from ...experiments.docofl import CONFIGS
from ..neural.benchmarks import PAPER_DOCOFL_MAX_GAP
from ..neural.shapes import judge, record_instances, shape_test, with_curve_summaries
from ..registry import Evidence, claim

__all__ = ["check_table3"]

METRIC = "best_test_accuracy"
DOCOFL_METHODS = tuple(f"DoCoFL ({b_w},{b_c},{b_g})" for b_w, b_c, b_g in CONFIGS)


def _within(method: str):
    # points: accuracies are fractions in the record
    return lambda f: 100.0 * (f[method][METRIC] - f["FedAvg"][METRIC]) + PAPER_DOCOFL_MAX_GAP


@claim(id="docofl.neural.table3", paper="docofl", cites=("Table 3",), kind="statistical", expected="exploratory",
       statement="on MNIST-1D over 50 clients (10% i.i.d. + 90% two-class samples each), S = 10 a round, K = 10, "
                 "V = 3, an MLP: DoCoFL at (b_w, b_c, b_g) = (4, 4, 3) and (2, 2, 3) reaches a best validation "
                 "accuracy over 1,000 rounds no more than 0.98 points (Table 3's largest difference) below "
                 "FedAvg's: non-inferiority on 5 held-out seeds at 95% one-sided confidence",
       instances=record_instances("docofl.table3"))
def check_table3(record: dict) -> Evidence:
    rec = with_curve_summaries(record)
    effects = {f"{m} within {PAPER_DOCOFL_MAX_GAP:g} points of FedAvg": _within(m) for m in DOCOFL_METHODS}
    ev = judge(rec, effects, stated_margins={name: 0.0 for name in effects})
    details = {**ev.details, "metric": "best test accuracy over the recorded rounds (every 10th)",
               "non_inferiority_margin_points": PAPER_DOCOFL_MAX_GAP}
    if "shapes" in ev.details:  # a full-scale record: the development seeds' rule, reported, not deciding
        details["under_the_development_margin"] = [
            shape_test(s["name"], s["dev_effects"], s["held_out_effects"]).as_record() for s in ev.details["shapes"]]
    return replace(ev, details=details)
