"""OFedIQ's quantizer constant on uneven blocks (Definition 2): sigma_q^2 uses the largest block when the number
of blocks b does not divide the dimension D."""
from __future__ import annotations

import math

import numpy as np

from ...algorithms.ofediq import FedOGD, OFedAvg, OFedIQ
from ...compressors.sb_quantizer import SBQuantizer
from ...problems import quadratic
from ...problems.online import online_logistic, online_ridge
from ...references import certify_run
from ..registry import Evidence, claim
from ..tolerances import EXACT_REL, FEW_OPS_REL

__all__: list[str] = []


def _sb_instances(thorough: bool):
    for D, s, b in ((5, 1, 2), (7, 3, 2), (10, 4, 3), (9, 2, 4)):  # D not divisible by b: ceil != floor
        yield {"D": D, "s": s, "b": b}


@claim(cites=("Definition 2",),
       id="ofediq.quantizer.sigma2_uneven_blocks", paper="ofediq",
       statement="the SB quantizer's sigma_q^2 uses the largest block, ceil(D/b), when b does not divide D; and "
                 "its exact variance on a vector spread over the largest block stays below sigma_q^2 ||u||^2",
       kind="identity", instances=_sb_instances)
def check_sb_sigma2_uneven(inst: dict) -> Evidence:
    D, s, b = inst["D"], inst["s"], inst["b"]
    n_big = -(-D // b)
    want = min(n_big / s**2, math.sqrt(n_big) / s)
    q = SBQuantizer(s=s, b=b)
    got = q.omega(D)
    u = np.zeros((1, D))
    u[0, : n_big] = 1.0  # the first block is a largest one (blocks of size ceil(D/b) come first)
    var = float(q.variance(u)[0]) / float(np.sum(u * u))
    ok = abs(got - want) <= FEW_OPS_REL * want and var <= got * (1 + EXACT_REL)
    return Evidence(f"D={D} s={s} b={b}", got, want, ok, tightness=var / got if got > 0 else None,
                    details={"variance_ratio": var})



# ---------------------------------------------------------------------------------------------------------
# Algorithms 1 and 2 against their transcription (fedtheory/references/ofediq.py)
# ---------------------------------------------------------------------------------------------------------

#: Time steps of each run certified, every one from the implementation's own state (covers two periods of L = 4).
REFERENCE_ROUNDS = 9


def _reference_instances(thorough: bool):
    """FedOGD, OFedAvg (one rate, per-client rates) and OFedIQ (periods 1-4, common and per-client sampling rates,
    no quantizer, QSGD (b = 1), even and uneven blocks, the default step of the theorems) on online ridge and
    logistic streams and on a static problem (the comparator (t + 1) K f*)."""
    for stream in ("ridge", "logistic", "static"):
        yield dict(alg="fedogd", kw=dict(), stream=stream)
        yield dict(alg="ofedavg", kw=dict(p=(0.2, 0.5, 0.9, 1.0, 0.3, 0.7)), stream=stream)
        yield dict(alg="ofediq", kw=dict(p=0.5, period=3, s=2, b=2), stream=stream)
        yield dict(alg="ofediq", kw=dict(p=(0.3, 0.6, 1.0, 0.8, 0.5, 0.4), s=1, b=3), stream=stream)
    yield dict(alg="ofedavg", kw=dict(eta=0.03, p=0.4), stream="ridge")
    yield dict(alg="ofediq", kw=dict(eta=0.02, period=2, s=5), stream="ridge")
    yield dict(alg="ofediq", kw=dict(period=4), stream="logistic")
    # OFedAvg with its class defaults (p = 0.5, half the step bound) and FedOGD at a step of its own
    yield dict(alg="ofedavg", kw=dict(), stream="logistic")
    yield dict(alg="fedogd", kw=dict(eta=0.04), stream="ridge")


@claim(cites=("Algorithm 1", "Algorithm 2", "Definition 2"),
       id="ofediq.rounds.reference_identity", paper="ofediq",
       statement=f"{REFERENCE_ROUNDS} time steps of fedtheory's FedOGD, OFedAvg and OFedIQ, each from its own state, "
                 "equal eqs. (5)-(9) transcribed client by client with the (s, b)-quantizer of Definition 2 (the "
                 "draw's coins and uniforms): the model, the local iterates and sums, and the logged loss, "
                 "cumulative loss, regret (eq. 3, against the exact prefix comparator), bits (Table I) and "
                 "participants, to 1e-7 relative, with partial participation and inverse-probability weights",
       kind="identity", instances=_reference_instances, runs=("fedogd", "ofedavg", "ofediq"))
def check_reference_identity(inst: dict) -> Evidence:
    if inst["stream"] == "static":
        problem = quadratic(6, 5, mu=0.5, L=4.0, zeta2=1.0, seed=1)
    else:
        make = online_ridge if inst["stream"] == "ridge" else online_logistic
        problem = make(6, 30, 5, heterogeneity=1.0, drift=0.5, seed=2)
    alg = {"fedogd": FedOGD, "ofedavg": OFedAvg, "ofediq": OFedIQ}[inst["alg"]](**inst["kw"])
    done, mismatch = certify_run(alg, problem, np.linspace(-0.3, 0.5, problem.dim), REFERENCE_ROUNDS, seed=0)
    label = f"{inst['alg']}({', '.join(f'{k}={v}' for k, v in inst['kw'].items())}) on {inst['stream']}"
    return Evidence(label, float(mismatch is not None), 0.0, mismatch is None,
                    details={"rounds_certified": done, "difference": mismatch.sentence() if mismatch else ""})
