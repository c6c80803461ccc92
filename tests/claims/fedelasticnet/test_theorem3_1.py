"""FedElasticNet, Theorem 3.1 / B.1 (fedtheory/claims/fedelasticnet/theorem3_1.py) on hypothesis-drawn quadratics
beyond the claims' own spaces, and the bound's long horizons against broken FedDyn rounds."""
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.algorithms import FedDyn
from fedtheory.claims import REGISTRY
from fedtheory.claims.fedelasticnet import algorithm3, scaled_two_client_problem
from fedtheory.problems.quadratic import quadratic
from fedtheory.strategies import quadratic_params
from fedtheory.theory import fedelasticnet as th

small = dict(min_clients=2, max_clients=5, min_dim=2, max_dim=4, max_condition=30.0)


@settings(max_examples=15)
@given(kw=quadratic_params(**small), excess=st.floats(1e-3, 200.0), lam1=st.sampled_from([0.0, 0.01, 0.3]))
def test_theorem_31_corrected_every_horizon(kw, excess, lam1):
    problem = quadratic(**kw)
    r = th.kappa0_threshold() + excess
    ev = REGISTRY["fedelasticnet.thm3_1.corrected"].check(
        (problem, algorithm3(r * problem.certificate.L, lam1, "kkt"), 40))
    assert ev.holds, ev.details
    assert 0 <= ev.tightness <= 1


@given(c=st.floats(1e9, 1e12))
def test_printed_c0_counterexample_scales(c):
    """The printed (unsquared C0) bound fails at every gradient scale above the crossover ~5e7, while the
    corrected (squared C0) bound holds on the same instance."""
    ev = REGISTRY["fedelasticnet.thm3_1.printed_C0_unsquared"].check(
        (scaled_two_client_problem(c), algorithm3(27.0, 0.0, "kkt"), 10, c))
    assert not ev.holds and ev.details["corrected_tightness"] < 1


def _frozen(round_given):
    def broken(self, problem, state, draw):
        new, log = round_given(self, problem, state, draw)
        return replace(new, x=state.x), log
    return broken


def _state_not_carried(round_given):
    def zero(s):
        return replace(s, h=np.zeros_like(s.h), G=np.zeros_like(s.G))

    def broken(self, problem, state, draw):
        new, log = round_given(self, problem, zero(state), draw)
        return zero(new), log
    return broken


@pytest.mark.parametrize("which, broken", [(-2, _frozen), (-1, _state_not_carried)])
def test_theorem_31_corrected_rejects_broken_feddyn_at_its_long_horizons(monkeypatch, which, broken):
    """The last two defaults are horizons where the 1/T term dominates: FedDyn keeps the bound there, a server
    that does not learn (x^t = x^{t-1}) breaks it at the first, FedDyn without its state h, g_k at the second."""
    claim = REGISTRY["fedelasticnet.thm3_1.corrected"]
    inst = claim.space.build(dict(claim.space.defaults[which]))
    assert claim.check(inst).holds
    monkeypatch.setattr(FedDyn, "round_given", broken(FedDyn.round_given))
    ev = claim.check(inst)
    assert not ev.holds and ev.details["worst_T"] > 1
