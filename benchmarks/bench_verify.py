"""Wall time of the claims ledger: ``fedtheory verify --jobs 1`` against ``--jobs N`` and a local Dask cluster.

Run: ``python benchmarks/bench_verify.py [--quick] [--paper P ...] [--jobs N] [--dask-workers W]``, or
``python benchmarks/bench_verify.py --baseline REV [--repeat R]`` to compare this tree's ``verify --jobs N`` with
the one of an earlier commit, side by side in one run (last line ``BASELINE rev=... baseline_s=... current_s=...
ratio=...``: the medians of R alternating runs each, so a change of the machine's load hits both alike).

Each run is a fresh ``python -m fedtheory verify --quiet`` process (what a user waits for: start-up, imports,
the claims and the reports), run one after the other on the same selection: ``--jobs 1`` (in process),
``--jobs N`` (N spawned worker processes, default 2) and, when dask.distributed is installed,
``--scheduler`` pointing at a ``LocalCluster`` of W single-threaded worker processes (default 2) started
beforehand by this script (its start-up is printed, not counted: a cluster outlives one run). The claims.json
files of the runs must agree except for the seconds (this script exits 1 otherwise).

The last line is machine-readable:
``VERIFY claims=... jobs1_s=... jobsN_s=... ratio=... dask_local_workers=... dask_s=... N=...``
with ratio = jobsN_s / jobs1_s (dask_local_workers=0 and dask_s=nan without dask), and work_ratio= the claims'
summed seconds with N workers over those of the serial run (above 1 when claims running side by side slow each
other down; the ratio cannot go below work_ratio / N). ``--quick`` runs the
``fedred`` claims only. On a shared machine the times move with the load: compare runs made side by side, and
the CPU seconds printed for each local run (which do not depend on the load as much: ``--jobs N`` can at best
divide the wall time by N while its CPU time stays that of ``--jobs 1`` plus N imports).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENVIRONMENT = dict(os.environ)


def children_cpu() -> float:
    """User + system CPU seconds of every finished child process (and their finished children)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_verify(selection: list[str], out: Path, extra: list[str], root: Path = ROOT) -> tuple[float, list[dict]]:
    """(wall seconds, claims.json records) of one ``fedtheory verify`` process of the tree at ``root``; prints its
    CPU seconds."""
    # The environment this script started with: starting a LocalCluster sets OMP/OPENBLAS/MKL_NUM_THREADS=1 in
    # this process's environment (for its workers), which a verify started afterwards would inherit.
    env = {**ENVIRONMENT, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), ENVIRONMENT.get("PYTHONPATH")]))}
    cpu = children_cpu()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "fedtheory", "verify", "--quiet", "--out", str(out), *selection,
                           *extra], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    # The CPU time (its worker processes included, not a Dask cluster's) tells what the run costs whatever the
    # load: on a busy machine the wall time of N workers shows the share of the cores they got, not N.
    print(f"  verify {' '.join(extra)}: {seconds:.1f} s wall, {children_cpu() - cpu:.1f} s CPU", flush=True)
    if proc.returncode not in (0, 1):  # 1: a claim failed, which the comparison below reports
        sys.exit(f"fedtheory verify {' '.join(extra)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return seconds, json.loads((out / "claims.json").read_text())


def without_seconds(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


def compare_with_baseline(rev: str, selection: list[str], jobs: int, repeat: int) -> int:
    """This tree's ``verify --jobs N`` against the tree of commit ``rev`` (a temporary git worktree), alternating."""
    import statistics

    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        tree = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), rev], check=True,
                       capture_output=True)
        try:
            times: dict[str, list[float]] = {"baseline": [], "current": []}
            for k in range(repeat):
                for label, root in (("baseline", tree), ("current", ROOT)):
                    seconds, _ = run_verify(selection, Path(tmp) / f"{label}{k}", ["--jobs", str(jobs)], root)
                    times[label].append(seconds)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    base, current = statistics.median(times["baseline"]), statistics.median(times["current"])
    print(f"BASELINE rev={rev} baseline_s={base:.2f} current_s={current:.2f} ratio={current / base:.3f} "
          f"jobs={jobs} repeat={repeat}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the fedred claims (a fast check)")
    ap.add_argument("--paper", action="append", help="only this paper's claims (repeatable; as fedtheory verify)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes of the parallel run (default: 2)")
    ap.add_argument("--dask-workers", type=int, default=2, help="LocalCluster worker processes (default: 2)")
    ap.add_argument("--baseline", metavar="REV", help="compare with the tree of this commit instead")
    ap.add_argument("--repeat", type=int, default=3, help="alternating runs each with --baseline (default: 3)")
    args = ap.parse_args(argv)
    if args.jobs < 2:
        ap.error(f"--jobs must be >= 2 (it is compared with --jobs 1), got {args.jobs}")
    if args.dask_workers < 1:
        ap.error(f"--dask-workers must be >= 1, got {args.dask_workers}")
    papers = args.paper or (["fedred"] if args.quick else [])
    selection = [a for p in papers for a in ("--paper", p)]
    if args.baseline:
        if args.repeat < 1:
            ap.error(f"--repeat must be >= 1, got {args.repeat}")
        return compare_with_baseline(args.baseline, selection, args.jobs, args.repeat)

    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        tmp_path = Path(tmp)
        t1, serial = run_verify(selection, tmp_path / "jobs1", ["--jobs", "1"])
        print(f"jobs 1: {t1:.1f} s ({len(serial)} claims)", flush=True)
        tn, parallel = run_verify(selection, tmp_path / "jobsN", ["--jobs", str(args.jobs)])
        print(f"jobs {args.jobs}: {tn:.1f} s", flush=True)
        mismatched = [] if without_seconds(parallel) == without_seconds(serial) else [f"--jobs {args.jobs}"]
        workers, td = 0, math.nan
        try:
            from distributed import LocalCluster
        except ImportError:
            print("dask.distributed not installed (pip install 'fedtheory[scale]'): no Dask run")
        else:
            start = time.perf_counter()
            with LocalCluster(n_workers=args.dask_workers, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster:
                print(f"LocalCluster of {args.dask_workers} workers started in {time.perf_counter() - start:.1f} s "
                      f"(not counted)", flush=True)
                td, on_dask = run_verify(selection, tmp_path / "dask", ["--scheduler", cluster.scheduler_address])
            workers = args.dask_workers
            print(f"dask, {workers} local workers: {td:.1f} s", flush=True)
            if without_seconds(on_dask) != without_seconds(serial):
                mismatched.append("--scheduler")
    # The claims' own seconds, summed: in the parallel run each claim takes longer when two run side by side
    # (shared caches and memory bandwidth; measured on the two-core machine: 57-69 s serial against 76-77 s with
    # two workers, with one BLAS thread everywhere too), which bounds the ratio from below by work_ratio / N.
    work_ratio = sum(r["seconds"] for r in parallel) / sum(r["seconds"] for r in serial)
    print(f"claims' summed seconds: {work_ratio:.2f}x the serial run's with {args.jobs} workers "
          f"(the ratio cannot go below {work_ratio / args.jobs:.2f})")
    for run in mismatched:
        print(f"claims.json of {run} differs from --jobs 1 (beyond the seconds)")
    print(f"VERIFY claims={len(serial)} jobs1_s={t1:.2f} jobsN_s={tn:.2f} ratio={tn / t1:.3f} "
          f"dask_local_workers={workers} dask_s={td:.2f} N={args.jobs} work_ratio={work_ratio:.3f}")
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
