"""Fed-BioMed 6.4.1's agg_optimizer with declearn 2.8.0's AdamModule and YogiModule, without fedtheory.

Experiment._run_agg_optimizer (fedbiomed/researcher/federated_workflows/_experiment.py) hands the optimizer the
gradient g = x - aggregate = -Delta and applies x + Optimizer.step(g, x) = x - lr * module.run(g). Reddi et al.
(2021), Alg. 2, with m_-1 = 0, v_-1 = 0: m_0 = (1 - beta1) Delta, v_0 = (1 - beta2) Delta^2 (Yogi: the same in its
first round), x_1 = x_0 + eta m_0 / (sqrt(v_0) + tau), no bias correction. declearn's modules divide m by
1 - beta1^t and v by 1 - beta2^t (Kingma & Ba's Adam, declearn/optimizer/modules/_adaptive.py, AdamModule.run).
With Delta = 1, eta = 1, beta1 = 0.9, beta2 = 0.99, tau = 0.1: Alg. 2 steps 0.1 / (0.1 + 0.1) = 0.5, declearn
steps 1 / (1 + 0.1) = 0.909.
"""
import torch
from declearn.model.api import Vector
from declearn.optimizer.modules import AdamModule, YogiModule
from fedbiomed.common.optimizers import Optimizer

torch.set_default_dtype(torch.float64)
x, delta = torch.tensor([0.0]), torch.tensor([1.0])
paper = 1.0 * (0.1 * 1.0) / ((0.01 * 1.0) ** 0.5 + 0.1)
for module in (AdamModule(beta_1=0.9, beta_2=0.99, eps=0.1), YogiModule(beta_1=0.9, beta_2=0.99, eps=0.1)):
    optimizer = Optimizer(lr=1.0, modules=[module])
    step = optimizer.step(Vector.build({"w": -delta}), Vector.build({"w": x})).coefs["w"].item()
    print(f"{type(module).__name__}: first step {step:.4f}; Reddi et al. Alg. 2: {paper:.4f}; "
          f"Kingma & Ba (bias-corrected): {1 / (1 + 0.1):.4f}")
    assert abs(step - 1 / 1.1) < 1e-12 and abs(step - paper) > 0.4
