"""EFL Figure 3 on its stand-in (fedtheory/claims/efl/experiments.py, efl.statements.figure3): the asserted
comparison holds with EFL's compensation E p^k / s_k and fails without it."""
from fedtheory.claims.efl.experiments import STRAGGLER_MARGIN, _straggler_instances, check_figure3


def test_efl_weighting_beats_fedavg_weighting_by_the_margin():
    ev = check_figure3.check(next(_straggler_instances(False)))
    assert ev.holds and ev.measured <= STRAGGLER_MARGIN


def test_an_efl_without_the_compensation_is_rejected():
    """The broken EFL aggregates with p^k (the compensation for incomplete clients missing): ratio 1."""
    ev = check_figure3.check(next(_straggler_instances(False)), weighting="fedavg")
    assert not ev.holds and abs(ev.measured - 1.0) < 1e-12
