"""The cross-device claims (fedtheory/claims/classic/scale.py): their power against a slip in SCAFFOLD's server
update (their holding on points drawn from the space is tests/claims/test_property_every_claim.py)."""
from __future__ import annotations

from pathlib import Path

from fedtheory.algorithms import scaffold as scaffold_module
from fedtheory.claims import REGISTRY


def test_expected_update_claim_detects_a_wrong_server_control_update(monkeypatch):
    """Power: SCAFFOLD with c+ = c + mean_S Delta c_i (participants' mean instead of the w_i-weighted sum) is
    caught by the expected-update identity."""
    c = REGISTRY["classic.scale.expected_update"]
    inst = c.space.build(dict(c.space.defaults[0]))
    assert c.check(inst).holds
    source = Path(scaffold_module.__file__).read_text()
    assert "c_new = state.c + w @ dc" in source
    original = scaffold_module.Scaffold.round_given

    def wrong(self, problem, state, draw):
        new, log = original(self, problem, state, draw)
        dc_sum = new.c - state.c  # = sum_S w_i dc_i; the wrong reading divides by sum_S w_i
        w = problem.weights[draw.clients]
        return scaffold_module.replace(new, c=state.c + dc_sum / w.sum()), log
    monkeypatch.setattr(scaffold_module.Scaffold, "round_given", wrong)
    assert not c.check(inst).holds
