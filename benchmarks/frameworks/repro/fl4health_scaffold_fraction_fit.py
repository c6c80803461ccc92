"""fl4health 0.4.2 SCAFFOLD: the server's c moves by fraction_fit times the participants' mean dc_i, while Flower's
sampler draws max(int(N fraction_fit), min_fit_clients) clients, without fedtheory.

Run with fl4health's venv (from the repository's root):
    /work/fw-venvs/fl4health/bin/python benchmarks/frameworks/repro/fl4health_scaffold_fraction_fit.py

Karimireddy et al. (2020), Alg. 1 line 17: c <- c + (1/N) sum_{i in S} dc_i = c + (|S|/N) mean_{i in S} dc_i.
fl4health's Scaffold.aggregate_fit (fl4health/strategies/scaffold.py) adds fraction_fit * mean_{i in S} dc_i:
the paper's step only when the round's participants are exactly fraction_fit * N. Flower's own sampler
(num_fit_clients, the strategy's FedAvg base) draws max(int(N * fraction_fit), min_fit_clients) clients: with
N = 3, fraction_fit = 0.5 and the default min_fit_clients = 2 it draws 2 clients, |S|/N = 2/3, and c moves by 1/2
of the mean. With the default fraction_fit = 1.0, any round with fewer than N results (accept_failures=True is
Flower's default) moves c by the whole mean. The control-variate updates are sent as-is below: the aggregation
alone is under test.
"""
import numpy as np
from flwr.common import Code, FitRes, Status, ndarrays_to_parameters, parameters_to_ndarrays
from fl4health.strategies.scaffold import Scaffold

N, x0, c0 = 3, np.zeros((1, 1)), np.zeros((1, 1))
strategy = Scaffold(initial_parameters=ndarrays_to_parameters([x0]),
                    initial_control_variates=ndarrays_to_parameters([c0]), fraction_fit=0.5)
drawn, _ = strategy.num_fit_clients(N)                 # what Flower's sampler draws from N available clients
dc = [np.array([[1.0]]), np.array([[3.0]])][:drawn]    # the drawn clients' dc_i (model unchanged: y_i = x)
results = [(None, FitRes(Status(Code.OK, ""), ndarrays_to_parameters([x0, d]), 1, {})) for d in dc]
packed, _ = strategy.aggregate_fit(1, results, [])
c_fl = parameters_to_ndarrays(packed)[1].item()
c_paper = c0.item() + sum(d.item() for d in dc) / N
print(f"Flower draws {drawn} of N = {N}; c+: fl4health {c_fl}, Alg. 1 {c_paper}")
assert drawn == 2
assert np.isclose(c_fl, 0.5 * np.mean([d.item() for d in dc])) and not np.isclose(c_fl, c_paper)
