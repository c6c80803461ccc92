"""Lemma 35's expected-Lyapunov claim (fedtheory/claims/fedred/theorem33_lemma35.py) must be able to fail, and its
PEP counterpart is the claim's own."""
from __future__ import annotations

from fedtheory.claims import REGISTRY


def test_checks_can_fail_outside_the_theorem_regime():
    """Sensitivity: with eta = 3/L (outside Lemma 35's eta <= 1/L) the FedRed-GD step overshoots along the top
    eigendirection and the expected-Lyapunov check must report the violation."""
    kw = dict(n_clients=6, dim=5, mu=0.5, L=10.0, delta_A=0.5, zeta2=1.0, seed=0, p=0.5, lam_factor=1.0,
              eta_L=3.0, reset=True, iterations=40)
    ev = REGISTRY["fedred.fedred_gd.lyapunov.derived"].check(kw)
    assert not ev.holds and ev.measured > 1.0


def test_pep_formulations_are_declared_and_skip_mu_zero():
    """Both PEP claims declare their formulation; Lemma 35's does not apply at mu = 0 (a telescoped gap bound)."""
    assert REGISTRY["fedred.dane.lyapunov"].pep is not None
    lyapunov = REGISTRY["fedred.fedred_gd.lyapunov.derived"]
    mu_zero = next(inst for inst in lyapunov.instances(False) if inst["mu"] == 0.0)
    assert lyapunov.pep(mu_zero) is None
