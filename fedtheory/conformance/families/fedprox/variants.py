"""FedProx's slips on the textbook FedAvg/FedProx (:mod:`fedtheory.conformance.families.fedavg.variants`), and a
FedProx whose local solver is conjugate gradients stopped at a gamma-inexact solution (Li et al. 2020,
Definition 2), with its slips."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...kit import Variant
from ...sampling import self_sampling
from ..fedavg.variants import fedavg

__all__ = ["TEXTBOOK", "WRONG", "CORRECT", "fedprox_inexact"]


def fedprox_inexact(x, clients, *, state=None, rng=None, prox=1.0, server_step=1.0, weighting="num_examples",
                    gamma=0.5, slip: str | None = None, **_):
    """FedProx (Li et al. 2020, Alg. 2) with conjugate gradients on h_i(w) = f_i(w) + prox/2 ||w - x||^2 from
    w = x, stopped as soon as ||grad h_i(w)|| <= gamma ||grad f_i(x)|| (Definition 2); num_examples-weighted
    server average."""
    lam = -prox if slip == "prox_sign" else prox
    stop = (2.0 if slip == "stops_at_2gamma" else 1.0) * gamma
    ys = []
    for c in clients:
        Z, m = c.features, c.num_examples
        H = Z.T @ Z / m + lam * np.eye(x.size)  # h_i's Hessian (f_i is quadratic)
        w, r = x.copy(), -c.grad(x)  # r = -grad h_i(w); at w = x the prox term vanishes
        target = stop * np.linalg.norm(c.grad(x))
        d = r.copy()
        for _k in range(4 * x.size + 8):
            if np.linalg.norm(r) <= target:
                break
            Hd = H @ d
            step = (r @ r) / (d @ Hd)
            w, r_new = w + step * d, r - step * Hd
            d, r = r_new + (r_new @ r_new) / (r @ r) * d, r_new
        ys.append(w)
    m = np.array([c.num_examples for c in clients], dtype=np.float64)
    if weighting == "uniform" or slip == "uniform_weights":
        m = np.ones_like(m)
    return x + server_step * ((m / m.sum()) @ (np.stack(ys) - x))


TEXTBOOK = fedavg
WRONG: list[Variant] = [
    Variant("fedprox", "prox_sign", partial(fedavg, slip="prox_sign")),
    Variant("fedprox", "prox_half", partial(fedavg, slip="prox_half")),
    Variant("fedprox", "prox_center_zero", partial(fedavg, slip="prox_center_zero")),
    Variant("fedprox", "prox_center_moving", partial(fedavg, slip="prox_center_moving")),
    Variant("fedprox", "inexact_stops_at_2gamma", partial(fedprox_inexact, slip="stops_at_2gamma"), {"gamma": 0.3}),
    Variant("fedprox", "inexact_prox_sign", partial(fedprox_inexact, slip="prox_sign"), {"gamma": 0.3}),
    Variant("fedprox", "inexact_uniform_weights", partial(fedprox_inexact, slip="uniform_weights"), {"gamma": 0.3}),
    # the implementation's own sampler under Li et al.'s law (fedprox.own_sampler): uniform with replacement,
    # ignoring n_k (wrong in law); always the first m (wrong in law); a client drawn twice counted once (the round)
    Variant("fedprox", "sampler_md_ignores_sizes", self_sampling(fedavg, "md_ignores_sizes")),
    Variant("fedprox", "sampler_md_first_m", self_sampling(fedavg, "md_first")),
    Variant("fedprox", "sampler_md_counts_repeats_once", self_sampling(fedavg, "md_distinct")),
]
CORRECT: list[Variant] = [
    Variant("fedprox", "conjugate_gradient_inexact", fedprox_inexact, {"gamma": 0.3}),
    Variant("fedprox", "exact_declared_inexact", fedavg, {"local_steps": None, "gamma": 0.1}),
    Variant("fedprox", "own_md_sampler", self_sampling(fedavg, "md")),
]
