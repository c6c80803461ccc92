"""Seconds of one full conformance check per family (the kit's budget: under 20 s each).

    python benchmarks/bench_conform.py            (from the repository root)

For every family, ``fedtheory.conformance.check`` of fedtheory's own implementation (adapters/native.py) with the
family's defaults, every property searched in full and the kit's varied hyperparameters included (what
``fedtheory conform`` runs), shrinking on. Prints one line per family and the slowest; measured, never asserted
(a timing assertion fails on a loaded shared machine).
"""
from __future__ import annotations

import time

from fedtheory import conformance
from fedtheory.conformance.adapters.native import NATIVE


def main() -> None:
    rows = []
    for family, impl in NATIVE.items():
        t0 = time.perf_counter()
        report = conformance.check(impl, family)
        rows.append((family, time.perf_counter() - t0, report.verdict))
        print(f"{family:24s} {rows[-1][1]:6.1f} s  {report.verdict}", flush=True)
    family, seconds, _ = max(rows, key=lambda r: r[1])
    print(f"slowest={family} seconds={seconds:.1f} budget=20")


if __name__ == "__main__":
    main()
