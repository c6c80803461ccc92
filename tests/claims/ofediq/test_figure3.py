"""OFedIQ Figure 3 on its stand-in (fedtheory/claims/ofediq/experiments.py, ofediq.statements.figure3): the
three configurations spend the same expected uplink bits, computed here from the paper's cost per transmitted
coordinate 32 b/D + 1 + log2(s + 1) (Section 4.2; OFedAvg: 32 bits)."""
import math

from fedtheory.claims.ofediq.experiments import figure3_losses


def test_the_compared_configurations_cost_the_same():
    out = figure3_losses(D=600, T=20, K=10, seed=0, runs=1)
    cfg, D = out["config"], 600
    per_opt = 32 * cfg["b"] / D + 1 + math.log2(cfg["s"] + 1)
    per_one = 32 / D + 1 + math.log2(cfg["s_one_block"] + 1)
    assert per_one <= per_opt < 32 / D + 1 + math.log2(cfg["s_one_block"] + 2)  # the largest s within budget
    # p of Algorithm 3 spends gamma = 1% of FedOGD's 32 bits per coordinate, as OFedAvg at p' = 0.01 does
    assert abs(cfg["p"] * per_opt / 32 - 0.01) < 1e-9
