"""OFedIQ, Definition 2 (eqs. (12)-(13)): the (s, b)-quantizer is unbiased, its variance is the closed form and
below sigma_q^2 ||u||^2, and its outputs and bit count are as printed. Expectations are exact where the draws
can be enumerated and Monte Carlo within Z_MONTE_CARLO standard errors otherwise.
"""
from __future__ import annotations

import math

import numpy as np

from ...compressors.sb_quantizer import SBQuantizer, sb_bits
from ..patterns import relative_error
from ..registry import Evidence, claim
from ..space import InstanceSpace, Param
from ..tolerances import EXACT_REL, ITERATE_REL, ONE_ROUNDING_REL, mc_slack

__all__ = []

PAPER = "ofediq"


# ---------------------------------------------------------------------------------------------------------
# Definition 2: unbiasedness, variance, support and bits of the (s, b)-quantizer
# ---------------------------------------------------------------------------------------------------------

def _quantizer_instances(thorough: bool):
    rng = np.random.default_rng(0)
    for D in (1, 5, 37, 1000):
        for s in (1, 2, 3, 17):
            for b in sorted({1, 3, max(1, D // 10), D}):
                if b <= D and (thorough or D <= 37 or (s == 17 and b in (1, 100))):
                    u = rng.standard_normal(D) * rng.exponential(size=D)
                    yield {"D": D, "s": s, "b": b, "u": u}
    # one block (b = 1) of a flat vector: r_i = 1/sqrt(D) and, for s <= sqrt(D), E||Q(u) - u||^2 = sum_i r_i (1/s -
    # r_i) ||u||^2 = (sqrt(D)/s - 1) ||u||^2 against sigma_q^2 = sqrt(D)/s: 0.9 of the bound at D = 100, s = 1
    # (a variance off by a factor 1.12 breaks it)
    yield {"D": 100, "s": 1, "b": 1, "u": np.full(100, 0.1)}


@claim(cites=("Definition 2",),
       id="ofediq.quantizer.unbiased", paper=PAPER, reference="eq. (12)",
       statement="E[Q_{s,b}(u)] = u: analytically E[xi_i] = r_i for every coordinate, and the Monte Carlo mean "
                 "is within 5 SE per coordinate; Q(0) = 0 and b = D is lossless",
       kind="identity", instances=_quantizer_instances)
def check_quantizer_unbiased(inst: dict) -> Evidence:
    q = SBQuantizer(inst["s"], inst["b"])
    u = inst["u"][None]
    norms, r, m, p_up = q.decompose(u)
    mean_exact = norms * np.sign(u) * (m + p_up) / q.s
    err = relative_error(mean_exact, u)
    draws = 2000 if u.shape[1] >= 1000 else 10000
    rng = np.random.default_rng(1)
    Y = q.compress(np.repeat(u, draws, axis=0), rng)[0]
    # exact standard error of the two-point xi (an empirical SE is 0 when a rare round-up never occurs)
    se = (norms * np.sqrt(p_up * (1 - p_up)) / q.s)[0] / math.sqrt(draws)
    z = np.abs(Y.mean(axis=0) - u[0])
    # the normal approximation behind a z-test needs enough expected round-ups and round-downs per coordinate
    tested = (draws * p_up * (1 - p_up))[0] >= 10
    mc_ok = bool(np.all(z[tested] <= mc_slack(se[tested])))
    z = np.where(tested, z, 0.0)
    zero_ok = bool(np.all(q.compress(np.zeros_like(u), rng)[0] == 0.0))
    lossless = SBQuantizer(q.s, u.shape[1]).compress(u, rng)[0]
    lossless_ok = bool(np.max(np.abs(lossless - u)) <= ONE_ROUNDING_REL * np.max(np.abs(u)))
    ok = err <= EXACT_REL and mc_ok and zero_ok and lossless_ok
    return Evidence(f"D={u.shape[1]} s={q.s} b={q.b}", err, EXACT_REL, ok,
                    details={"max_z": float(np.max(np.where(se > 0, z / np.where(se > 0, se, 1.0), 0.0))),
                             "coordinates_z_tested": int(tested.sum()), "zero_ok": zero_ok,
                             "lossless_b_eq_D": lossless_ok})


def _quantizer_build(point: dict) -> dict:
    """A point of the quantizer's class as the check's instance: an explicit vector ``u`` (the default points,
    stored as lists so a reported point stays JSON), or one drawn from ``seed``: a heavy-tailed random part
    (|N(0,1)| x Exp(1)^tail) mixed with a flat part of weight ``flat`` (flat vectors use the sigma_q^2 term fully,
    cf. ``_second_moment_instances``)."""
    if "u" in point:
        return {"D": int(point["D"]), "s": int(point["s"]), "b": int(point["b"]),
                "u": np.asarray(point["u"], dtype=np.float64)}
    D = int(point["D"])
    rng = np.random.default_rng(point["seed"])
    u = rng.standard_normal(D) * rng.exponential(size=D) ** point["tail"]
    u = (1 - point["flat"]) * u / max(float(np.linalg.norm(u)), 1e-300) + point["flat"] * np.ones(D) / math.sqrt(D)
    return {"D": D, "s": int(point["s"]), "b": int(point["b"]), "u": u}


def _quantizer_points(thorough: bool) -> list[dict]:
    return [{**inst, "u": inst["u"].tolist()} for inst in _quantizer_instances(thorough)]


_QUANTIZER_DEFAULTS = _quantizer_points(False)


_QUANTIZER_KEYS = {(pt["D"], pt["s"], pt["b"]) for pt in _QUANTIZER_DEFAULTS}


#: Q_{s,b}'s class: any u in R^D, any s >= 1 and block size b <= D (Definition 2). The default points are
#: ``_quantizer_instances(False)`` (same vectors); the thorough ones add the (D, s, b) that run adds (their
#: vectors come from the thorough run's draw sequence).
_QUANTIZER_SPACE = InstanceSpace(
    params=(Param("D", 1, 1000, log=True, integer=True), Param("s", 1, 20, integer=True),
            Param("b", 1, 1000, log=True, integer=True), Param("tail", 0.0, 2.0), Param("flat", 0.0, 1.0)),
    fixed={"seed": 0}, build=_quantizer_build, regime=lambda pt: int(pt["b"]) <= int(pt["D"]),
    defaults=tuple(_QUANTIZER_DEFAULTS),
    thorough=tuple(pt for pt in _quantizer_points(True) if (pt["D"], pt["s"], pt["b"]) not in _QUANTIZER_KEYS))


@claim(id="ofediq.quantizer.variance", paper=PAPER, reference="Section 3.3 (variance of Q_{s,b})",
       statement="E||Q(u) - u||^2 equals sum_l ||u_I||^2 sum_i (r_i - m_i/s)((m_i+1)/s - r_i) (Monte Carlo within "
                 "5 SE) and is <= sigma_q^2 ||u||^2, sigma_q^2 = min(ceil(D/b)/s^2, sqrt(ceil(D/b))/s); one-hot "
                 "u has zero error",
       kind="bound", space=_QUANTIZER_SPACE, cost="slow")  # up to ~3 s a point: 10^4 Monte Carlo draws of D < 1000
def check_quantizer_variance(inst: dict) -> Evidence:
    q = SBQuantizer(inst["s"], inst["b"])
    u = inst["u"][None]
    D = u.shape[1]
    exact = float(q.variance(u)[0])
    bound = q.omega(D) * float(np.sum(u * u))
    draws = 2000 if D >= 1000 else 10000
    rng = np.random.default_rng(2)
    err2 = ((q.compress(np.repeat(u, draws, axis=0), rng)[0] - u) ** 2).sum(axis=1)
    se = err2.std() / math.sqrt(draws)
    mc_ok = abs(err2.mean() - exact) <= mc_slack(se) + EXACT_REL * bound
    onehot = np.zeros((1, D))
    onehot[0, D // 2] = 3.0
    onehot_ok = float(q.variance(onehot)[0]) == 0.0
    ok = exact <= bound * (1 + EXACT_REL) and mc_ok and onehot_ok
    return Evidence(f"D={D} s={q.s} b={q.b}", exact, bound, ok, tightness=exact / bound if bound > 0 else None,
                    details={"mc_mean": float(err2.mean()), "mc_se": float(se), "onehot_zero": onehot_ok})


@claim(cites=("Definition 2",),
       id="ofediq.quantizer.support_bits", paper=PAPER, reference="eq. (13)",
       statement="every output entry is ||u_I|| sign(u_i) j/s with j in {m_i, m_i+1} within {0..s}, and "
                 "q = 32b + D(1 + log2(s+1)) (D=34826, s=3, b=777: 129,342 bits)",
       kind="identity", instances=_quantizer_instances)
def check_quantizer_support(inst: dict) -> Evidence:
    q = SBQuantizer(inst["s"], inst["b"])
    u = inst["u"][None]
    norms, _, m, _ = q.decompose(u)
    Y, bits = q.compress(np.repeat(u, 200, axis=0), np.random.default_rng(3))
    with np.errstate(invalid="ignore", divide="ignore"):
        j = np.where(norms > 0, np.abs(Y) * q.s / np.where(norms > 0, norms, 1.0), 0.0)
    j_int = np.rint(j)
    level_ok = bool(np.all(np.abs(j - j_int) <= ITERATE_REL) and np.all((j_int == m) | (j_int == m + 1))
                    and np.all((j_int >= 0) & (j_int <= q.s)))
    sign_ok = bool(np.all((Y == 0) | (np.sign(Y) == np.sign(u))))
    D = u.shape[1]
    want = 32 * q.b + D * (1 + math.log2(q.s + 1))
    bits_ok = bool(np.all(bits == want)) and sb_bits(34826, 3, 777) == 129342.0
    return Evidence(f"D={D} s={q.s} b={q.b}", float(bits[0]), want, level_ok and sign_ok and bits_ok,
                    details={"levels_ok": level_ok, "signs_ok": sign_ok})
