"""FedElasticNet's Algorithms 1-3 (FedProx, SCAFFOLD, FedDyn with lambda1 > 0) against their references: each
reference rejects at least 8 plausible slips of its algorithm's elastic-net parts (the l1 step, T_eps, the sign
rule of eq. (11), the upload counts and entropy), written into patched copies of the modules and run 6 rounds
under partial participation, and accepts the implementation on every instance of the Algorithm 1-3 claims."""
from __future__ import annotations

from collections import Counter

import pytest

from fedtheory.claims.classic.reference_runs import PARTICIPATIONS, problem_for, run_instance
from fedtheory.claims.fedelasticnet.reference_runs import _algorithm1, _algorithm2, _algorithm3
from fedtheory.metrics.communication import EntropyMetrics

SUB = PARTICIPATIONS["subset2"]
BER = PARTICIPATIONS["bernoulli"]
#: lambda1 = 0.3 and the thresholds make both kinds of zeros: about 1 in 6 coordinates of the uploads is zeroed by
#: the l1 term and as many again by T_eps alone (measured over the 6 rounds of each instance)
ALG1_GD = dict(solver="gd", prox=0.5, l1=0.3, local_steps=3, local_step=0.1, participation=SUB)
ALG1_EXACT = dict(prox=0.5, l1=0.3, threshold=0.1, participation=SUB)
ALG2 = dict(prox=0.3, l1=0.3, local_steps=3, local_step=0.1, threshold=0.05, participation=SUB)
ALG3 = dict(alpha=0.8, l1=0.3, threshold=0.1, participation=SUB)
ALG3_GD = dict(alpha=0.8, l1=0.3, threshold=0.1, solver="gd", local_steps=3, local_step=0.1, participation=BER)

# Slips of shared helpers: (module, [(old, new)]) whose patched function is injected into the algorithm's copy.
LOCAL = "fedtheory.local.gd"
FEDERATED = "fedtheory.algorithms.federated"

#: (statement, algorithm module, class, kwargs, label, algorithm replacements, helper (module, name, replacements)).
#: FedProx's round is FedAvg's: its slips there ("fedavg>fedprox") patch fedavg.py and build FedProx on the copy.
SLIPS = [
    # ----- Algorithm 1 (FedProx + elastic net) -----
    ("Algorithm 1", "fedprox", "FedProx", {**ALG1_GD, "l1_mode": "proximal"}, "ISTA threshold without the step size",
     [], (LOCAL, "local_gd", [("soft_threshold(Y_new, eta * l1)", "soft_threshold(Y_new, l1)")])),
    ("Algorithm 1", "fedprox", "FedProx", {**ALG1_GD, "l1_mode": "subgradient"}, "sign of the l1 sub-gradient",
     [], (LOCAL, "local_gd", [("term = l1 * np.sign(Y - C)", "term = -l1 * np.sign(Y - C)")])),
    ("Algorithm 1", "fedprox", "FedProx", {**ALG1_GD, "l1_mode": "subgradient"}, "l1 sub-gradient at y, not y - x",
     [], (LOCAL, "local_gd", [("term = l1 * np.sign(Y - C)", "term = l1 * np.sign(Y)")])),
    ("Algorithm 1", "fedprox", "FedProx", {**ALG1_GD, "l1_mode": "proximal"}, "ISTA step not centred at x",
     [], (LOCAL, "local_gd", [("        Y_new -= C\n        Y_new = soft_threshold(Y_new, eta * l1)\n        Y_new += C",
                                "        Y_new = soft_threshold(Y_new, eta * l1)")])),
    ("Algorithm 1", "fedprox", "FedProx", ALG1_EXACT, "l1 dropped from the exact solve",
     [("center, self.prox, l1=self.l1,", "center, self.prox, l1=0.0,")], None),
    ("Algorithm 1", "fedprox", "FedProx", {**ALG1_GD, "l1_mode": "proximal"}, "wrong local path: sub-gradient for ISTA",
     [("l1_mode=self.l1_mode", "l1_mode='subgradient'")], None),
    ("Algorithm 1", "fedavg>fedprox", "FedProx", ALG1_EXACT, "constant factor: T_eps at eps/2",
     [], (FEDERATED, "threshold", [("np.where(np.abs(V) <= eps, 0.0, V)", "np.where(np.abs(V) <= 0.5 * eps, 0.0, V)")])),
    ("Algorithm 1", "fedavg>fedprox", "FedProx", ALG1_EXACT, "T_eps applied to the model, not the update",
     [("delta = threshold(Y - state.x, self.threshold)", "delta = threshold(Y, self.threshold) - state.x")], None),
    ("Algorithm 1", "fedavg>fedprox", "FedProx", ALG1_EXACT, "logged non-zeros: the dense count",
     [], (FEDERATED, "upload_log", [("up_nnz += int(per_row.sum())", "up_nnz += int(U.size)")])),
    ("Algorithm 1", "fedavg>fedprox", "FedProx", ALG1_EXACT, "logged bits: coordinate list without its indices",
     [], (FEDERATED, "upload_log", [("up_bits += float(vector_bits(per_row, d).sum())",
                                     "up_bits += float(np.minimum(64 * d, 64 * per_row).sum())")])),
    ("Algorithm 1", "fedavg>fedprox", "FedProx", {**ALG1_EXACT, "upload_metrics": EntropyMetrics()},
     "entropy of the unthresholded update", [("extra=self._extra(delta)", "extra=self._extra(Y - state.x)")], None),
    # ----- Algorithm 2 (SCAFFOLD + elastic net) -----
    ("Algorithm 2", "scaffold", "Scaffold", ALG2, "sign of the l1 sub-gradient",
     [], (LOCAL, "local_gd", [("term = l1 * np.sign(Y - C)", "term = -l1 * np.sign(Y - C)")])),
    ("Algorithm 2", "scaffold", "Scaffold", ALG2, "l1 dropped from the local steps", [("l1=self.l1, l1_mode", "l1=0.0, l1_mode")], None),
    ("Algorithm 2", "scaffold", "Scaffold", ALG2, "lambda2 dropped from the local steps",
     [("prox=self.prox, center=start", "prox=0.0, center=start")], None),
    ("Algorithm 2", "scaffold", "Scaffold", ALG2, "T_eps applied to Delta c too",
     [("dc = C_new - C_S", "dc = threshold(C_new - C_S, self.threshold)")], None),
    ("Algorithm 2", "scaffold", "Scaffold", ALG2, "control variate from the thresholded update",
     [("C_new = C_S - state.c + (x - res.X) / (self.local_steps * eta)",
       "C_new = C_S - state.c - threshold(res.X - x, self.threshold) / (self.local_steps * eta)")], None),
    ("Algorithm 2", "scaffold", "Scaffold", {**ALG2, "l1_mode": "proximal"}, "wrong local path: sub-gradient for ISTA",
     [("l1_mode=self.l1_mode", "l1_mode='subgradient'")], None),
    ("Algorithm 2", "scaffold", "Scaffold", {**ALG2, "local_step": None}, "schedule: default step without lambda2",
     [("1.0 / (problem.certificate.L + self.prox)", "1.0 / problem.certificate.L")], None),
    ("Algorithm 2", "scaffold", "Scaffold", {**ALG2, "upload_metrics": EntropyMetrics()}, "entropy of Delta c",
     [("extra=self._extra(dy)", "extra=self._extra(dc)")], None),
    ("Algorithm 2", "scaffold", "Scaffold", ALG2, "logged non-zeros: Delta y only",
     [("upload_log(problem, [dy, dc],", "upload_log(problem, [dy],")], None),
    # ----- Algorithm 3 (FedDyn + elastic net) -----
    ("Algorithm 3", "feddyn", "FedDyn", ALG3, "printed sign of the unthresholded update",
     [("s = np.sign(delta)", "s = np.sign(theta_hat - x)")], None),
    ("Algorithm 3", "feddyn", "FedDyn", {**ALG3, "sign_at_zero": "kkt"}, "KKT sub-gradient without alpha Delta",
     [("(G_S - problem.grads(theta, rows) - self.alpha * delta) / self.l1", "(G_S - problem.grads(theta, rows)) / self.l1")], None),
    ("Algorithm 3", "feddyn", "FedDyn", ALG3, "missing correction: lambda1 s_i dropped from eq. (11)",
     [("increment = increment - self.l1 * s", "increment = increment")], None),
    ("Algorithm 3", "feddyn", "FedDyn", ALG3, "sign of lambda1 s_i in eq. (11)",
     [("increment = increment - self.l1 * s", "increment = increment + self.l1 * s")], None),
    ("Algorithm 3", "feddyn", "FedDyn", ALG3, "T_eps after the state update",
     [("theta = x + delta", "theta = theta_hat")], None),
    ("Algorithm 3", "feddyn", "FedDyn", ALG3, "l1 dropped from the exact solve",
     [("self.alpha, l1=self.l1, clients=rows)", "self.alpha, l1=0.0, clients=rows)")], None),
    ("Algorithm 3", "feddyn", "FedDyn", {**ALG3_GD, "l1_mode": "proximal"}, "ISTA threshold without the step size",
     [], (LOCAL, "local_gd", [("soft_threshold(Y_new, eta * l1)", "soft_threshold(Y_new, l1)")])),
    ("Algorithm 3", "feddyn", "FedDyn", {**ALG3_GD, "l1_mode": "subgradient"}, "wrong local path: ISTA for the sub-gradient",
     [("l1_mode=self.l1_mode", "l1_mode='proximal'")], None),
    ("Algorithm 3", "feddyn", "FedDyn", {**ALG3, "upload_metrics": EntropyMetrics()}, "entropy of the model, not Delta",
     [("extra=self._extra(sent)", "extra=self._extra(theta)")], None),
    ("Algorithm 3", "feddyn", "FedDyn", {**ALG3, "sign_at_zero": "kkt"}, "logged: the KKT gradient not counted",
     [("                evals += m\n", "")], None),
]


@pytest.mark.parametrize("statement, module, cls, kwargs, label, replacements, helper", SLIPS,
                         ids=[f"{s[0]}: {s[4]}" for s in SLIPS])
def test_the_reference_rejects_the_slip(slips, statement, module, cls, kwargs, label, replacements, helper) -> None:
    patched_module, first_mismatch = slips
    inject = {}
    if helper is not None:
        helper_module, name, helper_replacements = helper
        inject[name] = getattr(patched_module(helper_module, helper_replacements), name)
    if module == "fedavg>fedprox":
        base = patched_module("fedtheory.algorithms.fedavg", replacements, inject).FedAvg
        module, replacements, inject = "fedprox", [("from .fedavg import FedAvg\n", "FedAvg = _BASE\n")], {"_BASE": base}
    slipped = getattr(patched_module(f"fedtheory.algorithms.{module}", replacements, inject), cls)(**kwargs)
    assert first_mismatch(slipped, problem_for("quadratic")) is not None, f"{statement} with {label} passed"
    original = getattr(patched_module(f"fedtheory.algorithms.{module}", []), cls)(**kwargs)
    assert first_mismatch(original, problem_for("quadratic")) is None


def test_at_least_eight_slips_per_statement() -> None:
    counts = Counter(s[0] for s in SLIPS)
    assert set(counts) == {"Algorithm 1", "Algorithm 2", "Algorithm 3"} and min(counts.values()) >= 8, counts


@pytest.mark.parametrize("inst", [*_algorithm1(False), *_algorithm2(False), *_algorithm3(False)],
                         ids=lambda i: f"{i['alg']}-{i['part']}-{i['problem']}")
def test_the_reference_accepts_the_implementation_on_every_option(inst) -> None:
    evidence = run_instance(inst)
    assert evidence.holds, evidence.details
