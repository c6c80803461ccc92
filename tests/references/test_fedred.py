"""The references of DANE / DANE+ (Algorithm 1) and FedRed / FedRed-GD / FedRed-SGD (Algorithms 2, 3) of Jiang,
Rodomanov & Stich (ICML 2024), fedtheory/references/fedred.py: they accept the implementation on every option the
claims exercise, and reject plausible slips of it (each written below as a small subclass of the implementation:
a sign, a weight, a stale point, a missing correction, a reset not applied, a coin ignored, the wrong local
accuracy rule, a normalisation applied twice, a logged quantity off by one, ...)."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest

from fedtheory.algorithms.dane import DANE, DANEPlus
from fedtheory.algorithms.fedred import FedRed, FedRedDraw
from fedtheory.claims.fedred import references as claims
from fedtheory.local.fgd import StopRule
from fedtheory.references import REFERENCES, certify_round, has_reference


def test_registered_under_the_algorithms_names():
    assert all(has_reference(name) for name in ("dane", "dane+", "fedred"))
    assert REFERENCES["dane"] is REFERENCES["dane+"]


# --- the implementation is accepted on every option the identity claims run ---

@pytest.mark.parametrize("check, instances", [
    (claims.check_dane_reference, claims._dane_instances),
    (claims.check_fedred_reference, claims._fedred_instances),
    (claims.check_fedred_gd_reference, claims._fedred_gd_instances)], ids=["alg1", "alg2", "alg3"])
def test_implementation_accepted_on_every_option(check, instances):
    for inst in instances(False):
        ev = check(inst)
        assert ev.holds, (inst, ev.details)


def _local_counts(kw: dict) -> list[tuple[float, float]]:
    problem = claims._problem("quadratic")
    alg = DANEPlus(**kw)
    state = alg.init(problem, np.linspace(-1.0, 1.5, problem.dim))
    rng = np.random.default_rng(7)
    out = []
    for _ in range(claims.ROUNDS):
        state, log = alg.round_given(problem, state, alg.draw(problem, state, rng))
        out.append((log.extra["local_steps_max"], log.extra["local_not_converged"]))
    return out


def test_options_exercise_every_local_path():
    """The DANE+ instances of the Algorithm 1 claim stop by their rule after several steps, and hit the cap (the
    counts the reference recomputes are not all trivially equal)."""
    instances = list(claims._dane_instances(False))
    by_rule = {"relative": {"solver": "gd", "stopping": "relative", "problem": "quadratic", "tol": 0.5},
               "cap": {"solver": "gd", "stopping": "relative", "problem": "quadratic", "tol": 0.05, "local_steps": 4},
               "authors_cap": {"solver": "gd", "stopping": "authors", "problem": "quadratic", "local_steps": 1}}
    assert all(inst in instances for inst in by_rule.values())
    strip = lambda kw: {k: v for k, v in kw.items() if k != "problem"}  # noqa: E731
    relative = _local_counts(strip(by_rule["relative"]))
    assert all(k >= 2 and nc == 0 for k, nc in relative) and len({k for k, _ in relative}) >= 2
    cap = _local_counts(strip(by_rule["cap"]))
    assert any(nc == 0 for _, nc in cap) and any(k == 4 and nc > 0 for k, nc in cap)
    assert all(k == 1 and nc > 0 for k, nc in _local_counts(strip(by_rule["authors_cap"])))


# --- Algorithm 1 slips ---

@dataclass(frozen=True)
class SignSlip(DANEPlus):
    """Control variate (1) with the wrong sign: h_i = grad f_i(x) - grad f(x)."""

    def local_models(self, problem, state, clients=None, seed=None):
        G = problem.grads(problem.broadcast(state.x))
        h = G - problem.weights @ G
        X = problem.solve_local(h, problem.broadcast(state.x), self.lam_for(problem))
        return X, h, problem.n_clients, {"local_steps_max": 0.0, "local_steps_mean": 0.0}


@dataclass(frozen=True)
class UniformWeightSlip(DANEPlus):
    """Standard averaging with equal weights 1/n instead of w_i."""

    def round_given(self, problem, state, draw):
        new, log = super().round_given(problem, state, draw)
        X = self.local_models(problem, state)[0]
        return replace(new, x=X.mean(axis=0)), log


@dataclass(frozen=True)
class MissingCorrectionSlip(DANEPlus):
    """No drift correction (h_i = 0: FedProx with exact solves)."""

    def local_models(self, problem, state, clients=None, seed=None):
        h = np.zeros((problem.n_clients, problem.dim))
        X = problem.solve_local(h, problem.broadcast(state.x), self.lam_for(problem))
        return X, h, problem.n_clients, {"local_steps_max": 0.0, "local_steps_mean": 0.0}


@dataclass(frozen=True)
class StalePointSlip(DANEPlus):
    """(B.84) updated against the old server model: h_i + m (x_{i,r+1} - x^r)."""

    def round_given(self, problem, state, draw):
        new, log = super().round_given(problem, state, draw)
        X = self.local_models(problem, state)[0]
        return replace(new, h=state.h + self.m_for(problem) * (X - state.x)), log


@dataclass(frozen=True)
class WrongMSlip(DANEPlus):
    """(B.84) with m = lam whatever m was asked for."""

    def m_for(self, problem):
        return self.lam_for(problem)


@dataclass(frozen=True)
class ScheduleSlip(DANEPlus):
    """Theorem 4's relative rule without its decay: e_r = tol lam instead of tol lam/(r+1)."""

    def stop_rule(self, problem, r, grad0_norm=0.0):
        rule = super().stop_rule(problem, r, grad0_norm)
        return StopRule(rule.kind, rule.tol * (r + 1), rule.floor) if rule.kind == "relative" else rule


@dataclass(frozen=True)
class AbsoluteAsRelativeSlip(DANEPlus):
    """The wrong local accuracy rule: Theorem 3's absolute rule run as Theorem 4's relative one."""

    def stop_rule(self, problem, r, grad0_norm=0.0):
        rule = super().stop_rule(problem, r, grad0_norm)
        return StopRule("relative", rule.tol, rule.floor) if rule.kind == "absolute" else rule


@dataclass(frozen=True)
class LastInsteadOfBestSlip(DANEPlus):
    """Corollary 2's K-step rule returning the last iterate instead of the min-gradient one."""

    def returns_last_iterate(self):
        return self.stopping == "steps" or super().returns_last_iterate()


@dataclass(frozen=True)
class DoubleNormalisationSlip(DANEPlus):
    """The semi-implicit step converted twice: lr/(1 + lam lr)^2."""

    def explicit_step(self, problem):
        s = super().explicit_step(problem)
        return s / (1.0 + self.lam_for(problem) * self.local_step) if s is not None else s


@dataclass(frozen=True)
class SelectionIgnoredSlip(DANEPlus):
    """Random selection drawn, but the server averages every model anyway (the selected client ignored)."""

    def round_given(self, problem, state, draw):
        new, log = super().round_given(problem, state, draw)
        return replace(new, x=problem.weights @ self.local_models(problem, state)[0]), log


@dataclass(frozen=True)
class CounterSlip(DANEPlus):
    """The round counter not advanced (the rule's e_r never decays)."""

    def round_given(self, problem, state, draw):
        new, log = super().round_given(problem, state, draw)
        return replace(new, r=state.r), log


@dataclass(frozen=True)
class EvalsOffByOneSlip(DANEPlus):
    """A logged quantity off by one: the shared gradient at x^r charged twice for one client."""

    def round_given(self, problem, state, draw):
        new, log = super().round_given(problem, state, draw)
        return new, replace(log, local_grad_evals=log.local_grad_evals + 1)


@dataclass(frozen=True)
class SeedSlip(DANEPlus):
    """DANE+-SGD drawing its local noise from the next seed (a shared or aliased generator)."""

    def local_models(self, problem, state, clients=None, seed=None):
        return super().local_models(problem, state, clients, None if seed is None else seed + 1)


@dataclass(frozen=True)
class ScheduleOffByOneSlip(DANEPlus):
    """The predetermined selection one round late: schedule[(r - 1) mod len]."""

    def draw(self, problem, state, rng):
        return replace(super().draw(problem, state, rng), client=self.schedule[(state.r - 1) % len(self.schedule)])


DANE_SLIPS = [
    (SignSlip, {}, "quadratic"),
    (UniformWeightSlip, {}, "quadratic"),
    (MissingCorrectionSlip, {}, "logistic"),
    (StalePointSlip, {"control_variate": "scaffnew", "m": 0.7, "lam": 2.0}, "quadratic"),
    (WrongMSlip, {"control_variate": "scaffnew", "m": 0.7, "lam": 2.0}, "quadratic"),
    (ScheduleSlip, {"solver": "gd", "stopping": "relative", "tol": 0.5}, "quadratic"),
    (AbsoluteAsRelativeSlip, {"solver": "gd", "stopping": "absolute", "tol": 0.5}, "quadratic"),
    (LastInsteadOfBestSlip, {"solver": "fgd", "stopping": "steps", "local_steps": 4}, "logistic"),
    (DoubleNormalisationSlip, {"solver": "gd", "stopping": "steps", "local_steps": 4, "local_output": "last",
                               "local_step": 0.2, "step_convention": "semi_implicit"}, "quadratic"),
    (SelectionIgnoredSlip, {"averaging": "random"}, "quadratic"),
    (CounterSlip, {"solver": "gd", "stopping": "relative", "tol": 0.5}, "quadratic"),
    (EvalsOffByOneSlip, {"solver": "gd", "stopping": "absolute", "tol": 0.05}, "nonconvex"),
    (SeedSlip, {"solver": "gd", "stopping": "steps", "local_steps": 3, "stochastic": True}, "noisy"),
    (ScheduleOffByOneSlip, {"averaging": "fixed", "schedule": (2, 0, 3, 3, 1), "solver": "gd", "stopping": "absolute",
                            "tol": 0.05}, "quadratic"),
]


@pytest.mark.parametrize("slip, kw, problem", DANE_SLIPS, ids=[s[0].__name__ for s in DANE_SLIPS])
def test_dane_reference_rejects_slip(slip, kw, problem):
    if problem == "nonconvex":
        kw = {**kw, "lam": 3.0}
    mismatch, _ = claims.certify_rounds(slip(**kw), claims._problem(problem), seed=7)
    assert mismatch is not None, slip.__doc__
    # the same options, implemented as the paper says, are accepted: the rejection is the slip's
    assert claims.certify_rounds(DANEPlus(**kw), claims._problem(problem), seed=7)[0] is None


def test_dane_class_shares_the_reference():
    assert claims.certify_rounds(DANE(), claims._problem("logistic"))[0] is None


# --- Algorithms 2 and 3 slips ---

@dataclass(frozen=True)
class CoinIgnoredSlip(FedRed):
    """The shared coin ignored: every iteration communicates."""

    def round_given(self, problem, state, draw):
        return super().round_given(problem, state, replace(draw, communicate=True))


@dataclass(frozen=True)
class NoResetSlip(FedRed):
    """reset=True asked, but the local models are not reset to the new reference point."""

    def round_given(self, problem, state, draw):
        new, log = super().round_given(problem, state, draw)
        if draw.communicate:
            new = replace(new, X=self.local_step(problem, state, draw.grads)[0], G=None)
        return new, log


@dataclass(frozen=True)
class LocalSignSlip(FedRed):
    """Alg. 3 with the control variate subtracted: g_i - h_i."""

    def local_step(self, problem, state, grads=None):
        lam, eta = self.lam_for(problem), self.eta_for(problem)
        G = problem.grads(state.X) if grads is None else grads
        return (state.X + lam * eta * state.x - eta * (G - state.H)) / (1.0 + lam * eta), problem.n_clients


@dataclass(frozen=True)
class MissingNormalisationSlip(FedRed):
    """Alg. 3's step without the 1/(1 + lam eta) normalisation of the gradient term."""

    def local_step(self, problem, state, grads=None):
        lam, eta = self.lam_for(problem), self.eta_for(problem)
        G = problem.grads(state.X) if grads is None else grads
        return (state.X + lam * eta * state.x) / (1.0 + lam * eta) - eta * (G + state.H), problem.n_clients


@dataclass(frozen=True)
class StaleControlVariateSlip(FedRed):
    """Control variates (4) recomputed at the old reference point x~_k instead of x~_{k+1}."""

    def round_given(self, problem, state, draw):
        new, log = super().round_given(problem, state, draw)
        if draw.communicate:
            new = replace(new, H=self._control_variates(problem, state.x)[0])
        return new, log


@dataclass(frozen=True)
class StaleCacheSlip(FedRed):
    """After a reset, the cached local gradient is the old one (an aliased array kept across the reset)."""

    def round_given(self, problem, state, draw):
        new, log = super().round_given(problem, state, draw)
        if draw.communicate and new.G is not None:
            new = replace(new, G=problem.grads(state.X))
        return new, log


@dataclass(frozen=True)
class EtaIgnoredSlip(FedRed):
    """Alg. 2's exact solve dropping the 1/(2 eta) ||x - x_i||^2 term (the local iterate ignored)."""

    def local_step(self, problem, state, grads=None):
        lam = self.lam_for(problem)
        return problem.solve_local(state.H, problem.broadcast(state.x), lam), 0


@dataclass(frozen=True)
class AverageInsteadOfSelectedSlip(FedRed):
    """Random selection drawn, but the new reference point is the average."""

    def round_given(self, problem, state, draw):
        return super().round_given(problem, state, replace(draw, client=None) if draw.communicate else draw)


@dataclass(frozen=True)
class HMovedWithoutCommunicationSlip(FedRed):
    """A round without communication refreshes the control variates at the old reference point using the local
    models (h_i from x_{i,k+1} instead of x~_k)."""

    def round_given(self, problem, state, draw):
        new, log = super().round_given(problem, state, draw)
        if not draw.communicate:
            G = problem.grads(new.X)
            new = replace(new, H=problem.weights @ G - G)
        return new, log


@dataclass(frozen=True)
class FedRedEvalsSlip(FedRed):
    """Logged local gradients counting the cached gradient twice."""

    def round_given(self, problem, state, draw):
        new, log = super().round_given(problem, state, draw)
        return new, replace(log, local_grad_evals=log.local_grad_evals + problem.n_clients)


@dataclass(frozen=True)
class FGDMomentumSlip(FedRed):
    """Alg. 2's fast local GD with FedRed's 1/eta left out of the momentum's condition number."""

    def local_step(self, problem, state, grads=None):
        from fedtheory.local import fgd

        original = fgd.nesterov_momentum
        fgd.nesterov_momentum = lambda mu, L: original(mu - 1.0 / self.eta_for(problem), L - 1.0 / self.eta_for(
            problem))
        try:
            return super().local_step(problem, state, grads)
        finally:
            fgd.nesterov_momentum = original


FEDRED_SLIPS = [
    (CoinIgnoredSlip, {}, "quadratic"),
    (NoResetSlip, {}, "quadratic"),
    (LocalSignSlip, {}, "logistic"),
    (MissingNormalisationSlip, {}, "quadratic"),
    (StaleControlVariateSlip, {"reset": False}, "quadratic"),
    (StaleCacheSlip, {}, "quadratic"),
    (EtaIgnoredSlip, {"solver": "exact"}, "quadratic"),
    (AverageInsteadOfSelectedSlip, {"selection": "random"}, "nonconvex"),
    (HMovedWithoutCommunicationSlip, {"solver": "exact"}, "logistic"),
    (FedRedEvalsSlip, {"stochastic": True}, "noisy"),
    (FGDMomentumSlip, {"solver": "fgd", "local_steps": 3}, "quadratic"),
]


@pytest.mark.parametrize("slip, kw, problem", FEDRED_SLIPS, ids=[s[0].__name__ for s in FEDRED_SLIPS])
def test_fedred_reference_rejects_slip(slip, kw, problem):
    kw = {"p": 0.5, **kw}
    if problem == "nonconvex":
        kw["lam"] = 3.0
    mismatch, draws = claims.certify_rounds(slip(**kw), claims._problem(problem), seed=11)
    assert mismatch is not None, slip.__doc__
    assert claims.certify_rounds(FedRed(**kw), claims._problem(problem), seed=11)[0] is None


def test_mismatch_names_the_round_and_field():
    problem = claims._problem("quadratic")
    alg = FedRed(p=0.5)
    state = alg.init(problem, np.ones(problem.dim))
    draw = FedRedDraw(False)
    new, log = CoinIgnoredSlip(p=0.5).round_given(problem, state, draw)
    mismatch = certify_round(alg, problem, state, draw, new, log, 3)
    assert mismatch is not None and mismatch.round_index == 3
    assert "the run differs from the paper's algorithm (fedred) at round 3" in mismatch.sentence()


def test_exact_argmin_matches_stationarity_on_a_non_quadratic():
    """The reference's own Newton solve (no problem.solve_local) meets the subproblem's optimality condition."""
    from fedtheory.references.fedred import exact_local_argmin

    problem = claims._problem("logistic")
    rng = np.random.default_rng(0)
    lin, center = rng.standard_normal(problem.dim), rng.standard_normal(problem.dim)
    x = exact_local_argmin(problem, 2, lin, 0.7, center)
    g = problem.grads(x[None, :], np.array([2]))[0] + lin + 0.7 * (x - center)
    assert np.linalg.norm(g) <= 1e-11 * max(1.0, np.linalg.norm(lin))
    assert np.all(np.isfinite(x))


def test_exact_argmin_without_a_hessian_oracle():
    """A problem without ``hessians`` (a rescaled logistic problem) goes through the reference's finite-difference
    Newton: still the subproblem's stationary point, and DANE and FedRed (exact solves) on it are certified."""
    from fedtheory.problems.rescaled import RescaledClients, rescaled_clients
    from fedtheory.references.fedred import exact_local_argmin

    problem = rescaled_clients(claims._problem("logistic"))
    assert isinstance(problem, RescaledClients) and not callable(getattr(problem, "hessians", None))
    rng = np.random.default_rng(1)
    lin, center = rng.standard_normal(problem.dim), rng.standard_normal(problem.dim)
    x = exact_local_argmin(problem, 1, lin, 0.3, center)
    g = problem.grads(x[None, :], np.array([1]))[0] + lin + 0.3 * (x - center)
    assert np.linalg.norm(g) <= 1e-11 * max(1.0, np.linalg.norm(lin))
    assert claims.certify_rounds(DANE(lam=0.5), problem)[0] is None
    assert claims.certify_rounds(FedRed(lam=0.5, eta=0.5, p=0.5, solver="exact"), problem)[0] is None
    assert claims.certify_rounds(SignSlip(lam=0.5), problem)[0] is not None
