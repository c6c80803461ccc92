"""Exact dynamics on quadratics: DoCoFL's mean iterate is GD's (footnote 3), and the meta-algorithm with staleness tau
(Algorithm 3) has the second moments of an exact recursion.
"""
from __future__ import annotations

import math

import numpy as np

from ...algorithms.docofl import DoCoFL, TwoClassParticipation
from ...compressors.ecuq import ECUQ
from ...compressors.noise import ScaledRademacher, Zero
from ...compressors.quantizers import QSGD
from ...compressors.sparsifiers import RandK
from ...problems.quadratic import quadratic
from ...theory import docofl as th
from ..registry import Evidence, claim
from ..tolerances import EXACT_REL, IDENTITY_TOL, Z_MONTE_CARLO
from ._shared import run_iterates, separable_quadratic

__all__: list[str] = []


# ---------------------------------------------------------------------------------------------------------
# Footnote 3: the exact mean dynamics are GD's
# ---------------------------------------------------------------------------------------------------------


def _mean_instances(thorough: bool):
    yield {"seed": 0, "runs": 600 if thorough else 250, "rounds": 12, "anchor": ECUQ(b=2.0)}
    if thorough:
        yield {"seed": 1, "runs": 600, "rounds": 12, "anchor": Zero()}


@claim(id="docofl.mean_dynamics.derived", paper="docofl", reference="derived by fedtheory; footnote 3",
       statement="on quadratics with unbiased C_c, C_g and P(i in S_t) = S/N, E[w_t] equals full-gradient GD's "
                 "iterate for every t, any K, V, omega and any (biased) C_w (Monte Carlo over runs, z <= 5)",
       kind="identity", derived=True, instances=_mean_instances, runs=("docofl",))


def check_mean_dynamics(inst: dict) -> Evidence:
    p = quadratic(n_clients=6, dim=3, mu=0.5, L=2.0, zeta2=2.0, seed=inst["seed"]).with_noise(0.5)
    eta, T = 0.3, inst["rounds"]
    alg = DoCoFL(step=eta, n_sampled=3, period=2, queue_size=3, anchor_compressor=inst["anchor"],
                 correction_compressor=RandK(k=1), uplink_compressor=QSGD(s=2),
                 participation=TwoClassParticipation(lead_strong=1, lead_weak=4, strong_fraction=1 / 3))
    x0 = np.array([3.0, -2.0, 1.0])
    runs = np.array([run_iterates(alg, p, T, inst["seed"] * 100000 + r, x0)[0] for r in range(inst["runs"])])
    gd = [x0]
    for _ in range(T):
        gd.append(gd[-1] - eta * p.grad(gd[-1]))
    gd = np.array(gd)
    se = runs.std(0, ddof=1) / math.sqrt(inst["runs"])
    dev = np.abs(runs.mean(0) - gd)
    z = float(np.max(dev[1:] / se[1:]))
    return Evidence(f"C_w={inst['anchor'].name} runs={inst['runs']} T={T}", z, Z_MONTE_CARLO, z <= Z_MONTE_CARLO,
                    details={"max_abs_dev": float(dev.max())})


# ---------------------------------------------------------------------------------------------------------
# Algorithm 3: exact second moments with staleness (the meta-algorithm)
# ---------------------------------------------------------------------------------------------------------


def _moment_instances(thorough: bool):
    yield {"a": 2.0, "eta": 0.05, "scale": 0.5, "sigma2": 1.0, "tau": 6, "rounds": 300,
           "paths": 40000 if thorough else 12000, "seed": 0}


@claim(cites=("Algorithm 3",),
       id="docofl.second_moments.derived", paper="docofl", reference="derived by fedtheory",
       statement="for the meta-algorithm with staleness tau on f = a/2 (w - w*)^2, E u_t^2 and the correction "
                 "norm E(w_t - y_t)^2 equal the exact moment recursion P' = A0 P A0^T + A1 P A1^T + eta^2 "
                 "sigma^2 e1 e1^T (MC z <= 5), and both are non-decreasing in omega and in tau",
       kind="identity", derived=True, instances=_moment_instances,
       narrower=("the exact second moments of the meta-algorithm with a fixed staleness on a one-dimensional "
                 "quadratic (a moment recursion derived by fedtheory), not the algorithm on general losses"),
       runs=("docofl",))


def check_second_moments(inst: dict) -> Evidence:
    a, eta, om, s2, tau, T, R = (inst[k] for k in ("a", "eta", "scale", "sigma2", "tau", "rounds", "paths"))
    ws = 5.0
    p = separable_quadratic(a, ws, R, sigma2_per_path=s2)
    alg = DoCoFL.meta(eta, tau, ScaledRademacher(scale=om, per_coordinate=True))
    x0 = np.full(R, ws + 0.5)
    xs, _ = run_iterates(alg, p, T, inst["seed"], x0)
    u2 = (xs - ws) ** 2
    idx = np.maximum(np.arange(T + 1) - tau, 0)
    c2 = (xs - xs[idx]) ** 2
    eu2, ec2 = th.stale_second_moments(T, a, eta, om**2, s2, tau, 0.5)
    checks = np.arange(1, T + 1, 7)
    zu = np.abs(u2.mean(1)[checks] - eu2[checks]) / (u2.std(1, ddof=1)[checks] / math.sqrt(R))
    sc = c2.std(1, ddof=1)[checks] / math.sqrt(R)
    zc = np.where(sc > 0, np.abs(c2.mean(1)[checks] - ec2[checks]) / np.where(sc > 0, sc, 1.0), 0.0)
    # monotonicity of the exact values (stationary part) in omega and tau
    mono = True
    for om_lo, om_hi in [(0.0, 0.25), (0.25, 0.5), (0.5, 0.9)]:
        lo, hi = th.stale_second_moments(T, a, eta, om_lo**2, s2, tau, 0.0), th.stale_second_moments(
            T, a, eta, om_hi**2, s2, tau, 0.0)
        mono &= bool(lo[0][-1] <= hi[0][-1] * (1 + EXACT_REL) and lo[1][-1] <= hi[1][-1] * (1 + EXACT_REL))
    for t_lo, t_hi in [(1, 3), (3, 6), (6, 12)]:
        lo, hi = th.stale_second_moments(T, a, eta, om**2, s2, t_lo, 0.0), th.stale_second_moments(
            T, a, eta, om**2, s2, t_hi, 0.0)
        mono &= bool(lo[0][-1] <= hi[0][-1] * (1 + EXACT_REL) and lo[1][-1] <= hi[1][-1] * (1 + EXACT_REL))
    sgd = th.stale_second_moments(3000, a, eta, 0.0, s2, tau, 0.0)[0][-1]
    sgd_ok = abs(sgd - eta * s2 / (a * (2 - eta * a))) <= IDENTITY_TOL * sgd
    zmax = float(max(zu.max(), zc.max()))
    ok = zmax <= Z_MONTE_CARLO and mono and sgd_ok
    return Evidence(f"a={a} eta={eta} omega={om} sigma2={s2} tau={tau}", float(u2.mean(1)[-1]), float(eu2[-1]), ok,
                    details={"max_z": zmax, "monotone_in_omega_tau": mono, "omega0_is_sgd": sgd_ok,
                             "exact_correction_norm": float(ec2[-1]), "mc_correction_norm": float(c2.mean(1)[-1])})
