"""Fed-BioMed 6.4.1's Scaffold aggregator saved to and loaded from a breakpoint, without fedtheory.

Scaffold keeps, for every node i of its FederatedDataset, the state c_i (nodes_states) and the correction
delta_i = c_i - c (nodes_deltas), and c (global_state). save_state_breakpoint writes c and every delta_i;
load_state_breakpoint (fedbiomed/researcher/aggregators/scaffold.py, its last lines) restores c and delta_i and then
sets nodes_states = deepcopy(nodes_deltas): every c_i comes back as c_i - c. Karimireddy et al. (2020), Alg. 1:
c_i is the node's own control variate and c = 1/N sum_i c_i. Under DefaultStrategy every node trains in the next
round and rewrites c_i from delta_i, so nothing shows; a node that does not train (a user's Strategy that samples)
keeps c_i - c, and the next c = 1/N sum_i c_i is wrong.

Here: three nodes, one round in which only node A trained (its c_A = 1, so c = 1/3), then a breakpoint.
"""
import tempfile

import torch
from fedbiomed.researcher.aggregators import Scaffold
from fedbiomed.researcher.datasets import FederatedDataset

torch.set_default_dtype(torch.float64)
nodes = ["A", "B", "C"]
fds = FederatedDataset({n: [{"dataset_id": n, "shape": [1]}] for n in nodes})
agg = Scaffold(server_lr=1.0, fds=fds)
agg.init_correction_states({"w": torch.zeros(1)})
agg.nodes_states["A"] = {"w": torch.tensor([1.0])}  # what update_correction_states leaves after A's round
agg.global_state = {"w": torch.tensor([1.0 / 3.0])}
agg.nodes_deltas = {n: {"w": s["w"] - agg.global_state["w"]} for n, s in agg.nodes_states.items()}

with tempfile.TemporaryDirectory() as folder:
    state = agg.save_state_breakpoint(folder, global_model={"w": torch.zeros(1)})
    again = Scaffold()
    again.set_fds(fds)
    again.load_state_breakpoint(state)
before = {n: agg.nodes_states[n]["w"].item() for n in nodes}
after = {n: again.nodes_states[n]["w"].item() for n in nodes}
print(f"c_i before the breakpoint {before}; after loading it {after} (c = {agg.global_state['w'].item():.4f})")
assert abs(after["A"] - (before["A"] - 1 / 3)) < 1e-12 and abs(after["B"] + 1 / 3) < 1e-12
