"""Benchmark sweeps: algorithms × hyperparameter grids × catalogue problems × seeds, as a long table.

The design follows benchopt: a benchmark is an objective (the catalogue problem and its certificate), datasets
(named catalogue instances, see :mod:`fedtheory.catalogue`) and solvers with parameter grids (algorithms looked
up by name in :data:`fedtheory.algorithms.ALGORITHMS`, so every registered algorithm can be benchmarked).

A **sweep spec** (JSON, or TOML on Python >= 3.11) looks like::

    {
      "name": "delta-sweep",
      "problems": ["quad-kappa100-delta*"],          # names or shell patterns over the catalogue
      "algorithms": [
        {"name": "gd"},
        {"name": "fedavg", "label": "FedAvg", "grid": {"local_steps": [10], "step": ["=0.1/L", "=0.3/L"]}}
      ],
      "seeds": [0, 1],
      "rounds": 2000,
      "eps": 1e-8,                                    # target relative gap (f(x)-f*)/(f(x0)-f*)
      "criterion": "rounds",                          # tuning: fewest rounds (or "bits", "local_grads") to eps
      "figure_x": "delta_A/mu_f"                      # optional: draw rounds-to-eps against this constant
    }

Grid values are JSON values passed to the algorithm's constructor; a string starting with ``=`` is an
arithmetic expression over the problem's certificate constants (``mu, L, mu_f, L_f, delta_A, delta_B, zeta2,
kappa, n, d``), so one grid (``"=1/L_f"``) means the same thing on every problem. ``imports`` lists modules
(or ``.py`` files) imported in every worker before running, so user algorithms registered there can be
benchmarked. ``sigma2`` (default 0) gives every problem a stochastic oracle of that variance
(:meth:`~fedtheory.problems.base.Problem.with_noise`), used by algorithms run with ``stochastic=True``.

**Cells.** One cell = (problem, algorithm entry, hyperparameter point, seed). It runs
:func:`fedtheory.run.run` from x0 = 0, stopping once the relative gap is <= ``eps`` (``stop_at_eps``) or after
``rounds`` rounds, and writes its rows to ``OUT/cells/<cell id>.<fmt>`` — to a temporary name first, then
renamed, so a file exists only when complete. A rerun skips cells whose file exists: a sweep killed half-way
loses nothing and runs every cell exactly once. A cell whose algorithm raises (bad hyperparameters, a bug)
is recorded as one row with ``status="error"`` and the error message; a divergent run keeps its finite rows
with ``status="diverged"``; neither stops the sweep.

**Table.** One row per recorded round: problem, algorithm, label, hyperparameters (JSON, as given and
resolved), seed, round, gap, rel_gap, dist2, grad_norm2, per-record and cumulative bits (uplink + downlink)
and local gradient evaluations, wall time, status, error; then one ``extra.<name>`` column per
algorithm-specific quantity the run recorded (``RoundLog.extra``: regret for online methods, queue lengths,
entropies, ...; NaN for algorithms that do not record it). Written as Parquet (default) or CSV; both need the
``bench`` extra (pandas, pyarrow).

**Tuning** (:func:`tune`): for each (problem, algorithm entry), the hyperparameter point with the smallest
median over seeds of the criterion (rounds, communication rounds -- rounds in which anything was sent, which
differ for Scaffnew/FedRed -- communicated bits, or local gradient evaluations until the
relative gap first reaches ``eps``; never reaching it counts as infinity); ties go to the smaller median final
relative gap.

**Scale-out.** Local processes through joblib (``jobs``) by default; with ``scheduler="tcp://host:port"`` (or a
``distributed.Client``) the cells are submitted to that Dask cluster with ``dask.distributed``. Workers write
their own cell files, so the results directory must be on a file system the workers share.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import math
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from . import catalogue
from .expressions import evaluate_expression  # re-exported: bench.evaluate_expression is public
from .validation import check_int, check_positive, read_json

__all__ = ["SweepSpec", "AlgorithmEntry", "Cell", "SweepResult", "load_spec", "plan", "run_cell", "sweep",
           "read_results", "tune", "rounds_to_eps_table", "problems_table", "evaluate_expression",
           "write_report", "TABLE_COLUMNS", "CRITERIA"]

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


def _require_pandas():
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("fedtheory bench needs pandas (and pyarrow for Parquet): "
                          "pip install 'fedtheory[bench]'") from exc
    return pd


def _require_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    _require_pandas()
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError as exc:  # pragma: no cover
            raise ImportError("Parquet output needs pyarrow: pip install 'fedtheory[bench]' "
                              "(or use --format csv)") from exc
    return fmt


# ---------------------------------------------------------------------------------------------------------
# Expressions over certificate constants
# ---------------------------------------------------------------------------------------------------------

def expression_names(problem: Any) -> dict[str, Any]:
    """Names available to ``=`` expressions: the certificate constants plus n (clients) and d (dimension)."""
    names = catalogue.constants(problem)
    names["n"] = names["n_clients"]
    names["d"] = names["dim"]
    return names


def _resolve_value(key: str, value: Any, names: Mapping[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("="):
        result = evaluate_expression(value[1:], names)
        if isinstance(result, float) and not math.isfinite(result):
            raise ValueError(f"hyperparameter {key}={value!r} evaluates to {result}")
        return result
    if isinstance(value, Mapping) and "$call" in value:
        from .catalogue import resolve_generator

        kwargs = {k: _resolve_value(f"{key}.{k}", v, names) for k, v in value.items() if k != "$call"}
        return resolve_generator(str(value["$call"]))(**kwargs)
    if isinstance(value, list):
        return tuple(_resolve_value(key, v, names) for v in value)
    return value


def resolve_hyperparams(hyperparams: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    """Constructor arguments from grid values: ``"=expr"`` strings are evaluated over ``names`` (the
    certificate constants), ``{"$call": "package.Class", **kwargs}`` builds an object (e.g.
    ``{"$call": "fedtheory.participation.UniformSubset", "size": 5}``), lists become tuples; other JSON
    values pass through unchanged (integers stay integers)."""
    return {key: _resolve_value(key, value, names) for key, value in hyperparams.items()}


# ---------------------------------------------------------------------------------------------------------
# Spec and plan
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AlgorithmEntry:
    """One algorithm with its hyperparameter grid (Cartesian product of ``grid``'s lists)."""

    name: str
    grid: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    label: str = ""

    @property
    def display(self) -> str:
        return self.label or self.name

    def points(self) -> list[dict[str, Any]]:
        keys = sorted(self.grid)
        points: list[dict[str, Any]] = [{}]
        for key in keys:
            points = [{**p, key: v} for p in points for v in self.grid[key]]
        return points


@dataclass(frozen=True)
class SweepSpec:
    """What to run; see the module docstring for the file format."""

    problems: tuple[str, ...]
    algorithms: tuple[AlgorithmEntry, ...]
    seeds: tuple[int, ...] = (0,)
    rounds: int = 1000
    record_every: int = 1
    eps: float = 1e-8
    stop_at_eps: bool = True
    criterion: str = "rounds"
    figure_x: str | None = None
    imports: tuple[str, ...] = ()
    catalogue_root: str | None = None
    name: str = "sweep"
    sigma2: float = 0.0

    def __post_init__(self) -> None:
        if not self.problems:
            raise ValueError("problems must name at least one catalogue instance or pattern")
        if not self.algorithms:
            raise ValueError("algorithms must list at least one algorithm")
        if not self.seeds:
            raise ValueError("seeds must list at least one seed")
        for s in self.seeds:
            check_int("seed", s, low=0)
        check_int("rounds", self.rounds, low=1)
        check_int("record_every", self.record_every, low=1)
        check_positive("eps", self.eps)
        from .validation import check_nonnegative

        check_nonnegative("sigma2", self.sigma2)
        if self.criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {self.criterion!r}")
        labels = [a.display for a in self.algorithms]
        if len(set(labels)) != len(labels):
            raise ValueError(f"algorithm labels must be unique (give 'label' to repeat an algorithm): {labels}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SweepSpec":
        known = {"problems", "algorithms", "seeds", "rounds", "record_every", "eps", "stop_at_eps", "criterion",
                 "figure_x", "imports", "catalogue_root", "name", "sigma2"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown sweep spec keys {sorted(unknown)}; known: {sorted(known)}")
        algos = data.get("algorithms", ())
        if isinstance(algos, Mapping):  # {"gd": {}, "fedavg": {"step": [...]}} shorthand
            algos = [{"name": k, "grid": v} for k, v in algos.items()]
        entries = []
        for a in algos:
            if isinstance(a, str):
                a = {"name": a}
            extra = set(a) - {"name", "grid", "label"}
            if extra:
                raise ValueError(f"algorithm entry {a.get('name')!r}: unknown keys {sorted(extra)}")
            grid = {k: tuple(v) if isinstance(v, (list, tuple)) else (v,) for k, v in dict(a.get("grid") or {}).items()}
            for k, v in grid.items():
                if not v:
                    raise ValueError(f"algorithm {a['name']!r}: grid for {k!r} is empty")
            entries.append(AlgorithmEntry(name=str(a["name"]), grid=grid, label=str(a.get("label", ""))))
        problems = data.get("problems", ())
        kwargs = {k: data[k] for k in ("rounds", "record_every", "stop_at_eps", "criterion", "figure_x",
                                       "catalogue_root", "name") if k in data}
        if "eps" in data:
            kwargs["eps"] = float(data["eps"])
        if "sigma2" in data:
            kwargs["sigma2"] = float(data["sigma2"])
        return cls(problems=(problems,) if isinstance(problems, str) else tuple(problems),
                   algorithms=tuple(entries), seeds=tuple(data.get("seeds", (0,))),
                   imports=tuple(data.get("imports", ())), **kwargs)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "problems": list(self.problems),
                "algorithms": [{"name": a.name, "label": a.label, "grid": {k: list(v) for k, v in a.grid.items()}}
                               for a in self.algorithms],
                "seeds": list(self.seeds), "rounds": self.rounds, "record_every": self.record_every,
                "eps": self.eps, "stop_at_eps": self.stop_at_eps, "criterion": self.criterion,
                "figure_x": self.figure_x, "imports": list(self.imports), "catalogue_root": self.catalogue_root,
                "sigma2": self.sigma2}


def load_spec(path: str | os.PathLike) -> SweepSpec:
    """Read a sweep spec from a ``.json`` or ``.toml`` file."""
    path = Path(path)
    if path.suffix == ".toml":
        try:
            import tomllib
        except ImportError as exc:  # pragma: no cover - Python 3.10
            raise ImportError("TOML sweep specs need Python >= 3.11; use JSON") from exc
        data = tomllib.loads(path.read_text())
    else:
        data = read_json(path)
    data.setdefault("name", path.stem)
    return SweepSpec.from_dict(data)


@dataclass(frozen=True)
class Cell:
    """One unit of work: an algorithm entry at one hyperparameter point on one problem with one seed."""

    problem: str
    problem_version: int
    algorithm: str
    label: str
    hyperparams: Mapping[str, Any]
    seed: int
    rounds: int
    record_every: int
    eps: float | None
    sigma2: float = 0.0

    @property
    def id(self) -> str:
        """Content hash of everything that determines the cell's numbers (and its label)."""
        key = {"problem": self.problem, "version": self.problem_version, "algorithm": self.algorithm,
               "label": self.label, "hyperparams": self.hyperparams, "seed": self.seed, "rounds": self.rounds,
               "record_every": self.record_every, "eps": self.eps}
        if self.sigma2:  # only when set, so ids of noiseless cells are unchanged
            key["sigma2"] = self.sigma2
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]

    def hyperparams_json(self) -> str:
        return json.dumps(dict(self.hyperparams), sort_keys=True)


def _import_plugins(imports: Iterable[str]) -> None:
    for item in imports:
        if item.endswith(".py"):
            path = Path(item).resolve()
            mod_name = f"_fedtheory_plugin_{path.stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
            if mod_name in sys.modules:
                continue
            loader_spec = importlib.util.spec_from_file_location(mod_name, path)
            if loader_spec is None or loader_spec.loader is None:
                raise ImportError(f"cannot import {item}")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[mod_name] = module
            loader_spec.loader.exec_module(module)
        else:
            importlib.import_module(item)


def _algorithms() -> dict[str, type]:
    from .algorithms import ALGORITHMS

    return ALGORITHMS


def plan(spec: SweepSpec) -> list[Cell]:
    """Expand a spec into its cells (validating problem patterns and algorithm names up front)."""
    _import_plugins(spec.imports)
    registry = _algorithms()
    for entry in spec.algorithms:
        if entry.name not in registry:
            raise ValueError(f"unknown algorithm {entry.name!r}; registered: {', '.join(sorted(registry))}")
    problems: list[str] = []
    for pattern in spec.problems:
        base = pattern.partition("@v")[0]
        if any(c in base for c in "*?["):
            found = catalogue.names(base, root=spec.catalogue_root)
        else:
            found = [catalogue.spec(pattern, spec.catalogue_root).name]  # checks a pinned @vK version
        if not found:
            raise ValueError(f"problem pattern {pattern!r} matches no catalogue instance "
                             "(see `fedtheory problems list`)")
        for name in found:
            if name not in problems:
                problems.append(name)
    cells = []
    for name in problems:
        inst = catalogue.spec(name, spec.catalogue_root)
        for entry in spec.algorithms:
            for point in entry.points():
                for seed in spec.seeds:
                    cells.append(Cell(problem=inst.name, problem_version=inst.version, algorithm=entry.name,
                                      label=entry.display, hyperparams=point, seed=int(seed), rounds=spec.rounds,
                                      record_every=spec.record_every,
                                      eps=spec.eps if spec.stop_at_eps else None,
                                      sigma2=spec.sigma2))
    ids = [c.id for c in cells]
    if len(set(ids)) != len(ids):
        raise ValueError("the sweep spec lists the same cell twice (duplicate grid values or seeds)")
    return cells


# ---------------------------------------------------------------------------------------------------------
# Running one cell
# ---------------------------------------------------------------------------------------------------------

def _cell_rows(cell: Cell, resolved: Mapping[str, Any] | None, trace: Any, error: str | None) -> dict[str, Any]:
    base = {"cell": cell.id, "problem": cell.problem, "problem_version": cell.problem_version,
            "algorithm": cell.algorithm, "label": cell.label, "hyperparams": cell.hyperparams_json(),
            "hyperparams_resolved": json.dumps(_jsonable(resolved), sort_keys=True) if resolved is not None else "",
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


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj if not (isinstance(obj, float) and not math.isfinite(obj)) else str(obj)
    return repr(obj)


_STR_COLUMNS = ("cell", "problem", "algorithm", "label", "hyperparams", "hyperparams_resolved", "status", "error")
_INT_COLUMNS = ("problem_version", "seed")
#: Nullable integers, so an error row (no round) and a completed run share one schema.
_NULLABLE_INT_COLUMNS = ("round", "stopped_at")


def _normalise(df: Any):
    """Give a table read from Parquet or CSV (or concatenated from cells) the canonical dtypes."""
    for c in TABLE_COLUMNS:
        if c in _STR_COLUMNS:
            df[c] = df[c].fillna("").astype(str)
        elif c in _NULLABLE_INT_COLUMNS:
            df[c] = df[c].astype("Int64")
        elif c in _INT_COLUMNS:
            df[c] = df[c].astype("int64")
        else:
            df[c] = df[c].astype("float64")
    extras = sorted(c for c in df.columns if c.startswith(EXTRA_PREFIX))
    for c in extras:
        df[c] = df[c].astype("float64")
    return df[list(TABLE_COLUMNS) + extras]


def _frame(cols: Mapping[str, Any]):
    pd = _require_pandas()
    return _normalise(pd.DataFrame(dict(cols)))


def _arrow_table(cols: Mapping[str, Any]):
    """Columns straight to Arrow with explicit types (several times faster than going through pandas)."""
    import pyarrow as pa

    arrays = {}
    for c in list(TABLE_COLUMNS) + sorted(k for k in cols if k.startswith(EXTRA_PREFIX)):
        v = cols[c]
        if c in _STR_COLUMNS:
            arrays[c] = pa.array(v, pa.string())
        elif c in _NULLABLE_INT_COLUMNS or c in _INT_COLUMNS:
            arrays[c] = pa.array(v, pa.int64())
        else:
            arrays[c] = pa.array(np.asarray(v, dtype=np.float64), pa.float64())
    return pa.table(arrays)


def _write_cell_atomic(cols: Mapping[str, Any], path: Path, fmt: str) -> None:
    """Write to a unique temporary name in the same folder, then rename: readers never see a partial file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            pq.write_table(_arrow_table(cols), tmp)
        else:
            _frame(cols).to_csv(tmp, index=False)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _write_frame_atomic(df: Any, path: Path, fmt: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        if fmt == "parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _read_frame(path: Path, fmt: str):
    """One file as written (dtypes are made canonical by :func:`_normalise` after concatenation)."""
    pd = _require_pandas()
    if fmt == "parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={c: str for c in _STR_COLUMNS})


def cell_path(out: str | os.PathLike, cell: Cell | str, fmt: str) -> Path:
    cid = cell if isinstance(cell, str) else cell.id
    return Path(out) / "cells" / f"{cid}.{fmt}"


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
        from .run import run

        _import_plugins(imports)
        problem = catalogue.load(cell.problem, catalogue_root)
        if cell.sigma2:
            problem = problem.with_noise(cell.sigma2)
        resolved = resolve_hyperparams(cell.hyperparams, expression_names(problem))
        algorithm = _algorithms()[cell.algorithm](**resolved)
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
    _write_cell_atomic(_cell_rows(cell, resolved, trace, error), path, fmt)
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
    from joblib import Parallel, delayed

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
    import platform
    from importlib import metadata

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
    fmt = _require_format(fmt)
    jobs = check_int("jobs", jobs)
    if jobs == 0 or jobs < -1:
        raise ValueError(f"jobs must be >= 1 or -1 (all cores), got {jobs}")
    max_restarts = check_int("max_restarts", max_restarts, low=0)
    out = Path(out)
    (out / "cells").mkdir(parents=True, exist_ok=True)
    cells = plan(spec)
    catalogue._atomic_write_text(out / "sweep.json", json.dumps(
        {"spec": spec.as_dict(), "format": fmt, "environment": _environment(), "cells": [c.id for c in cells]},
        indent=1) + "\n")
    start = time.perf_counter()
    todo = _pending(cells, out, fmt)
    skipped = len(cells) - len(todo)
    statuses: dict[str, int] = {}
    summaries: list[dict[str, Any]] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

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
            from joblib.externals.loky.process_executor import TerminatedWorkerError

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


# ---------------------------------------------------------------------------------------------------------
# Reading, tuning, reporting
# ---------------------------------------------------------------------------------------------------------

def read_results(out: str | os.PathLike, cells: Sequence[Cell | str] | None = None, fmt: str | None = None):
    """The long table of a results folder (only the cells of its ``sweep.json`` plan, unless ``cells``)."""
    pd = _require_pandas()
    out = Path(out)
    meta = json.loads((out / "sweep.json").read_text())
    fmt = fmt or meta["format"]
    ids = [c if isinstance(c, str) else c.id for c in cells] if cells is not None else meta["cells"]
    frames = [_read_frame(cell_path(out, cid, fmt), fmt) for cid in ids if cell_path(out, cid, fmt).exists()]
    if not frames:
        return _frame({c: [] for c in TABLE_COLUMNS})
    return _normalise(pd.concat(frames, ignore_index=True))


def _first_reach(group: Any, eps: float, column: str) -> float:
    hit = group.loc[group["rel_gap"] <= eps, column]
    return float(hit.iloc[0]) if len(hit) else math.inf


def per_run_summary(table: Any, eps: float):
    """One row per cell: rounds/bits/local gradients until rel_gap <= eps (inf if never), final rel_gap, status."""
    pd = _require_pandas()
    rows = []
    for cid, g in table.groupby("cell", sort=False):
        g = g.sort_values("round", na_position="first")
        first = g.iloc[0]
        ok = g["round"].notna().any()
        rows.append({"cell": cid, "problem": first["problem"], "algorithm": first["algorithm"],
                     "label": first["label"], "hyperparams": first["hyperparams"],
                     "hyperparams_resolved": first["hyperparams_resolved"], "seed": int(first["seed"]),
                     "status": first["status"],
                     **{f"{k}_to_eps": (_first_reach(g, eps, col) if ok else math.inf) for k, col in CRITERIA.items()},
                     "final_rel_gap": float(g["rel_gap"].iloc[-1]) if ok else math.inf,
                     "error": first["error"].splitlines()[0] if first["error"] else ""})
    return pd.DataFrame(rows)


def tune(table: Any, eps: float, criterion: str = "rounds"):
    """Best hyperparameters per (problem, algorithm entry): smallest median-over-seeds ``criterion`` to eps.

    Ties (including "never reached eps") go to the smaller median final relative gap. Returns one row per
    (problem, label) with the winning ``hyperparams`` and its medians of rounds, bits and local gradient
    evaluations to eps.
    """
    pd = _require_pandas()
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {criterion!r}")
    runs = per_run_summary(table, eps)
    if runs.empty:
        return runs
    agg = (runs.groupby(["problem", "label", "algorithm", "hyperparams"], sort=False)
           .agg(**{f"{k}_to_eps": (f"{k}_to_eps", "median") for k in CRITERIA},
                final_rel_gap=("final_rel_gap", "median"),
                n_seeds=("seed", "count"), statuses=("status", lambda s: ",".join(sorted(set(s)))),
                hyperparams_resolved=("hyperparams_resolved", "first"))
           .reset_index())
    agg["final_rel_gap"] = agg["final_rel_gap"].fillna(math.inf)
    key = f"{criterion}_to_eps"
    # Output order: problems in natural order, algorithm labels in the order they appear in the table (the sweep's).
    problem_rank = {p: i for i, p in enumerate(sorted(set(agg["problem"]), key=catalogue.natural_key))}
    label_rank = {lab: i for i, lab in enumerate(dict.fromkeys(runs["label"]))}
    agg["_p"], agg["_l"] = agg["problem"].map(problem_rank), agg["label"].map(label_rank)
    agg = agg.sort_values(["_p", "_l", key, "final_rel_gap", "hyperparams"], kind="mergesort")
    best = agg.groupby(["problem", "label"], sort=False).head(1).drop(columns=["_p", "_l"]).reset_index(drop=True)
    best.insert(2, "criterion", criterion)
    best.insert(3, "eps", eps)
    return best


def rounds_to_eps_table(tuned: Any, criterion: str = "rounds"):
    """Problems × algorithm labels, each cell the tuned median ``criterion`` to eps (inf = never reached)."""
    pivot = tuned.pivot(index="problem", columns="label", values=f"{criterion}_to_eps")
    labels = list(dict.fromkeys(tuned["label"]))  # algorithms in the sweep's order, problems in natural order
    return pivot.loc[sorted(pivot.index, key=catalogue.natural_key), labels]


def problems_table(names: Iterable[str], root: str | None = None):
    """Certificate constants of the given catalogue instances, one row each."""
    pd = _require_pandas()
    rows = []
    for name in names:
        inst = catalogue.spec(name, root)
        rows.append({"problem": name, "version": inst.version, "citation": inst.citation,
                     **catalogue.constants(catalogue.load(name, root))})
    return pd.DataFrame(rows)


def _markdown(df: Any, floatfmt: str = ".4g") -> str:
    cols = [df.index.name or ""] + [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for idx, row in df.iterrows():
        cells = [str(idx)] + [("never" if isinstance(v, float) and math.isinf(v) else
                               (format(v, floatfmt) if isinstance(v, float) else str(v))) for v in row.values]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_report(spec: SweepSpec, out: str | os.PathLike, fmt: str | None = None, figures: bool = True) -> dict:
    """Combine the cells into ``results.<fmt>`` and write tuning, the rounds-to-eps table and the figures."""
    from . import plotting

    out = Path(out)
    meta = json.loads((out / "sweep.json").read_text())
    fmt = fmt or meta["format"]
    table = read_results(out, fmt=fmt)
    path = out / f"results.{fmt}"
    _write_frame_atomic(table, path, fmt)
    tuned = tune(table, spec.eps, spec.criterion)
    problems = problems_table(list(dict.fromkeys(table["problem"])), spec.catalogue_root)
    catalogue._atomic_write_text(out / "tuned.csv", tuned.to_csv(index=False))
    catalogue._atomic_write_text(out / "problems.csv", problems.to_csv(index=False))
    written = {"results": path, "tuned": out / "tuned.csv", "problems": out / "problems.csv"}
    if not tuned.empty:
        pivot = rounds_to_eps_table(tuned, spec.criterion)
        catalogue._atomic_write_text(out / "rounds_to_eps.csv", pivot.to_csv())
        header = (f"# {spec.name}: tuned {spec.criterion} until (f(x)-f*)/(f(x0)-f*) <= {spec.eps:g}\n\n"
                  f"Median over seeds {list(spec.seeds)} of the best hyperparameter point per algorithm "
                  "('never' = not reached within the round budget).\n\n")
        catalogue._atomic_write_text(out / "rounds_to_eps.md", header + _markdown(pivot))
        written["rounds_to_eps"] = out / "rounds_to_eps.md"
    if figures and not tuned.empty:
        written["figures"] = plotting.standard_figures(table, tuned, problems, out / "figures",
                                                       eps=spec.eps, figure_x=spec.figure_x,
                                                       criterion=spec.criterion)
    return written
