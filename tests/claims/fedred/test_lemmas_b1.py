"""Mutation tests of DANE+'s convex proof chain (fedtheory/claims/fedred/lemmas_b1.py): a changed constant in an
expected side must turn the claim's verdict to violated on its default instances."""
from __future__ import annotations

import math

import numpy as np

from fedtheory.claims import REGISTRY
from fedtheory.claims.fedred import lemmas_b1 as B1


def _defaults_hold(claim_id: str) -> bool:
    claim = REGISTRY[claim_id]
    return all(claim.check(dict(point)).holds for point in claim.space.defaults)


def test_one_round_lemma_detects_lam_over_2(monkeypatch):
    """Lemma 20 with lam/2 instead of lam/4 on mean_i ||x_{i,r+1} - x^r||^2 is not what the proof gives."""
    original = B1.lemma20_sides

    def mutated(problem, lam, rec, x):
        lhs, rhs, scale = original(problem, lam, rec, x)
        extra = 0.25 * lam * float(problem.weights @ np.sum((rec["X"] - rec["x"]) ** 2, axis=1))
        return lhs + extra, rhs, scale

    monkeypatch.setattr(B1, "lemma20_sides", mutated)
    assert not _defaults_hold("fedred.appendix.daneplus_one_round.derived")


def test_local_step_count_detects_a_halved_count(monkeypatch):
    """Corollary 25's count with log((L+lam+e)/e) halved is exceeded by local GD."""
    original = B1.gd_steps_relative_rule
    monkeypatch.setattr(B1, "gd_steps_relative_rule", lambda mu, L, lam, e: max(1, original(mu, L, lam, e) // 2))
    assert not _defaults_hold("fedred.appendix.daneplus_gd_local_steps.derived")


def test_gd_count_is_finite_and_monotone():
    assert B1.gd_steps_relative_rule(1.0, 100.0, 2.0, 1.0) <= B1.gd_steps_relative_rule(1.0, 100.0, 2.0, 0.1)
    assert math.isfinite(B1.gd_steps_relative_rule(0.0, 10.0, 1.0, 0.5))


def test_local_variants_run_every_local_solver_and_rule_of_algorithm_1():
    """Lemmas 19, 20, 22 hold for any local output: their defaults run every solver and stopping rule DANEPlus
    has (with the base instances' local GD and K steps)."""
    from typing import get_args

    from fedtheory.algorithms.dane import Solver, Stopping
    from fedtheory.claims.fedred.lemmas_b1 import LOCAL_VARIANTS

    solvers = {v.get("solver", "gd") for v in LOCAL_VARIANTS} | {"gd"}
    rules = {v["stopping"] for v in LOCAL_VARIANTS if "stopping" in v} | {"steps"}
    assert solvers == set(get_args(Solver)) and rules == set(get_args(Stopping))
    for cid in ("fedred.appendix.daneplus_one_round.derived", "fedred.appendix.daneplus_inexact_recursion.derived"):
        locals_run = [p["local"] for p in REGISTRY[cid].space.defaults if "local" in p]
        assert locals_run == list(LOCAL_VARIANTS)


def test_theorems_run_the_algorithms_own_lam_default(monkeypatch):
    """Where the theorem fixes lam = 2 delta_A, the claims run DANE+ with lam=None: a slip in its resolution
    (delta_A instead of 2 delta_A, benchmarks/mutation/slip_catalogue.py dane_lam_no_factor2) reaches the run and
    the certification rejects it (before, the claims passed lam explicitly and the slip was inert)."""
    from fedtheory.algorithms.dane import DANEPlus
    from fedtheory.claims.registry import evaluate

    monkeypatch.setattr(DANEPlus, "lam_for",
                        lambda self, problem: self.lam if self.lam is not None else problem.certificate.delta_A)
    claim = REGISTRY["fedred.appendix.daneplus_absolute_accuracy.derived"]
    assert evaluate(claim).status == "RUN-DIFFERS"
