"""Every registered claim, on its default instances, reaches its expected verdict.

This is the same evaluation ``fedtheory verify`` runs, so CI fails exactly when the ledger would.
"""
import pytest

from fedtheory.claims import evaluate, load_all

CLAIMS = sorted(load_all().values(), key=lambda c: c.id)


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_claim_reaches_expected_verdict(claim):
    result = evaluate(claim)
    assert result.error is None, result.error
    assert not result.failed, [e.as_dict() for e in result.evidence if not e.holds]


def test_registry_metadata_complete():
    for c in CLAIMS:
        assert c.statement and c.reference and c.paper
        if c.expected == "violated":
            assert any(o.id.startswith(c.id.rsplit(".", 1)[0]) and o.derived for o in CLAIMS), (
                f"{c.id} is recorded as false: register a corrected version next to it")
