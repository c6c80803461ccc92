"""Unbiased compression sampled (DoCoFL, Section 2.1): the random compress() of every unbiased compressor averages
to its input (the exact-law claims enumerate outcomes and never call compress())."""
from __future__ import annotations

import math

import numpy as np

from ... import compressors
from ...algorithms.docofl import DoCoFL, TwoClassParticipation
from ...compressors.quantizers import QSGD, StochasticUniformQuantizer
from ...compressors.sb_quantizer import SBQuantizer
from ...compressors.sparsifiers import RandK
from ...problems import logistic, quadratic
from ...references import certify_run
from ..registry import Evidence, claim
from ..tolerances import Z_MONTE_CARLO

__all__: list[str] = []


def _unbiased_instances(thorough: bool):
    for comp in (StochasticUniformQuantizer(levels=4), QSGD(s=2), RandK(k=2), SBQuantizer(s=2, b=2)):
        yield comp


@claim(id="docofl.compressors.compress_unbiased", paper="docofl",
       reference="Dorfman et al. 2023 (DoCoFL), Section 2.1 (unbiased compression: E C(x) = x); Alistarh et al. "
                 "2017, Lemma 3.1",
       statement="the random compress() of every unbiased compressor averages to x: each coordinate of the "
                 "mean of 4000 independent compressions is within 5 standard errors of x",
       kind="statistical", instances=_unbiased_instances)
def check_compress_unbiased(comp) -> Evidence:
    # Tests the sampling path itself (the exact-law claims enumerate outcomes and never call compress()).
    x = np.array([0.9, -0.35, 0.1, 0.0, -1.3, 0.55])
    n_draws = 4000
    rng = np.random.default_rng(17)
    out, _bits = comp.compress(np.tile(x, (n_draws, 1)), rng)
    mean, sd = out.mean(axis=0), out.std(axis=0)
    # coordinates sent exactly (a row's max/min on the uniform grid) have sd = 0 and a rounding-level mean
    # error; floor the standard error at 1e-12 of the row's scale so rounding is never read as bias
    se = np.maximum(sd / math.sqrt(n_draws), 1e-12 * float(np.max(np.abs(x))))
    z = float(np.max(np.abs(mean - x) / se))
    return Evidence(type(comp).__name__, z, Z_MONTE_CARLO, z <= Z_MONTE_CARLO, details={"mean": mean})



# ---------------------------------------------------------------------------------------------------------
# Algorithms 1-4 against their transcription (fedtheory/references/docofl.py)
# ---------------------------------------------------------------------------------------------------------

#: Rounds of each run certified, every one from the implementation's own state.
REFERENCE_ROUNDS = 8


def _reference_instances(thorough: bool):
    """Every anchor / correction / uplink compressor of the ledger (ECUQ with Huffman and entropy coding, scaled
    Rademacher per row and per coordinate, QSGD, the (s, b) quantizer, stochastic and nearest-level grids, rand-k,
    top-k, identity, zero), both participation classes with their notification leads, partial and full
    participation, stochastic and exact gradients, the naive baseline and the meta-algorithm, on a quadratic and
    a logistic problem."""
    two = dict(lead_strong=1, lead_weak=3, strong_fraction=0.5)
    yield dict(label="identity (FedAvg/SGD, Cor. 3.5)", problem="quadratic", kw=dict())
    yield dict(label="ECUQ anchor, Rademacher correction, strong lead 1", problem="logistic",
               kw=dict(period=2, queue_size=2, anchor=("ECUQ", dict(b=4.0)),
                       correction=("ScaledRademacher", dict(scale=0.2)), participation=dict(lead_strong=1)))
    yield dict(label="ECUQ/QSGD/uniform, two classes, S < N", problem="quadratic",
               kw=dict(period=2, queue_size=3, anchor=("ECUQ", dict(b=3.0)), correction=("QSGD", dict(s=2)),
                       uplink=("StochasticUniformQuantizer", dict(levels=4)), n_sampled=4, participation=two))
    yield dict(label="ECUQ (entropy coding)/rand-k/(s,b), two classes", problem="logistic",
               kw=dict(period=3, queue_size=3, anchor=("ECUQ", dict(b=1.5, coding="entropy")),
                       correction=("RandK", dict(k=2)), uplink=("SBQuantizer", dict(s=2, b=2)), n_sampled=4,
                       participation=two))
    yield dict(label="per-coordinate Rademacher anchor, top-k correction, exact gradients", problem="quadratic",
               kw=dict(period=1, queue_size=4, anchor=("ScaledRademacher", dict(scale=0.3, per_coordinate=True)),
                       correction=("TopK", dict(k=3)), uplink=("QSGD", dict(s=3)), stochastic=False, n_sampled=4,
                       participation=dict(lead_strong=2, lead_weak=3, strong_fraction=0.25)))
    yield dict(label="nearest-level anchor, zero correction", problem="quadratic",
               kw=dict(period=2, queue_size=2, anchor=("DeterministicUniformQuantizer", dict(levels=8)),
                       correction=("Zero", {}), n_sampled=6))
    yield dict(label="naive baseline (Sec. 3.1), ECUQ", problem="logistic",
               kw=dict(naive=True, anchor=("ECUQ", dict(b=2.0)), n_sampled=4))
    # Alg. 3 in general: exact anchors y = w_{t - tau} whose staleness tau varies by round and by client
    yield dict(label="Alg. 3: exact anchors, staleness varying per client, Rademacher correction", problem="logistic",
               kw=dict(period=3, queue_size=3, correction=("ScaledRademacher", dict(scale=0.5)), n_sampled=4,
                       participation=two))
    yield dict(label="meta-algorithm (Alg. 3), staleness 3", problem="quadratic", meta=True,
               kw=dict(staleness=3, correction=("ScaledRademacher", dict(scale=0.4)), n_sampled=4))


def _compressor(spec):
    if spec is None:
        return compressors.noise.Identity()
    name, kw = spec
    for module in (compressors.noise, compressors.ecuq, compressors.quantizers, compressors.sb_quantizer,
                   compressors.sparsifiers):
        if hasattr(module, name):
            return getattr(module, name)(**kw)
    raise ValueError(f"unknown compressor {name!r}")


def _reference_problem(kind: str):
    if kind == "quadratic":
        return quadratic(8, 6, mu=0.5, L=4.0, zeta2=1.0, seed=1)
    return logistic("synthetic", n_clients=8, dim=5)


@claim(cites=("Algorithm 1", "Algorithm 2", "Algorithm 3", "Algorithm 4"),
       id="docofl.rounds.reference_identity", paper="docofl",
       statement=f"{REFERENCE_ROUNDS} rounds of fedtheory's DoCoFL, each from its own state, equal Algs. 1-2 (and the "
                 "meta-algorithm, Alg. 3) transcribed client by client with the compressors written from their "
                 "definitions (ECUQ from Alg. 4): the model, the anchor queue, and the logged bits, non-zeros and "
                 "estimation diagnostics, to 1e-7 relative, on every compressor, participation class and option",
       kind="identity", instances=_reference_instances, runs=("docofl",))
def check_reference_identity(inst: dict) -> Evidence:
    kw = dict(inst["kw"])
    correction = _compressor(kw.pop("correction", None))
    if inst.get("meta"):
        alg = DoCoFL.meta(step=0.1, correction_compressor=correction, **kw)
    else:
        alg = DoCoFL(anchor_compressor=_compressor(kw.pop("anchor", None)), correction_compressor=correction,
                     uplink_compressor=_compressor(kw.pop("uplink", None)),
                     participation=TwoClassParticipation(**kw.pop("participation", {})), **kw)
    problem = _reference_problem(inst["problem"])
    done, mismatch = certify_run(alg, problem, np.linspace(-0.4, 0.6, problem.dim), REFERENCE_ROUNDS, seed=3)
    return Evidence(f"{inst['label']} ({inst['problem']})", float(mismatch is not None), 0.0, mismatch is None,
                    details={"rounds_certified": done, "difference": mismatch.sentence() if mismatch else ""})
