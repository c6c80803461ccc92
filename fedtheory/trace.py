"""The per-round record of a run."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

Status = Literal["completed", "converged", "diverged"]

#: Columns every trace has, in order. ``round`` 0 is the starting point (no cost).
COLUMNS = ("round", "gap", "dist2", "grad_norm2", "uplink_bits", "downlink_bits", "uplink_nnz", "downlink_nnz",
           "vectors_up", "vectors_down", "local_grad_evals", "participants", "communicated", "wall_time")

#: Columns excluded from reproducibility comparisons (they measure the machine, not the algorithm).
TIMING_COLUMNS = ("wall_time",)


@dataclass(frozen=True)
class Trace:
    """Per-round arrays of a run, one entry per recorded round.

    Cost columns (bits, non-zeros, vectors, local gradient evaluations, participants) are the cost *of that
    round* (summed over rounds skipped by ``record_every``); use :meth:`cumulative` for running totals.
    ``extra`` holds algorithm-specific columns (from ``RoundLog.extra``). ``status`` is "completed" (ran all
    rounds), "converged" (reached ``tol``) or "diverged" (non-finite values or a gap 1e12 times its start, at
    round ``stopped_at``; the trace ends with the last finite record).
    """

    columns: dict[str, np.ndarray]
    extra: dict[str, np.ndarray]
    status: Status
    stopped_at: int | None
    x_final: np.ndarray
    state: Any = field(repr=False, default=None)
    algorithm: str = ""

    def __getattr__(self, name: str) -> np.ndarray:
        cols = self.__dict__.get("columns", {})
        if name in cols:
            return cols[name]
        extra = self.__dict__.get("extra", {})
        if name in extra:
            return extra[name]
        raise AttributeError(name)

    def __len__(self) -> int:
        return len(self.columns["round"])

    def cumulative(self, name: str) -> np.ndarray:
        """Running total of a cost column (e.g. ``cumulative("uplink_bits")``)."""
        return np.cumsum(self.columns[name] if name in self.columns else self.extra[name])

    @property
    def diverged(self) -> bool:
        return self.status == "diverged"

    def same_numbers(self, other: "Trace") -> bool:
        """Bitwise equality of every column except wall time (the reproducibility contract)."""
        if self.status != other.status or self.stopped_at != other.stopped_at:
            return False
        for store, other_store in ((self.columns, other.columns), (self.extra, other.extra)):
            if store.keys() != other_store.keys():
                return False
            for key in store:
                if key in TIMING_COLUMNS:
                    continue
                if store[key].tobytes() != other_store[key].tobytes():
                    return False
        return self.x_final.tobytes() == other.x_final.tobytes()

    def to_pandas(self):
        """A ``pandas.DataFrame`` with one row per recorded round (requires pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - exercised only without pandas
            raise ImportError("Trace.to_pandas needs pandas: pip install 'fedtheory[bench]'") from exc
        return pd.DataFrame({**self.columns, **self.extra})
