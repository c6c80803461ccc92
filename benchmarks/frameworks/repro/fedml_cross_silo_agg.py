"""FedML 0.9.6's cross-silo server aggregates with ``FedMLAggOperator.agg`` (``fedml/ml/aggregator/agg_operator.py``),
which dispatches on ``args.federated_optimizer``. Without fedtheory: FedML and torch only, in a few seconds.

    pip install fedml==0.9.6 "setuptools<81" "sentry-sdk<2" torch
    python fedml_cross_silo_agg.py

Two silos send (n_k, model) pairs, as ``FedMLTrainer.train`` returns them with the default trainer
(``create_model_trainer`` = ``ModelTrainerCLS``): (3, w = 1) and (2, w = 3).

Expected: McMahan et al.'s n_k/n average, w = (3 * 1 + 2 * 3) / 5 = 1.8, for FedAvg and FedProx; a server step
from that average for FedOpt (Reddi et al. 2021, Alg. 2) and FedNova (Wang et al. 2020, normalised averaging).

Actual: FedAvg and FedProx give 1.8. FedOpt and FedNova raise ``UnboundLocalError`` (their branches are ``pass``,
lines 64-67, so ``avg_params`` is never assigned). FedDyn returns the *sum* of the models, 4 (lines 68-77: the
weight is commented out). SCAFFOLD unpacks three values per silo (lines 12-14) where the default trainer sends two:
``ValueError``.
"""
from __future__ import annotations

import types

import torch
from fedml.ml.aggregator.agg_operator import FedMLAggOperator


def agg(optimizer: str):
    args = types.SimpleNamespace(federated_optimizer=optimizer, client_num_in_total=2, client_num_per_round=2)
    silos = [(3, {"w": torch.tensor([1.0])}), (2, {"w": torch.tensor([3.0])})]
    try:
        return float(FedMLAggOperator.agg(args, silos)["w"])
    except Exception as e:  # noqa: BLE001 - the exception is the finding
        return f"{type(e).__name__}: {e}"


if __name__ == "__main__":
    got = {name: agg(name) for name in ("FedAvg", "FedProx", "FedOpt", "FedNova", "FedDyn", "SCAFFOLD")}
    for name, value in got.items():
        print(f"{name:9s} {value}")
    assert abs(got["FedAvg"] - 1.8) < 1e-6 and abs(got["FedProx"] - 1.8) < 1e-6
    assert str(got["FedOpt"]).startswith("UnboundLocalError") and str(got["FedNova"]).startswith("UnboundLocalError")
    assert abs(got["FedDyn"] - 4.0) < 1e-6, "FedDyn: the sum of the silos' models"
    assert str(got["SCAFFOLD"]).startswith("ValueError")
    print("DEFECT: cross-silo FedOpt and FedNova crash, FedDyn sums the models, SCAFFOLD needs a trainer that is not "
          "the default")
