"""EFL's reference (fedtheory/references/efl.py) accepts the implementation on every option (partial
participation, idle, departing and arriving clients, heterogeneous local steps, ST compression, the weighting,
scaling, variant and elastic-sum readings, schedules with restarts) and rejects plausible slips of it (each a
patched copy of fedtheory/algorithms/efl.py, one substitution)."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import fedtheory.algorithms.efl as efl_module
from fedtheory.problems import logistic, quadratic
from fedtheory.references import certify_run

ROUNDS = 8


def first_mismatch(alg, problem, rounds: int = ROUNDS, seed: int = 0):
    """The first round of ``rounds`` (from the algorithm's own state) that differs from its reference, or None."""
    return certify_run(alg, problem, np.linspace(-0.3, 0.5, problem.dim), rounds, seed)[1]


PROBLEMS = {"quadratic": lambda: quadratic(6, 5, mu=0.5, L=4.0, zeta2=1.0, seed=1),
            "logistic": lambda: logistic("synthetic", n_clients=6, dim=4)}
SCENARIO = dict(E=3, step=0.1, decay=2.0, lam=0.1, q=0.4, s_min=(1, 1, 2, 3, 1, 2), s_max=3,
                participation=(0.5, 0.9, 1.0, 0.7, 0.6, 1.0), departures={1: 3}, arrivals={4: 2}, restarts=(5,),
                restart_on_arrival=True)
CONFIGS = {
    "default": dict(), "example": "example",
    "ipw_client_cached": dict(SCENARIO, weighting="efl_ipw", scaling="client", uv_sum="cached"),
    "efl_server_reporters": dict(SCENARIO),
    "fedavg_printed_idle": dict(E=2, step=0.05, q=0.3, participation=0.6, weighting="fedavg", variant="printed"),
    "elastic_uncompressed_idle": dict(E=4, step=0.03, lam=0.2, s_min=1, participation=0.5, uv_sum="reporters"),
    "full_q1": dict(E=2, step=0.05, q=1.0, lam=0.05, uv_sum="cached"),
}


def _alg(module, cfg):
    return module.EFL.example() if cfg == "example" else module.EFL(**cfg)


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_reference_accepts_the_implementation(config, problem):
    assert first_mismatch(_alg(efl_module, CONFIGS[config]), PROBLEMS[problem]()) is None


#: (what the slip is, substitutions in fedtheory/algorithms/efl.py)
SLIPS = {
    "sign of the local step": [("W[m] = W[m] - eta * G", "W[m] = W[m] + eta * G")],
    "weight E p/s without E": [("coef = self.E * p / safe", "coef = p / safe")],
    "client that missed a round treated as if it had not": [
        ("(state.last_seen[act] == tau - 1)[:, None]", "(state.last_seen[act] >= 0)[:, None]")],
    "missing client error feedback": [("delta_k = as_table(state.client_res).rows(act) + raw", "delta_k = raw")],
    "missing server residual": [("delta_g = state.server_res + weights @ sent", "delta_g = weights @ sent")],
    "elastic term sign": [("return f_grad + lam * (U * W - V)", "return f_grad + lam * (U * W + V)")],
    "schedule that does not decay": [("self.step / (clock + self.decay)", "self.step / (1 + self.decay)")],
    "clock not restarted": [("clock = 1 if restart else state.clock + 1", "clock = state.clock + 1")],
    "departed or not yet arrived client active": [
        ("steps = np.where(active & self.present(n, state.tau + 1), steps, 0)", "steps = np.where(active, steps, 0)")],
    "elastic sums accumulated over rounds": [("U, V = u.sum(axis=0), v.sum(axis=0)",
                                              "U, V = state.U + u.sum(axis=0), state.V + v.sum(axis=0)")],
    "Fisher diagonal at the round's start point": [("u = fisher_diagonal(problem, W, act)",
                                                    "u = fisher_diagonal(problem, start, act)")],
    "gradient evaluations logged as E per client": [("local_grad_evals=int(s_act.sum())",
                                                     "local_grad_evals=int(act.size * self.E)")],
    "ipw weight divides by the participation twice": [
        ("coef = coef / _per_client(\"participation\", self.participation, p.shape[0])",
         "coef = coef / _per_client(\"participation\", self.participation, p.shape[0]) ** 2")],
}


@pytest.mark.parametrize("slip", sorted(SLIPS))
def test_reference_rejects_a_slip(slip, patched_module):
    copy = patched_module(efl_module.__name__, SLIPS[slip])
    alg = copy.EFL(**dict(SCENARIO, weighting="efl_ipw"))
    assert type(alg).name == "efl"
    mismatch = first_mismatch(alg, PROBLEMS["logistic"]())
    assert mismatch is not None, f"the reference accepted the slip: {slip}"


def test_at_least_eight_slips():
    assert len(SLIPS) >= 8


def test_the_identity_claim_fails_on_a_slipped_algorithm(monkeypatch, patched_module):
    """efl.rounds.reference_identity runs the implementation it finds: a slipped copy makes it fail."""
    from fedtheory.claims import select

    (c,) = select(ids=["efl.rounds.reference_identity"])
    instances = list(c.instances(False))
    assert all(c.check(inst).holds for inst in instances)
    copy = patched_module(efl_module.__name__, SLIPS["client that missed a round treated as if it had not"])
    for module in (efl_module, sys.modules[c.check.__module__]):  # the claim imports EFL at its top
        monkeypatch.setattr(module, "EFL", copy.EFL)
    verdicts = [c.check(inst) for inst in instances]
    assert not all(ev.holds for ev in verdicts)
