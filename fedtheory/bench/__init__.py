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

**Modules.** :mod:`~fedtheory.bench.spec` (the spec, its cells and grid expressions),
:mod:`~fedtheory.bench.table` (columns, dtypes, atomic cell files), :mod:`~fedtheory.bench.sweep` (running
cells and sweeps), :mod:`~fedtheory.bench.results` (reading, tuning, the report); everything public is
re-exported here.
"""
from __future__ import annotations

from ..expressions import evaluate_expression  # re-exported: bench.evaluate_expression is public
from .results import per_run_summary, problems_table, read_results, rounds_to_eps_table, tune, write_report
from .spec import (
                   AlgorithmEntry,
                   Cell,
                   SweepSpec,
                   expression_names,
                   load_spec,
                   plan,
                   registered_algorithms,
                   resolve_hyperparams,
)
from .sweep import SweepResult, run_cell, sweep
from .table import CRITERIA, EXTRA_PREFIX, TABLE_COLUMNS, TIMING_COLUMNS, cell_path

__all__ = ["SweepSpec", "AlgorithmEntry", "Cell", "SweepResult", "load_spec", "plan", "run_cell", "sweep",
           "read_results", "tune", "rounds_to_eps_table", "problems_table", "evaluate_expression",
           "write_report", "TABLE_COLUMNS", "CRITERIA", "EXTRA_PREFIX", "TIMING_COLUMNS", "cell_path",
           "expression_names", "resolve_hyperparams", "per_run_summary", "registered_algorithms"]
