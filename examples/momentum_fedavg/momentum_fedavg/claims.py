"""What FedAvg with server momentum must satisfy, as fedtheory claims (checked by the tests of this package).

Each expected side is direct linear algebra on the quadratic's matrices, never the algorithm under test:

* with K = 1 and full participation, R rounds are R steps of the heavy-ball method on f
  (x_{r+1} = x_r - eta grad f(x_r) + beta (x_r - x_{r-1}), x_{-1} = x_0; Polyak 1964);
* with K local steps, FedAvg's fixed point x_hat = (sum_i w_i M_i)^{-1} sum_i w_i M_i x_i*,
  M_i = I - (I - eta A_i)^K, does not move under a round from zero momentum (momentum does not move the fixed
  point of local training).
"""
from __future__ import annotations

import numpy as np

from fedtheory.extend import Evidence, InstanceSpace, Param, claim
from fedtheory.problems import quadratic

from .algorithm import FedAvgMomentum

#: Federated quadratics (exact mu, L, Hessian dissimilarity and heterogeneity) and FedAvgM's parameters.
SPACE = InstanceSpace(
    params=[Param("n_clients", 2, 6, integer=True), Param("dim", 2, 6, integer=True),
            Param("mu", 1e-2, 1.0, log=True), Param("kappa", 1.5, 1e3, log=True), Param("delta_fraction", 0.0, 1.0),
            Param("zeta2", 0.0, 5.0), Param("momentum", 0.0, 0.95), Param("step_fraction", 0.05, 1.0),
            Param("local_steps", 1, 8, integer=True), Param("rounds", 1, 25, integer=True)],
    defaults=[{"n_clients": 4, "dim": 3, "mu": 0.1, "kappa": 10.0, "delta_fraction": 0.5, "zeta2": 1.0,
               "momentum": 0.9, "step_fraction": 1.0, "local_steps": 5, "rounds": 20},
              {"n_clients": 2, "dim": 2, "mu": 1.0, "kappa": 1e3, "delta_fraction": 1.0, "zeta2": 5.0,
               "momentum": 0.0, "step_fraction": 0.3, "local_steps": 1, "rounds": 3}],
)
#: Relative rounding allowance of an identity: a few hundred ulps per round (heavy ball with eta <= 1/L is stable,
#: so rounding errors do not grow faster than the iterates).
RTOL = 1e-12


def _problem(point: dict):
    n, L = int(point["n_clients"]), point["mu"] * point["kappa"]
    delta_A = point["delta_fraction"] * 0.4 * (L - point["mu"]) / np.sqrt(n)
    return quadratic(n, int(point["dim"]), mu=point["mu"], L=L, delta_A=delta_A, zeta2=point["zeta2"], seed=0)


@claim(id="momentum_fedavg.heavy_ball", reference="Hsu, Qi & Brown (2019), FedAvgM; Polyak (1964), heavy ball",
       kind="identity", space=SPACE,
       statement="With K = 1 and full participation, R rounds of FedAvgM are R heavy-ball steps on f")
def heavy_ball(point: dict) -> Evidence:
    problem = _problem(point)
    eta, beta, R = point["step_fraction"] / problem.certificate.L, point["momentum"], int(point["rounds"])
    algorithm = FedAvgMomentum(local_steps=1, local_step=eta, momentum=beta)
    state, rng, iterates = algorithm.init(problem, np.ones(problem.dim)), np.random.default_rng(0), []
    for _ in range(R):
        state, _ = algorithm.round(problem, state, rng)
        iterates.append(state.x)
    A_bar = np.einsum("i,ijk->jk", problem.weights, problem.A)
    b_bar = problem.weights @ problem.b
    previous = x = np.ones(problem.dim)
    expected = []
    for _ in range(R):
        previous, x = x, x - eta * (A_bar @ x - b_bar) + beta * (x - previous)
        expected.append(x)
    error = max(np.linalg.norm(got - want) / max(1.0, np.linalg.norm(want))
                for got, want in zip(iterates, expected))
    return Evidence(str(point), measured=error, theory=0.0, holds=error <= RTOL * R)


@claim(id="momentum_fedavg.fixed_point", reference="Hsu, Qi & Brown (2019), FedAvgM; FedAvg's local-training "
       "fixed point", kind="fixed_point", space=SPACE,
       statement="FedAvg's fixed point x_hat with zero momentum does not move under a FedAvgM round")
def fixed_point(point: dict) -> Evidence:
    problem = _problem(point)
    eta, K = point["step_fraction"] / problem.certificate.L, int(point["local_steps"])
    eye = np.eye(problem.dim)
    M = eye - np.stack([np.linalg.matrix_power(eye - eta * A_i, K) for A_i in problem.A])
    x_i = np.linalg.solve(problem.A, problem.b[..., None])[..., 0]  # each client's own optimum
    x_hat = np.linalg.solve(np.einsum("i,ijk->jk", problem.weights, M),
                            np.einsum("i,ijk,ik->j", problem.weights, M, x_i))
    algorithm = FedAvgMomentum(local_steps=K, local_step=eta, momentum=point["momentum"])
    state, _ = algorithm.round(problem, algorithm.init(problem, x_hat), np.random.default_rng(0))
    moved = np.linalg.norm(state.x - x_hat) / max(1.0, np.linalg.norm(x_hat))
    return Evidence(str(point), measured=moved, theory=0.0, holds=moved <= 1e3 * K * point["kappa"] * 1e-16)
