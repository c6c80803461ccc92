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


@pytest.mark.parametrize("which, broken", [(lambda pt: pt.get("T") == 400, _frozen),
                                           (lambda pt: "a2" in pt, _state_not_carried)])
def test_theorem_31_corrected_rejects_broken_feddyn_at_its_long_horizons(monkeypatch, which, broken):
    """Two defaults are horizons where the 1/T term dominates: FedDyn keeps the bound there, a server
    that does not learn (x^t = x^{t-1}) breaks it at the first, FedDyn without its state h, g_k at the second."""
    claim = REGISTRY["fedelasticnet.thm3_1.corrected"]
    (point,) = [pt for pt in claim.space.defaults if which(pt)]
    inst = claim.space.build(dict(point))
    assert claim.check(inst).holds
    monkeypatch.setattr(FedDyn, "round_given", broken(FedDyn.round_given))
    ev = claim.check(inst)
    assert not ev.holds and ev.details["worst_T"] > 1


def _damped_server(round_given):
    """A slip: the server moves theta only 0.3 of the way Algorithm 3 says (state h, g_k updated as printed)."""
    def broken(self, problem, state, draw):
        new, log = round_given(self, problem, state, draw)
        return replace(new, x=state.x + 0.3 * (new.x - state.x)), log
    return broken


def test_theorem_31_corrected_bites_on_the_affine_logistic_default(monkeypatch):
    """The last default (logistic, far in its affine region: the proximal-point worst case) is the one where
    FedDyn nearly attains the bound (tightness > 0.5, every other default stays below 0.25), so a server damped to
    0.3 of its step breaks the bound there and only there."""
    claim = REGISTRY["fedelasticnet.thm3_1.corrected"]
    insts = [claim.space.build(dict(pt)) for pt in claim.space.defaults]
    tight = [claim.check(inst).tightness for inst in insts]
    assert tight[-1] > 0.5 and max(tight[:-1]) < 0.25
    monkeypatch.setattr(FedDyn, "round_given", _damped_server(FedDyn.round_given))
    held = [claim.check(inst).holds for inst in insts]
    assert held == [True] * (len(insts) - 1) + [False]


@pytest.mark.parametrize("lam1", [0.0, 0.3])
def test_expected_curves_over_every_path_equal_the_one_path_of_full_participation(lam1):
    """With all clients every round the enumeration of sample paths has one path: its expectations equal the
    deterministic curves (s_bar from the would-be local solutions there, from the stored-state updates here)."""
    from fedtheory.claims.fedelasticnet import spec_problem, theorem31_curves, theorem31_expected_curves

    problem = spec_problem(m=3, d=3)
    alg = algorithm3(40 * problem.certificate.L, lam1, "kkt")
    one, every = theorem31_curves(problem, alg, 6), theorem31_expected_curves(problem, alg, 6)
    np.testing.assert_allclose(every["lhs"], one["lhs"], rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(every["rhs_corrected"], one["rhs_corrected"], rtol=1e-10)


def test_theorem_31_corrected_runs_sampled_clients_exactly():
    """The defaults with 2 of 3 clients sampled hold, their expectations over all 3^T paths weighting each by
    (1/3)^T."""
    claim = REGISTRY["fedelasticnet.thm3_1.corrected"]
    sampled = [pt for pt in claim.space.defaults if pt.get("P") == 2]
    assert len(sampled) == 2
    for pt in sampled:
        ev = claim.check(claim.space.build(dict(pt)))
        assert ev.holds and "P=2" in ev.instance
