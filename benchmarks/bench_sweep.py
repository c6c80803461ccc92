"""Sweep throughput of ``fedtheory bench``: cells per second with 1 and 2 local workers, and the overhead per
cell (problem loading, hyperparameter resolution, building the table, the atomic Parquet write, scheduling)
against the cell's own run time (the ``run()`` call).

    python benchmarks/bench_sweep.py            # 160 cells of 300 rounds on small quadratics
    python benchmarks/bench_sweep.py --quick    # 40 cells of 100 rounds
    python benchmarks/bench_sweep.py --dask     # also a Dask LocalCluster (2 worker processes)

Everything is measured in one run and printed side by side; nothing here is asserted (timings depend on
the machine and its load).
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from fedtheory import bench, catalogue
from fedtheory.run import run

PROBLEMS = ["quad-kappa10-delta1", "quad-kappa100-delta1", "quad-kappa100-delta0p1", "quad-kappa100-delta10"]


def make_spec(quick: bool) -> bench.SweepSpec:
    steps = ["=0.5/L_f", "=1/L_f", "=1.5/L_f", "=2/(mu_f+L_f)", "=0.25/L_f"]
    return bench.SweepSpec.from_dict({
        "name": "throughput", "problems": PROBLEMS,
        "algorithms": [{"name": "gd", "grid": {"step": steps[:2] if quick else steps}}],
        "seeds": list(range(5 if quick else 8)), "rounds": 100 if quick else 300, "stop_at_eps": False})


def direct_seconds(cells: list[bench.Cell]) -> float:
    """The cells' run() calls alone, in this process, with problems already loaded: the floor."""
    total = 0.0
    for cell in cells:
        problem = catalogue.load(cell.problem)
        hp = bench.resolve_hyperparams(cell.hyperparams, bench.expression_names(problem))
        algorithm = bench.registered_algorithms()[cell.algorithm](**hp)
        t0 = time.perf_counter()
        run(algorithm, problem, cell.rounds, seed=cell.seed, record_every=cell.record_every)
        total += time.perf_counter() - t0
    return total


def measure(spec: bench.SweepSpec, **kwargs) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        result = bench.sweep(spec, Path(tmp), progress=False, report=False, **kwargs)
        elapsed = time.perf_counter() - t0
    assert result.complete and result.ran == len(result.cells)
    run_s = [s["run_seconds"] for s in result.summaries]
    cell_s = [s["seconds"] for s in result.summaries]
    return {"cells": len(result.cells), "elapsed": elapsed, "cells_per_s": len(result.cells) / elapsed,
            "run_median": statistics.median(run_s), "cell_median": statistics.median(cell_s),
            "in_cell_overhead": statistics.median(np.subtract(cell_s, run_s))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller grid")
    parser.add_argument("--dask", action="store_true", help="also measure a Dask LocalCluster with 2 workers")
    args = parser.parse_args()
    spec = make_spec(args.quick)
    cells = bench.plan(spec)
    floor = direct_seconds(cells)
    import os

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (ratios between backends "
          "are only meaningful on an idle machine)")
    print(f"{len(cells)} cells: {len(PROBLEMS)} quadratics (10 clients, d=20) x GD step grid x seeds, "
          f"{spec.rounds} rounds each")
    print(f"direct run() calls in one process, no bench: {floor:.2f} s ({len(cells) / floor:.1f} cells/s; "
          f"median run {1e3 * floor / len(cells):.2f} ms)\n")
    warmup = bench.SweepSpec.from_dict({**spec.as_dict(), "seeds": [99], "rounds": 2})
    rows = [("1 local worker (in process)", measure(spec, jobs=1)),
            ("2 local workers, cold start", measure(spec, jobs=2))]
    # joblib keeps its loky workers alive between calls: a warm run excludes process start-up and imports.
    measure(warmup, jobs=2)
    rows.append(("2 local workers, warm", measure(spec, jobs=2)))
    if args.dask:
        from distributed import LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            measure(warmup, scheduler=cluster.scheduler_address)
            rows.append(("Dask LocalCluster 2 procs, warm", measure(spec, scheduler=cluster.scheduler_address)))
    header = (f"{'backend':32s} {'elapsed s':>9s} {'cells/s':>8s} {'vs 1 worker':>11s} {'run ms':>7s} "
              f"{'cell ms':>8s} {'in-cell overhead':>17s} {'sweep/direct':>12s}")
    print(header)
    print("-" * len(header))
    base = rows[0][1]["cells_per_s"]
    for name, m in rows:
        print(f"{name:32s} {m['elapsed']:9.2f} {m['cells_per_s']:8.1f} {m['cells_per_s'] / base:10.2f}x "
              f"{1e3 * m['run_median']:7.2f} {1e3 * m['cell_median']:8.2f} "
              f"{m['in_cell_overhead'] / m['run_median']:16.2f}x {m['elapsed'] / floor:11.2f}x")
    print("\nrun ms: median run() time of a cell; cell ms: median time of the whole cell in its worker; "
          "in-cell overhead: (cell - run) / run, i.e. loading the problem, building the table and the atomic "
          "Parquet write, relative to the run itself; sweep/direct: wall time of the sweep over the direct "
          "loop's (includes worker start-up and scheduling).")


if __name__ == "__main__":
    main()
