"""R-round reference identities of the classic algorithms: each run of FedAvg, FedProx, SCAFFOLD (I, II), FedDyn,
Scaffnew and gradient descent, from its own state round after round, against the papers' update equations
transcribed client by client (:mod:`fedtheory.references.classic`), in the state and every logged quantity.

One round from a given state (``classic.rounds.reference_identity``) cannot see a slip that only shows across
rounds: a stale point (the server model of the round before), a control variate or client state not carried,
a schedule, bookkeeping of clients that skipped a round. These runs take R >= 5 rounds with their own draws, on
instances that exercise every option and local path (exact solves, local GD, stochastic gradients with minibatch
or additive noise, stopping tolerances, server steps, weightings and normalisations, thresholds, upload metrics,
the Scaffnew coin and communication rounds), each option under partial (uniform subset or Bernoulli)
participation, on quadratic and logistic clients. FedElasticNet's options (l1, thresholds with the elastic-net
local paths) have their own claims, cited for Algorithms 1-3 (:mod:`fedtheory.claims.fedelasticnet.reference_runs`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...algorithms.fedavg import FedAvg
from ...algorithms.feddyn import FedDyn
from ...algorithms.fedprox import FedProx
from ...algorithms.gd import GradientDescent
from ...algorithms.scaffnew import Scaffnew
from ...algorithms.scaffold import Scaffold
from ...metrics.communication import EntropyMetrics
from ...participation import Bernoulli, Full, UniformSubset
from ...problems.logistic import logistic_perturbed
from ...problems.quadratic import QuadraticProblem
from ..registry import Evidence, claim
from ..round_identities import reference_problem, run_against_reference
from ..tolerances import ROUND_IDENTITY_RTOL

__all__ = ["CLASSES", "PARTICIPATIONS", "PROBLEMS", "run_instance"]

CLASSES: dict[str, Any] = {"fedavg": FedAvg, "fedprox": FedProx, "scaffold": Scaffold, "feddyn": FedDyn,
                           "scaffnew": Scaffnew, "gd": GradientDescent}
#: "rare": each client takes part with probability 0.2, so about 4 rounds in 10 have no participant (the idle path)
PARTICIPATIONS = {"full": Full(), "subset2": UniformSubset(2), "bernoulli": Bernoulli((0.3, 0.6, 0.9, 0.5)),
                  "rare": Bernoulli(0.2)}
#: quadratic: 4 clients, unequal weights, heterogeneous Hessians; noisy: the same with additive gradient noise
#: (sigma^2 = 0.5); logistic: 4 logistic clients with unequal weights and 8-sample minibatch gradients; large: 22
#: dense quadratic clients in R^80, whose Hessians (1.1 MB) exceed the local solver's cache block, so all-client
#: rounds take the cache-blocked local-GD path (fedtheory/local/gd.py, BLOCK_BYTES) that no small instance takes.
PROBLEMS = ("quadratic", "noisy", "logistic", "large")
ROUNDS = 6


def problem_for(kind: str) -> Any:
    if kind == "quadratic":
        return reference_problem()
    if kind == "noisy":
        return reference_problem().with_noise(0.5)
    if kind == "logistic":
        return logistic_perturbed(4, 3, reg=0.1, delta_A=0.05, samples=40, weights=np.array([0.1, 0.2, 0.3, 0.4]),
                                  seed=5).with_minibatch(8)
    if kind == "large":
        rng = np.random.default_rng(20261207)
        n, d = 22, 80
        Q = np.linalg.qr(rng.standard_normal((n, d, d)))[0]
        A = np.einsum("nij,nj,nkj->nik", Q, rng.uniform(0.5, 3.0, size=(n, d)), Q)
        weights = rng.uniform(0.5, 1.5, size=n)
        return QuadraticProblem(0.5 * (A + np.swapaxes(A, 1, 2)), rng.standard_normal((n, d)),
                                weights=weights / weights.sum())
    raise ValueError(f"problem must be one of {PROBLEMS}, got {kind!r}")


def run_instance(inst: dict) -> Evidence:
    """R rounds of ``inst["alg"](**inst["kw"])`` on ``inst["problem"]`` against the reference."""
    problem = problem_for(inst["problem"])
    kw = dict(inst["kw"])
    if "metrics" in kw:
        kw["upload_metrics"] = EntropyMetrics() if kw.pop("metrics") else None
    if inst["alg"] != "gd":
        kw["participation"] = PARTICIPATIONS[inst["part"]]
    alg = CLASSES[inst["alg"]](**kw)
    rounds = inst.get("rounds", ROUNDS)
    x0 = np.resize(np.array([0.5, -1.0, 2.0]), problem.dim)
    worst, where, mismatch, idle = run_against_reference(alg, problem, x0, rounds,
                                                         seed=inst.get("seed", 0))
    # an instance meant for the idle path must have met it
    ok = worst <= ROUND_IDENTITY_RTOL and mismatch is None and (inst["part"] != "rare" or idle > 0)
    return Evidence(describe(inst), worst, ROUND_IDENTITY_RTOL, ok,
                    details={"rounds": rounds, "worst_field": where, "mismatch": mismatch, "idle_rounds": idle})


def describe(inst: dict) -> str:
    kw = ", ".join(f"{k}={v}" for k, v in inst["kw"].items())
    part = "" if inst["alg"] == "gd" else f", participation={inst['part']}"
    return f"{inst['alg']}({kw}){part} on {inst['problem']}, {inst.get('rounds', ROUNDS)} rounds"


def _instances(thorough: bool):
    def inst(alg: str, part: str, problem: str = "quadratic", **kw: Any) -> dict:
        return {"alg": alg, "part": part, "problem": problem, "kw": kw}

    # FedAvg: server step, default local step, weighting/normalisation, stopping tolerance, local SGD
    yield inst("fedavg", "full", local_steps=3, local_step=0.1, server_step=0.6)
    yield inst("fedavg", "subset2", local_steps=3, local_step=0.1, server_step=0.6)
    yield inst("fedavg", "bernoulli", local_steps=3)
    yield inst("fedavg", "subset2", local_steps=2, local_step=0.1, weighting="uniform", normalize="all")
    yield inst("fedavg", "bernoulli", local_steps=2, local_step=0.1, normalize="all", metrics=True)
    yield inst("fedavg", "subset2", local_steps=6, local_step=0.1, local_tol=2.0)
    yield inst("fedavg", "bernoulli", "noisy", local_steps=3, local_step=0.1, stochastic=True)
    yield inst("fedavg", "subset2", "logistic", local_steps=3, local_step=0.5, stochastic=True)
    yield inst("fedavg", "bernoulli", "noisy", local_steps=6, local_step=0.1, local_tol=1.5, stochastic=True)
    yield inst("fedavg", "subset2", local_steps=3, local_step=0.1, threshold=0.05, metrics=True)
    # rounds in which nobody takes part (Bernoulli participation): nothing is sent, nothing changes
    for alg, kw in (("fedavg", dict(local_steps=2, local_step=0.1)), ("fedprox", dict(prox=0.5)),
                    ("scaffold", dict(local_steps=2, local_step=0.1)), ("feddyn", dict(alpha=0.8)),
                    ("scaffnew", dict(step=0.15, p=0.4)), ("scaffnew", dict(step=0.15, p=0.4, round_unit="communication"))):
        yield {**inst(alg, "rare", **kw), "rounds": 10}
    # FedProx: exact solve (quadratic and logistic), local GD with the prox term
    yield inst("fedprox", "full", prox=0.5, server_step=0.8)
    yield inst("fedprox", "subset2", prox=0.5, server_step=0.8, weighting="uniform", normalize="all")
    yield inst("fedprox", "bernoulli", "logistic", prox=0.5)
    yield inst("fedprox", "subset2", solver="gd", prox=0.5, local_steps=3)
    yield inst("fedprox", "bernoulli", "noisy", solver="gd", prox=0.5, local_steps=3, local_step=0.1,
               stochastic=True, local_tol=1.0)
    # SCAFFOLD: options I and II, server step, default step, local SGD (option I's extra gradient from the stream)
    yield inst("scaffold", "full", local_steps=3, local_step=0.1, option="I")
    yield inst("scaffold", "subset2", local_steps=3, local_step=0.1, server_step=0.7, option="I")
    yield inst("scaffold", "bernoulli", local_steps=3, local_step=0.1, option="II")
    yield inst("scaffold", "subset2", "noisy", local_steps=3, local_step=0.1, option="I", stochastic=True)
    yield inst("scaffold", "bernoulli", "logistic", local_steps=3, option="II", stochastic=True, metrics=True)
    # FedDyn: exact (quadratic, logistic), local GD, uploads of the model
    yield inst("feddyn", "full", alpha=0.8)
    yield inst("feddyn", "subset2", alpha=0.8, upload="model")
    yield inst("feddyn", "bernoulli", "logistic", alpha=0.8)
    yield inst("feddyn", "subset2", "noisy", alpha=0.8, solver="gd", local_steps=3, local_step=0.1,
               stochastic=True)
    yield inst("feddyn", "bernoulli", alpha=0.8, solver="gd", local_steps=3)
    # Scaffnew: coin per step, communication rounds, h_i^0 from gradients, local SGD
    yield inst("scaffnew", "full", step=0.15, p=0.4)
    yield inst("scaffnew", "subset2", step=0.15, p=0.4, metrics=True)
    yield inst("scaffnew", "bernoulli", p=0.5, h_init="gradient")
    yield inst("scaffnew", "subset2", "noisy", step=0.15, p=0.4, round_unit="communication", stochastic=True)
    yield inst("scaffnew", "bernoulli", "logistic", step=0.3, p=0.5, round_unit="communication",
               h_init="gradient")
    # all-client rounds on Hessians larger than the cache block: the cache-blocked local-GD path
    yield inst("fedavg", "full", "large", local_steps=3, local_step=0.1, server_step=0.6)
    yield inst("scaffold", "full", "large", local_steps=3, local_step=0.1, option="II")
    yield inst("fedprox", "full", "large", solver="gd", prox=0.5, local_steps=3, local_step=0.1)
    # gradient descent: the default step 1/L_f and a given one
    yield inst("gd", "full")
    yield inst("gd", "full", "logistic", step=0.5)
    if thorough:
        for seed in range(1, 4):
            yield {**inst("scaffold", "bernoulli", local_steps=4, local_step=0.08, option="II"), "seed": seed,
                   "rounds": 20}
            yield {**inst("feddyn", "bernoulli", alpha=0.5), "seed": seed, "rounds": 20}


@claim(id="classic.algorithms.reference_run", paper="classic",
       reference="McMahan 2017, Karimireddy 2020, Acar 2021, Mishchenko 2022: Alg. 1 of each; Li 2020, Alg. 2; "
                 "Nesterov 2004, eq. (2.1.37)",
       statement="R = 6 rounds of FedAvg, FedProx, SCAFFOLD (I, II), FedDyn, Scaffnew and GD, each from the state "
                 "the previous round returned and with its own draws, equal the papers' update equations transcribed "
                 "client by client (fedtheory/references/classic.py) in the state and every logged quantity (bits, "
                 "non-zeros, vectors, participants, gradient evaluations, upload metrics) to 1e-9 relative, on "
                 "every option and local path (exact solve, local GD and SGD, stopping tolerance, server step, "
                 "weighting, normalisation, threshold, coin, communication rounds), each under partial participation, and "
                 "rounds without participants (Bernoulli participation) for every algorithm that samples clients",
       kind="identity", instances=_instances, runs=("fedavg", "feddyn", "fedprox", "gd", "scaffnew", "scaffold"))
def check_reference_run(inst: dict) -> Evidence:
    return run_instance(inst)
