"""Unbiased compression sampled (DoCoFL, Section 2.1): the random compress() of every unbiased compressor averages
to its input (the exact-law claims enumerate outcomes and never call compress())."""
from __future__ import annotations

import math

import numpy as np

from ...compressors.quantizers import QSGD, StochasticUniformQuantizer
from ...compressors.sb_quantizer import SBQuantizer
from ...compressors.sparsifiers import RandK
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

