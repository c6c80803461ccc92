"""EFL Table 2 in the paper's setting: best mean test accuracy under non-IID data, EFL against FedAvg and FedProx.

The experiment (fedtheory/experiments/efl.py; docs/torch.md): MNIST-1D over 20 clients by 2 label shards each,
an MLP, clients active w.p. 0.5 then running 1..5 local steps, EFL with lambda in {0, 0.1, 0.3} against FedAvg
and FedProx (mu in {1e-3, 1e-2, 1e-1}) keeping only complete updates, 2 development and 5 held-out seeds. Each
method's setting is the one with the best mean accuracy on the development seeds; the effects (EFL's best
accuracy over rounds minus each baseline's, on the same seed) go through the shape test of
fedtheory/claims/neural/shapes.py. The convex stand-in (efl.experiment.logistic) stays as a narrower check.
"""
from __future__ import annotations

from dataclasses import replace

from ...experiments.efl import LAMBDAS, MUS
from ..neural.shapes import best_on_dev, judge, record_instances, with_curve_summaries
from ..registry import Evidence, claim

__all__ = ["EFL_METHODS", "FEDPROX_METHODS", "check_table2"]

EFL_METHODS = tuple(f"EFL lambda={lam:g}" for lam in LAMBDAS)
FEDPROX_METHODS = tuple(f"FedProx mu={mu:g}" for mu in MUS)
METRIC = "best_test_accuracy"


@claim(id="efl.neural.table2", paper="efl", cites=("Table 2",), kind="statistical", expected="exploratory",
       statement="on MNIST-1D over 20 non-IID(2) clients (2 label shards each) with an MLP, clients active w.p. 0.5 "
                 "then running 1..5 of E = 5 local SGD steps: EFL (its best lambda in {0, 0.1, 0.3}) reaches a "
                 "higher best test accuracy over 150 rounds than FedAvg and than FedProx (its best mu in {1e-3, "
                 "1e-2, 1e-1}), which keep only complete updates; settings chosen on 2 development seeds, each "
                 "effect replicated on 5 held-out seeds beyond half its development size (95% one-sided)",
       instances=record_instances("efl.table2"))
def check_table2(record: dict) -> Evidence:
    rec = with_curve_summaries(record)
    efl = best_on_dev(rec, EFL_METHODS, METRIC)
    prox = best_on_dev(rec, FEDPROX_METHODS, METRIC)
    ev = judge(rec, {f"{efl} above FedAvg": lambda f: f[efl][METRIC] - f["FedAvg"][METRIC],
                     f"{efl} above {prox}": lambda f: f[efl][METRIC] - f[prox][METRIC]},
               methods=[efl, "FedAvg", prox])
    return replace(ev, details={**ev.details, "chosen_on_dev_seeds": {"EFL": efl, "FedProx": prox},
                                "metric": "best test accuracy over the recorded rounds"})
