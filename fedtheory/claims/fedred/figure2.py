"""Figure 2 (Jiang, Rodomanov & Stich 2024, §5): logistic regression on four LIBSVM data sets split over clients
by a Dirichlet law; DANE+-GD and FedRed-GD "consistently achieve fast convergence" against Scaffold, Scaffnew,
FedProx and GD, each with hyper-parameters grid-searched. The data sets' names, the figure and the tuned values
are lost in the available text and LIBSVM files are not available offline, so the figure runs on a stand-in: FedProx's
Synthetic(1, 1) two-class data in 20 dimensions, pooled and split over 10 clients by a Dirichlet(0.5) label law
(:func:`fedtheory.problems.logistic.logistic`), f_i weighted by client size plus (mu/2)||x||^2, mu = 0.01.

Measured, not asserted: each method's communications to reach f - f* <= 1e-3 (f(x0) - f*), its best over a small
grid (the paper's grid is lost), within a budget of 150 communications (FedRed-GD: 600 iterations). On this
stand-in the data are not similar (L/delta_A = 3.3-5.3 over seeds 0-2), and Scaffold is the fastest on every
seed; the paper's ordering is not reproduced (docs/fedred.md, "Figure 2 on a stand-in").
"""
from __future__ import annotations

import math

import numpy as np

from ...algorithms.dane import DANEPlus
from ...algorithms.fedprox import FedProx
from ...algorithms.fedred import FedRed
from ...algorithms.gd import GradientDescent
from ...algorithms.scaffnew import Scaffnew
from ...algorithms.scaffold import Scaffold
from ...problems.logistic import logistic
from ...run import run
from ..registry import Evidence, claim

__all__ = ["communications_to_target", "figure2_table"]

BUDGET, TARGET = 150, 1e-3


def communications_to_target(trace, eps: float) -> float:
    """Communications until the gap first reaches ``eps`` (inf if it never does within the run)."""
    gap = np.asarray(trace.gap)
    comms = np.cumsum(np.asarray(trace.communicated, dtype=float))
    hit = np.flatnonzero(gap <= eps)
    return float(comms[hit[0]]) if hit.size else math.inf


def figure2_table(seed: int) -> dict:
    """Per method, the best communications-to-target over its grid, and the stand-in's L/mu and L/delta_A."""
    p = logistic("synthetic", n_clients=10, dim=20, partition="dirichlet", dirichlet_alpha=0.5, reg=1e-2, seed=seed)
    c = p.certificate
    x0 = np.zeros(p.dim)
    eps = TARGET * p.gap(x0)
    grids = {"GD": [GradientDescent(step=1 / c.L)],
             "DANE+-GD": [DANEPlus(lam=f * c.delta_A, solver="gd") for f in (0.5, 2.0)],
             "FedRed-GD": [FedRed(lam=f * c.delta_A, eta=1 / c.L) for f in (0.5, 2.0)],
             "Scaffold": [Scaffold(local_steps=K, local_step=1 / c.L) for K in (5, 20)],
             "Scaffnew": [Scaffnew(step=1 / c.L, p=q, round_unit="communication") for q in (0.1, 0.3)],
             "FedProx": [FedProx(prox=f * c.delta_A) for f in (0.5, 2.0)]}
    best = {}
    for name, algs in grids.items():
        rounds = 4 * BUDGET if name == "FedRed-GD" else BUDGET  # FedRed-GD counts iterations, p ~ 1/4
        best[name] = min(communications_to_target(run(a, p, rounds, x0=x0, tol=eps, seed=seed), eps) for a in algs)
    return {"communications": best, "L_over_mu": float(c.L / c.mu), "L_over_delta_A": float(c.L / c.delta_A)}


def _instances(thorough: bool):
    yield {"seeds": [0, 1, 2] if thorough else [0]}


@claim(cites=("Figure 2",),
       id="fedred.figure2.standin", paper="fedred", reference="§5, Figure 2 (LIBSVM logistic regression)",
       statement="on a Dirichlet-split logistic stand-in, DANE+-GD and FedRed-GD reach a 1e-3 relative gap in fewer "
                 "communications than Scaffold, Scaffnew, FedProx and GD, each at its best over a small grid",
       narrower="a synthetic stand-in on one seed (FedProx's Synthetic(1, 1), d = 20), two grid points per method; "
                "the experiment in the paper's setting is fedred.figure2.experiment",
       kind="qualitative", expected="exploratory", instances=_instances,
       runs=("dane+", "fedprox", "fedred", "gd", "scaffnew", "scaffold"))
def check_figure2(inst: dict) -> Evidence:
    tables = {s: figure2_table(s) for s in inst["seeds"]}
    ours = min(min(t["communications"]["DANE+-GD"], t["communications"]["FedRed-GD"]) for t in tables.values())
    others = min(min(v for k, v in t["communications"].items() if k not in ("DANE+-GD", "FedRed-GD"))
                 for t in tables.values())
    return Evidence(f"synthetic(1,1) logistic d=20 n=10 dirichlet(0.5) seeds={inst['seeds']}", ours, others,
                    ours < others, details={str(s): t for s, t in tables.items()})
