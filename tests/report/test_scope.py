"""What a ledger ran (fedtheory/report/scope.py): a complete run of what is installed is not partial."""
from __future__ import annotations

from fedtheory.claims import REGISTRY
from fedtheory.report.scope import run_scope


def records(ids):
    return [{"id": i, "paper": REGISTRY[i].paper} for i in ids]


def test_every_installed_claim_ran_is_complete(monkeypatch):
    scope = run_scope(records(REGISTRY))
    assert not scope.partial and all(p.state == "complete" for p in scope.papers.values())


def test_a_key_with_nothing_installed_does_not_make_the_run_partial(monkeypatch):
    """README command 1 installs no torch: the neural key registers no claim and none ran."""
    without_neural = {k: c for k, c in REGISTRY.items() if c.paper != "neural"}
    monkeypatch.setattr("fedtheory.report.scope.REGISTRY", without_neural)
    scope = run_scope(records(without_neural))
    assert not scope.partial and "neural" not in scope.papers


def test_a_selection_is_partial_and_names_what_ran():
    fedred = [i for i, c in REGISTRY.items() if c.paper == "fedred"]
    scope = run_scope(records(fedred))
    assert scope.partial and scope.ran() == ["fedred"]
    assert scope.papers["classic"].state == "not run"
