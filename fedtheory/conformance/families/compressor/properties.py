"""Compressor properties (Alistarh et al. 2017, QSGD, Lemma 3.1; Dorfman et al. 2023, Assumption 3.3): unbiased,
the declared variance constant omega, and bits a uniquely decodable code can carry (Kraft).

A compressor is any object with ``compress(x, rng) -> x_hat`` or ``(x_hat, bits)``, ``omega`` (a number or a
callable of d) and optionally ``unbiased`` (:mod:`fedtheory.conformance.contract`). The three properties are
Monte Carlo tests on the same ``MC_DRAWS`` compressions of each case, with a one-sided z <= ``Z``.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from hypothesis import strategies as st

from ...contract import call_compress, declared_omega
from ...kit import Outcome, not_applicable, outcome
from ...tolerances import Z_MONTE_CARLO
from ..registry import prop

__all__ = ["HYPER", "MC_DRAWS", "Z"]

HYPER: Mapping[str, Any] = {}


@st.composite
def _vectors(draw):
    d = draw(st.one_of(st.integers(1, 8), st.integers(1, 50)))
    kind = draw(st.sampled_from(["gauss", "sparse", "spread"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    x = rng.standard_normal(d)
    if kind == "sparse":
        x[rng.random(d) < 0.7] = 0.0
        x[rng.integers(d)] = rng.standard_normal() + 1.0
    elif kind == "spread":
        x *= 10.0 ** rng.uniform(-3, 3, size=d)
    return {"d": d, "x": x.tolist(), "scale": draw(st.sampled_from([1e-3, 1.0, 1e3])), "mc_seed": 0}


def _cases(hyper: Mapping[str, Any]) -> st.SearchStrategy:
    return _vectors()


MC_DRAWS = 4000
#: The one Monte Carlo rule of the ledger and the kit (fedtheory/montecarlo.py).
Z = Z_MONTE_CARLO


_DRAW_CACHE: dict[tuple[int, str], tuple] = {}


def _draws(comp, case):
    """N compressions of x with a fixed seed, cached per (compressor, case): the three compressor properties
    draw the same cases (derandomized hypothesis), so each case is sampled once."""
    key = (id(comp), repr(sorted(case.items())))
    if key not in _DRAW_CACHE:
        if len(_DRAW_CACHE) > 64:
            _DRAW_CACHE.clear()
        x = np.asarray(case["x"]) * case["scale"]
        rng = np.random.default_rng(case["mc_seed"])
        out = [call_compress(comp, x, rng) for _ in range(MC_DRAWS)]
        _DRAW_CACHE[key] = (comp, x, np.stack([o[0] for o in out]), [o[1] for o in out])
    return _DRAW_CACHE[key][1:]


@prop(id="compressor.unbiased", family="compressor", reference="Alistarh et al. 2017 (QSGD), Lemma 3.1 (i)",
      statement=f"E C(x) = x (Monte Carlo, {MC_DRAWS} draws, z <= {Z:g})", cases=_cases)
def unbiased(comp, case, hyper, rtol) -> Outcome:
    """E C(x) = x: z = ||mean - x|| / sqrt(V / N) <= Z = 5 with V = max(sample trace of Cov, omega ||x||^2).

    E||mean - x||^2 = tr Cov / N, and tr Cov <= omega ||x||^2 for a compressor meeting its declaration; taking
    the max with the declared bound keeps the test valid when a rare outcome (probability ~1e-5, e.g. QSGD's
    largest coordinate rounding down) never shows in N draws and the sample variance is ~0. The worst case of
    the vector statistic is d = 1 (a normal tail), so a correct compressor fails with probability ~6e-7."""
    if not getattr(comp, "unbiased", True):
        return not_applicable("declared biased")
    x, X, _ = _draws(comp, case)
    mean = X.mean(axis=0)
    V = max(float(np.sum(X.var(axis=0, ddof=1))), declared_omega(comp, x.size) * float(x @ x))
    err = float(np.linalg.norm(mean - x)) - 1e-12 * float(np.linalg.norm(x))  # rounding of the mean
    z = max(err, 0.0) / np.sqrt(V / MC_DRAWS) if V > 0 else (0.0 if err <= 0 else float("inf"))
    note = ""
    if z > Z:
        ratio = float(mean @ x / (x @ x)) if x @ x > 0 else float("nan")
        close = np.linalg.norm(mean - ratio * x) <= 0.05 * np.linalg.norm(x)
        note = f"biased: E C(x) ~ {ratio:.3g} x" if close else "biased"
    return outcome(z <= Z, z, Z, note)


@prop(id="compressor.variance", family="compressor",
      reference="Alistarh et al. 2017, Lemma 3.1 (ii); Dorfman et al. 2023, Assumption 3.3",
      statement=f"E||C(x) - x||^2 <= omega ||x||^2 (one-sided, z <= {Z:g})", cases=_cases)
def variance(comp, case, hyper, rtol) -> Outcome:
    """E||C(x) - x||^2 <= omega ||x||^2 (Alistarh et al. 2017, Lemma 3.1 (ii)), one-sided, Z = 5."""
    if not getattr(comp, "unbiased", True):
        return not_applicable("declared biased (omega is for unbiased compressors)")
    x, X, _ = _draws(comp, case)
    omega = declared_omega(comp, x.size)
    e = np.sum((X - x) ** 2, axis=1)
    bound = omega * float(x @ x)
    excess = (e.mean() - bound) / max(e.std(ddof=1) / np.sqrt(MC_DRAWS), 1e-12 * max(bound, 1e-300))
    ratio = float(e.mean() / bound) if bound > 0 else (0.0 if e.mean() == 0 else float("inf"))
    return outcome(excess <= Z, ratio, 1.0, "" if excess <= Z else f"declared omega too small: measured "
                                                                   f"E||C(x)-x||^2/||x||^2 = {e.mean() / (x @ x):.4g} "
                                                                   f"> omega = {omega:.4g}")


@prop(id="compressor.bits", family="compressor", reference="Kraft inequality (any uniquely decodable code)",
      statement="sum over distinct outputs of 2^-bits <= 1", cases=_cases)
def bits(comp, case, hyper, rtol) -> Outcome:
    """Kraft: a uniquely decodable code has sum over distinct messages of 2^-bits <= 1 (the declared bits
    cannot describe more distinct outputs than they can encode)."""
    x, X, bits = _draws(comp, case)
    if bits[0] is None:
        return not_applicable("compress does not report bits")
    seen: dict[bytes, float] = {}
    for row, b in zip(X, bits):
        seen.setdefault(row.tobytes(), b)
    kraft = float(sum(2.0 ** -b for b in seen.values()))
    return outcome(kraft <= 1.0, kraft, 1.0, "" if kraft <= 1.0 else
                   f"{len(seen)} distinct outputs cannot be encoded in the declared {min(seen.values()):.3g} bits")


