"""Throughput of every registered compressor, vectorised over stacked rows vs a per-row loop, and ECUQ's cost
against the number of levels its double binary search evaluates.

Run: ``python benchmarks/bench_compressors.py [--quick] [--repeats R]``.

Shapes: one row with d = 10^6 and n = 1000 stacked rows with d = 1000 (``--quick``: 10^5 and 200 x 1000).
For each compressor the table prints values/s of one vectorised ``compress`` call, the values/s of the same
work done row by row in a Python loop (stacked shape only), and the ratio vectorised / loop, all measured
side by side in this process (best of ``--repeats``). The ECUQ table prints, per budget b, the number of
entropy evaluations the search needed, the final number of levels K and the time per call and per evaluation.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from fedtheory.compressors import COMPRESSORS
from fedtheory.compressors.ecuq import ECUQ


def best_time(fn, repeats: int) -> float:
    fn()  # warm-up
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def throughput(quick: bool, repeats: int) -> None:
    rng = np.random.default_rng(0)
    big = rng.lognormal(size=(1, 10**5 if quick else 10**6))
    n_rows = 200 if quick else 1000
    stacked = rng.normal(size=(n_rows, 1000))
    print(f"{'compressor':24s} {'1 x %d values/s' % big.shape[1]:>22s} {'%d x 1000 values/s' % n_rows:>22s} "
          f"{'row-loop values/s':>18s} {'vectorised/loop':>16s}")
    for name in sorted(COMPRESSORS):
        comp = COMPRESSORS[name].example()
        g = np.random.default_rng(1)
        try:
            t_big = best_time(lambda: comp.compress(big, g), repeats)
            t_st = best_time(lambda: comp.compress(stacked, g), repeats)
            t_loop = best_time(lambda: [comp.compress(row, g) for row in stacked], max(1, repeats // 2))
        except (ValueError, NotImplementedError) as exc:
            print(f"{name:24s} skipped: {exc}")
            continue
        print(f"{name:24s} {big.size / t_big:22.3e} {stacked.size / t_st:22.3e} {stacked.size / t_loop:18.3e} "
              f"{t_loop / t_st:16.1f}")


def ecuq_levels(quick: bool, repeats: int) -> None:
    d = 2**16 if quick else 2**20
    x = np.random.default_rng(0).lognormal(size=(1, d))
    print(f"\nECUQ on LogNormal(0,1), d = {d}")
    print(f"{'b':>4s} {'evaluations':>12s} {'levels K':>10s} {'entropy':>8s} {'ms/call':>9s} {'ms/evaluation':>14s}")
    for b in (1.5, 2.0, 3.0, 4.0, 6.0, 8.0):
        q = ECUQ(b=b)
        res = q.search(x)
        t = best_time(lambda: q.compress(x), repeats)
        it = int(res.iterations[0])
        print(f"{b:4.1f} {it:12d} {int(res.levels[0]):10d} {res.entropy[0]:8.3f} {1e3 * t:9.1f} {1e3 * t / it:14.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small shapes (seconds)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    throughput(args.quick, args.repeats)
    ecuq_levels(args.quick, args.repeats)


if __name__ == "__main__":
    main()
