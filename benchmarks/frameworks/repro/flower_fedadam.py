"""Flower 1.42.0 FedAdam's first round against Reddi et al. (2021), Alg. 2, without fedtheory.

One client whose trained model is 0.5 from the server's 1.0, so the pseudo-gradient is Delta = -0.5. Alg. 2:
m = (1 - b1) Delta, v = (1 - b2) Delta^2, x+ = x + eta m / (sqrt(v) + tau) -- no bias correction. Flower's
aggregate_fit multiplies eta by sqrt(1 - b2^(server_round + 1)) / (1 - b1^(server_round + 1)), and its server
loop starts at server_round = 1 (flwr/server/server.py), so its first step is corrected as Adam's second.
"""
import numpy as np
from flwr.common import Code, FitRes, Status, ndarrays_to_parameters, parameters_to_ndarrays
from flwr.server.strategy import FedAdam

eta, b1, b2, tau, x, delta = 0.1, 0.9, 0.99, 1e-3, 1.0, -0.5
strategy = FedAdam(initial_parameters=ndarrays_to_parameters([np.array([x])]), eta=eta, beta_1=b1, beta_2=b2, tau=tau)
fit = FitRes(Status(Code.OK, ""), ndarrays_to_parameters([np.array([x + delta])]), 1, {})
flower = parameters_to_ndarrays(strategy.aggregate_fit(1, [(None, fit)], [])[0])[0][0]

m, v = (1 - b1) * delta, (1 - b2) * delta ** 2
paper = x + eta * m / (np.sqrt(v) + tau)
adam_t1 = x + eta * np.sqrt(1 - b2) / (1 - b1) * m / (np.sqrt(v) + tau)      # Kingma & Ba, t = 1
adam_t2 = x + eta * np.sqrt(1 - b2 ** 2) / (1 - b1 ** 2) * m / (np.sqrt(v) + tau)  # t = 2
print(f"Flower {flower:.6f}  Alg. 2 {paper:.6f}  Adam t=1 {adam_t1:.6f}  Adam t=2 {adam_t2:.6f}")
assert abs(flower - adam_t2) < 1e-12 and abs(flower - paper) > 1e-2
