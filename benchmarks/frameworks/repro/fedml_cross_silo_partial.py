"""FedML 0.9.6's cross-silo server below full participation: a round whose selected silos are not the first m never
completes. Without fedtheory: FedML and torch only, in a few seconds.

    pip install fedml==0.9.6 "setuptools<81" "sentry-sdk<2" torch
    python fedml_cross_silo_partial.py

``FedMLServerManager.handle_message_receive_model_from_client``
(``fedml/cross_silo/server/fedml_server_manager.py:181-183``) registers a silo's reply at ``client_real_ids.index(sender_id)``, its position among *all* silos, while
``FedMLAggregator.check_whether_all_receive`` (``fedml/cross_silo/server/fedml_aggregator.py``) waits for positions
0..client_num-1, with ``client_num`` = ``worker_num`` = ``client_num_per_round`` unless the config sets
``worker_num`` (``fedml/arguments.py:207-208``; with ``worker_num`` = the number of silos it waits for silos that were
not selected either). Below,
the server's own calls for three silos [1, 2, 3] and ``client_num_per_round = 2``: round 0 selects silos [3, 2]; both
reply, and the aggregator still waits for position 0, so the server never aggregates.

Expected: the round completes when every selected silo has replied. Actual: it waits for silo 1, which was not
selected.
"""
from __future__ import annotations

import types

import torch
from fedml.cross_silo.server.fedml_aggregator import FedMLAggregator

if __name__ == "__main__":
    args = types.SimpleNamespace(dataset="kit", federated_optimizer="FedAvg")
    aggregator = FedMLAggregator(None, None, 3, {}, {}, {0: 1, 1: 1, 2: 1}, 2, torch.device("cpu"), args, None)
    client_real_ids = [1, 2, 3]
    selected = [int(c) for c in aggregator.client_selection(0, client_real_ids, 2)]
    for sender_id in selected:  # every selected silo replies
        aggregator.add_local_trained_result(client_real_ids.index(sender_id), {"w": torch.zeros(1)}, 1)
    done = aggregator.check_whether_all_receive()
    print(f"round 0 selects silos {selected}; both replied; all received: {done}; "
          f"flags {aggregator.flag_client_model_uploaded_dict}")
    assert selected == [3, 2] and not done
    print("DEFECT: the round waits for a silo that was not selected")
