"""The expected side of the server-optimizer family: the clients' pseudo-gradient in closed form and the server
update of Reddi et al. (2021), Alg. 2, written out once per optimizer.

The pseudo-gradient of round t over the participants S_t is the weighted mean of the clients' deltas, in closed
form on quadratics (:mod:`fedtheory.conformance.expected`; no local iteration is run):

    Delta_t = sum_{i in S_t} a_i N_i (b_i - A_i x_t).

The server state is (m, v) with m_{-1} = 0 and v_{-1} = ``initial_v`` (Alg. 2 asks v_{-1} >= tau^2; see the
family's ``HYPER``), and one round is

    m_t = beta1 m_{t-1} + (1 - beta1) Delta_t
    v_t = v_{t-1} + Delta_t^2                                      (FedAdagrad)
    v_t = beta2 v_{t-1} + (1 - beta2) Delta_t^2                    (FedAdam)
    v_t = v_{t-1} - (1 - beta2) Delta_t^2 sign(v_{t-1} - Delta_t^2)  (FedYogi)
    x_{t+1} = x_t + eta m_t / (sqrt(v_t) + tau)

with no bias correction (the paper has none). FedAvgM (server momentum, Hsu et al. 2019, which Reddi et al. use
as a baseline) is heavy-ball SGD on -Delta: m_t = beta1 m_{t-1} + Delta_t, x_{t+1} = x_t + eta m_t.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ... import expected as ex
from ...instance import Instance

__all__ = ["OPTIMIZERS", "operators", "pseudo_gradient", "server_step", "initial_state"]

#: The optimizers of the family (the ``optimizer`` hyperparameter).
OPTIMIZERS = ("fedadam", "fedyogi", "fedadagrad", "fedavgm")


def operators(inst: Instance, hyper: Mapping) -> np.ndarray:
    """N_i of every client for K local GD steps (:func:`fedtheory.conformance.expected.local_operators`)."""
    return ex.local_operators(inst, hyper["local_steps"], hyper["local_step"])


def pseudo_gradient(inst: Instance, N: np.ndarray, x: np.ndarray, clients: np.ndarray, weighting: str) -> np.ndarray:
    """Delta_t = sum_{i in S} a_i N_i (b_i - A_i x): the weighted mean of the participants' deltas."""
    a = ex.aggregation_weights(inst, clients, weighting)
    r = inst.b[clients] - np.einsum("nij,j->ni", inst.A[clients], x)
    return np.einsum("n,nij,nj->i", a, N[clients], r)


def initial_state(d: int, hyper: Mapping) -> dict:
    """(m_{-1}, v_{-1}) = (0, initial_v)."""
    return {"m": np.zeros(d), "v": np.full(d, float(hyper["initial_v"]))}


def server_step(x: np.ndarray, state: Mapping, delta: np.ndarray, hyper: Mapping) -> tuple[np.ndarray, dict]:
    """One server update of Alg. 2 (or FedAvgM) from (m, v) with pseudo-gradient ``delta``."""
    opt, eta, b1 = hyper["optimizer"], hyper["server_step"], hyper["beta1"]
    m, v = np.asarray(state["m"], dtype=np.float64), np.asarray(state["v"], dtype=np.float64)
    if opt == "fedavgm":
        m_new = b1 * m + delta
        return x + eta * m_new, {"m": m_new, "v": v}
    m_new = b1 * m + (1.0 - b1) * delta
    sq = delta * delta
    if opt == "fedadagrad":
        v_new = v + sq
    elif opt == "fedadam":
        v_new = hyper["beta2"] * v + (1.0 - hyper["beta2"]) * sq
    elif opt == "fedyogi":
        v_new = v - (1.0 - hyper["beta2"]) * sq * np.sign(v - sq)
    else:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, got {opt!r}")
    return x + eta * m_new / (np.sqrt(v_new) + hyper["tau"]), {"m": m_new, "v": v_new}
