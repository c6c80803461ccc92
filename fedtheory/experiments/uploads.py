"""Upload-metrics hook of the neural experiments: the paper's per-round quantities summed over the run.

:class:`fedtheory.metrics.communication.EntropyMetrics` reports the round's entropy; the round loop keeps only the
latest round's value of such a column between two recorded rounds, so an experiment that records every fifth
round would lose four rounds of entropy in five. :class:`RunningUploads` keeps the running sums itself (one
instance per run), so the last record holds the run's totals whatever ``record_every`` is.
"""
from __future__ import annotations

import numpy as np

from ..metrics.communication import PAPER_BIN, round_entropy

__all__ = ["RunningUploads"]


class RunningUploads:
    """Hook (``upload_metrics=RunningUploads()``) returning, after each round, the cumulative entropy (bits per
    element, bin 0.01, FedElasticNet Section 4: the sum over rounds of each round's mean per-vector entropy) and
    the mean over rounds of the excess kurtosis of the transmitted values (3 for a Laplace law, 0 for a
    Gaussian: FedElasticNet Figure 2's "Laplace-like" against "Gaussian-like")."""

    def __init__(self, bin_size: float = PAPER_BIN) -> None:
        self.bin_size = bin_size
        self.entropy = 0.0
        self.kurtosis_sum = 0.0
        self.rounds = 0

    def __call__(self, U: np.ndarray) -> dict[str, float]:
        U = np.asarray(U, dtype=float)
        self.entropy += round_entropy(U, self.bin_size, "round", False)
        v = U.ravel()
        s2 = float(np.mean((v - v.mean()) ** 2))
        kurt = float(np.mean((v - v.mean()) ** 4)) / s2 ** 2 - 3.0 if s2 > 0 else 0.0
        self.kurtosis_sum += kurt
        self.rounds += 1
        return {"entropy_total": self.entropy, "kurtosis_mean": self.kurtosis_sum / self.rounds}
