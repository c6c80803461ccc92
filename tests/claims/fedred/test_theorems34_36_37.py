"""Mutation test of Theorem 37's pathwise constant (fedtheory/claims/fedred/theorems34_36_37.py)."""
from __future__ import annotations

from fedtheory.claims import REGISTRY
from fedtheory.claims.fedred import theorems34_36_37 as T


def test_fedred_gd_epoch_bound_detects_a_smaller_constant(monkeypatch):
    """Theorem 37's pathwise constant C(m) divided by 4: some epoch of the defaults exceeds it."""
    original = T.fedred_gd_epoch_constant
    monkeypatch.setattr(T, "fedred_gd_epoch_constant", lambda m, **kw: original(m, **kw) / 4)
    claim = REGISTRY["fedred.appendix.fedred_gd_nonconvex_pathwise.derived"]
    assert not all(claim.check(dict(point)).holds for point in claim.space.defaults)


def _half_gradient_step(self, problem, state, grads=None):
    """Alg. 3's prox-linear step with the gradient term weighted by eta/2 (a constant-factor slip): the closed
    form x_{i,k+1} = (x_{i,k} + lam eta x~ - (eta/2)(g + h))/(1 + lam eta), written here from the paper, not from
    the algorithm's code."""
    lam, eta = self.lam_for(problem), self.eta_for(problem)
    G = problem.grads(state.X)
    return (state.X + lam * eta * state.x - 0.5 * eta * (G + state.H)) / (1.0 + lam * eta), problem.n_clients


def test_theorem37_rejects_a_halved_gradient_step_only_on_its_tight_instance(monkeypatch):
    """The adversarial instance (tightness 0.51) rejects a slip that halves the local progress per epoch, which the
    two earlier defaults (tightness <= 0.40) miss: the bound bites at 2x."""
    from fedtheory.algorithms.fedred import FedRed
    from fedtheory.claims.registry import evaluate

    claim = REGISTRY["fedred.appendix.fedred_gd_nonconvex_pathwise.derived"]
    assert evaluate(claim, certify=False).worst_tightness >= 0.5
    monkeypatch.setattr(FedRed, "local_step", _half_gradient_step)
    earlier, tight = claim.space.defaults[:2], claim.space.defaults[2:]
    assert all(claim.check(dict(point)).holds for point in earlier)
    assert evaluate(claim, certify=False).status == "VIOLATED"
    assert not all(claim.check(dict(point)).holds for point in tight)
