"""Run certification (fedtheory/claims/certify.py, fedtheory/algorithms/recording.py): a claim whose run is not
the paper's algorithm fails, whatever its own check says; the rounds certified are the ones documented."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from fedtheory.algorithms.base import ALGORITHMS, RoundLog, State
from fedtheory.algorithms.recording import recording
from fedtheory.claims import certify
from fedtheory.claims.registry import Evidence, declaration, evaluate, with_check
from fedtheory.references import REFERENCES, Expected


@dataclass(frozen=True)
class Halving:
    """x <- x / 2 each round (a deterministic toy algorithm with round only, like GD)."""

    name = "toy_halving"

    def init(self, problem, x0):
        return State(np.asarray(x0, dtype=float))

    def round(self, problem, state, rng):
        return State(state.x / 2), RoundLog(extra={"norm": float(np.linalg.norm(state.x / 2))})


def halving_reference(alg, problem, state, draw):
    x = [v / 2.0 for v in state.x]  # written independently: a loop
    return Expected(state={"x": np.array(x)}, log={"extra.norm": float(np.sqrt(sum(v * v for v in x)))})


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(ALGORITHMS, "toy_halving", Halving)
    monkeypatch.setitem(REFERENCES, "toy_halving", halving_reference)
    return Halving()


def run_claim(rounds: int, runs=("toy_halving",)):
    def check(_):
        alg = Halving()
        state = alg.init(None, np.ones(3))
        for _ in range(rounds):
            state, _log = alg.round(None, state, np.random.default_rng(0))
        return Evidence("toy", float(state.x[0]), 1.0, True)
    fields = declaration(id="test.toy", paper="classic", reference="a test", statement="halving", kind="identity",
                         instances=lambda thorough: [0], expected="holds", derived=False, notes="", space=None,
                         cites=(), pep=None, runs=runs)
    return with_check(fields, check)


def test_the_documented_rounds_are_certified(toy):
    result = evaluate(run_claim(20))
    # rounds 0, 1, 2 and then the powers of two 4, 8, 16 of the one run
    assert result.certification.rounds == {"toy_halving": 6}
    assert result.status == "holds"


def test_a_slipped_round_fails_the_claim_and_names_the_round(toy, monkeypatch):
    original = Halving.round

    def stale_after_three(self, problem, state, rng):  # a slip on a late path: round 8 onwards divides by 3
        new, log = original(self, problem, state, rng)
        return (State(state.x / 3), log) if np.max(np.abs(state.x)) < 0.01 else (new, log)

    monkeypatch.setattr(Halving, "round", stale_after_three)
    result = evaluate(run_claim(20))
    assert result.status == "RUN-DIFFERS" and result.failed
    assert "at round 8" in result.differs and "toy_halving" in result.differs
    assert result.as_dict()["certification"]["differs"] == result.differs


def test_a_round_that_modifies_its_input_state_is_seen(toy, monkeypatch):
    def in_place(self, problem, state, rng):
        state.x[:] = state.x / 2  # the input state is changed: the reference sees the copy taken before
        return State(state.x.copy()), RoundLog(extra={"norm": float(np.linalg.norm(state.x))})

    monkeypatch.setattr(Halving, "round", in_place)
    assert evaluate(run_claim(3)).status == "holds"  # same numbers: the copy makes the in-place update harmless


def test_a_wrong_logged_quantity_fails(toy, monkeypatch):
    def off_by_one(self, problem, state, rng):
        return State(state.x / 2), RoundLog(extra={"norm": float(np.linalg.norm(state.x))})  # the previous norm

    monkeypatch.setattr(Halving, "round", off_by_one)
    result = evaluate(run_claim(3))
    assert result.status == "RUN-DIFFERS" and "extra.norm" in result.differs


def test_without_certification_the_check_alone_judges(toy, monkeypatch):
    monkeypatch.setattr(Halving, "round", lambda self, p, s, r: (State(s.x), RoundLog()))
    result = evaluate(run_claim(3), certify=False)
    assert result.certification is None and result.status == "holds"


def test_an_algorithm_without_reference_is_listed_uncertified(toy, monkeypatch):
    monkeypatch.delitem(REFERENCES, "toy_halving")
    result = evaluate(run_claim(3))
    assert result.certification.uncertified == ["toy_halving"] and result.certification.rounds == {}


def test_recording_restores_the_classes():
    before = {cls: dict(vars(cls)) for cls in ALGORITHMS.values()}

    class Nothing:
        def index(self, state): return 0
        def want(self, alg, problem, index): return False
        def record(self, *args): raise AssertionError
        def done(self, index, new_state): pass

    with recording(Nothing()):
        assert any(getattr(getattr(cls, "round_given", None), "__fedtheory_recorded__", False)
                   for cls in ALGORITHMS.values())
    for cls, attrs in before.items():
        assert {k: v for k, v in vars(cls).items()} == attrs


def test_the_cap_per_algorithm(toy, monkeypatch):
    monkeypatch.setattr(certify, "ROUNDS_PER_ALGORITHM", 4)
    assert evaluate(run_claim(20)).certification.rounds == {"toy_halving": 4}


def test_the_reports_say_the_run_differs(toy, monkeypatch, tmp_path):
    """The console's findings, claims.md and the HTML claim page carry the sentence a reader needs."""
    from fedtheory.report.findings import render_findings
    from fedtheory.report.ledger import certification_sentence

    monkeypatch.setattr(Halving, "round", lambda self, p, s, r: (State(s.x / 3), RoundLog(extra={"norm": 0.0})))
    result = evaluate(run_claim(3))
    record = result.as_dict()
    assert certification_sentence(record).startswith("The run differs from the paper's algorithm (toy_halving) "
                                                     "at round 0")
    assert "the run differs from the paper's algorithm (toy_halving) at round 0" in render_findings([result], 100)


def test_the_reports_say_what_was_certified(toy):
    from fedtheory.report.ledger import certification_sentence

    record = evaluate(run_claim(20)).as_dict()
    assert certification_sentence(record) == ("Runs toy_halving (6 rounds certified against the paper's "
                                              "equations)")
