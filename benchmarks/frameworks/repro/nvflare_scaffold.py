"""NVFlare 2.9.0 Scaffold's server control variate under partial participation, without fedtheory.

Karimireddy et al. (2020), Alg. 1 line 17: c <- c + (1/N) sum_{i in S} dc_i (N clients in the federation).
NVFlare's Scaffold controller adds scaffold_aggregate_fn's weighted MEAN of the participants' dc_i
(nvflare/app_common/workflows/scaffold.py, the loop after `ctr_diff = ...`), i.e. (1/|S|) sum. The same under
full participation; with 1 of N = 2 clients participating, NVFlare's step is twice the paper's, and the invariant
c = (1/N) sum_i c_i breaks.
"""
import numpy as np
from nvflare.app_common.abstract.fl_model import FLModel
from nvflare.app_common.app_constant import AlgorithmConstants as AC
from nvflare.app_common.workflows.scaffold import scaffold_aggregate_fn

N, dc_0 = 2, np.array([1.0])                  # two clients; only client 0 participates, with dc_0 = 1
result = FLModel(params={"w": np.array([0.5])}, current_round=0,
                 meta={AC.SCAFFOLD_CTRL_DIFF: {"w": dc_0}, "NUM_STEPS_CURRENT_ROUND": 5, "client_name": "site-0"})
nvflare_step = scaffold_aggregate_fn([result]).meta[AC.SCAFFOLD_CTRL_DIFF]["w"]
paper_step = dc_0 / N
print(f"c increment: NVFlare {nvflare_step}, Alg. 1 {paper_step}")
assert np.allclose(nvflare_step, 2 * paper_step)
