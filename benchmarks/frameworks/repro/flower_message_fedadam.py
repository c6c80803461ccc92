"""Flower 1.42.0's Message-API FedAdam (flwr.serverapp.strategy.FedAdam, what Flower's quickstarts build) against
Reddi et al. (2021), Alg. 2, and against the Kingma & Ba step its source cites, without fedtheory.

One round of FedAdam.start (rounds count from 1, flwr/serverapp/strategy/strategy.py) on one node whose trained
model is 0.5 from the server's 1.0, so the pseudo-gradient is Delta = -0.5. Alg. 2: m = (1 - b1) Delta,
v = (1 - b2) Delta^2, x+ = x + eta m / (sqrt(v) + tau), no bias correction. Kingma & Ba's alpha_t at the first
update (t = 1) is eta sqrt(1 - b2) / (1 - b1), which is exactly eta at Flower's defaults b1 = 0.9, b2 = 0.99.
Flower's aggregate_train (flwr/serverapp/strategy/fedadam.py:163-167) uses exponent server_round + 1 = 2.
"""
import logging

import numpy as np
from flwr.app import Array, ArrayRecord, Message, MetricRecord, RecordDict
from flwr.common.constant import SUPERLINK_NODE_ID
from flwr.serverapp.strategy import FedAdam
from flwr.supercore.task_identity import TaskIdentity

logging.disable(logging.WARNING)
# the identity Flower's ServerApp process takes before running the app (flwr/superlink/runtime/run_serverapp.py)
TaskIdentity.task_id, TaskIdentity.run_id, TaskIdentity.node_id = 1, 1, SUPERLINK_NODE_ID
eta, b1, b2, tau, x, delta = 0.1, 0.9, 0.99, 1e-3, 1.0, -0.5  # FedAdam's defaults


class OneNodeGrid:
    """Just what Strategy.start asks of a Grid: the node ids and a reply to each Message (the node trains x to
    x + delta and reports one example)."""

    def get_node_ids(self):
        return [1]

    def send_and_receive(self, messages, *, timeout=None):
        replies = []
        for msg in messages:
            msg.metadata.__dict__["_message_id"] = "m1"  # a SuperLink assigns one; reply_to needs it
            w = msg.content["arrays"]["w"].numpy() + delta
            replies.append(Message(RecordDict({"arrays": ArrayRecord({"w": Array(w)}),
                                               "metrics": MetricRecord({"num-examples": 1})}), reply_to=msg))
        return replies


strategy = FedAdam(fraction_evaluate=0.0, min_train_nodes=1, min_available_nodes=1)
result = strategy.start(grid=OneNodeGrid(), initial_arrays=ArrayRecord({"w": Array(np.array([x]))}), num_rounds=1)
flower = result.arrays["w"].numpy()[0]

m, v = (1 - b1) * delta, (1 - b2) * delta ** 2
paper = x + eta * m / (np.sqrt(v) + tau)                                            # Alg. 2
adam_t1 = x + eta * np.sqrt(1 - b2) / (1 - b1) * m / (np.sqrt(v) + tau)            # Kingma & Ba, t = 1
adam_t2 = x + eta * np.sqrt(1 - b2 ** 2) / (1 - b1 ** 2) * m / (np.sqrt(v) + tau)  # t = 2
print(f"Flower {flower:.6f}  Alg. 2 {paper:.6f}  Adam t=1 {adam_t1:.6f}  Adam t=2 {adam_t2:.6f}")
assert abs(flower - adam_t2) < 1e-12 and abs(flower - paper) > 1e-3 and abs(adam_t1 - paper) < 1e-12
