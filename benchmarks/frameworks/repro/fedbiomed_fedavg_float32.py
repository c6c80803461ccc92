"""Fed-BioMed 6.4.1 FedAverage on float64 models, without fedtheory.

federated_averaging sums the nodes' parameters into a buffer made by
fedbiomed/researcher/aggregators/functional.py, initialize(): torch.zeros_like(val).float(), a float32 tensor.
A float64 model therefore comes back from FedAverage.aggregate as float32, rounded to about 7 digits: one node of
weight 1 whose parameter is 1/3 is returned as float32(1/3), not 1/3.
"""
import torch
from fedbiomed.researcher.aggregators import FedAverage

x = torch.tensor([1.0 / 3.0], dtype=torch.float64)
out = FedAverage().aggregate({"node": {"w": x}}, {"node": 1.0})["w"]
print(f"dtype in {x.dtype}, out {out.dtype}; value error {abs(out.double().item() - 1 / 3):.2e}")
assert out.dtype == torch.float32 and abs(out.double().item() - 1 / 3) > 1e-9
