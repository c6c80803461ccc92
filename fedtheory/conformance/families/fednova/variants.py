"""FedNova written as framework code (a loop over client objects, the local optimiser accumulating its update and
its ||a_i||_1 step by step as FedML's port of the authors' optimiser does), with ``slip`` options: the power test's
wrong implementations, and differently written correct ones (float32, the update accumulated as a sum of scaled
gradients, a server-chosen tau_eff)."""
from __future__ import annotations

from functools import partial
from typing import Any, Mapping

import numpy as np

from ...kit import Variant
from ...sampling import self_sampling
from ...tolerances import FLOAT32_RTOL

__all__ = ["fednova_loop", "momentum_kept", "with_server_momentum", "TEXTBOOK", "WRONG", "CORRECT"]


def fednova_loop(x, clients, *, state=None, rng=None, local_steps: Mapping[Any, int] | int = 5, local_step=0.1,
                 momentum=0.0, prox=0.0, tau_eff: Any = "norm", weighting="num_examples", num_clients=None,
                 slip: str | None = None, dtype=np.float64, _buffers: dict | None = None, **_):
    """FedNova (Wang et al. 2020, eqs. (6)-(7)): per client, tau_i steps of SGD (heavy-ball momentum rho or the
    proximal term mu) accumulating cum = sum_k eta v_k and ||a_i||_1; the server moves x by
    -tau_eff sum p_i cum_i / ||a_i||_1."""
    x = x.astype(dtype)
    norms, cums, taus = [], [], []
    for c in clients:
        tau = local_steps[c.cid] if isinstance(local_steps, Mapping) else local_steps
        tau = tau + 1 if slip == "extra_step" else tau
        y, v, cum, counter, a = x.copy(), np.zeros_like(x), np.zeros_like(x), 0.0, 0.0
        if _buffers is not None and slip == "momentum_not_reset":
            v = _buffers.setdefault((c.cid, x.size), np.zeros_like(x))
        for _k in range(tau):
            g = c.grad(y).astype(dtype)
            v = momentum * v + ((1.0 - momentum) * g if slip == "dampened_momentum" else g)
            step = v + prox * (y - x)
            cum, y = cum + local_step * step, y - local_step * step
            counter = momentum * counter + 1.0
            a = (1.0 - local_step * prox) * a + (counter if momentum else 1.0)
        if _buffers is not None and slip == "momentum_not_reset":
            _buffers[(c.cid, x.size)] = v
        if slip == "plain_normaliser" or slip == "extra_step":
            a = float(tau - 1 if slip == "extra_step" else tau)  # a_i of plain SGD (and the declared tau_i)
        norms.append(a)
        cums.append(cum)
        taus.append(tau)
    m = np.array([c.num_examples for c in clients], dtype=np.float64)
    if weighting == "uniform" or slip == "uniform_weights":
        m = np.ones_like(m)
    p = m / m.sum()
    if slip == "all_clients_weights":  # p_i normalised over the population, not the participants
        p = p * len(clients) / num_clients
    norms, taus = np.array(norms), np.array(taus, dtype=np.float64)
    scale = {"norm": p @ norms, "steps": p @ taus}.get(tau_eff, tau_eff) if isinstance(tau_eff, str) else tau_eff
    if slip == "tau_eff_max":
        scale = taus.max()
    if slip == "tau_eff_mean":
        scale = taus.mean()
    if slip == "tau_eff_steps":
        scale = p @ taus
    d = np.stack(cums) / norms[:, None]
    if slip == "unnormalised":  # FedAvg: the models averaged, no normalisation
        d, scale = np.stack(cums), 1.0
    return (x - scale * (p @ d)).astype(np.float64)


def momentum_kept(slip: str = "momentum_not_reset"):
    """A FedNova whose local optimiser keeps its momentum buffer across rounds (in a closure, as an optimiser object
    created once per client would): right in round 1, wrong from round 2."""
    buffers: dict = {}

    def impl(x, clients, **kw):
        return fednova_loop(x, clients, slip=slip, _buffers=buffers, **kw)
    return impl


def with_server_momentum(reset: bool = False):
    """FedNova with server momentum written as the authors' code (buf = gmf buf + D/eta, x -= eta buf; the buffer
    in the state); ``reset``: the buffer re-created every round, as FedML 0.9.6's single-process ``FedNovaTrainer``
    does, so every round is plain FedNova."""
    def impl(x, clients, *, state=None, local_step=0.1, server_momentum=0.0, **kw):
        step = x - fednova_loop(x, clients, local_step=local_step, **kw)
        buf = step / local_step if state is None or reset else server_momentum * state["buf"] + step / local_step
        return x - local_step * buf, {"buf": buf}
    return impl


TEXTBOOK = fednova_loop
_mom, _prox = {"momentum": 0.5}, {"prox": 0.5}
WRONG: list[Variant] = [
    Variant("fednova", "unnormalised", partial(fednova_loop, slip="unnormalised")),
    Variant("fednova", "tau_eff_max", partial(fednova_loop, slip="tau_eff_max")),
    Variant("fednova", "tau_eff_mean", partial(fednova_loop, slip="tau_eff_mean")),
    Variant("fednova", "uniform_weights", partial(fednova_loop, slip="uniform_weights")),
    Variant("fednova", "all_clients_weights", partial(fednova_loop, slip="all_clients_weights")),
    Variant("fednova", "plain_normaliser_momentum", partial(fednova_loop, slip="plain_normaliser"), _mom),
    Variant("fednova", "plain_normaliser_prox", partial(fednova_loop, slip="plain_normaliser"), _prox),
    Variant("fednova", "tau_eff_steps_prox", partial(fednova_loop, slip="tau_eff_steps"), _prox),
    Variant("fednova", "dampened_momentum", partial(fednova_loop, slip="dampened_momentum"), _mom),
    Variant("fednova", "extra_step", partial(fednova_loop, slip="extra_step")),
    Variant("fednova", "momentum_not_reset", momentum_kept("momentum_not_reset"), _mom),
    Variant("fednova", "server_momentum_reset", with_server_momentum(reset=True), {"server_momentum": 0.5}),
]
CORRECT: list[Variant] = [
    Variant("fednova", "loop_momentum", fednova_loop, _mom),
    Variant("fednova", "loop_prox_tau_eff_steps", fednova_loop, {"prox": 0.5, "tau_eff": "steps"}),
    Variant("fednova", "loop_server_tau_eff", fednova_loop, {"tau_eff": 3.0, "weighting": "uniform"}),
    Variant("fednova", "float32", partial(fednova_loop, dtype=np.float32), {}, rtol=FLOAT32_RTOL),
    Variant("fednova", "server_momentum_buffer", with_server_momentum(), {"server_momentum": 0.5}),
]

# the implementation's own sampler (fednova.own_sampler), as for FedAvg
WRONG.append(Variant("fednova", "sampler_first_m", self_sampling(fednova_loop, "first")))
WRONG.append(Variant("fednova", "sampler_reports_other_set", self_sampling(fednova_loop, "lies")))
CORRECT.append(Variant("fednova", "own_uniform_sampler", self_sampling(fednova_loop)))

