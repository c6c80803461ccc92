"""The classic references (fedtheory/references/classic.py) accept the implementations on every option and reject
plausible slips of each algorithm: at least 8 per algorithm (a sign, a weight, a stale point, a missing
correction, a normalisation applied twice, the wrong local path, a schedule, participation bookkeeping, a logged
quantity off), each written into a patched copy of the algorithm's module and run 6 rounds from its own state
under partial participation."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from fedtheory.algorithms import FedAvg
from fedtheory.claims.classic.reference_runs import PARTICIPATIONS, _instances, problem_for, run_instance
from fedtheory.metrics.communication import EntropyMetrics
from fedtheory.references import REFERENCES, Expected, certify_round, has_reference

SUB = PARTICIPATIONS["subset2"]
BER = PARTICIPATIONS["bernoulli"]

#: (algorithm module, class, constructor kwargs, problem, slip label, [(old source, slipped source)])
SLIPS = [
    # ----- FedAvg -----
    ("fedavg", "FedAvg", dict(local_steps=3, local_step=0.1, server_step=0.6, participation=SUB), "quadratic",
     "sign of the server step", [("x_new = state.x + self.server_step", "x_new = state.x - self.server_step")]),
    ("fedavg", "FedAvg", dict(local_steps=3, local_step=0.1, participation=SUB), "quadratic",
     "weight: plain mean over the participants", [("a = aggregation_weights(problem, S, self.weighting, self.normalize)",
                                                   "a = np.full(S.size, 1.0 / S.size)")]),
    ("fedavg", "FedAvg", dict(local_steps=3, local_step=0.1, participation=SUB), "quadratic",
     "normalisation applied twice", [("x_new = state.x + self.server_step * (a @ delta)",
                                      "x_new = state.x + self.server_step * ((a / problem.weights[S].sum()) @ delta)")]),
    ("fedavg", "FedAvg", dict(local_steps=3, local_step=0.1, participation=BER), "quadratic",
     "stale point: every local gradient at x", [("steps=self.local_steps, step_size=self.step_size(problem),",
                                                 "steps=1, step_size=self.local_steps * self.step_size(problem),")]),
    ("fedavg", "FedAvg", dict(local_steps=3, participation=SUB), "quadratic",
     "schedule: default step 1/L_f instead of 1/L", [("return 1.0 / (problem.certificate.L + self._regularisation())",
                                                      "return 1.0 / (problem.certificate.L_f + self._regularisation())")]),
    ("fedavg", "FedAvg", dict(local_steps=6, local_step=0.1, local_tol=2.0, participation=SUB), "quadratic",
     "wrong local path: stopping tolerance ignored", [("tol=self.local_tol, rng", "tol=None, rng")]),
    ("fedavg", "FedAvg", dict(local_steps=3, local_step=0.1, participation=SUB), "quadratic",
     "participation bookkeeping: weights by position", [("aggregation_weights(problem, S,",
                                                         "aggregation_weights(problem, np.arange(S.size),")]),
    ("fedavg", "FedAvg", dict(local_steps=3, local_step=0.1, participation=BER), "quadratic",
     "logged quantity off by one: gradient evaluations", [("grad_evals=evals,", "grad_evals=evals + 1,")]),
    ("fedavg", "FedAvg", dict(local_steps=3, local_step=0.1, threshold=0.05, participation=SUB), "quadratic",
     "threshold applied to the model, not the update", [("delta = threshold(Y - state.x, self.threshold)",
                                                         "delta = threshold(Y, self.threshold) - state.x")]),
    ("fedavg", "FedAvg", dict(local_steps=3, local_step=0.1, threshold=0.05, participation=SUB,
                              upload_metrics=EntropyMetrics()), "quadratic",
     "upload metrics on the unthresholded update", [("extra=self._extra(delta)", "extra=self._extra(Y - state.x)")]),
    ("fedavg", "FedAvg", dict(local_steps=3, local_step=0.1, participation=SUB, stochastic=True), "noisy",
     "stochastic gradients: exact gradients used", [("rng=self._sgd_rng(draw))", "rng=None)")]),
    ("fedavg", "FedAvg", dict(local_steps=2, local_step=0.1, participation=PARTICIPATIONS["rare"]), "quadratic",
     "participation bookkeeping: a round without participants logged as communicating",
     [("grad_evals=0, communicated=False)", "grad_evals=0, communicated=True)")]),
    # ----- FedProx -----
    ("fedprox", "FedProx", dict(solver="gd", prox=0.5, local_steps=3, local_step=0.1, participation=SUB), "quadratic",
     "missing correction: prox term dropped in local GD", [("prox=self.prox, center=center", "prox=0.0, center=center")]),
    ("fedprox", "FedProx", dict(prox=0.5, participation=SUB), "quadratic",
     "constant factor: 2 lambda2 in the exact solve", [("center, self.prox, l1=self.l1,", "center, 2 * self.prox, l1=self.l1,")]),
    ("fedprox", "FedProx", dict(prox=0.5, participation=BER), "logistic",
     "wrong point: the proximal center at 0", [("center = np.broadcast_to(state.x,", "center = np.broadcast_to(0 * state.x,")]),
    ("fedprox", "FedProx", dict(solver="gd", prox=0.5, local_steps=3, participation=SUB), "quadratic",
     "schedule: default step ignores lambda2", [("        return self.prox\n", "        return 0.0\n")]),
    ("fedprox", "FedProx", dict(prox=0.5, participation=SUB), "quadratic",
     "logged quantity: an exact solve counted as gradient evaluations", [("return Y, 0", "return Y, m")]),
    ("fedprox", "FedProx", dict(prox=0.5, participation=SUB), "quadratic",
     "participation bookkeeping: solves for the first m clients",
     [("clients=None if m == problem.n_clients else clients)", "clients=None if m == problem.n_clients else np.arange(m))")]),
    ("fedprox", "FedProx", dict(prox=0.5, participation=SUB), "quadratic",
     "wrong local path: K local steps instead of the exact solve", [('if self.solver == "exact":', 'if False:')]),
    ("fedprox", "FedProx", dict(solver="gd", prox=0.5, local_steps=3, local_step=0.1, participation=BER,
                                stochastic=True), "noisy",
     "stale point: the local SGD stream not seeded from the draw", [("rng=self._sgd_rng(draw))",
                                                                    "rng=np.random.default_rng(0))")]),
    # ----- SCAFFOLD -----
    ("scaffold", "Scaffold", dict(local_steps=3, local_step=0.1, participation=SUB), "quadratic",
     "sign of the correction c - c_i", [("lin=state.c - C_S", "lin=C_S - state.c")]),
    ("scaffold", "Scaffold", dict(local_steps=3, local_step=0.1, participation=SUB), "quadratic",
     "option II without K", [("(x - res.X) / (self.local_steps * eta)", "(x - res.X) / eta")]),
    ("scaffold", "Scaffold", dict(local_steps=3, local_step=0.1, option="I", participation=BER), "quadratic",
     "option I: gradient at the local model (wrong point)", [("problem.grads(start, rows)", "problem.grads(res.X, rows)")]),
    ("scaffold", "Scaffold", dict(local_steps=3, local_step=0.1, participation=SUB), "quadratic",
     "normalisation of the c update", [("c_new = state.c + w @ dc", "c_new = state.c + (w / w.sum()) @ dc")]),
    ("scaffold", "Scaffold", dict(local_steps=3, local_step=0.1, participation=SUB), "quadratic",
     "server control variate not carried", [("c_new = state.c + w @ dc", "c_new = w @ dc")]),
    ("scaffold", "Scaffold", dict(local_steps=3, local_step=0.1, participation=BER), "quadratic",
     "client control variates not carried", [("C = table.with_rows(S, C_new)", "C = table")]),
    ("scaffold", "Scaffold", dict(local_steps=3, local_step=0.1, participation=SUB), "quadratic",
     "weight: x aggregated with w_i unnormalised", [("self.server_step * ((w / w.sum()) @ dy)", "self.server_step * (w @ dy)")]),
    ("scaffold", "Scaffold", dict(local_steps=3, local_step=0.1, participation=SUB), "quadratic",
     "participation bookkeeping: control variates by position", [("C_S = table.rows(S)", "C_S = table.rows(np.arange(m))")]),
    ("scaffold", "Scaffold", dict(local_steps=3, local_step=0.1, participation=SUB), "quadratic",
     "logged quantity: one vector down per participant", [("down_vectors=2 * m", "down_vectors=m")]),
    ("scaffold", "Scaffold", dict(local_steps=3, local_step=0.1, server_step=0.7, participation=SUB), "quadratic",
     "server step dropped", [("x + self.server_step * ((w / w.sum()) @ dy)", "x + ((w / w.sum()) @ dy)")]),
    # ----- FedDyn -----
    ("feddyn", "FedDyn", dict(alpha=0.8, participation=SUB), "quadratic",
     "sign of the h update", [("h_new = state.h + w @ increment", "h_new = state.h - w @ increment")]),
    ("feddyn", "FedDyn", dict(alpha=0.8, participation=SUB), "quadratic",
     "sign of h in the server model", [("x_new = (w / w.sum()) @ theta - h_new / self.alpha",
                                        "x_new = (w / w.sum()) @ theta + h_new / self.alpha")]),
    ("feddyn", "FedDyn", dict(alpha=0.8, participation=BER), "quadratic",
     "stale point: the old h in the server model", [("x_new = (w / w.sum()) @ theta - h_new / self.alpha",
                                                     "x_new = (w / w.sum()) @ theta - state.h / self.alpha")]),
    ("feddyn", "FedDyn", dict(alpha=0.8, participation=SUB), "quadratic",
     "client states not carried", [("G = table.with_rows(S, G_S + increment)", "G = table")]),
    ("feddyn", "FedDyn", dict(alpha=0.8, participation=SUB), "quadratic",
     "normalisation of the h update", [("h_new = state.h + w @ increment", "h_new = state.h + (w / w.sum()) @ increment")]),
    ("feddyn", "FedDyn", dict(alpha=0.8, participation=SUB), "quadratic",
     "sign of the linear correction in the local problem", [("problem.solve_local(-G_S,", "problem.solve_local(G_S,")]),
    ("feddyn", "FedDyn", dict(alpha=0.8, solver="gd", local_steps=3, participation=SUB), "quadratic",
     "schedule: default local step without alpha", [("1.0 / (problem.certificate.L + self.alpha)", "1.0 / problem.certificate.L")]),
    ("feddyn", "FedDyn", dict(alpha=0.8, participation=SUB), "quadratic",
     "participation bookkeeping: states by position", [("else table.rows(S)", "else table.rows(np.arange(m))")]),
    ("feddyn", "FedDyn", dict(alpha=0.8, upload="model", participation=SUB), "quadratic",
     "logged quantity: the update counted instead of the model", [('sent = delta if self.upload == "delta" else theta',
                                                                  "sent = delta")]),
    # ----- Scaffnew -----
    ("scaffnew", "Scaffnew", dict(step=0.15, p=0.4, participation=SUB), "quadratic",
     "constant factor: p dropped from the h update", [("(self.p / gamma)", "(1.0 / gamma)")]),
    ("scaffnew", "Scaffnew", dict(step=0.15, p=0.4, participation=SUB), "quadratic",
     "weight: unweighted average", [("xbar = (w / w.sum()) @ X_hat[S]", "xbar = X_hat[S].mean(axis=0)")]),
    ("scaffnew", "Scaffnew", dict(step=0.15, p=0.4, participation=SUB), "quadratic",
     "schedule: the coin ignored", [("if not coin or S.size == 0:", "if S.size == 0:")]),
    ("scaffnew", "Scaffnew", dict(step=0.15, p=0.4, participation=BER), "quadratic",
     "participation bookkeeping: every h_i updated", [("H[S] += (self.p / gamma) * (xbar - X_hat[S])",
                                                       "H += (self.p / gamma) * (xbar - X_hat)")]),
    ("scaffnew", "Scaffnew", dict(step=0.15, p=0.4, participation=SUB), "quadratic",
     "stale point: gradients at the last consensus", [("G = problem.grads(state.X) if rng is None",
                                                      "G = problem.grads(np.tile(state.x, (problem.n_clients, 1))) if rng is None")]),
    ("scaffnew", "Scaffnew", dict(step=0.15, p=0.4, participation=SUB), "quadratic",
     "sign of the control variate", [("X_hat = state.X - gamma * (G - state.H)", "X_hat = state.X - gamma * (G + state.H)")]),
    ("scaffnew", "Scaffnew", dict(step=0.15, p=0.4, round_unit="communication", participation=SUB), "quadratic",
     "communication round one local step short", [("for _ in range(K - 1):", "for _ in range(K - 2):")]),
    ("scaffnew", "Scaffnew", dict(step=0.15, p=0.4, participation=SUB), "quadratic",
     "logged quantity: gradients counted for the participants only",
     [("grad_evals=n, communicated=False", "grad_evals=S.size, communicated=False")]),
    ("scaffnew", "Scaffnew", dict(step=0.15, p=0.4, participation=SUB), "quadratic",
     "non-participants moved to the consensus", [("X[S] = xbar", "X[:] = xbar")]),
    # ----- gradient descent -----
    ("gd", "GradientDescent", dict(), "quadratic", "sign of the step", [("x = state.x - self", "x = state.x + self")]),
    ("gd", "GradientDescent", dict(), "quadratic", "weight: unweighted mean of the client gradients",
     [("g = problem.grad(state.x)", "g = problem.grads(problem.broadcast(state.x)).mean(axis=0)")]),
    ("gd", "GradientDescent", dict(), "quadratic", "schedule: default step 1/L instead of 1/L_f",
     [("1.0 / problem.certificate.L_f", "1.0 / problem.certificate.L")]),
    ("gd", "GradientDescent", dict(step=0.2), "quadratic", "constant factor: half step",
     [("x = state.x - self.step_size(problem) * g", "x = state.x - 0.5 * self.step_size(problem) * g")]),
    ("gd", "GradientDescent", dict(step=0.2), "quadratic", "normalisation applied twice: gradient divided by n",
     [("g = problem.grad(state.x)", "g = problem.grad(state.x) / problem.n_clients")]),
    ("gd", "GradientDescent", dict(), "quadratic", "logged quantity off by one: vectors up",
     [("up_vectors=problem.n_clients,", "up_vectors=problem.n_clients - 1,")]),
    ("gd", "GradientDescent", dict(), "quadratic", "participation bookkeeping: one participant",
     [("participants=problem.n_clients,", "participants=1,")]),
    ("gd", "GradientDescent", dict(), "quadratic", "logged quantity: one gradient evaluation",
     [("local_grad_evals=problem.n_clients)", "local_grad_evals=1)")]),
]


@pytest.mark.parametrize("module, cls, kwargs, problem, label, replacements", SLIPS,
                         ids=[f"{s[1]}: {s[4]}" for s in SLIPS])
def test_the_reference_rejects_the_slip(slips, module, cls, kwargs, problem, label, replacements) -> None:
    patched_module, first_mismatch = slips
    slipped = getattr(patched_module(f"fedtheory.algorithms.{module}", replacements), cls)(**kwargs)
    assert first_mismatch(slipped, problem_for(problem)) is not None, f"{cls} with {label} passed its reference"
    # the same instance without the slip certifies (so the rejection is the slip's)
    original = getattr(patched_module(f"fedtheory.algorithms.{module}", []), cls)(**kwargs)
    assert first_mismatch(original, problem_for(problem)) is None


def test_at_least_eight_slips_per_algorithm() -> None:
    counts = Counter(s[1] for s in SLIPS)
    assert set(counts) == {"FedAvg", "FedProx", "Scaffold", "FedDyn", "Scaffnew", "GradientDescent"}
    assert min(counts.values()) >= 8, counts


@pytest.mark.parametrize("inst", list(_instances(False)), ids=lambda i: f"{i['alg']}-{i['part']}-{i['problem']}")
def test_the_reference_accepts_the_implementation_on_every_option(inst) -> None:
    evidence = run_instance(inst)
    assert evidence.holds, evidence.details


def test_every_classic_algorithm_has_a_reference() -> None:
    for name in ("fedavg", "fedprox", "scaffold", "feddyn", "scaffnew", "gd"):
        assert has_reference(name), name


def test_a_mismatch_names_the_field_and_round() -> None:
    problem = problem_for("quadratic")
    alg = FedAvg(local_steps=2, local_step=0.1)
    state = alg.init(problem, np.ones(3))
    draw = alg.draw(problem, state, np.random.default_rng(0))
    new, log = alg.round_given(problem, state, draw)
    assert certify_round(alg, problem, state, draw, new, log, 4) is None
    expected = REFERENCES["fedavg"](alg, problem, state, draw)
    assert isinstance(expected, Expected) and {"x", "uplink_bits", "local_grad_evals"} <= set(expected.state) | set(expected.log)
    moved = type(new)(x=new.x + 1e-3, last_upload=new.last_upload, last_clients=new.last_clients)
    mismatch = certify_round(alg, problem, state, draw, moved, log, 4)
    assert mismatch is not None and mismatch.field == "x" and mismatch.round_index == 4


def test_at_a_fixed_point_the_counts_rounding_decides_are_left_out_and_nothing_else() -> None:
    """FedDyn from its fixed point: Delta_i = theta_i - x is 0 up to rounding, so whether an entry is sent as 0 is
    rounding's choice; the reference leaves the non-zero counts out of such a round, and still compares the state,
    the vectors sent and the other logged quantities."""
    from fedtheory.algorithms import FedDyn

    problem = problem_for("quadratic")
    alg = FedDyn(alpha=0.8)
    state = alg.init(problem, np.zeros(3))
    rng = np.random.default_rng(0)
    for _ in range(300):
        state, _ = alg.round(problem, state, rng)
    draw = alg.draw(problem, state, rng)
    new, log = alg.round_given(problem, state, draw)
    assert np.abs(new.last_upload).max() < 1e-12  # at the fixed point
    assert certify_round(alg, problem, state, draw, new, log, 300) is None
    expected = REFERENCES["feddyn"](alg, problem, state, draw)
    assert "uplink_nnz" not in expected.log and {"x", "h", "G", "last_upload"} <= set(expected.state)
    assert {"vectors_up", "participants", "local_grad_evals", "downlink_bits"} <= set(expected.log)
    # away from it the counts are compared
    first = alg.init(problem, np.zeros(3))
    draw = alg.draw(problem, first, rng)
    assert "uplink_nnz" in REFERENCES["feddyn"](alg, problem, first, draw).log
