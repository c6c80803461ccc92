"""One-round behaviour probe: ``python probe.py NAME`` prints a digest of a few rounds of one configuration
(new states, logs, and the INPUT states after the rounds, so in-place updates of an input show up).

Run with PYTHONPATH set to the tree under test; run.py compares the patched tree's digest with the clean one's.
"""
from __future__ import annotations

import dataclasses
import hashlib
import sys

import numpy as np


def _norm(obj):
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj).__name__, tuple((f.name, _norm(getattr(obj, f.name))) for f in dataclasses.fields(obj)
                                          if f.name not in ("upload_metrics",)))
    if hasattr(obj, "to_array") and callable(obj.to_array):
        return _norm(obj.to_array())
    if isinstance(obj, np.ndarray):
        return ("nd", obj.shape, np.ascontiguousarray(obj, dtype=np.float64 if obj.dtype.kind in "fiub" else None)
                .tobytes() if obj.dtype.kind in "fiub" else repr(obj.tolist()))
    if isinstance(obj, dict):
        return tuple(sorted((str(k), _norm(v)) for k, v in obj.items()))
    if isinstance(obj, (list, tuple)):
        return tuple(_norm(v) for v in obj)
    if isinstance(obj, float):
        return repr(obj)
    return repr(obj)


def problems():
    from fedtheory.problems.quadratic import quadratic
    quad = quadratic(4, 5, mu=0.5, L=4.0, delta_A=1.0, zeta2=1.0, weights=np.array([0.1, 0.2, 0.3, 0.4]), seed=1)
    return quad


def config(name):
    from fedtheory.algorithms import DANE, EFL, FedAvg, FedDyn, FedProx, FedRed, Scaffnew, Scaffold
    from fedtheory.algorithms.dane import DANEPlus
    from fedtheory.algorithms.docofl import DoCoFL, TwoClassParticipation
    from fedtheory.algorithms.gd import GradientDescent
    from fedtheory.algorithms.ofediq import FedOGD, OFedAvg, OFedIQ
    from fedtheory.compressors.ecuq import ECUQ
    from fedtheory.compressors.noise import ScaledRademacher
    from fedtheory.participation import Bernoulli, UniformSubset
    from fedtheory.problems.online import online_ridge
    from fedtheory.problems.quadratic import quadratic

    quad = problems()
    online = online_ridge(4, 12, 3, heterogeneity=0.5, drift=0.1, seed=0)
    U2 = UniformSubset(2)
    table = {
        "fedavg_partial": (FedAvg(local_steps=3, local_step=0.1, participation=U2), quad, 3),
        "fedavg_threshold": (FedAvg(local_steps=3, local_step=0.1, threshold=0.2), quad, 2),
        "fedavg_localtol": (FedAvg(local_steps=6, local_step=0.1, local_tol=0.5), quad, 2),
        "fedavg_big": (FedAvg(local_steps=2, local_step=0.05),
                       quadratic(22, 80, mu=0.5, L=4.0, delta_A=1.0, zeta2=1.0, seed=2), 1),
        "fedavg_bernoulli_outcomes": (FedAvg(local_steps=2, local_step=0.1, participation=Bernoulli(0.3)), quad,
                                      "outcomes"),
        "fedprox_exact": (FedProx(prox=1.0, participation=U2), quad, 2),
        "fedprox_gd": (FedProx(prox=1.0, solver="gd", local_steps=3), quad, 2),
        "fedprox_gd_l1": (FedProx(prox=1.0, l1=0.1, solver="gd", local_steps=3, local_step=0.1), quad, 2),
        "scaffold_partial": (Scaffold(local_steps=3, local_step=0.05, participation=U2), quad, 3),
        "scaffold_partial2": (Scaffold(local_steps=3, local_step=0.05, participation=U2), quad, 3),
        "scaffold_optI": (Scaffold(local_steps=3, local_step=0.05, option="I", participation=U2), quad, 3),
        "scaffold_threshold": (Scaffold(local_steps=3, local_step=0.05, threshold=0.05), quad, 2),
        "feddyn_partial": (FedDyn(alpha=1.0, participation=U2), quad, 3),
        "feddyn_kkt": (FedDyn(alpha=1.0, l1=0.1, sign_at_zero="kkt"), quad, 2),
        "feddyn_threshold": (FedDyn(alpha=1.0, threshold=0.05), quad, 2),
        "feddyn_gd": (FedDyn(alpha=1.0, solver="gd", local_steps=3), quad, 3),
        "scaffnew_partial": (Scaffnew(step=0.1, p=0.5, participation=U2), quad, 6),
        "scaffnew_hinit": (Scaffnew(step=0.1, p=0.5, h_init="gradient"), quad, 3),
        "scaffnew_comm": (Scaffnew(step=0.1, p=0.5, round_unit="communication"), quad, 3),
        "gd": (GradientDescent(), quad, 2),
        "dane": (DANE(), quad, 2),
        "daneplus_gd": (DANEPlus(solver="gd", stopping="relative"), quad, 2),
        "daneplus_gd_r1": (DANEPlus(solver="gd", stopping="relative"), quad, 3),
        "daneplus_abs": (DANEPlus(solver="gd", stopping="absolute", tol=0.5, tol_decay=2.0), quad, 3),
        "daneplus_b84": (DANEPlus(control_variate="scaffnew"), quad, 3),
        "daneplus_semi": (DANEPlus(solver="gd", stopping="steps", local_steps=3, local_step=0.1,
                                   step_convention="semi_implicit", local_output="last"), quad, 2),
        "daneplus_steps": (DANEPlus(solver="gd", stopping="steps", local_steps=5), quad, 2),
        "fedred_lin": (FedRed(p=1.0), quad, 3),
        "fedred_lin_two": (FedRed(p=0.5), quad, 6),
        "fedred_exact": (FedRed(solver="exact", p=0.5, eta=0.5), quad, 6),
        "docofl_ecuq": (DoCoFL(period=2, queue_size=2, anchor_compressor=ECUQ(b=4.0),
                               correction_compressor=ScaledRademacher(scale=0.2),
                               participation=TwoClassParticipation(lead_strong=1)), quad, 4),
        "docofl_partial": (DoCoFL(n_sampled=2, period=1, queue_size=1), quad, 3),
        "ofedavg": (OFedAvg(p=0.5), online, 4),
        "ofediq_period": (OFedIQ(period=2), online, 4),
        "fedogd_online": (FedOGD(), online, 3),
        "efl_partial": (EFL(E=3, step=0.02, participation=0.5, s_min=1, s_max=3), quad, 5),
        "efl_decay": (EFL(E=2, step=0.05, decay=2.0), quad, 3),
        "efl_restart": (EFL(E=2, step=0.05, decay=2.0, restarts=(2,)), quad, 3),
        "efl_q": (EFL(E=2, step=0.05, q=0.4), quad, 3),
        "efl_lam": (EFL(E=2, step=0.05, lam=0.05), quad, 3),
        "efl_client": (EFL(E=3, step=0.02, s_min=1, s_max=3, scaling="client"), quad, 3),
    }
    return table[name]


def digest(name: str) -> str:
    algo, problem, rounds = config(name)
    x0 = np.linspace(0.5, 1.5, problem.dim)
    state0 = algo.init(problem, x0)
    out = []
    if rounds == "outcomes":
        for draw, prob in algo.outcomes(problem, state0):
            s, log = algo.round_given(problem, state0, draw)
            out.append((repr(prob), _norm(s.x)))
    else:
        rng = np.random.default_rng(0)
        state = state0
        inputs = []
        for _ in range(rounds):
            inputs.append(state)
            state, log = algo.round(problem, state, rng)
            out.append((_norm(state), _norm(log)))
        out.append(("inputs-after", _norm(inputs)))
    return hashlib.sha256(repr(out).encode()).hexdigest()


if __name__ == "__main__":
    try:
        print(digest(sys.argv[1]))
    except Exception as exc:  # a crash is a behaviour too: report it
        print(f"CRASH {type(exc).__name__}: {exc}"[:300])
