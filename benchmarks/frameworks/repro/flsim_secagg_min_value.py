"""FLSim 0.1.0 secure aggregation: a sum equal to the fixed point's smallest value is set to 0; without fedtheory.

``SyncSecAggServer.receive_update_from_client`` (flsim/servers/sync_secagg_servers.py:103-119) sends each
weighted delta through ``FixedPointConverter.to_fixedpoint`` (flsim/secure_aggregation/secure_aggregator.py:71-96:
multiply by scaling_factor, clamp to [min_value, max_value] = [-2^(b-1), 2^(b-1) - 1], round), adds it to the
aggregator's buffer, then ``SecureAggregator.update_aggr_overflow_and_model`` (secure_aggregator.py:315-362)
"wraps" the running sum: ``torch.remainder(numbers, max_value + 1)`` where numbers >= 0 and
``torch.remainder(numbers, min_value)`` where numbers < 0. min_value is representable (to_fixedpoint clamps to it),
but remainder(min_value, min_value) = 0: a running sum of exactly -2^(b-1) becomes 0, where +2^(b-1) - 1 stays.

McMahan et al. (2017), Alg. 1 with one client (or any clients whose weighted deltas sum to that value):
x+ = x - Delta. With num_bytes = 1 (FixedPointConfig's default) and scaling_factor = 100, a delta of -1.28 is
-128 in fixed point, inside the 8-bit range; FLSim returns x unchanged. A delta of +1.27 (127) is applied. A delta
of -1.30 is clamped to -128 (a convert overflow FLSim does not count: only positive overflows are counted) and then
zeroed too, where +1.30 is clamped to 127 and applied as 1.27.

    /work/fw-venvs/flsim/bin/python benchmarks/frameworks/repro/flsim_secagg_min_value.py
"""
import torch
from flsim.channels.message import Message
from flsim.interfaces.model import IFLModel
from flsim.secure_aggregation.secure_aggregator import FixedPointConfig
from flsim.servers.sync_secagg_servers import SyncSecAggServerConfig
from hydra.utils import instantiate

torch.set_default_dtype(torch.float64)


class Model(IFLModel):
    def __init__(self, value: float) -> None:
        self.module = torch.nn.Linear(1, 1, bias=False)
        with torch.no_grad():
            self.module.weight.fill_(value)

    def fl_get_module(self):
        return self.module

    def fl_forward(self, batch):
        raise NotImplementedError

    def fl_create_training_batch(self, **kwargs):
        raise NotImplementedError

    def fl_cuda(self):
        pass

    def get_eval_metrics(self, batch):
        raise NotImplementedError

    def get_num_examples(self, batch):
        raise NotImplementedError


def one_round(deltas: list[float], x: float = 0.0) -> float:
    """The global model after one round of SyncSecAggServer (its defaults: WEIGHTED_AVERAGE, FedAvgOptimizer =
    SGD of learning rate 1) with clients sending ``deltas`` (weight 1 each)."""
    server = instantiate(SyncSecAggServerConfig(fixedpoint=FixedPointConfig(num_bytes=1, scaling_factor=100)),
                         global_model=Model(x))
    server.init_round()
    for delta in deltas:
        server.receive_update_from_client(Message(model=Model(delta), weight=1.0))
    server.step()
    return float(server.global_model.fl_get_module().weight.item())


for deltas in ([1.27], [-1.27], [-1.28], [-0.64, -0.64], [1.30], [-1.30]):
    expected = -sum(deltas) / len(deltas)
    print(f"deltas {deltas}: x+ = {one_round(deltas):+.4f}, McMahan et al. (no overflow) {expected:+.4f}")
