"""OFedIQ's quantizer constant on uneven blocks (Definition 2): sigma_q^2 uses the largest block when the number
of blocks b does not divide the dimension D."""
from __future__ import annotations

import math

import numpy as np

from ...compressors.sb_quantizer import SBQuantizer
from ..registry import Evidence, claim
from ..tolerances import EXACT_REL

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
    ok = abs(got - want) <= 1e-15 * want and var <= got * (1 + EXACT_REL)
    return Evidence(f"D={D} s={s} b={b}", got, want, ok, tightness=var / got if got > 0 else None,
                    details={"variance_ratio": var})

