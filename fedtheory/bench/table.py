"""The long table of a benchmark sweep: its columns and their dtypes, and reading and writing its files.

One row per recorded round (the columns are listed in :mod:`fedtheory.bench`), stored one file per cell as
Parquet (default; written straight from Arrow) or CSV, both through the ``bench`` extra (pandas, pyarrow).
Every file is written atomically (:mod:`fedtheory.files`): a sweep killed half-way leaves only complete cells.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..files import write_atomic

#: Columns of the long table, in order.
TABLE_COLUMNS = ("cell", "problem", "problem_version", "algorithm", "label", "hyperparams", "hyperparams_resolved",
                 "seed", "round", "gap", "rel_gap", "dist2", "grad_norm2", "uplink_bits", "downlink_bits", "bits",
                 "cum_bits", "local_grad_evals", "cum_local_grad_evals", "participants", "communicated",
                 "comm_rounds", "wall_time", "status", "stopped_at", "error")
#: Prefix of the algorithm-specific columns taken from ``Trace.extra`` (``RoundLog.extra``), e.g. ``extra.regret``.
EXTRA_PREFIX = "extra."
#: Columns that measure the machine, not the algorithm (excluded when comparing tables).
TIMING_COLUMNS = ("wall_time",)
#: Tuning criteria: the cumulative quantity counted until the relative gap first reaches eps.
CRITERIA = {"rounds": "round", "comm_rounds": "comm_rounds", "bits": "cum_bits",
            "local_grads": "cum_local_grad_evals"}
FORMATS = ("parquet", "csv")
STR_COLUMNS = ("cell", "problem", "algorithm", "label", "hyperparams", "hyperparams_resolved", "status", "error")
INT_COLUMNS = ("problem_version", "seed")
#: Nullable integers, so an error row (no round) and a completed run share one schema.
NULLABLE_INT_COLUMNS = ("round", "stopped_at")


def require_pandas() -> Any:
    """The pandas module, or an ImportError saying which extra installs it."""
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("fedtheory bench needs pandas (and pyarrow for Parquet): "
                          "pip install 'fedtheory[bench]'") from exc
    return pd


def require_format(fmt: str) -> str:
    """``fmt`` after checking it is one of :data:`FORMATS` and that its libraries are installed."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    require_pandas()
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError as exc:  # pragma: no cover
            raise ImportError("Parquet output needs pyarrow: pip install 'fedtheory[bench]' "
                              "(or use --format csv)") from exc
    return fmt


def cell_path(out: str | os.PathLike, cell: Any, fmt: str) -> Path:
    """Where the rows of ``cell`` (a :class:`~fedtheory.bench.spec.Cell` or its id) live: ``OUT/cells/<id>.<fmt>``."""
    cid = cell if isinstance(cell, str) else cell.id
    return Path(out) / "cells" / f"{cid}.{fmt}"


def normalise(df: Any) -> Any:
    """Give a table read from Parquet or CSV (or concatenated from cells) the canonical dtypes."""
    for c in TABLE_COLUMNS:
        if c in STR_COLUMNS:
            df[c] = df[c].fillna("").astype(str)
        elif c in NULLABLE_INT_COLUMNS:
            df[c] = df[c].astype("Int64")
        elif c in INT_COLUMNS:
            df[c] = df[c].astype("int64")
        else:
            df[c] = df[c].astype("float64")
    extras = sorted(c for c in df.columns if c.startswith(EXTRA_PREFIX))
    for c in extras:
        df[c] = df[c].astype("float64")
    return df[list(TABLE_COLUMNS) + extras]


def frame(cols: Mapping[str, Any]) -> Any:
    """A pandas DataFrame with the canonical dtypes from a mapping column -> values."""
    pd = require_pandas()
    return normalise(pd.DataFrame(dict(cols)))


def arrow_table(cols: Mapping[str, Any]) -> Any:
    """Columns straight to Arrow with explicit types (several times faster than going through pandas)."""
    import pyarrow as pa

    arrays = {}
    for c in list(TABLE_COLUMNS) + sorted(k for k in cols if k.startswith(EXTRA_PREFIX)):
        v = cols[c]
        if c in STR_COLUMNS:
            arrays[c] = pa.array(v, pa.string())
        elif c in NULLABLE_INT_COLUMNS or c in INT_COLUMNS:
            arrays[c] = pa.array(v, pa.int64())
        else:
            arrays[c] = pa.array(np.asarray(v, dtype=np.float64), pa.float64())
    return pa.table(arrays)


def write_cell(cols: Mapping[str, Any], path: Path, fmt: str) -> None:
    """Write one cell's columns to ``path`` atomically: readers never see a partial file."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        write_atomic(path, lambda tmp: pq.write_table(arrow_table(cols), tmp))
    else:
        write_atomic(path, lambda tmp: frame(cols).to_csv(tmp, index=False))


def write_frame(df: Any, path: Path, fmt: str) -> None:
    """Write a whole table (a DataFrame) to ``path`` atomically."""
    if fmt == "parquet":
        write_atomic(path, lambda tmp: df.to_parquet(tmp, index=False))
    else:
        write_atomic(path, lambda tmp: df.to_csv(tmp, index=False))


def read_frame(path: Path, fmt: str) -> Any:
    """One file as written (dtypes are made canonical by :func:`normalise` after concatenation)."""
    pd = require_pandas()
    if fmt == "parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={c: str for c in STR_COLUMNS})
