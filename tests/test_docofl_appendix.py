"""Tests of the DoCoFL appendix claims (fedtheory/claims/docofl_appendix.py): each check passes on its default
instances and fails when a transcribed constant or the algorithm under test is changed."""
from __future__ import annotations

import math

import numpy as np
import pytest

import fedtheory.algorithms.docofl as docofl_alg
from fedtheory.claims import docofl_appendix as app
from fedtheory.papers import paper


def _first(instances):
    return next(iter(instances(False)))


def test_lemma_c9_constant_change_is_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    worst = {"gamma": 1.0, "theta": 1.0, "beta": 1.0, "eta_fraction": 1.0}
    ev = app.check_lemma_c9(worst)
    assert ev.holds and math.isclose(ev.measured, 44 / 45, rel_tol=1e-12)
    # a step limit 1/(20 gamma beta theta) instead of the printed 1/(30 ...) breaks the lemma: 8/20 + 640/400 = 2
    monkeypatch.setitem(app.C9_CONSTANTS, "step", 20.0)
    ev = app.check_lemma_c9(worst)
    assert not ev.holds and math.isclose(ev.measured, 2.0, rel_tol=1e-12)


def test_theorem1_constant_change_breaks_corollary_3_6(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _first(app._cor_instances)
    assert app.check_corollary_3_6(inst).holds
    monkeypatch.setitem(app.THM1_CONSTANTS, "middle_inner", 6.0)
    assert not app.check_corollary_3_6(inst).holds


def test_lemma_c2_check_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = dict(_first(app._c2_instances), runs=10, rounds=12)
    ev = app.check_lemma_c2(inst)
    assert ev.holds and 0 < ev.tightness < 1
    # with the printed constants zeroed the right-hand side is 0 while the estimation error is not
    monkeypatch.setitem(app.C2_CONSTANTS, "alpha", 0.0)
    monkeypatch.setitem(app.C2_CONSTANTS, "grad_factor", 0.0)
    assert not app.check_lemma_c2(inst).holds


def test_algorithm2_reference_detects_anchor_taken_at_participation(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _first(app._alg2_instances)
    assert app.check_algorithm2(inst).holds
    # a DoCoFL whose clients take the latest anchor at the participation round (ignoring the notification lead)
    real = docofl_alg.anchor_round
    monkeypatch.setattr(docofl_alg, "anchor_round", lambda t, leads, period: real(t, np.zeros_like(leads), period))
    assert not app.check_algorithm2(inst).holds


def test_lemma_c7_false_as_printed_and_corrected() -> None:
    assert not app.check_lemma_c7_as_printed({"a": -1.0}).holds
    ev = app.check_lemma_c7_corrected({"a": 0.5})
    assert ev.holds and math.isclose(ev.theory, 2.0)


def test_lemma_c8_direct_matches_the_ceiling_formula() -> None:
    x = np.array([0.3, 1.0, 0.0, 2.5, 0.7])
    a, Tt = 0.4, 2
    brute = sum(a ** math.ceil((t - k) / Tt) * x[k] for t in range(1, 6) for k in range(t))
    lhs, rhs = app.lemma_c8_direct(x, a, Tt)
    assert math.isclose(lhs, brute, rel_tol=1e-14) and math.isclose(rhs, Tt * a / (1 - a) * x.sum())


def test_table1_and_figure7_reproduce_the_paper_pattern() -> None:
    assert app.check_table1(_first(app._table1_instances)).holds
    inst = dict(_first(app._fig7_instances), d=2**11)
    assert app.check_figure7(inst).holds


def test_docofl_inventory_is_filled_and_chains_reach_lemma_c2() -> None:
    P = paper("docofl")
    assert all(s.where and s.summary for s in P.statements)
    chain = P.proof_chain("Theorem 3.4")
    assert chain.index("Lemma C.1") < chain.index("Lemma C.2") < chain.index("Theorem 1")
