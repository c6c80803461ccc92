"""FedElasticNet's Algorithms 1-3 (Kim et al., Section 3), run R rounds against the papers' equations transcribed
client by client (:mod:`fedtheory.references.classic` with the elastic-net pieces of
:mod:`fedtheory.references.fedelasticnet`), in the state and every logged quantity (non-zeros and bits of the
thresholded uploads, the entropy of what is transmitted).

fedtheory implements the three algorithms as options of FedProx (Alg. 1), SCAFFOLD (Alg. 2) and FedDyn (Alg. 3):
``l1`` = lambda1, ``prox``/``alpha`` = lambda2, ``threshold`` = epsilon, and the local path -- the exact local
solve, or K local steps with the l1 term as the printed sign sub-gradient (eq. (7)) or as a proximal (ISTA) step.
Each claim below runs one algorithm on every such path and option (Alg. 1's weighting and normalisation, Alg. 2's
options I/II, Alg. 3's sign readings and uploads), each under partial participation, from its own state over
R = 6 rounds, so a stale point, a correction or client state not carried, or the bookkeeping of clients that
skipped a round shows. Instances: 4 quadratic clients with unequal weights (also with additive gradient noise for
local SGD) and 4 logistic clients (exact solves by proximal Newton, minibatch gradients).
"""
from __future__ import annotations

from ..classic.reference_runs import run_instance
from ..registry import Evidence, claim

__all__: list[str] = []

PAPER = "fedelasticnet"


def _inst(alg: str, part: str, problem: str = "quadratic", **kw) -> dict:
    return {"alg": alg, "part": part, "problem": problem, "kw": kw}


def _algorithm1(thorough: bool):
    # exact elastic-net solve (eq. (4)): threshold, the printed weights n_k/n without normalisation, entropy
    yield _inst("fedprox", "full", prox=0.5, l1=0.3, threshold=0.1)
    yield _inst("fedprox", "subset2", prox=0.5, l1=0.3, threshold=0.1, normalize="all", metrics=True)
    yield _inst("fedprox", "bernoulli", prox=0.5, l1=0.3, weighting="uniform", normalize="all", server_step=0.8)
    yield _inst("fedprox", "subset2", "logistic", prox=0.5, l1=0.1, threshold=0.05)
    yield _inst("fedprox", "subset2", l1=0.3, threshold=0.1)  # the default lambda2 = 1
    # K local steps: the sign sub-gradient and ISTA, with a stopping tolerance and with local SGD
    yield _inst("fedprox", "subset2", solver="gd", l1_mode="subgradient", prox=0.5, l1=0.3, local_steps=3,
                local_step=0.1, threshold=0.1)
    yield _inst("fedprox", "bernoulli", solver="gd", l1_mode="proximal", prox=0.5, l1=0.3, local_steps=6,
                local_step=0.1, local_tol=2.0, metrics=True)
    yield _inst("fedprox", "bernoulli", "noisy", solver="gd", l1_mode="subgradient", prox=0.5, l1=0.3,
                local_steps=3, local_step=0.1, stochastic=True)
    yield _inst("fedprox", "subset2", "logistic", solver="gd", l1_mode="proximal", prox=0.5, l1=0.1,
                local_steps=3, stochastic=True, threshold=0.05)


def _algorithm2(thorough: bool):
    yield _inst("scaffold", "full", option="II", prox=0.3, l1=0.3, local_steps=3, local_step=0.1, threshold=0.05)
    yield _inst("scaffold", "subset2", option="II", prox=0.3, l1=0.3, local_steps=3, local_step=0.1,
                threshold=0.05, server_step=0.7, metrics=True)
    yield _inst("scaffold", "bernoulli", option="II", l1=0.3, l1_mode="proximal", local_steps=3)
    yield _inst("scaffold", "subset2", option="I", prox=0.3, l1=0.3, local_steps=3, local_step=0.1,
                threshold=0.05)
    yield _inst("scaffold", "bernoulli", "noisy", option="I", prox=0.3, l1=0.3, local_steps=3, local_step=0.1,
                stochastic=True, threshold=0.05)
    yield _inst("scaffold", "subset2", "logistic", option="II", prox=0.3, l1=0.1, l1_mode="proximal",
                local_steps=3, stochastic=True, metrics=True, threshold=0.05)
    yield _inst("scaffold", "subset2", option="II", prox=0.3, l1=0.3, local_step=0.05)  # the default B = 10 steps


def _algorithm3(thorough: bool):
    # exact solve of eq. (10): the printed sign and the KKT sub-gradient, thresholds, both uploads
    yield _inst("feddyn", "full", alpha=0.8, l1=0.3, threshold=0.1)
    yield _inst("feddyn", "subset2", alpha=0.8, l1=0.3, threshold=0.1, metrics=True)
    yield _inst("feddyn", "bernoulli", alpha=0.8, l1=0.3, sign_at_zero="kkt", upload="model")
    yield _inst("feddyn", "subset2", "logistic", alpha=0.8, l1=0.05, sign_at_zero="kkt", threshold=0.03)
    # K local steps: ISTA and the sign sub-gradient, local SGD
    yield _inst("feddyn", "bernoulli", alpha=0.8, l1=0.3, threshold=0.1, solver="gd", l1_mode="proximal",
                local_steps=3, local_step=0.1, metrics=True)
    yield _inst("feddyn", "subset2", alpha=0.8, l1=0.3, solver="gd", l1_mode="subgradient", local_steps=3,
                sign_at_zero="kkt")
    yield _inst("feddyn", "subset2", "noisy", alpha=0.8, l1=0.3, threshold=0.1, solver="gd",
                l1_mode="proximal", local_steps=3, local_step=0.1, stochastic=True, upload="model")


_STATEMENT = ("R = 6 rounds of fedtheory's {cls} with lambda1 > 0 (FedElasticNet {alg}), each from the state the "
              "previous round returned and with its own draws, equal {eqs} transcribed client by client "
              "(fedtheory/references/classic.py, fedtheory/references/fedelasticnet.py) in the state and every "
              "logged quantity (non-zeros and bits of the thresholded uploads, entropy of the transmitted matrix, "
              "gradient evaluations) to 1e-9 relative, on {paths}, each under partial participation")


@claim(cites=("Algorithm 1",), id="fedelasticnet.algorithm1.reference_run", paper=PAPER,
       reference="lines 3-8, eq. (4); the epsilon-threshold of Section 3",
       statement=_STATEMENT.format(cls="FedProx", alg="Algorithm 1", eqs="Algorithm 1's lines 3-8 and eq. (4)",
                                   paths="the exact local solve and K sub-gradient or ISTA steps (with a stopping "
                                         "tolerance and local SGD), thresholds, the weights n_k/n normalised over "
                                         "the participants or not, uniform weights, a server step"),
       kind="identity", instances=_algorithm1, runs=("fedprox",))
def check_algorithm1_reference_run(inst: dict) -> Evidence:
    return run_instance(inst)


@claim(cites=("Algorithm 2",), id="fedelasticnet.algorithm2.reference_run", paper=PAPER,
       reference="lines 5-14, eqs. (5)-(7); the epsilon-threshold of Section 3",
       statement=_STATEMENT.format(cls="SCAFFOLD", alg="Algorithm 2", eqs="Algorithm 2's lines 5-14 and eqs. "
                                   "(5)-(7)", paths="K sub-gradient (eq. (7)) or ISTA steps, control variates of "
                                   "options I and II, local SGD, thresholds, a server step"),
       kind="identity", instances=_algorithm2, runs=("scaffold",))
def check_algorithm2_reference_run(inst: dict) -> Evidence:
    return run_instance(inst)


@claim(cites=("Algorithm 3",), id="fedelasticnet.algorithm3.reference_run", paper=PAPER,
       reference="lines 3-13, eqs. (8)-(12); the epsilon-threshold of Section 3",
       statement=_STATEMENT.format(cls="FedDyn", alg="Algorithm 3", eqs="Algorithm 3's lines 3-13 and eqs. "
                                   "(8)-(12)", paths="the exact local solve of eq. (10) and K ISTA or sub-gradient "
                                   "steps, the printed sign (sign(0) = 0) and the KKT sub-gradient in eq. (11), "
                                   "uploads of Delta or of the model, local SGD, thresholds"),
       kind="identity", instances=_algorithm3, runs=("feddyn",))
def check_algorithm3_reference_run(inst: dict) -> Evidence:
    return run_instance(inst)
