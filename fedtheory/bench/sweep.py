"""Running a benchmark sweep: one cell at a time, in local processes (joblib) or on a Dask cluster, resumable.

Each cell writes its own file (:func:`fedtheory.bench.table.cell_path`) once complete; a rerun skips finished
cells, and a dead worker process costs only its own cell (see :mod:`fedtheory.bench`, "Cells", "Scale-out").
"""
from __future__ import annotations

import json
import math
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .. import catalogue
from ..files import write_text_atomic
from ..run import run
from ..validation import check_int
from .results import write_report
from .spec import Cell, SweepSpec, expression_names, import_plugins, plan, registered_algorithms, resolve_hyperparams
from .table import EXTRA_PREFIX, TABLE_COLUMNS, cell_path, require_format, write_cell

# ---------------------------------------------------------------------------------------------------------
# Running one cell
# ---------------------------------------------------------------------------------------------------------

def cell_rows(cell: Cell, resolved: Mapping[str, Any] | None, trace: Any, error: str | None) -> dict[str, Any]:
    """The columns of one cell's rows: one per recorded round of ``trace``, or one error row (``trace=None``)."""
    base = {"cell": cell.id, "problem": cell.problem, "problem_version": cell.problem_version,
            "algorithm": cell.algorithm, "label": cell.label, "hyperparams": cell.hyperparams_json(),
            "hyperparams_resolved": json.dumps(jsonable(resolved), sort_keys=True) if resolved is not None else "",
            "seed": cell.seed}
    if trace is None:
        row = {**base, **{c: np.nan for c in TABLE_COLUMNS if c not in base}}
        row.update(round=None, status="error", stopped_at=None, error=error or "")
        return {k: [row[k]] for k in TABLE_COLUMNS}
    n = len(trace)
    gap = trace.gap
    gap0 = gap[0] if n else np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = gap / gap0 if gap0 > 0 else np.where(gap == 0, 0.0, np.inf)
    bits = trace.uplink_bits + trace.downlink_bits
    cols: dict[str, Any] = {k: [v] * n for k, v in base.items()}
    cols.update(round=trace.round.astype(np.int64), gap=gap, rel_gap=rel, dist2=trace.dist2,
                grad_norm2=trace.grad_norm2, uplink_bits=trace.uplink_bits, downlink_bits=trace.downlink_bits,
                bits=bits, cum_bits=np.cumsum(bits), local_grad_evals=trace.local_grad_evals,
                cum_local_grad_evals=np.cumsum(trace.local_grad_evals), participants=trace.participants,
                communicated=trace.communicated, comm_rounds=np.cumsum(trace.communicated),
                wall_time=trace.wall_time, status=[trace.status] * n,
                stopped_at=[trace.stopped_at] * n, error=[error or ""] * n)
    for key, values in trace.extra.items():  # algorithm-specific per-round quantities (regret, entropy, ...)
        cols[EXTRA_PREFIX + key] = np.asarray(values, dtype=np.float64)
    return cols


def jsonable(obj: Any) -> Any:
    """``obj`` with numpy scalars as Python numbers, non-finite floats as strings and other objects as repr."""
    if isinstance(obj, Mapping):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj if not (isinstance(obj, float) and not math.isfinite(obj)) else str(obj)
    return repr(obj)


def run_cell(cell: Cell, out: str, fmt: str = "parquet", imports: Sequence[str] = (),
             catalogue_root: str | None = None) -> dict[str, Any]:
    """Run one cell, write its rows atomically to ``OUT/cells/<id>.<fmt>``, return a short summary.

    Never raises for a failure of the algorithm: the error is recorded in the table instead.
    """
    start = time.perf_counter()
    path = cell_path(out, cell, fmt)
    if path.exists():  # another attempt (a restarted worker, a concurrent rerun) finished it already
        return {"cell": cell.id, "status": "skipped", "seconds": 0.0, "run_seconds": 0.0}
    resolved, trace, error, run_seconds = None, None, None, 0.0
    try:
        import_plugins(imports)
        problem = catalogue.load(cell.problem, catalogue_root)
        if cell.sigma2:
            problem = problem.with_noise(cell.sigma2)
        resolved = resolve_hyperparams(cell.hyperparams, expression_names(problem))
        algorithm = registered_algorithms()[cell.algorithm](**resolved)
        tol = None
        if cell.eps is not None:
            gap0 = problem.gap(np.zeros(problem.dim))
            tol = cell.eps * gap0 if gap0 > 0 else None
        t0 = time.perf_counter()
        trace = run(algorithm, problem, cell.rounds, seed=cell.seed, record_every=cell.record_every, tol=tol)
        run_seconds = time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001 - a failing cell is data, not a reason to stop the sweep
        error = f"{type(exc).__name__}: {exc}"
        tb = traceback.format_exc(limit=-3)
        error = f"{error}\n{tb}"
        trace = None
    path.parent.mkdir(parents=True, exist_ok=True)
    write_cell(cell_rows(cell, resolved, trace, error), path, fmt)
    status = "error" if trace is None else trace.status
    return {"cell": cell.id, "status": status, "seconds": time.perf_counter() - start, "run_seconds": run_seconds}


# ---------------------------------------------------------------------------------------------------------
# The sweep
# ---------------------------------------------------------------------------------------------------------

@dataclass
class SweepResult:
    """What a sweep did: counts by status, restarts after worker deaths, and where the outputs are."""

    out: Path
    cells: list[Cell]
    ran: int
    skipped: int
    statuses: dict[str, int]
    restarts: int
    missing: list[str]
    seconds: float
    summaries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing


def _pending(cells: Sequence[Cell], out: Path, fmt: str) -> list[Cell]:
    return [c for c in cells if not cell_path(out, c, fmt).exists()]


def _run_local(todo: Sequence[Cell], out: Path, fmt: str, spec: SweepSpec, jobs: int,
               progress: Any) -> Iterable[dict[str, Any]]:
    args = (str(out), fmt, tuple(spec.imports), spec.catalogue_root)
    if jobs == 1:
        for c in todo:
            yield run_cell(c, *args)
        return
    from joblib import Parallel, delayed  # here, not at the top: joblib takes 0.4 s to import; only jobs > 1 uses it

    yield from Parallel(n_jobs=jobs, return_as="generator_unordered")(delayed(run_cell)(c, *args) for c in todo)


def _run_dask(todo: Sequence[Cell], out: Path, fmt: str, spec: SweepSpec, scheduler: Any) -> Iterable[dict]:
    try:
        from distributed import Client, as_completed
    except ImportError as exc:  # pragma: no cover
        raise ImportError("a Dask scheduler needs dask.distributed: pip install 'fedtheory[bench]'") from exc
    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        futures = client.map(run_cell, list(todo), out=str(out), fmt=fmt, imports=tuple(spec.imports),
                             catalogue_root=spec.catalogue_root, pure=False)
        for future in as_completed(futures):
            yield future.result()
    finally:
        if client is not scheduler:
            client.close()


def _environment() -> dict[str, str]:
    """Versions that can change the numbers (recorded in sweep.json for provenance)."""
    env = {"python": platform.python_version(), "platform": platform.platform()}
    for dist in ("fedtheory", "numpy", "scipy"):
        try:
            env[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:  # pragma: no cover
            env[dist] = "unknown"
    return env


def sweep(spec: SweepSpec, out: str | os.PathLike, *, jobs: int = 1, scheduler: Any = None,
          fmt: str = "parquet", progress: bool = True, max_restarts: int = 2, report: bool = True) -> SweepResult:
    """Run every cell of ``spec`` not yet in ``out`` and (``report``) write the table, tuning and figures.

    ``jobs``: joblib worker processes (1 runs in this process; -1 uses every core). ``scheduler``: a Dask
    scheduler address or ``distributed.Client``; then ``jobs`` is ignored. ``max_restarts``: how many times
    to resume after a local worker process dies (its cell is simply run again; finished cells are kept).
    """
    fmt = require_format(fmt)
    jobs = check_int("jobs", jobs)
    if jobs == 0 or jobs < -1:
        raise ValueError(f"jobs must be >= 1 or -1 (all cores), got {jobs}")
    max_restarts = check_int("max_restarts", max_restarts, low=0)
    out = Path(out)
    (out / "cells").mkdir(parents=True, exist_ok=True)
    cells = plan(spec)
    write_text_atomic(out / "sweep.json", json.dumps(
        {"spec": spec.as_dict(), "format": fmt, "environment": _environment(), "cells": [c.id for c in cells]},
        indent=1) + "\n")
    start = time.perf_counter()
    todo = _pending(cells, out, fmt)
    skipped = len(cells) - len(todo)
    statuses: dict[str, int] = {}
    summaries: list[dict[str, Any]] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm  # here, not at the top: tqdm takes 0.15 s to import; only a progress bar uses it

        bar = tqdm(total=len(cells), initial=skipped, desc=f"bench {spec.name}", unit="cell", file=sys.stderr)
    restarts = 0
    while todo:
        try:
            results = (_run_dask(todo, out, fmt, spec, scheduler) if scheduler is not None
                       else _run_local(todo, out, fmt, spec, jobs, bar))
            for summary in results:
                summaries.append(summary)
                statuses[summary["status"]] = statuses.get(summary["status"], 0) + 1
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(statuses, refresh=False)
            interrupted = False
        except Exception as exc:  # noqa: BLE001 - a dead worker process: keep finished cells, resume the rest
            from joblib.externals.loky.process_executor import TerminatedWorkerError  # here, not at the top: joblib

            if not isinstance(exc, TerminatedWorkerError) or restarts >= max_restarts:
                raise
            restarts += 1
            interrupted = True
            print(f"fedtheory bench: a worker process died ({type(exc).__name__}); resuming the "
                  f"unfinished cells (restart {restarts}/{max_restarts})", file=sys.stderr)
        todo = _pending(cells, out, fmt)
        if bar is not None:
            bar.n = len(cells) - len(todo)
            bar.refresh()
        if not interrupted:
            break  # a full pass ran; anything still missing is reported in SweepResult.missing
    if bar is not None:
        bar.close()
    missing = [c.id for c in _pending(cells, out, fmt)]
    result = SweepResult(out=out, cells=cells, ran=sum(s["status"] != "skipped" for s in summaries),
                         skipped=skipped, statuses=statuses, restarts=restarts, missing=missing,
                         seconds=time.perf_counter() - start, summaries=summaries)
    if report and not missing:
        write_report(spec, out, fmt)
    return result
