"""Figure 6 (Dorfman et al., DoCoFL, ICML 2023, App. D): ECUQ against ECQ (Chou, Lookabaugh & Gray 1989) and
ECK-Means on its own synthetic data, LogNormal(0,1), N(0,1) and N(1,0.1) vectors, against d at b = 2 and against
b = 2..5 at d = 2^12. The comparators are :mod:`fedtheory.compressors.entropy_constrained`; all three meet the
same budget, the empirical entropy of the assignment H <= b bits per coordinate.

Every comparison is on the mean over seeds of NMSE = ||x_hat - x||^2 / ||x||^2 (each seed draws a fresh vector;
the seeds differ between distributions, because the three quantizers are affine-equivariant and N(1,0.1) drawn
from the same seed as N(0,1) would give the same ratios). Encoding times are measured and recorded in the
details, never asserted (they depend on the machine and on this NumPy implementation).
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from ...compressors.ecuq import ECUQ
from ...compressors.entropy_constrained import eck_means, ecq
from ..registry import Evidence, claim

__all__ = ["ECKMEANS_MARGIN", "ECQ_FACTOR", "ecuq_nmse", "figure6_table"]

#: ECUQ must beat ECK-Means by 10%: mean NMSE(ECUQ) <= 0.9 mean NMSE(ECK-Means). "Better" is read as better than
#: a tie: at b = 2 on the normals, where the two quantizers tie (single-seed ratios 0.68-1.24), the 3-seed mean
#: ratios are 0.90-1.07, so a margin of this size separates a tie from an improvement; that part is measured
#: (docofl.appendix.figure6.eck_means_b2), not asserted. The asserted settings measure mean ratios <= 0.78.
ECKMEANS_MARGIN = 0.9
#: "Competitive with ECQ": mean NMSE(ECUQ) <= 2 mean NMSE(ECQ), i.e. within half a bit per coordinate at the
#: high-rate slope (NMSE ~ 4^{-b}, so half a bit is a factor 4^{1/2} = 2), fixed before measuring. Measured: ECQ is
#: a little better, mean ratios 0.98-1.11 at b >= 3 and up to 1.41 at b = 2 (N(1,0.1), d = 2^8), where ECUQ's
#: integer number of uniform levels leaves budget unused (H ~ 1.85). A uniform quantizer with 2^b levels and no
#: entropy search exceeds the factor on LogNormal data (tests/claims/docofl/test_figure6.py).
ECQ_FACTOR = 2.0

_DISTS = ("lognormal", "normal", "normal(1,0.1)")


def _data(dist: str, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([_DISTS.index(dist), seed])
    if dist == "lognormal":
        return rng.lognormal(0.0, 1.0, size=d)
    if dist == "normal":
        return rng.normal(0.0, 1.0, size=d)
    return rng.normal(1.0, 0.1, size=d)


def ecuq_nmse(x: np.ndarray, b: float) -> float:
    """NMSE of ECUQ (Algorithm 4) at budget b: the quantizer under test of Figure 6."""
    return float(np.sum((ECUQ(b=b).search(x[None, :]).x_hat[0] - x) ** 2) / np.sum(x * x))


def _comparator(name: str) -> Callable[[np.ndarray, float], float]:
    fn = {"eck_means": eck_means, "ecq": ecq}[name]
    return lambda x, b: float(np.sum((fn(x, b).x_hat - x) ** 2) / np.sum(x * x))


def figure6_table(dist: str, settings, seeds: int, reference: str,
                  candidate: Callable[[np.ndarray, float], float] = ecuq_nmse) -> list[dict]:
    """Per setting (d, b): the mean over ``seeds`` vectors of NMSE(candidate) and NMSE(reference) (``"eck_means"``
    or ``"ecq"``), their ratio, the per-seed ratios and the encoding times in seconds (measured, not asserted)."""
    ref = _comparator(reference)
    rows = []
    for d, b in settings:
        cand, other, t_cand, t_ref = [], [], 0.0, 0.0
        for s in range(seeds):
            x = _data(dist, d, s)
            t0 = time.perf_counter()
            cand.append(candidate(x, b))
            t1 = time.perf_counter()
            other.append(ref(x, b))
            t_ref += time.perf_counter() - t1
            t_cand += t1 - t0
        rows.append({"d": d, "b": b, "candidate": float(np.mean(cand)), reference: float(np.mean(other)),
                     "ratio": float(np.mean(cand) / np.mean(other)),
                     "per_seed": [round(a / o, 4) for a, o in zip(cand, other)],
                     "seconds": {"candidate": t_cand / seeds, reference: t_ref / seeds}})
    return rows


def _settings(thorough: bool, b2_ds=(2**8, 2**10, 2**12), bs=(3.0, 4.0, 5.0)) -> list[tuple[int, float]]:
    ds = (2**6, 2**8, 2**10, 2**12) if thorough else b2_ds
    return [(d, 2.0) for d in ds] + [(2**12, b) for b in bs]


def _eckm_instances(thorough: bool):
    for dist in _DISTS:
        settings = _settings(thorough)
        if dist != "lognormal":      # b = 2 on the normals: a tie, measured by the claim below
            settings = [(d, b) for d, b in settings if b != 2.0]
        yield {"dist": dist, "settings": settings, "seeds": 8 if thorough else 3}


def _evidence(inst: dict, rows: list[dict], bound: float, reference: str) -> Evidence:
    worst = max(r["ratio"] for r in rows)
    return Evidence(f"{inst['dist']} (d, b) in {[(r['d'], r['b']) for r in rows]}, {inst['seeds']} seeds", worst,
                    bound, worst <= bound, tightness=worst / bound,
                    details={"rows": rows, "reference": reference})


@claim(cites=("Figure 6",),
       id="docofl.appendix.figure6.eck_means", paper="docofl",
       reference="NMSE panels; d <= 2^12 as in the paper, 3 seeds (8 in the thorough run)",
       statement="ECUQ has a lower NMSE than ECK-Means at the same entropy budget: mean NMSE(ECUQ) <= 0.9 mean "
                 "NMSE(ECK-Means) over seeds on LogNormal(0,1) (b = 2 with d = 2^8..2^12, and b = 3, 4, 5 at "
                 "d = 2^12) and on N(0,1) and N(1,0.1) (b = 3, 4, 5 at d = 2^12)",
       narrower="b = 2 on N(0,1) and N(1,0.1) is left out: there ECUQ and ECK-Means come close to a tie (single "
                "seeds spread 0.68-1.24), so it is only measured, by docofl.appendix.figure6.eck_means_b2",
       kind="qualitative", instances=_eckm_instances)
def check_figure6_eck_means(inst: dict) -> Evidence:
    rows = figure6_table(inst["dist"], inst["settings"], inst["seeds"], "eck_means")
    return _evidence(inst, rows, ECKMEANS_MARGIN, "eck_means")


def _b2_instances(thorough: bool):
    for dist in _DISTS[1:]:
        yield {"dist": dist, "settings": [s for s in _settings(thorough) if s[1] == 2.0],
               "seeds": 8 if thorough else 3}


@claim(cites=("Figure 6",),
       id="docofl.appendix.figure6.eck_means_b2", paper="docofl", reference="NMSE against d at b = 2",
       statement="on N(0,1) and N(1,0.1) at b = 2 (d = 2^8..2^12) ECUQ has a lower NMSE than ECK-Means: the mean "
                 "NMSE ratio ECUQ / ECK-Means over seeds is at most 1 (measured, not asserted; its verdict is the "
                 "shape test)",
       kind="qualitative", expected="exploratory", instances=_b2_instances)
def check_figure6_eck_means_b2(inst: dict) -> Evidence:
    rows = figure6_table(inst["dist"], inst["settings"], inst["seeds"], "eck_means")
    return _evidence(inst, rows, 1.0, "eck_means")


def _ecq_instances(thorough: bool):
    for dist in _DISTS:
        yield {"dist": dist, "settings": _settings(thorough, b2_ds=(2**8, 2**12)), "seeds": 8 if thorough else 2}


@claim(cites=("Figure 6",),
       id="docofl.appendix.figure6.ecq", paper="docofl",
       reference="NMSE panels; ECQ by a refined grid over its Lagrange multiplier; timing measured, not asserted",
       statement="ECUQ is competitive with ECQ at the same entropy budget: mean NMSE(ECUQ) <= 2 mean NMSE(ECQ) "
                 "(half a bit per coordinate at the high-rate slope) on LogNormal(0,1), N(0,1) and N(1,0.1) at "
                 "b = 2 (d = 2^8, 2^12) and b = 3, 4, 5 (d = 2^12)",
       narrower="against fedtheory's ECQ (Chou et al.'s iteration from a uniform codebook, the best over a "
                "lambda grid refined by bisection: a local optimum, not the optimal entropy-constrained quantizer), "
                "2 seeds; and the ECK-Means half at b = 2 on N(0,1) and N(1,0.1) is measured, not asserted "
                "(docofl.appendix.figure6.eck_means_b2)",
       kind="qualitative", instances=_ecq_instances)
def check_figure6_ecq(inst: dict) -> Evidence:
    rows = figure6_table(inst["dist"], inst["settings"], inst["seeds"], "ecq")
    return _evidence(inst, rows, ECQ_FACTOR, "ecq")
