"""NVFlare 2.9.0 FedOpt with torch.optim.Adam against Reddi et al. (2021), Alg. 2, without fedtheory.

NVFlare's FedOpt controller (nvflare/app_opt/pt/fedopt_ctl.py, optimizer_update) sets the server parameters'
gradient to minus the averaged update and calls the configured torch optimizer. torch.optim.Adam is Kingma &
Ba's Adam: bias-corrected moments, eps added to sqrt(v_hat). Alg. 2 has no bias correction and adds tau to
sqrt(v). One server step on Delta = -0.5, eta = 0.1, beta = (0.9, 0.99), tau = eps = 1e-3:
"""
import numpy as np
import torch

eta, b1, b2, tau, x, delta = 0.1, 0.9, 0.99, 1e-3, 1.0, -0.5
w = torch.nn.Parameter(torch.tensor([x], dtype=torch.float64))
opt = torch.optim.Adam([w], lr=eta, betas=(b1, b2), eps=tau)
w.grad = torch.tensor([-delta], dtype=torch.float64)     # optimizer_update: param.grad = -1.0 * model_diff
opt.step()
m, v = (1 - b1) * delta, (1 - b2) * delta ** 2
paper = x + eta * m / (np.sqrt(v) + tau)
kingma_ba = x + eta * (m / (1 - b1)) / (np.sqrt(v / (1 - b2)) + tau)
print(f"NVFlare/torch Adam {w.item():.8f}  Alg. 2 {paper:.8f}  Kingma & Ba {kingma_ba:.8f}")
assert abs(w.item() - kingma_ba) < 1e-12 and abs(w.item() - paper) > 1e-6
