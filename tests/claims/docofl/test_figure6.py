"""Figure 6's comparisons can fail: ECUQ's roles swapped, or ECUQ without its entropy search, are rejected."""
from __future__ import annotations

import numpy as np

from fedtheory.claims.docofl.figure6 import ECKMEANS_MARGIN, ECQ_FACTOR, ecuq_nmse, figure6_table
from fedtheory.compressors.quantizers import DeterministicUniformQuantizer

SETTINGS = [(2**10, 2.0), (2**10, 4.0)]


def _uniform_without_search(x: np.ndarray, b: float) -> float:
    """A broken ECUQ: 2^b uniform levels on [x_min, x_max], no search for the levels the entropy budget allows."""
    x_hat = DeterministicUniformQuantizer(levels=int(2**b)).compress(x[None, :])[0][0]
    return float(np.sum((x_hat - x) ** 2) / np.sum(x * x))


def test_ecuq_passes_and_swapped_roles_are_rejected():
    rows = figure6_table("lognormal", SETTINGS, 2, "eck_means")
    assert all(r["ratio"] <= ECKMEANS_MARGIN for r in rows)
    # swapped: "NMSE(ECK-Means) <= 0.9 NMSE(ECUQ)" must fail on the same data
    assert all(1.0 / r["ratio"] > ECKMEANS_MARGIN for r in rows)


def test_uniform_quantizer_without_entropy_search_is_rejected_against_eck_means():
    rows = figure6_table("lognormal", SETTINGS, 2, "eck_means", candidate=_uniform_without_search)
    assert max(r["ratio"] for r in rows) > ECKMEANS_MARGIN
    rows = figure6_table("normal", [(2**12, 4.0)], 2, "eck_means", candidate=_uniform_without_search)
    assert max(r["ratio"] for r in rows) > ECKMEANS_MARGIN


def test_uniform_quantizer_without_entropy_search_is_rejected_against_ecq():
    rows = figure6_table("lognormal", SETTINGS, 2, "ecq", candidate=_uniform_without_search)
    assert max(r["ratio"] for r in rows) > ECQ_FACTOR
    good = figure6_table("lognormal", SETTINGS, 2, "ecq", candidate=ecuq_nmse)
    assert max(r["ratio"] for r in good) <= ECQ_FACTOR


def test_timing_is_recorded_not_asserted():
    row = figure6_table("normal", [(2**8, 3.0)], 1, "ecq")[0]
    assert set(row["seconds"]) == {"candidate", "ecq"} and all(v >= 0 for v in row["seconds"].values())
